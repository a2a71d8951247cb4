#!/usr/bin/env bash
# Hidden variations (grader/hidden/): one grader, two variation sets.
#   1. the grader built WITHOUT grader/hidden/ (as in the student kit) builds,
#      makes only the public runs and gives the references full marks;
#   2. the full grader with the public runs only (NCCLAB_GRADER_VARIATIONS=public)
#      gives lab 1's reference full marks with the kit's runs (every lab's
#      reference with the public runs: tests/course/run.sh, in the kit);
#   3. every mutant marked `public_full_marks` gets full marks from the public
#      runs and fails with the hidden ones (it is tuned to what students see).
# (The full grader, hidden runs included, grading the references is
# run-mutants.sh's first step.)   Usage: grader/tests/run-hidden.sh  (repo root)
set -u
cd "$(dirname "$0")/../.." || exit 1
GRADER=${GRADER:-build/host/grader}
out=$(mktemp -d "${TMPDIR:-/tmp}/ncclab-hidden.XXXXXX")
trap 'rm -rf "$out"' EXIT
pass=0 fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
runs_of() { grep -E "^Lab $2:" "$1" | sed -E 's/.*\(([0-9]+) runs.*/\1/'; }

# 1. The student kit's grader: the sources without grader/hidden/.
mkdir -p "$out/kit/grader" "$out/kit/common"
# The kit files the grader compiles (common/perflimits.c, ...), as the Makefile lists them.
mapfile -t common_srcs < <(make -s --no-print-directory print-GRADER_SRCS | tr ' ' '\n' | grep '^common/')
cp grader/*.c grader/*.h "$out/kit/grader/" &&
    for c in "${common_srcs[@]}"; do cp "$c" "${c%.c}.h" "$out/kit/common/"; done
cflags=$(make -s --no-print-directory print-GRADER_CFLAGS | sed 's/-Igrader//')
libs=$(make -s --no-print-directory print-GRADER_LIBS)
# shellcheck disable=SC2086
if (cd "$out/kit" && cc $cflags -Igrader grader/*.c "${common_srcs[@]}" $libs -o grader-kit) \
    >"$out/kit-build.txt" 2>&1; then
    ok "the grader builds without grader/hidden/"
else
    bad "the grader does not build without grader/hidden/:"; sed 's/^/     /' "$out/kit-build.txt"
fi
if [ -x "$out/kit/grader-kit" ]; then
    # Run from the repository root: it reads labs/, grader/points.conf and profiles there.
    if "$out/kit/grader-kit" --lab 1 --submission solutions --out "$out/kit-ref" --no-color \
        >"$out/kit-ref.txt" 2>&1; then
        ok "the kit's grader gives lab 1's reference full marks ($(runs_of "$out/kit-ref.txt" 1) runs)"
    else
        bad "the kit's grader fails lab 1's reference:"; sed 's/^/     /' "$out/kit-ref.txt" | head -40
    fi
fi

# 2. Public runs only, from the full grader (lab 1: the course section's
#    student-kit test grades every lab's reference with the kit's grader).
if NCCLAB_GRADER_VARIATIONS=public "$GRADER" --lab 1 --submission solutions \
    --out "$out/public" --no-color >"$out/public.txt" 2>&1; then
    ok "public runs only: the references get full marks: $(grep '^TOTAL' "$out/public.txt")"
else
    bad "public runs only: the references do not get full marks:"
    sed 's/^/     /' "$out/public.txt" | head -60
fi
if [ -f "$out/kit-ref.txt" ] && [ -n "$(runs_of "$out/kit-ref.txt" 1)" ] &&
    [ "$(runs_of "$out/kit-ref.txt" 1)" = "$(runs_of "$out/public.txt" 1)" ]; then
    ok "the kit's grader makes exactly the public runs (lab 1: $(runs_of "$out/public.txt" 1))"
else
    bad "the kit's grader and the public set disagree on lab 1's runs" \
        "($(runs_of "$out/kit-ref.txt" 1) vs $(runs_of "$out/public.txt" 1))"
fi

# 3. Mutants tuned to the public runs (each its lab's reference with its
# mutant.patch applied: grader/tests/mutant-tree.sh).
for m in grader/tests/mutants/lab*/*/; do
    [ -f "$m/public_full_marks" ] || continue
    lab=${m#grader/tests/mutants/lab}; lab=${lab%%/*}
    name=lab$lab/$(basename "$m")
    d=$out/tree-lab$lab-$(basename "$m")
    if ! grader/tests/mutant-tree.sh "$m" "$d" >"$out/tree.txt" 2>&1; then
        bad "mutant $name: its submission could not be built from its patch:"
        sed 's/^/     /' "$out/tree.txt"; continue
    fi
    NCCLAB_GRADER_VARIATIONS=public "$GRADER" --lab "$lab" --submission "$d" \
        --out "$out/p-$lab" --no-color --timeout 10 >"$out/p.txt" 2>&1
    prc=$?
    "$GRADER" --lab "$lab" --submission "$d" --out "$out/h-$lab" --no-color --timeout 10 \
        >"$out/h.txt" 2>&1
    hrc=$?
    if [ $prc -eq 0 ] && [ $hrc -eq 1 ]; then
        ok "mutant $name: public runs $(grep '^TOTAL' "$out/p.txt" | cut -c1-20), with hidden runs $(grep '^TOTAL' "$out/h.txt" | cut -c1-20)"
    else
        bad "mutant $name: public runs exit $prc (want 0), with hidden runs exit $hrc (want 1)"
        sed 's/^/     /' "$out/h.txt" | head -30
    fi
done
echo "hidden: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
