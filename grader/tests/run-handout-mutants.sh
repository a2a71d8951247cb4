#!/usr/bin/env bash
# Mutants that pass the handout's own commands but are wrong in general
# (issue 12: hard-coded layout, size, root, rank count, launcher order).
# Each such mutant directory has `handout_command`: the mpirun arguments of
# the handout's run (e.g. "-np 4 --ranks-per-node 2"). This test builds the
# mutant (its lab's reference with its mutant.patch applied,
# grader/tests/mutant-tree.sh) as a kit binary, runs that command and requires "all checks
# passed": the handout cannot tell it apart from a right answer. That the
# grader catches it, with the right diagnosis, is run-mutants.sh's part.
#   Usage: grader/tests/run-handout-mutants.sh   (from the repo root)
set -u
cd "$(dirname "$0")/../.." || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
pass=0 fail=0
cflags=$(make -s --no-print-directory print-HOST_CFLAGS)
wrap=$(make -s --no-print-directory print-WRAP_LDFLAGS)
libs=$(make -s --no-print-directory print-HOST_LIBS)
make -s build/host/lib/libncclab.a >/dev/null || { echo "cannot build the kit"; exit 1; }
# Beside the kit's binaries (the driver finds grader/profiles from its own
# place), not among them: the attack test, which may run at the same time,
# checks that build/host/bin does not change.
mkdir -p build/host/test-bin
bin=build/host/test-bin/handout-mutant.$$
out=$(mktemp "${TMPDIR:-/tmp}/ncclab-handout.XXXXXX")
trees=$(mktemp -d "${TMPDIR:-/tmp}/ncclab-handout-trees.XXXXXX")
trap 'rm -rf "$bin" "$out" "$trees"' EXIT
for d in grader/tests/mutants/lab*/*/; do
    [ -f "$d/handout_command" ] || continue
    lab=${d#grader/tests/mutants/lab}; lab=${lab%%/*}
    name=lab$lab/$(basename "$d")
    labdir=$(ls -d labs/lab"$lab"_* | head -1)
    tree=$trees/lab$lab-$(basename "$d")
    if ! grader/tests/mutant-tree.sh "$d" "$tree" >"$out" 2>&1; then
        echo "FAIL $name: its submission could not be built from its patch:"
        sed 's/^/     /' "$out"; fail=$((fail + 1)); continue
    fi
    # The driver, the mutant's files, the kit's files for the rest.
    srcs=()
    for f in "$labdir"/*.c; do
        if [ -f "$tree/$(basename "$f")" ]; then srcs+=("$tree/$(basename "$f")"); else srcs+=("$f"); fi
    done
    # shellcheck disable=SC2086
    if ! cc $cflags -I"$labdir" "${srcs[@]}" build/host/lib/libncclab.a $wrap $libs -o "$bin" \
        >"$out" 2>&1; then
        echo "FAIL $name: does not build"; sed 's/^/     /' "$out" | head; fail=$((fail + 1)); continue
    fi
    # shellcheck disable=SC2046
    timeout 120 mpirun --oversubscribe $(cat "$d/handout_command" | cut -d' ' -f1-2) "$bin" \
        $(cut -d' ' -f3- "$d/handout_command") >"$out" 2>&1
    if grep -q "^# lab$lab: all checks passed" "$out"; then
        echo "ok   $name passes the handout's run (mpirun $(cat "$d/handout_command"))"
        pass=$((pass + 1))
    else
        echo "FAIL $name: the handout's run (mpirun $(cat "$d/handout_command")) already fails it"
        grep -v '^#ncclab' "$out" | tail -15 | sed 's/^/     /'
        fail=$((fail + 1))
    fi
done
echo "handout-mutants: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
