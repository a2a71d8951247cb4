#!/usr/bin/env bash
# Honest local runs: a lab binary judges its own timings with the grader's
# rules and the same profile (common/perflimits.c, grader/profiles/), so a
# timer stopped early or an overlap that was not waited for prints a FAILED
# line locally, not "all checks passed". Builds two mutants of lab 2 beside
# the kit's binaries (build/host/test-bin/: the drivers find grader/profiles
# from their own place; build/host/bin/ stays as the attack test, which may
# run at the same time, expects) and runs them and the reference on 2 ranks.   Usage: grader/tests/run-local-rules.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
pass=0 fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ncclab-local.XXXXXX")
bins=()
trap 'rm -rf "$tmp" "${bins[@]}"' EXIT
cflags=$(make -s --no-print-directory print-HOST_CFLAGS)
wrap=$(make -s --no-print-directory print-WRAP_LDFLAGS)
libs=$(make -s --no-print-directory print-HOST_LIBS)
make -s build/host/lib/libncclab.a build/host/bin/lab2-ref >/dev/null || { bad "cannot build"; exit 1; }

# mutant_file NAME: lab 2's allreduce.c of mutant NAME (the reference with
# its mutant.patch applied, grader/tests/mutant-tree.sh)
mutant_file() {
    grader/tests/mutant-tree.sh grader/tests/mutants/lab2/"$1" "$tmp/tree-$1" >&2 &&
        echo "$tmp/tree-$1/allreduce.c"
}

# run NAME STUDENT_FILE ARGS... : build lab 2 with that file, run it, keep its output
run() {
    local name=$1 file=$2; shift 2
    local bin=build/host/test-bin/lab2-$name.$$
    mkdir -p build/host/test-bin
    bins+=("$bin")
    # shellcheck disable=SC2086
    cc $cflags -Ilabs/lab2_allreduce labs/lab2_allreduce/main.c "$file" \
        build/host/lib/libncclab.a $wrap $libs -o "$bin" || return 1
    timeout 120 mpirun --oversubscribe -np 2 "$bin" "$@" >"$tmp/$name.txt" 2>&1
}

run no-sync "$(mutant_file no-sync)" -b 4M -e 16M -f 4 --overlap-rounds -1
if grep -q "^# FAILED timing.*above what this system can do" "$tmp/no-sync.txt" &&
    grep -q "^# lab2: FAILED" "$tmp/no-sync.txt"; then
    ok "a timer read before the GPU finished: the lab prints FAILED (busbw above the profile's ceiling)"
else
    bad "no-sync: no FAILED line for an impossible busbw"; tail -20 "$tmp/no-sync.txt"
fi

run no-wait "$(mutant_file overlap-no-wait)" -b 4M
if grep -q "^# FAILED timing.*returned while .* was still busy" "$tmp/no-wait.txt" &&
    grep -q "^# lab2: FAILED" "$tmp/no-wait.txt"; then
    ok "an overlap not waited for: the lab prints FAILED (a stream still busy when the function returned)"
else
    bad "overlap-no-wait: no FAILED line"; tail -20 "$tmp/no-wait.txt"
fi

run ref solutions/lab2_allreduce/allreduce.c -b 4M -e 16M -f 4
if grep -q "^# lab2: all checks passed" "$tmp/ref.txt" && ! grep -q "FAILED" "$tmp/ref.txt"; then
    ok "the reference: all checks passed, no FAILED line"
else
    bad "the reference did not pass its own rules"; grep -v '^#ncclab' "$tmp/ref.txt" | tail -20
fi
echo "local-rules: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
