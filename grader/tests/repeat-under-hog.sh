#!/usr/bin/env bash
# Verdicts that must not depend on load, checked under load: a CPU hog (two
# busy processes per core, at normal priority) runs while
#   --mutant labL/NAME  the mutant is graded N times with --jobs 1 and N
#                       times with --jobs 4 (as run-mutants.sh grades it:
#                       --timeout 20); every grading must give the same
#                       points per untimed check;
#   --regrade           the course's regrade case (tests/course/run.sh,
#                       course-grade-handins-regrade) N times: a class of
#                       lab 1 hand-ins graded with make grade-handins, then
#                       erin's replaced by a broken one and regraded alone
#                       (ONLY=erin LAB=1); her runs drawn (task replays
#                       aside, as the test compares them) must be the class
#                       run's, the other rows unchanged, and her regraded
#                       points the same in every repeat.
# Prints one line per grading and a summary; exit 0 when every repeat agreed.
# Usage: grader/tests/repeat-under-hog.sh [-n N] [--no-hog] (--mutant labL/NAME | --regrade)...
# Heavy: N x 2 gradings. Run it niced on a shared machine; the hog itself is
# not niced (a niced hog would not compete).
set -u
cd "$(dirname "$0")/../.." || exit 1
n=5 hog=1 what=()
while [ $# -gt 0 ]; do
    case $1 in
    -n) n=$2; shift 2 ;;
    --no-hog) hog=0; shift ;;
    --mutant) what+=("mutant:$2"); shift 2 ;;
    --regrade) what+=(regrade); shift ;;
    *) echo "usage: $0 [-n N] [--no-hog] (--mutant labL/NAME | --regrade)..." >&2; exit 2 ;;
    esac
done
[ ${#what[@]} -gt 0 ] || { echo "usage: $0 [-n N] [--no-hog] (--mutant labL/NAME | --regrade)..." >&2; exit 2; }
GRADER=${GRADER:-build/host/grader}
[ -x "$GRADER" ] || { echo "no $GRADER: make grader first" >&2; exit 2; }
out=$(mktemp -d "${TMPDIR:-/tmp}/ncclab-hog.XXXXXX")
hogs=()
stop_hogs() { [ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null; wait "${hogs[@]}" 2>/dev/null; hogs=(); }
trap 'stop_hogs; rm -rf "$out"' EXIT
cp "$GRADER" "$out/grader" && GRADER=$out/grader
if [ $hog -eq 1 ]; then
    for _ in $(seq 1 $((2 * $(nproc)))); do
        bash -c 'while :; do :; done' &
        hogs+=($!)
    done
    echo "hog: ${#hogs[@]} busy processes on $(nproc) cores"
fi
fail=0 t0=$(date +%s)
load_peak=0
sample_load() { # keeps the highest 1-minute load average seen
    local l; l=$(cut -d' ' -f1 /proc/loadavg)
    awk -v a="$l" -v b="$load_peak" 'BEGIN { exit !(a > b) }' && load_peak=$l
}

points_of() { # RESULTS_JSON: "key score / max" per untimed check
    python3 - "$1" <<'PY'
import json, sys
try:
    tests = json.load(open(sys.argv[1]))["tests"]
except (OSError, ValueError, KeyError):
    print("no results.json"); sys.exit()
for t in tests:
    if not t.get("timed"):
        print("%s %g / %g" % (t.get("key"), t.get("score", 0), t.get("max_score", 0)))
PY
}

repeat_mutant() { # labL/NAME
    local m=$1 lab dir first="" i j p tag ok=0
    lab=${m%%/*}; lab=${lab#lab}
    dir=grader/tests/mutants/$m
    mkdir -p "$out/class"
    rm -rf "$out/class/${m##*/}"
    grader/tests/mutant-tree.sh "$dir" "$out/class/${m##*/}" || { fail=1; return; }
    for i in $(seq 1 "$n"); do
        for j in 1 4; do
            tag=$m-j$j-$i
            local t
            t=$(date +%s)
            "$GRADER" --lab "$lab" --submissions "$out/class" --out "$out/$i-$j" --no-color \
                --timeout 20 --jobs $j >"$out/$i-$j.txt" 2>&1
            sample_load
            p=$(points_of "$out/$i-$j/students/${m##*/}/results.json" | paste -sd' ')
            [ -n "$first" ] || first=$p
            if [ "$p" = "$first" ]; then ok=$((ok + 1)); s=same; else s=DIFFERENT; fail=1; fi
            printf '%-28s %3d s load %-6s %s: %s\n' "$tag" $(($(date +%s) - t)) \
                "$(cut -d' ' -f1 /proc/loadavg)" "$s" "$p"
            rm -rf "$out/$i-$j"
        done
    done
    echo "mutant $m: $ok of $((2 * n)) gradings gave the same points"
}

repeat_regrade() {
    local i ok=0 h=$out/handins t s r points first_points=
    lms() { # NAME DIR: lab 1's files of DIR as a tarball NAME in $h
        rm -rf "$out/lms" && mkdir -p "$out/lms/lab1_bootstrap" &&
            cp "$2"/bootstrap.c "$2"/answers.md "$out/lms/lab1_bootstrap/" &&
            tar -C "$out/lms" -czf "$h/$1" lab1_bootstrap
    }
    mkdir -p "$out/broken1" && cp solutions/lab1_bootstrap/answers.md "$out/broken1/" &&
        sed 's/ncclFloat, ncclSum, comm, stream/ncclFloat, ncclMax, comm, stream/' \
            solutions/lab1_bootstrap/bootstrap.c >"$out/broken1/bootstrap.c"
    for i in $(seq 1 "$n"); do
        t=$(date +%s)
        rm -rf "$h" "$out/graded" && mkdir -p "$h"
        lms handin-erin-lab1.tar.gz solutions/lab1_bootstrap
        lms handin-carol-lab1.tar.gz solutions/lab1_bootstrap
        make -s grade-handins HANDINS="$h" OUT="$out/graded" >"$out/class.txt" 2>&1
        cp "$out/graded/grades/gradebook.csv" "$out/before.csv"
        cp "$out/graded/grades/students/erin/grade.json" "$out/erin-before.json"
        lms handin-erin-lab1.tar.gz "$out/broken1"
        make -s grade-handins HANDINS="$h" OUT="$out/graded" ONLY=erin LAB=1 \
            >"$out/regrade.txt" 2>&1
        local rc=$?
        sample_load
        s=$(python3 - "$out/before.csv" "$out/graded/grades/gradebook.csv" "$out/erin-before.json" \
            "$out/graded/grades/students/erin/grade.json" "$rc" <<'PY'
import csv, json, sys
bad = []
before = {r["student_id"]: r for r in csv.DictReader(open(sys.argv[1]))}
after = {r["student_id"]: r for r in csv.DictReader(open(sys.argv[2]))}
for k in before:
    if k != "erin" and before[k] != after.get(k):
        bad.append("%s's row changed" % k)
e = after.get("erin", {})
if sys.argv[5] != "0":
    bad.append("the regrade exited %s" % sys.argv[5])
if not (0 < float(e.get("lab1", 0) or 0) < 24):
    bad.append("erin's regraded lab1 %s" % e.get("lab1"))
labels = lambda p: [r["label"] for l in json.load(open(p))["labs"] for r in l["runs"]]
drawn = lambda p: [x for x in labels(p) if "/" not in x.split(":")[0]]
if drawn(sys.argv[3]) != drawn(sys.argv[4]):
    bad.append("the regrade drew other runs than the class run")
extra = len(labels(sys.argv[3])) - len(drawn(sys.argv[3])), len(labels(sys.argv[4])) - len(drawn(sys.argv[4]))
print("; ".join(bad) or "same %d runs drawn (task replays: class %d, regrade %d), erin %s"
      % (len(drawn(sys.argv[3])), extra[0], extra[1], e.get("lab1")))
PY
)
        # Her broken hand-in's points are a verdict too: the same every time
        # (a run of hers that lost its records under load once made it 15
        # instead of 17: common/results.h, ncclab_report_agree).
        r=FAIL
        case $s in same*)
            points=${s##*, erin }
            [ -n "$first_points" ] || first_points=$points
            if [ "$points" = "$first_points" ]; then r=ok; ok=$((ok + 1))
            else s="$s; erin's regraded points differ from the first repeat's ($first_points)"; fi ;;
        esac
        [ $r = ok ] || fail=1
        printf 'regrade %-3d %3d s load %-6s %s: %s\n' "$i" $(($(date +%s) - t)) \
            "$(cut -d' ' -f1 /proc/loadavg)" "$r" "$s"
    done
    echo "regrade: $ok of $n as the course test wants"
}

for w in "${what[@]}"; do
    case $w in
    mutant:*) repeat_mutant "${w#mutant:}" ;;
    regrade) repeat_regrade ;;
    esac
done
stop_hogs
echo "repeat-under-hog: $([ $fail -eq 0 ] && echo 'all repeats agreed' || echo 'DIFFERENCES') in $(($(date +%s) - t0)) s, peak 1-minute load $load_peak"
exit $fail
