#!/usr/bin/env bash
# Proof that the grader catches real mistakes, and only those:
#   1. every reference solution gets full marks (exit 0);
#   2. every mutant in grader/tests/mutants/labN/NAME/ is failed (exit 1) and
#      its report contains each line of NAME/expect (the diagnosis it must get);
#      the mutant is graded as its lab's reference with NAME/mutant.patch
#      applied (grader/tests/mutant-tree.sh): a patch that no longer applies
#      is a failure naming the mutant;
#   3. every mutant gets the same points per check with --jobs 1 and --jobs 8
#      (what is graded depends on the lab's tables, not on timing). The
#      "timing honest" checks are left out of that comparison: their verdict
#      on a broken measurement near the ceiling depends on the machine's speed
#      at that moment (the host profile's ceiling is measured at start), not
#      on --jobs; a difference there is printed as a note. A mutant whose
#      points differ is graded both ways once more: a difference that does not
#      come back (a run slowed past its watchdog on a loaded machine) is a
#      note, one that does is a failure.
# Usage: grader/tests/run-mutants.sh [--repeat K] [LAB...]    (from the repo root)
# Env: GRADER (default build/host/grader), GRADER_ARGS (extra options),
#      MUTANT_JOBS (mutants graded at once, default 2), MUTANT_COMPARE (all:
#      every mutant graded with --jobs 1 too, the default; hangs: only those
#      where a run hung or was not made, about half the time).
set -u
cd "$(dirname "$0")/../.." || exit 1
GRADER=${GRADER:-build/host/grader}
JOBS=${MUTANT_JOBS:-2}
repeat=1
if [ "${1:-}" = "--repeat" ]; then repeat=$2; shift 2; fi
labs=("$@")
if [ ${#labs[@]} -eq 0 ]; then
    for d in grader/tests/mutants/lab*/; do
        n=${d%/}; n=${n##*/lab}
        ls -d labs/lab"${n}"_* >/dev/null 2>&1 && labs+=("$n")
    done
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/ncclab-mutants.XXXXXX")
trap 'rm -rf "$out"' EXIT
# Our own copy: a rebuild of the grader while this runs must not disturb it.
cp "$GRADER" "$out/grader" && GRADER=$out/grader
fail=0
lab_list=$(IFS=,; echo "${labs[*]}")
t0=$(date +%s)
ref_ok=0 ref_fail=0

# 1. The reference solutions, alone on the machine (their timings are checked).
for i in $(seq 1 "$repeat"); do
    if "$GRADER" --lab "$lab_list" --submission solutions --out "$out/ref$i" --no-color \
        ${GRADER_ARGS:-} >"$out/ref$i.txt" 2>&1; then
        echo "ok   reference solutions, labs $lab_list (run $i/$repeat): $(grep '^TOTAL' "$out/ref$i.txt")"
        ref_ok=$((ref_ok + 1))
    else
        echo "FAIL reference solutions, labs $lab_list (run $i/$repeat) did not get full marks:"
        sed 's/^/     /' "$out/ref$i.txt"
        fail=1 ref_fail=$((ref_fail + 1))
    fi
done

# 2. The mutants, a few at a time (they fail on purpose; timing noise is harmless).
# --timeout 20 (the labs' watchdog at 10 s) for every grading: on a machine
# shared with other work, 5 s turned slow but correct runs into hangs.
# The points column of a report: "title  points" per check (timing checks
# apart, see above).
points_of() {
    sed -nE 's/^  (.{52}) +([0-9.]+ \/ [0-9.]+)  (PASS|FAIL|WARN).*/\1 \2/p' "$1" | grep -v 'timing honest'
}
timing_of() {
    sed -nE 's/^  (.{52}) +([0-9.]+ \/ [0-9.]+)  (PASS|FAIL|WARN).*/\1 \2/p' "$1" | grep 'timing honest'
}
grade_mutant() {
    local dir=$1 out=$2
    local lab=${dir#grader/tests/mutants/lab}; lab=${lab%%/*}
    local name res sub
    name=lab$lab/$(basename "$dir")
    res="$out/$(echo "$name" | tr / -)"
    sub="$out/tree/$(echo "$name" | tr / -)"
    "$GRADER" --lab "$lab" --submission "$sub" --out "$res" --no-color --timeout 20 \
        --jobs 8 ${GRADER_ARGS:-} >"$res.txt" 2>&1
    local rc=$? missing=""
    # MUTANT_COMPARE=hangs: compare only where a run hung or was not made,
    # the only case where the schedule decides what is graded (faster).
    if [ "${MUTANT_COMPARE:-all}" = hangs ] && ! grep -qE 'hang|not made|some skipped' "$res/report.txt"; then
        cp -r "$res" "$res-j1"
    else
        "$GRADER" --lab "$lab" --submission "$sub" --out "$res-j1" --no-color --timeout 20 \
            --jobs 1 ${GRADER_ARGS:-} >"$res-j1.txt" 2>&1
    fi
    if ! diff <(points_of "$res-j1/report.txt") <(points_of "$res/report.txt") >"$res.diff"; then
        # Once more, both ways: a run slowed past its watchdog on a loaded
        # machine differs once; a grader whose runs depend on --jobs differs
        # every time.
        "$GRADER" --lab "$lab" --submission "$sub" --out "$res-j1b" --no-color --timeout 20 \
            --jobs 1 ${GRADER_ARGS:-} >/dev/null 2>&1
        "$GRADER" --lab "$lab" --submission "$sub" --out "$res-j8b" --no-color --timeout 20 \
            --jobs 8 ${GRADER_ARGS:-} >/dev/null 2>&1
        if ! diff <(points_of "$res-j1b/report.txt") <(points_of "$res-j8b/report.txt") >/dev/null; then
            echo "FAIL mutant $name: different points with --jobs 1 and --jobs 8 (twice):"
            sed 's/^/     /' "$res.diff"
            return 1
        fi
        echo "note mutant $name: points differed once between --jobs 1 and 8, not on a second try (a loaded machine)"
    fi
    if ! diff -q <(timing_of "$res-j1/report.txt") <(timing_of "$res/report.txt") >/dev/null; then
        echo "note mutant $name: its timing verdict differed between the two gradings (machine speed)"
    fi
    if ! grep -qvE '^(#|$)' "$dir/expect"; then
        echo "FAIL mutant $name: its expect file lists no diagnosis"
        return 1
    fi
    while IFS= read -r want; do
        case "$want" in ''|'#'*) continue ;; esac
        grep -qF -- "$want" "$res/report.txt" || missing="$missing [$want]"
    done <"$dir/expect"
    if [ "$rc" -eq 1 ] && [ -z "$missing" ]; then
        echo "ok   mutant $name caught (same points with --jobs 1 and 8): $(grep -F -m1 -- "$(grep -v '^#' "$dir/expect" | head -1)" "$res/report.txt" | sed 's/^ *//' | cut -c1-150)"
    else
        echo "FAIL mutant $name: exit $rc (want 1), missing diagnosis:${missing:- none}"
        sed 's/^/     /' "$res.txt" | head -60
        return 1
    fi
}
export -f grade_mutant points_of timing_of
export GRADER GRADER_ARGS MUTANT_COMPARE
# Each mutant's submission, built before any grading: its lab's reference
# with its mutant.patch applied. One whose patch no longer applies is not
# graded: it is a failure, named with what git apply said.
mutants=() unbuilt=0
mkdir -p "$out/tree"
for n in "${labs[@]}"; do
    for d in grader/tests/mutants/lab"$n"/*/; do
        [ -f "$d/expect" ] || continue
        d=${d%/}
        if grader/tests/mutant-tree.sh "$d" "$out/tree/lab$n-${d##*/}" 2>"$out/tree.err"; then
            mutants+=("$d")
        else
            echo "FAIL mutant lab$n/${d##*/}: its submission could not be built from its patch:"
            sed 's/^/     /' "$out/tree.err"
            fail=1 unbuilt=$((unbuilt + 1))
        fi
    done
done
if [ ${#mutants[@]} -gt 0 ]; then
    printf '%s\n' "${mutants[@]}" |
        xargs -P "$JOBS" -I{} bash -c 'grade_mutant "$1" "$2" >"$2/$(echo "$1" | tr / _).log"' _ {} "$out"
    [ $? -eq 0 ] || fail=1
    for m in "${mutants[@]}"; do cat "$out/$(echo "$m" | tr / _).log"; done
fi
mut_ok=$(cat "$out"/grader_tests_mutants_*.log 2>/dev/null | grep -c '^ok   mutant')
mut_fail=$((${#mutants[@]} - mut_ok + unbuilt))
printf 'grader tests: %d mutants, %s in %d s\n' $((${#mutants[@]} + unbuilt)) \
    "$([ $fail -eq 0 ] && echo 'all as expected' || echo 'FAILURES')" "$(($(date +%s) - t0))"
printf 'grader: %d passed, %d failed\n' $((ref_ok + mut_ok)) $((ref_fail + mut_fail))
exit $fail
