#!/usr/bin/env bash
# Proof that the grader catches real mistakes, and only those:
#   1. every reference solution gets full marks (exit 0);
#   2. every mutant in grader/tests/mutants/labN/NAME/ is failed (exit 1) and
#      its report contains each line of NAME/expect (the diagnosis it must get);
#      the mutant is graded as its lab's reference with NAME/mutant.patch
#      applied (grader/tests/mutant-tree.sh): a patch that no longer applies
#      is a failure naming the mutant;
#      the mutants of one lab are graded as classes of at most
#      MUTANT_CLASS_SIZE (default 6), several at once (--jobs MUTANT_JOBS;
#      the grader keeps each throughput run alone), and MUTANT_CLASSES
#      classes at once (default 4);
#   3. a mutant where a run hung or was not made (the one place where the
#      order of the runs decides what is graded; MUTANT_COMPARE=all: every
#      mutant) is graded again with --jobs 1 and gets the same points per
#      check. The checks that judge timings (timing honest, the overlap, the
#      race against NCCL) are left out of that comparison: their verdict on a
#      broken measurement near a limit depends on the machine's speed at that
#      moment, not on --jobs; a difference there is printed as a note. A
#      mutant whose points differ is graded both ways once more, alone: a
#      difference that does not come back (a run slowed past its watchdog on
#      a loaded machine) is a note, one that does is a failure.
# Usage: grader/tests/run-mutants.sh [--repeat K] [LAB...]    (from the repo root)
# Env: GRADER (default build/host/grader), GRADER_ARGS (extra options),
#      MUTANT_JOBS (--jobs of the mutants' classes, default 4), MUTANT_CLASSES
#      (how many classes are graded at once, default 4), MUTANT_CLASS_SIZE
#      (mutants per class, default 6), MUTANT_COMPARE
#      (hangs, the default: graded again with --jobs 1 where a run hung or was
#      not made; all: every mutant), MUTANT_REFS=0 (the references not
#      graded first).
set -u
cd "$(dirname "$0")/../.." || exit 1
GRADER=${GRADER:-build/host/grader}
JOBS=${MUTANT_JOBS:-4}
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
#    MUTANT_REFS=0 leaves them out: the whole suite (tests/run-all.sh) does,
#    since its attack section grades them in every lab, in the same mode,
#    beside the attacks, and asserts full marks there.
[ "${MUTANT_REFS:-1}" = 0 ] && repeat=0 &&
    echo "note reference solutions not graded here (MUTANT_REFS=0: the attack section grades them)"
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
# 2. The mutants, one class per lab: every mutant of the lab is a student,
#    several graded at once (--jobs $JOBS; the grader keeps each throughput
#    run alone). --timeout 20 (the labs' watchdog at 10 s): on a machine
#    shared with other work, 5 s turned slow but correct runs into hangs.
# The points of a graded student, "key score / max" per check, from the
# results.json next to REPORT: untimed checks (points_of) or the timed ones,
# which the grader marks (timing_of): their verdict on a broken measurement
# near a limit is the machine's speed at that moment, not the schedule's.
checks_of() { # REPORT 0|1
    python3 - "$(dirname "$1")/results.json" "$2" <<'PY'
import json, sys
try:
    tests = json.load(open(sys.argv[1]))["tests"]
except (OSError, ValueError, KeyError):
    print("no results.json"); sys.exit()
for t in tests:
    if bool(t.get("timed")) == (sys.argv[2] == "1"):
        print("%s %g / %g" % (t.get("key"), t.get("score", 0), t.get("max_score", 0)))
PY
}
points_of() { checks_of "$1" 0; }
timing_of() { checks_of "$1" 1; }
missing_in() { # REPORT EXPECT: " [line]" for each expected line the report lacks
    local want missing=""
    while IFS= read -r want; do
        case "$want" in '' | '#'*) continue ;; esac
        grep -qF -- "$want" "$1" 2>/dev/null || missing="$missing [$want]"
    done <"$2"
    printf '%s' "$missing"
}
grade_class() { # LAB CLASS OUT JOBS
    "$GRADER" --lab "$1" --submissions "$2" --out "$3" --no-color --timeout 20 --jobs "$4" \
        ${GRADER_ARGS:-} >"$3.txt" 2>&1
}
report_of() { echo "$1/students/$2/report.txt"; }
passed_of() { # GRADEBOOK STUDENT: its all_passed cell
    python3 - "$1" "$2" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
col = rows[0].index("all_passed")
print(next((r[col] for r in rows[1:] if r[0] == sys.argv[2]), "missing"))
PY
}
# Some of one lab's mutants (class C, a part of the lab's): graded as a
# class, compared where a run hung; its lines go to $out/class$C.log, its
# count of mutants caught to $out/class$C.ok, a failure leaves
# $out/class$C.fail.
mutants_of_class() { # C LAB MUTANT...
    local c=$1 n=$2 fail=0 mut_ok=0 m name dir rep missing compared rep1 passed want
    shift 2
    local names=("$@") again=() t_lab
    t_lab=$(date +%s)
    [ ${#names[@]} -gt 0 ] || return 0
    local class=$out/class-$c
    mkdir -p "$class"
    for m in "${names[@]}"; do mv "$out/tree/lab$n-$m" "$class/$m"; done
    grade_class "$n" "$class" "$out/g$c" "$JOBS"
    # Graded again one run at a time: every mutant (MUTANT_COMPARE=all) or
    # those where a run hung or was not made, the one place where the order
    # of the runs decides what is graded.
    for m in "${names[@]}"; do
        if [ "${MUTANT_COMPARE:-hangs}" = all ] ||
            grep -qE 'deadlock or hang|not made' "$(report_of "$out/g$c" "$m")" 2>/dev/null; then
            again+=("$m")
        fi
    done
    # Each as a class of its own, up to 4 at once: one grader still makes
    # one run at a time, and a hung run's wait costs no CPU.
    for m in "${again[@]}"; do
        mkdir -p "$out/again-$n-$m" && cp -a "$class/$m" "$out/again-$n-$m/$m"
        while [ "$(jobs -rp | wc -l)" -ge 4 ]; do wait -n; done
        grade_class "$n" "$out/again-$n-$m" "$out/g$n-j1-$m" 1 &
    done
    wait
    for m in "${names[@]}"; do
        name=lab$n/$m dir=grader/tests/mutants/lab$n/$m
        rep=$(report_of "$out/g$c" "$m")
        compared=""
        if [[ " ${again[*]} " == *" $m "* ]]; then
            rep1=$(report_of "$out/g$n-j1-$m" "$m")
            if ! diff <(points_of "$rep1") <(points_of "$rep") >"$out/$n-$m.diff"; then
                # Once more, alone, both ways: a run slowed past its watchdog
                # on a loaded machine differs once; a grader whose runs depend
                # on --jobs differs every time.
                mkdir -p "$out/retry-$n-$m" && cp -a "$class/$m" "$out/retry-$n-$m/$m"
                grade_class "$n" "$out/retry-$n-$m" "$out/r$n-$m-j1" 1
                grade_class "$n" "$out/retry-$n-$m" "$out/r$n-$m-j8" 8
                if ! diff <(points_of "$(report_of "$out/r$n-$m-j1" "$m")") \
                    <(points_of "$(report_of "$out/r$n-$m-j8" "$m")") >/dev/null; then
                    echo "FAIL mutant $name: different points with --jobs 1 and --jobs $JOBS (twice):"
                    sed 's/^/     /' "$out/$n-$m.diff"
                    fail=1
                    continue
                fi
                echo "note mutant $name: points differed once between --jobs 1 and $JOBS, not on a second try (a loaded machine)"
            fi
            diff -q <(timing_of "$rep1") <(timing_of "$rep") >/dev/null ||
                echo "note mutant $name: its timing verdict differed between the two gradings (machine speed)"
            compared=", same points with --jobs 1 and $JOBS"
        fi
        if ! grep -qvE '^(#|$)' "$dir/expect"; then
            echo "FAIL mutant $name: its expect file lists no diagnosis"; fail=1; continue
        fi
        missing=$(missing_in "$rep" "$dir/expect")
        passed=$(passed_of "$out/g$c/gradebook.csv" "$m")
        if [ "$passed" = 0 ] && [ -n "$missing" ]; then
            # Caught, but not named as expected: once more, alone. Some
            # diagnoses read timings (milliseconds as microseconds against a
            # timer stopped early), which the class's other runs and the
            # machine's other work can blur; a diagnosis that is wrong stays
            # wrong alone.
            load=$(cut -d' ' -f1 /proc/loadavg)
            mkdir -p "$out/diag-$n-$m" && cp -a "$class/$m" "$out/diag-$n-$m/$m"
            grade_class "$n" "$out/diag-$n-$m" "$out/d$n-$m-j1" 1
            rep2=$(report_of "$out/d$n-$m-j1" "$m")
            missing2=$(missing_in "$rep2" "$dir/expect")
            if [ -z "$missing2" ] && [ "$(passed_of "$out/d$n-$m-j1/gradebook.csv" "$m")" = 0 ]; then
                echo "note mutant $name: named as expected only when graded again alone (load $load when first graded; the first grading lacked$missing)"
                rep=$rep2 missing=""
            fi
        fi
        if [ "$passed" = 0 ] && [ -z "$missing" ]; then
            echo "ok   mutant $name caught$compared: $(grep -F -m1 -- "$(grep -v '^#' "$dir/expect" | head -1)" "$rep" | sed 's/^ *//' | cut -c1-150)"
            mut_ok=$((mut_ok + 1))
        else
            echo "FAIL mutant $name: all_passed=$passed (want 0), missing diagnosis:${missing:- none}"
            sed 's/^/     /' "$rep" 2>/dev/null | head -60
            fail=1
        fi
    done
    echo "     (lab $n, class $c: ${#names[@]} mutants graded in $(($(date +%s) - t_lab)) s)"
    echo "$mut_ok" > "$out/class$c.ok"
    [ $fail -eq 0 ] || : > "$out/class$c.fail"
}

# The classes at once, MUTANT_CLASSES of them (default 4): a lab's mutants
# in classes of at most MUTANT_CLASS_SIZE (default 6), each a grader of its
# own. A class spends much of its time waiting for hung runs' watchdogs,
# which cost no CPU, and for its throughput runs, which a grader makes
# alone among its own runs (17 of lab 2's in one class waited for each
# other's): another class uses the machine meanwhile. The verdicts that
# compare timings are kept out of the --jobs comparison (above) for that
# reason. Longest first: a class weighs its mutants plus 4 for each that
# hangs (its runs wait for watchdogs, and it is graded a second time).
classes=()
size=${MUTANT_CLASS_SIZE:-6}
for n in "${labs[@]}"; do
    names=()
    for m in "${mutants[@]}"; do
        case $m in grader/tests/mutants/lab"$n"/*) names+=("${m##*/}") ;; esac
    done
    parts=$(((${#names[@]} + size - 1) / size))
    for ((p = 0; p < parts; p++)); do
        mine=() w=0
        for ((i = p; i < ${#names[@]}; i += parts)); do
            mine+=("${names[i]}")
            w=$((w + 1))
            grep -qE 'deadlock or hang|not made' "grader/tests/mutants/lab$n/${names[i]}/expect" && w=$((w + 4))
        done
        classes+=("$w $n-$((p + 1)) $n ${mine[*]}")
    done
done
mapfile -t by_weight < <(printf '%s\n' "${classes[@]}" | sort -k1,1rn)
for cl in "${by_weight[@]}"; do
    read -r _ c n rest <<<"$cl"
    read -r -a mine <<<"$rest"
    while [ "$(jobs -rp | wc -l)" -ge "${MUTANT_CLASSES:-4}" ]; do wait -n; done
    mutants_of_class "$c" "$n" "${mine[@]}" > "$out/class$c.log" 2>&1 &
done
wait
mut_ok=0
for cl in $(printf '%s\n' "${classes[@]}" | awk '{ print $2 }' | sort -t- -k1,1n -k2,2n); do
    [ -f "$out/class$cl.log" ] && cat "$out/class$cl.log"
    [ -f "$out/class$cl.ok" ] && mut_ok=$((mut_ok + $(cat "$out/class$cl.ok")))
    [ -f "$out/class$cl.fail" ] && fail=1
done
mut_fail=$((${#mutants[@]} - mut_ok + unbuilt))
printf 'grader tests: %d mutants, %s in %d s\n' $((${#mutants[@]} + unbuilt)) \
    "$([ $fail -eq 0 ] && echo 'all as expected' || echo 'FAILURES')" "$(($(date +%s) - t0))"
printf 'grader: %d passed, %d failed\n' $((ref_ok + mut_ok)) $((ref_fail + mut_fail))
exit $fail
