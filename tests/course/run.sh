#!/bin/bash
# Course delivery, end to end: the student kit (export, clean clone, build, no
# solution text, grading, safe commands), hand-ins (make handin, hostile
# tarballs, batch grading), the Gradescope autograder zip in a fake
# /autograder, the GitHub Classroom workflow's own commands, and the
# instructor commands the README gives. Summary: "course: N passed, N failed".
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
T=$(mktemp -d "${TMPDIR:-/tmp}/ncclab-course.XXXXXX")
trap 'rm -rf "$T"' EXIT
L=$NCCLAB_TEST_LOGS
kit=$T/kit clone=$T/clone
here=$TEST_ROOT/tests/course
total() { grep -oE 'TOTAL: [0-9.]+ / [0-9.]+' "$1" | tail -1; } # "TOTAL: x / y"
full_marks() { local t; t=$(total "$1"); [ -n "$t" ] && awk '{ exit !($2 == $4 && $4 > 0) }' <<< "$t"; }
drop_references() { # copy every reference solution (lab 7's hand-in too) into $1/labs
    local d
    for d in solutions/lab[0-9]_*; do cp -R "$d/." "$1/labs/$(basename "$d")/"; done
}
# Seconds each test took, in its PASS/FAIL line (the section must stay short).
t_last=$SECONDS
eval "$(declare -f pass | sed '1s/pass/lib_pass/')"
eval "$(declare -f fail | sed '1s/fail/lib_fail/')"
pass() { lib_pass "$1 ($((SECONDS - t_last)) s)"; t_last=$SECONDS; }
fail() { lib_fail "$@"; t_last=$SECONDS; }
git_q() { git -c user.name=ncclab -c user.email=ncclab@localhost -c init.defaultBranch=main "$@" -q; }

echo "== course: the kit's own tools"
name=course-build-tools
if run_cmd $name 300 make -j2 host grader build/host/unpack-handins; then pass $name
else fail $name "make host grader build/host/unpack-handins failed"; fi

# ---- 1. the student kit ----
echo "== course: student kit"
# The kit's builds and gradings here are host-backend ones (NOCUDA=1), as on
# the machines a course grades on (Gradescope, GitHub's runners): the CUDA
# compile of the same sources is the suite's cuda section, and the kit's
# CUDA rules are checked below with a dry run (every source they need is in
# the kit). Compiling every lab with nvcc in each of the kit's builds took
# two minutes of this section.
export NOCUDA=1
name=course-export
if run_cmd $name 240 ./ncclab export-student "$kit"; then
    missing="" leaked=""
    for p in README.md .gitignore .github/workflows/classroom.yml Makefile ncclab grader/main.c \
        grader/points.conf grader/profiles/host.profile mk/grader.mk mk/lab7.mk mk/lab8.mk docs/grading.md \
        handouts/lab7-reference/h200x2-sweep.csv handouts/lab7-reference/h200x2-sweep.png \
        .ncclab/skeletons/lab1_bootstrap/bootstrap.c tools/run-lab tools/handin sbatch/lab1.sbatch \
        labs/lab1_bootstrap/main.c labs/lab1_bootstrap/lab1.h labs/lab1_bootstrap/bootstrap.c; do
        [ -e "$kit/$p" ] || missing="$missing $p"
    done
    for p in solutions grader/tests grader/hidden tests/run-all.sh tests/unit tests/e2e .ci \
        handouts/lab7-reference/handin \
        docs/grader.md tools/export-student tools/gradescope-pack tools/grade-handins \
        tools/unpack-handins.c tools/lint course; do
        [ -e "$kit/$p" ] && leaked="$leaked $p"
    done
    if [ -n "$missing$leaked" ]; then fail $name "missing:${missing:- none}; must not be there:${leaked:- none}"
    else pass $name; fi
else fail $name "export-student failed"; fi

name=course-export-make-target
if run_cmd $name 240 make student-kit DIR="$T/kit-by-make" && diff -r -q "$kit" "$T/kit-by-make" >> "$L/$name.log" 2>&1
then pass $name; else fail $name "make student-kit DIR=... failed or wrote another kit"; fi

name=course-kit-has-no-solution-text
if run_cmd $name 60 python3 "$here/solution-lines.py" solutions "$kit"; then pass $name
else fail $name "solution code in the kit (LEAK lines in the log)"; fi

# The instructor's answer key: none of its values in the kit, in any form a
# student could read as the answer (the key's line, an answered Q line, the
# grader code that once accepted it).
name=course-kit-no-answer-key
if run_cmd $name 30 python3 grader/tests/answer-key-leaks.py grader/hidden/answers.conf "$kit"; then pass $name
else fail $name "a value of the answer key is in the kit (FAIL lines in the log)"; fi

# The leak detector that export-student ran (tools/find-leaks): no statement
# of any solution block, renamed or re-spaced, anywhere in the kit; and it
# finds one planted in a copy of a kit file, under other names, split over
# two lines.
name=course-kit-no-leaks
if run_cmd $name 60 tools/find-leaks solutions "$kit" && grep -q ': 0 leak(s)$' "$L/$name.log"; then pass $name
else fail $name "reference-solution statements in the kit (LEAK lines in the log)"; fi

name=course-kit-leak-detector-catches-a-plant
mkdir -p "$T/plant/common"
{ cat "$kit/common/lab.c"
  printf '\nstatic void sum_to(ncclComm_t c, cudaStream_t st, const float *g, float *acc, size_t k, int r)\n'
  printf '{\n    NCCL_CHECK(ncclReduce(g, acc,\n                          k, ncclFloat, ncclSum, r, c, st));\n}\n'; } > "$T/plant/common/lab.c"
run_cmd $name 60 tools/find-leaks solutions "$T/plant"
rc=$?
if [ $rc -eq 1 ] && grep -qE '^LEAK common/lab\.c:[0-9]+: NCCL_CHECK\(ncclReduce' "$L/$name.log" &&
    grep -q 'copies solutions/lab3_sgd/sgd.c' "$L/$name.log"; then pass $name
else fail $name "the planted copy of lab 3's ncclReduce was not reported (exit $rc)"; fi

# The export's check of the runs answers.md asks for (tools/answer-run-leaks):
# a lab 6 answers.md that asks for the run printing its groups is reported.
name=course-kit-answer-run-leak-caught
mkdir -p "$T/plant-runs/labs/lab6_groups"
# shellcheck disable=SC2016 # backquotes of Markdown, not a command
printf '# Lab 6\n\nRun `make run LAB=6 NP=8 ARGS="--ranks-per-node 3"` and read the groups.\n\nQ1:\n' \
    > "$T/plant-runs/labs/lab6_groups/answers.md"
run_cmd $name 120 tools/answer-run-leaks grader/hidden/answers.conf "$T/plant-runs"
rc=$?
if [ $rc -eq 1 ] && grep -q '^LEAK lab 6 Q1 (1 4 7)' "$L/$name.log"; then pass $name
else fail $name "the planted run printing lab 6's Q1 answer was not reported (exit $rc)"; fi

# Open MPI failing to start a run that answers.md asks for (seen under heavy
# load: "orte_init failed", no rank's record) is made again, as the grader
# does, and a run that never starts says why: a fake launcher fails the
# first start, then one that fails every start.
name=course-kit-answer-run-launch-retry
mkdir -p "$T/retry-runs/labs/lab6_groups"
cp labs/lab6_groups/answers.md "$T/retry-runs/labs/lab6_groups/"
cat > "$T/retry-launch.sh" << 'SH'
#!/bin/bash
if [ ! -e "$RETRY_STATE" ] || [ -n "${RETRY_ALWAYS:-}" ]; then
    : > "$RETRY_STATE"
    echo "It looks like orte_init failed for some reason; your parallel process is" >&2
    echo "likely to abort." >&2
    exit 1
fi
root=(); [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
exec mpirun -np 4 "${root[@]}" --oversubscribe --mca btl self,vader,tcp "$@"
SH
chmod +x "$T/retry-launch.sh"
rm -f "$T/retry-state"
LAUNCH="$T/retry-launch.sh" RETRY_STATE="$T/retry-state" \
    run_cmd $name 180 tools/answer-run-leaks grader/hidden/answers.conf "$T/retry-runs"
rc_once=$?
cp "$L/$name.log" "$L/$name.once.log"
LAUNCH="$T/retry-launch.sh" RETRY_STATE="$T/retry-state" RETRY_ALWAYS=1 \
    run_cmd $name 180 tools/answer-run-leaks grader/hidden/answers.conf "$T/retry-runs"
rc_always=$?
cat "$L/$name.once.log" >> "$L/$name.log"
if [ $rc_once -ne 0 ] || ! grep -q 'could not start .* (try 1 of 3): made again' "$L/$name.once.log"; then
    fail $name "a run Open MPI failed to start once was not made again and passed (exit $rc_once)"
elif [ $rc_always -ne 2 ] || ! grep -q '(try 2 of 3)' "$L/$name.log" || grep -q '(try 3 of 3)' "$L/$name.log" ||
    ! grep -q 'orte_init failed' "$L/$name.log"; then
    fail $name "a run Open MPI never starts: want exit 2 after three tries, naming orte_init (exit $rc_always)"
else pass $name; fi

name=course-kit-no-pointer-to-solutions
if grep -rn --include='*.md' 'solutions/' "$kit" > "$L/$name.log"; then
    fail $name "the kit's docs mention solutions/ (listed in the log)"
else pass $name; fi

# Every relative Markdown link in the kit leads to a file of the kit.
name=course-kit-links-resolve
python3 - "$kit" > "$L/$name.log" 2>&1 << 'PY'
import os, re, sys
kit, bad = sys.argv[1], 0
for base, dirs, files in os.walk(kit):
    dirs[:] = [d for d in dirs if d != ".git"]
    for f in files:
        # A template's links point at files next to the copy made from it.
        if not f.endswith(".md") or "template" in f:
            continue
        p = os.path.join(base, f)
        for m in re.finditer(r"\]\(([^)\s#]+)(#[^)]*)?\)", open(p, encoding="utf-8").read()):
            t = m.group(1)
            if re.match(r"[a-z]+:", t):
                continue
            if not os.path.exists(os.path.normpath(os.path.join(base, t))):
                print("%s: broken link %s" % (os.path.relpath(p, kit), t)); bad += 1
print("%d broken link(s)" % bad); sys.exit(1 if bad else 0)
PY
if [ $? -eq 0 ]; then pass $name; else fail $name "broken links in the kit's Markdown"; fi

# Every tool the kit's handouts, docs, labs and common code name is in the
# kit: a student told to run tools/launch must find it (a student walkthrough
# did not). The grader's sources may name the instructors' tools, and tests/
# (the kit's own suite, not shipped) is named only as where figures came from.
name=course-kit-named-tools-exist
python3 - "$kit" > "$L/$name.log" 2>&1 << 'PY'
import os, re, sys
kit, bad, seen = sys.argv[1], 0, 0
path = re.compile(r"(?<![\w/.-])(tools/[\w.-]+)")
for base, dirs, files in os.walk(kit):
    dirs[:] = [d for d in dirs if d not in (".git", ".ncclab", "grader")]
    for f in files:
        p = os.path.join(base, f)
        if not f.endswith((".md", ".c", ".h", ".cu", ".sh")) and not os.path.dirname(p).endswith("tools"):
            continue
        try:
            lines = open(p, encoding="utf-8").read().splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        for i, line in enumerate(lines, 1):
            for m in path.finditer(line):
                t = m.group(1).rstrip(".")
                seen += 1
                if not os.path.exists(os.path.join(kit, t)):
                    print("%s:%d: names %s, which is not in the kit" % (os.path.relpath(p, kit), i, t))
                    bad += 1
print("%d path(s) named, %d missing" % (seen, bad)); sys.exit(1 if bad else 0)
PY
if [ $? -eq 0 ]; then pass $name; else fail $name "the kit names tools it lacks (in the log)"; fi

# A clean copy, as a course would publish it and a student would clone it.
name=course-kit-clean-clone-builds
if (cd "$kit" && git_q init && git add -A && git_q commit -m "ncclab student kit") > "$L/$name.log" 2>&1 &&
    git_q clone "$kit" "$clone" >> "$L/$name.log" 2>&1 &&
    run_cmd $name.make 300 make -C "$clone" -j2 all grader; then
    cat "$L/$name.make.log" >> "$L/$name.log"
    refs=$(ls "$clone"/build/*/bin/*-ref 2> /dev/null)
    if [ -n "$refs" ]; then fail $name "reference binaries were built: $refs"
    elif [ ! -x "$clone/build/host/bin/lab1" ] || [ ! -x "$clone/build/host/grader" ]; then
        fail $name "no build/host/bin/lab1 or grader"
    else pass $name; fi
else
    cat "$L/$name.make.log" >> "$L/$name.log" 2> /dev/null
    fail $name "the exported kit does not build from a clean clone"
fi


# The groups below run at once (the section is mostly waiting: builds,
# gradings, Slurm-free tools), so each that changes a clone of the kit has
# its own, copied from the clean build: the hand-ins' (references in it) and
# GitHub Classroom's (its template state). The kit's own tests keep $clone.
clone_b=$T/clone-handins clone_d=$T/clone-classroom
cp -a "$clone" "$clone_b" && cp -a "$clone" "$clone_d" && drop_references "$clone_b"
# Gradescope's hand-in upload: lab 1's tarball as make handin writes it,
# from the hand-ins' clone before its own tests start (they make theirs).
mkdir -p "$T/gs-handin" && make -s -C "$clone_b" handin LAB=1 HANDIN_USER=alice > "$L/course-gs-handin.log" 2>&1 &&
    mv "$clone_b/handin-alice-lab1.tar.gz" "$T/gs-handin/"

# The student kit's own gradings and tools, and the instructor's tree.
group_kit() {
# The kit's CUDA build: every rule and source it needs is there (make -n
# fails on a missing one). Only where this machine has nvcc and NCCL.
name=course-kit-cuda-rules
if [ -n "$(env -u NOCUDA make -s -C "$clone" --no-print-directory print-HAVE_CUDA)" ]; then
    if run_cmd $name 60 env -u NOCUDA make -C "$clone" -n cuda CUDA_ARCHS=90 &&
        grep -q 'kernels.cu' "$L/$name.log" && grep -q 'build/cuda/bin/lab8' "$L/$name.log"; then pass $name
    else fail $name "make -n cuda in the kit failed or builds no lab 8 (a rule or source missing from the export?)"; fi
else echo "  SKIP  $name: no nvcc or nccl.h here"; fi

expect_error course-kit-no-reference-run 2 'no reference solutions|does not have' 60 \
    make -C "$clone" -s run LAB=1 REF=1 NP=1
expect_error course-kit-no-reference-binary 2 'no reference solutions' 60 \
    make -C "$clone" -s build/host/bin/lab1-ref
expect_error course-kit-ncclab-test-says-so 2 'does not carry the kit.s own test suite.*|\./ncclab check' 30 \
    "$clone/ncclab" test

name=course-kit-help-is-for-students
if run_cmd $name 30 make -C "$clone" -s help; then
    staff=$(grep -E '^  (labs|check-skeletons|test|lint|format|student-kit|gradescope|grade-handins) ' "$L/$name.log")
    if [ -n "$staff" ]; then fail $name "make help lists staff targets: $staff"
    elif ! grep -qE '^  run ' "$L/$name.log" || ! grep -qE '^  grade ' "$L/$name.log" ||
        ! grep -qE '^  handin ' "$L/$name.log"; then fail $name "make help lacks run, grade or handin"
    else pass $name; fi
else fail $name "make help failed"; fi

# The untouched skeleton fails cleanly: the grader's status 1 (make reports
# "Error 1"), a report, no crash of the grader.
name=course-kit-grade-skeleton-fails-cleanly
run_cmd $name 300 make -C "$clone" grade LAB=1
rc=$?
if [ $rc -eq 0 ]; then fail $name "the skeleton passed"
elif ! grep -q 'grade\] Error 1' "$L/$name.log"; then fail $name "the grader did not exit with status 1 (exit $rc)"
elif ! grep -qE 'TOTAL: 0 / [1-9]' "$L/$name.log"; then fail $name "no 'TOTAL: 0 / N' line"
elif [ ! -s "$clone/grade-out/lab1/report.txt" ] || [ ! -s "$clone/grade-out/lab1/results.json" ]; then
    fail $name "no report in grade-out/lab1/"
elif grep -qiE 'segmentation fault|core dumped|internal error|Aborted' "$L/$name.log"; then
    fail $name "the grader crashed"
else pass $name; fi

# Lab 8 runs on the student's labs 1, 2 and 7 (common/taught.h): with one
# of them unwritten, the report sends the student to that lab's handout,
# not to lab 8's, naming every unfinished task of that lab at once. Lab 8's
# reference with lab 1's skeleton (no GPU choice, no communicator),
# then with lab 1's reference and lab 2's skeleton (the race's baseline).
cp solutions/lab8_own_allreduce/own_allreduce.c "$clone/labs/lab8_own_allreduce/"
name=course-kit-lab8-points-to-lab1
run_cmd $name 300 make -C "$clone" grade LAB=8
if ! grep -q 'finish lab 1.s Task 2 first' "$L/$name.log"; then fail $name "no 'finish lab 1's Task 2 first' diagnosis"
elif ! grep -q 'then its Task 3' "$clone/grade-out/lab8/report.txt"; then fail $name "lab 1's skeleton lacks Task 3 too, but the diagnosis names Task 2 alone (every unfinished task at once)"
elif ! grep -q '→ read handouts/lab1.md, section "Choosing the GPU"' "$L/$name.log" ||
    grep -q '→ read handouts/lab8.md' "$L/$name.log"; then fail $name "the report does not point to lab 1's handout (only)"
else pass $name; fi
cp solutions/lab1_bootstrap/bootstrap.c "$clone/labs/lab1_bootstrap/"
name=course-kit-lab8-points-to-lab2
run_cmd $name 300 make -C "$clone" grade LAB=8
if ! grep -q "finish lab 2's Task 1 first" "$L/$name.log"; then fail $name "no 'finish lab 2's Task 1 first' diagnosis"
elif ! grep -q '→ read handouts/lab2.md, section "Task 1"' "$L/$name.log"; then fail $name "the report does not point to lab 2's handout"
elif ! grep -qE 'Task 1: ring all-reduce.* 6 / 6 +PASS' "$L/$name.log"; then fail $name "lab 8's own tasks lost points to lab 2's skeleton"
else pass $name; fi

drop_references "$clone"
name=course-kit-grade-lab1-reference
run_cmd $name 300 make -C "$clone" grade LAB=1
if [ $? -eq 0 ] && full_marks "$L/$name.log"; then pass $name
else fail $name "the reference for lab 1 did not get full marks ($(total "$L/$name.log"))"; fi

name=course-kit-grade-all-references
run_cmd $name 600 make -C "$clone" grade LAB=all
if [ $? -eq 0 ] && full_marks "$L/$name.log"; then pass $name
else
    # The checks that lost points, at the end of the log the failure shows.
    { echo "--- the checks that lost points (grade-out/laball/report.txt):"
      grep -A4 -E ' (FAIL|WARN)$' "$clone/grade-out/laball/report.txt" | grep -v 'GPU only'; } >> "$L/$name.log" 2>&1
    fail $name "the references did not get full marks ($(total "$L/$name.log"))"
fi

# The kit's grader has no answer key: lab 1's fixed questions are left to the
# instructor, and -v prints no accepted value.
name=course-kit-grader-v-shows-no-answer
run_cmd $name 120 "$clone/build/host/grader" --root "$clone" --lab 1 --submission "$clone/labs" \
    -v --no-color --out "$T/grade-v"
if grep -qi 'accepted' "$L/$name.log"; then fail $name "grader -v printed accepted values (in the log)"
elif [ "$(grep -c 'graded by your instructor' "$L/$name.log")" -lt 4 ]; then
    fail $name "lab 1's four questions are not left to the instructor"
else pass $name; fi

# The README's first command, on the reference, through tools/run-lab: it
# rebuilds what changed (a marker compiled into the edited file shows up)
# and passes the short watchdog.
name=course-kit-run-rebuilds-after-an-edit
printf '\n#include <stdio.h>\n__attribute__((constructor)) static void ncclab_test_marker(void) { puts("fresh-build-marker"); }\n' \
    >> "$clone/labs/lab1_bootstrap/bootstrap.c"
run_cmd $name 120 make -C "$clone" run LAB=1 NP=2
rc=$?
if [ $rc -ne 0 ]; then fail $name "make run LAB=1 exited $rc"
elif ! grep -q fresh-build-marker "$L/$name.log"; then fail $name "the edit was not rebuilt before the run"
elif ! grep -qE 'bin/lab1 -T 30' "$L/$name.log"; then fail $name "make run did not pass -T 30"
else pass $name; fi
cp solutions/lab1_bootstrap/bootstrap.c "$clone/labs/lab1_bootstrap/bootstrap.c"
echo '/* my edit */' >> "$clone/labs/lab1_bootstrap/bootstrap.c"

name=course-kit-make-labs-keeps-edits
sum_before=$(md5sum < "$clone/labs/lab1_bootstrap/bootstrap.c")
rm -f "$clone/labs/lab3_sgd/sgd.c"
run_cmd $name 60 make -C "$clone" labs
rc=$?
if [ $rc -ne 0 ]; then fail $name "make labs exited $rc: keeping an edited file is not an error"
elif grep -q 'Error' "$L/$name.log"; then fail $name "make reported an error"
elif ! grep -q 'kept labs/lab1_bootstrap/bootstrap.c' "$L/$name.log"; then fail $name "the edited file is not named"
elif [ "$(md5sum < "$clone/labs/lab1_bootstrap/bootstrap.c")" != "$sum_before" ]; then fail $name "the edited file changed"
elif ! cmp -s "$clone/labs/lab3_sgd/sgd.c" "$clone/.ncclab/skeletons/lab3_sgd/sgd.c"; then
    fail $name "the deleted lab 3 file was not restored from the skeleton"
else pass $name; fi
cp solutions/lab3_sgd/sgd.c "$clone/labs/lab3_sgd/sgd.c"

name=course-kit-ncclab-check
run_cmd $name 300 "$clone/ncclab" check 1
if [ $? -eq 0 ] && full_marks "$L/$name.log"; then pass $name
else fail $name "./ncclab check 1 did not build and grade lab 1 to full marks"; fi

# ---- 2. the instructor's tree: make labs never destroys work ----
echo "== course: make labs in the instructor's tree"
name=course-make-labs-instructor
inst=$T/inst
mkdir -p "$inst"
cp -R Makefile tools labs solutions "$inst/" 2> "$L/$name.log"
{
    cd "$inst" && git_q init && git add -A && git_q commit -m base &&
        sed -i 's/TODO(Task 1)/TODO(Task 1, reworded)/' solutions/lab2_allreduce/allreduce.c &&
        echo '/* my work */' >> labs/lab1_bootstrap/bootstrap.c &&
        tools/mkskel --write > mkskel.out &&
        grep -q 'kept labs/lab1_bootstrap/bootstrap.c' mkskel.out &&
        grep -q 'reworded' labs/lab2_allreduce/allreduce.c &&
        grep -q 'my work' labs/lab1_bootstrap/bootstrap.c &&
        tools/mkskel --write --force &&
        ! grep -q 'my work' labs/lab1_bootstrap/bootstrap.c &&
        grep -rq 'my work' build/skeleton-backup/
} >> "$L/$name.log" 2>&1
if [ $? -eq 0 ]; then pass $name
else fail $name "make labs overwrote an edit, missed a solution change, or FORCE kept no backup"; fi
cd "$TEST_ROOT" || exit 1

# ---- 3. every driver's --help shows the defaults ----
name=course-help-shows-defaults
: > "$L/$name.log"
bad=""
for b in build/host/bin/lab[0-9]; do
    "$b" --help >> "$L/$name.log" 2>&1 || bad="$bad $(basename "$b")(exit)"
    for opt in -b -e -f -n -w -r -c -T; do
        "$b" --help 2> /dev/null | grep -E "^  $opt, " | grep -q '\[default: ' || bad="$bad $(basename "$b")$opt"
    done
done
if [ -z "$bad" ]; then pass $name; else fail $name "no default shown for:$bad"; fi

# Every lab on Classroom: lab 8 is a bonus, out of the maximum.
name=course-classroom-bonus
if [ -s "$clone/grade-out/laball/results.json" ] &&
    tools/grader-json classroom "$clone/grade-out/laball/results.json" > "$T/runner-all.json" &&
    python3 -c '
import json, sys
r, g = (json.load(open(p)) for p in sys.argv[1:3])
got = sum(t["score"] for t in r["tests"])
top = sum(t["max_score"] for t in g["tests"] if not t["bonus"])
bonus = sum(t["score"] for t in g["tests"] if t["bonus"])
assert bonus > 0 and r["max_score"] == top and got == top + bonus, (got, r["max_score"], top, bonus)
print("every lab: %s / %s (lab 8 bonus %s on top)" % (got, r["max_score"], bonus))' \
        "$T/runner-all.json" "$clone/grade-out/laball/results.json" > "$L/$name.log" 2>&1; then
    pass $name; echo "    ($(cat "$L/$name.log"))"
else fail $name "with every lab the maximum does not leave lab 8's bonus out ($(tail -1 "$L/$name.log" 2> /dev/null))"; fi

# The same every-lab grading as Gradescope reads it: lab 8's tests are extra
# credit (max_score 0), the bonus points on top of the score, the maximum
# the other labs'. The figure docs/grader.md tells the instructor to set as
# the assignment's points is points.conf's sum without the bonus labs (the
# instructor's kit, in the zip; this kit's grading leaves out the points of
# the answers it cannot key).
name=course-gradescope-bonus-every-lab
if [ -s "$clone/grade-out/laball/results.json" ] &&
    tools/grader-json gradescope "$clone/grade-out/laball/results.json" > "$T/gs-all.json" &&
    python3 -c '
import json, re, sys
r = json.load(open(sys.argv[1]))
conf = open(sys.argv[3]).read()
bonus_labs = re.search(r"^bonus_labs\s*=\s*(.*)$", conf, re.M).group(1).replace(",", " ").split()
course = sum(float(v) for lab, v in re.findall(r"^lab(\d)\.\S+\s*=\s*(\S+)", conf, re.M) if lab not in bonus_labs)
m = re.search(r"the bonus, (\d+) for every lab", open(sys.argv[2]).read())
bonus = [t for t in r["tests"] if t["name"].startswith("Lab 8")]
rest = [t for t in r["tests"] if not t["name"].startswith("Lab 8")]
top = sum(t["max_score"] for t in r["tests"])
got = sum(t["score"] for t in bonus)
assert bonus and all(t["max_score"] == 0 for t in bonus), "a lab 8 test counts in the maximum"
assert top == sum(t["max_score"] for t in rest) > 0, "maximum %s" % top
assert got > 0 and abs(r["score"] - (sum(t["score"] for t in rest) + got)) < 1e-6, (r["score"], got)
assert m and float(m.group(1)) == course, "docs/grader.md says %s for every lab, points.conf %g" % (m and m.group(1), course)
print("Gradescope, every lab (the kit): %g / %g, lab 8 bonus %g on top; the course: %g" % (r["score"], top, got, course))' \
        "$T/gs-all.json" docs/grader.md grader/points.conf > "$L/$name.log" 2>&1
then pass $name; echo "    ($(cat "$L/$name.log"))"
else fail $name "every lab on Gradescope: lab 8 not extra credit, or docs/grader.md's maximum is not points.conf's ($(tail -1 "$L/$name.log" 2> /dev/null))"; fi
}

# Hand-ins, LMS folders, a class in every layout (its own clone).
group_handins() {
# ---- 4. hand-ins ----
echo "== course: hand-ins"
name=course-handin-lab1
if run_cmd $name 60 make -C "$clone_b" handin LAB=1 HANDIN_USER=alice &&
    [ "$(tar -tzf "$clone_b/handin-alice-lab1.tar.gz" | sort | paste -sd' ')" = \
        "lab1_bootstrap/answers.md lab1_bootstrap/bootstrap.c" ]; then pass $name
else fail $name "handin-alice-lab1.tar.gz missing or not exactly lab 1's bootstrap.c and answers.md"; fi

name=course-handin-lab7
if run_cmd $name 60 make -C "$clone_b" handin LAB=7 HANDIN_USER=alice &&
    [ "$(tar -tzf "$clone_b/handin-alice-lab7.tar.gz" | sort | paste -sd' ')" = \
        "lab7_sweep/handin/report.md lab7_sweep/handin/sweep.csv lab7_sweep/handin/sweep.png lab7_sweep/handin/sweep.svg lab7_sweep/sweep.c" ]; then
    pass $name
else fail $name "lab 7's tarball is not its code and its four hand-in files"; fi

mv "$clone_b/labs/lab7_sweep/handin/report.md" "$T/report.md"
ln -s "$T/report.md" "$clone_b/labs/lab7_sweep/handin/report.md"
expect_error course-handin-refuses-symlink 2 'report.md is a symbolic link' 60 \
    make -C "$clone_b" -s handin LAB=7 HANDIN_USER=bob
rm "$clone_b/labs/lab7_sweep/handin/report.md"
mv "$T/report.md" "$clone_b/labs/lab7_sweep/handin/report.md"
expect_error course-handin-refuses-big-file 2 'over the 1 KiB cap' 60 \
    make -C "$clone_b" -s handin LAB=1 HANDIN_USER=bob HANDIN_MAX_KB=1
expect_error course-handin-refuses-bad-name 2 'cannot name a hand-in' 60 \
    make -C "$clone_b" -s handin LAB=1 'HANDIN_USER=../x'

# The instructor's side: a folder of tarballs, hostile ones included, named
# as make handin names them, and a browser's second download (bob's, the
# newer copy graded). Platforms' names (Canvas, Blackboard, a Gradescope
# export): lms-intake.sh below.
handins=$T/handins
python3 "$here/hostile-tarballs.py" "$handins" solutions/lab1_bootstrap > "$T/expect.tsv"
cp "$clone_b/handin-alice-lab7.tar.gz" "$handins/"
lms_tarball() { # NAME DIR: lab 1's files of DIR as a hand-in tarball named NAME
    rm -rf "$T/lmsdir" && mkdir -p "$T/lmsdir/lab1_bootstrap" &&
        cp "$2"/bootstrap.c "$2"/answers.md "$T/lmsdir/lab1_bootstrap/" &&
        tar -C "$T/lmsdir" -czf "$handins/$1" lab1_bootstrap
}
lms_tarball handin-erin-lab1.tar.gz solutions/lab1_bootstrap
lms_tarball "handin-bob-lab1.tar.gz" "$clone_b/.ncclab/skeletons/lab1_bootstrap"
lms_tarball "handin-bob-lab1 (1).tar.gz" solutions/lab1_bootstrap
lms_tarball handin-carol-lab1.tar.gz solutions/lab1_bootstrap
name=course-grade-handins
run_cmd $name 300 make grade-handins HANDINS="$handins" OUT="$T/graded"
rc=$?
{
    echo "--- checks"
    [ $rc -eq 0 ] || echo "BAD: make grade-handins exited $rc: a class run says graded (0) whatever the students' scores"
    while IFS=$'\t' read -r tb why; do
        line=$(grep -F "unpack-handins: $tb: " "$T/graded/unpack.log")
        if [ "$why" = - ]; then
            grep -qE 'REJECTED|skipped' <<< "$line" && echo "BAD: $tb was not unpacked: $line"
        else
            grep -qF -- "$why" <<< "$line" || echo "BAD: $tb: expected '$why', got: ${line:-nothing}"
        fi
    done < "$T/expect.tsv"
    ls /tmp/ncclab-escape-abs "$T/ncclab-escape-dotdot.c" "$T/graded/ncclab-escape-dotdot.c" 2> /dev/null |
        sed 's/^/BAD: escaped to /'
    find "$T/graded/class" -type l -o -type p -o -type c -o -type b | sed 's/^/BAD: not a plain file: /'
    python3 - "$T/graded/grades/gradebook.csv" << 'PY'
import csv, sys
rows = {r["student_id"]: r for r in csv.DictReader(open(sys.argv[1]))}
a = rows.get("alice")
if not a or float(a["total"]) != float(a["total_max"]) or a["lab1_status"] != "graded":
    print("BAD: alice's lab 1 and lab 7 hand-ins did not get full marks: %s" % a)
for s in ("sym", "abs", "dotdot", "fifo"):
    if s not in rows:
        print("BAD: %s (rejected tarball) is missing from the gradebook" % s)
    elif float(rows[s]["total"]) != 0 or "rejected" not in rows[s]["notes"]:
        print("BAD: %s (rejected tarball) scored %s, notes %r" % (s, rows[s]["total"], rows[s]["notes"]))
e = rows.get("erin")
if not e or float(e["lab1"]) != 24:
    print("BAD: erin's hand-in is not graded 24: %s" % e)
b = rows.get("bob")
if not b or float(b["lab1"]) != 24 or "superseded" not in b["notes"]:
    print("BAD: bob's newer copy '(1)' was not the one graded, or the older one not listed: %s" % b)
print("gradebook: %d rows; erin late=%s, bob notes=%r" % (len(rows), e and e["late"], b and b["notes"]))
PY
} > "$L/$name.checks" 2>&1
cat "$L/$name.checks" >> "$L/$name.log"
if [ ! -s "$T/graded/grades/gradebook.csv" ]; then fail $name "no gradebook"
elif grep -q '^BAD' "$L/$name.checks"; then fail $name "$(grep -c '^BAD' "$L/$name.checks") problem(s): $(grep -m3 '^BAD' "$L/$name.checks" | paste -sd';')"
else pass $name; fi

# A regrade of one student into the same output: erin's hand-in replaced by
# a broken one; only her row changes, and the runs are the class run's.
cp "$T/graded/grades/gradebook.csv" "$T/gradebook-before.csv"
cp "$T/graded/grades/students/erin/grade.json" "$T/erin-before.json"
mkdir -p "$T/broken1" && cp solutions/lab1_bootstrap/answers.md "$T/broken1/" &&
    sed 's/ncclFloat, ncclSum, comm, stream/ncclFloat, ncclMax, comm, stream/' solutions/lab1_bootstrap/bootstrap.c > "$T/broken1/bootstrap.c"
lms_tarball handin-erin-lab1.tar.gz "$T/broken1"
name=course-grade-handins-regrade
run_cmd $name 300 make grade-handins HANDINS="$handins" OUT="$T/graded" ONLY=erin LAB=1
rc=$?
problems=$(python3 - "$T/gradebook-before.csv" "$T/graded/grades/gradebook.csv" "$T/erin-before.json" \
    "$T/graded/grades/students/erin/grade.json" << 'PY'
import csv, json, sys
before = {r["student_id"]: r for r in csv.DictReader(open(sys.argv[1]))}
after = {r["student_id"]: r for r in csv.DictReader(open(sys.argv[2]))}
bad = []
if set(before) != set(after):
    bad.append("the students changed: %s" % sorted(set(before) ^ set(after)))
for k in before:
    if k != "erin" and before[k] != after.get(k):
        bad.append("%s's row changed" % k)
e = after.get("erin", {})
if not (0 < float(e.get("lab1", 0)) < 24):
    bad.append("erin's regraded row: %s" % e)
# The runs drawn, without the task replays ("default/time: ..."): those
# follow from how each hand-in did (a run that stopped gets them), not from
# the draw, and erin's two hand-ins differ.
runs = lambda p: [r["label"] for l in json.load(open(p))["labs"] for r in l["runs"]
                  if "/" not in r["label"].split(":")[0]]
if runs(sys.argv[3]) != runs(sys.argv[4]):
    bad.append("the regrade drew other runs than the class run")
print("; ".join(bad))
PY
)
if [ $rc -ne 0 ]; then fail $name "make grade-handins ONLY=erin LAB=1 exited $rc"
elif [ -n "$problems" ]; then fail $name "$problems"
else pass $name; fi

source "$here/lms-intake.sh" # Canvas, Blackboard, a Gradescope export: 12 students, none lost
source "$here/similarity.sh" # a near-copy pair among independent hand-ins

# ---- 4b. a class in every layout, with a roster ----
echo "== course: a class in every layout"
class=$T/class
mkdir -p "$class"/{alice,carol,dave,frank,gina,ivan/my-zip}
cp -R solutions/lab1_bootstrap "$class/alice/"                                   # lab folders
git_q clone "$kit" "$class/bob" && cp solutions/lab1_bootstrap/bootstrap.c solutions/lab1_bootstrap/answers.md \
    "$class/bob/labs/lab1_bootstrap/"                                             # a clone of the kit
cp solutions/lab1_bootstrap/bootstrap.c solutions/lab1_bootstrap/answers.md "$class/carol/"  # loose files
cp "$handins/handin-alice-lab1.tar.gz" "$class/dave/handin-dave-lab1.tar.gz"      # a hand-in tarball
cp -R solutions/lab1_bootstrap "$class/ivan/my-zip/"                              # a zip's folder around lab folders
cp "$clone_b/.ncclab/skeletons/lab1_bootstrap/bootstrap.c" "$class/frank/"          # the skeleton: fails
printf 'int broken(void) { return }\n' > "$class/gina/bootstrap.c"                # does not build
printf 'id,name,aliases\ns-alice,Alice Liddell,alice\ns-bob,Bob,bob\ns-zed,Zed (no folder),\n' > "$T/roster.csv"
name=course-class-layouts
run_cmd $name 300 build/host/grader --lab 1 --submissions "$class" --roster "$T/roster.csv" \
    --out "$T/class-out" --no-color
rc=$?
problems=$(python3 - "$T/class-out" "$rc" << 'PY'
import csv, json, os, sys
out, rc = sys.argv[1], int(sys.argv[2])
bad = []
# The documented columns (docs/grader.md, "The gradebook"), read by a CSV reader.
want = ["student_id", "name", "folder", "lab1", "lab1_max", "lab1_status", "total", "total_max",
        "late", "submitted_at", "all_passed", "first_problem", "notes"]
rd = csv.DictReader(open(os.path.join(out, "gradebook.csv"), newline=""))
if rd.fieldnames != want:
    bad.append("columns %s, documented %s" % (rd.fieldnames, want))
rows = {r["student_id"]: r for r in rd}
for sid in ("s-alice", "s-bob", "carol", "dave", "ivan"):
    r = rows.get(sid)
    if not r or r["lab1"] != "24" or r["lab1_max"] != "24" or r["lab1_status"] != "graded":
        bad.append("%s did not get 24/24 graded: %s" % (sid, r))
if rows.get("s-alice", {}).get("name") != "Alice Liddell":
    bad.append("the roster's name is not in alice's row")
z = rows.get("s-zed")
if not z or z["lab1_status"] != "missing" or z["folder"] or z["total"] != "0":
    bad.append("the roster's student with no folder: %s" % z)
f = rows.get("frank")
if not f or f["lab1_status"] != "graded" or float(f["lab1"]) >= 24 or not f["first_problem"].startswith("lab 1: "):
    bad.append("the skeleton's row: %s" % f)
g = rows.get("gina")
if not g or g["lab1_status"] != "not built" or not g["first_problem"].startswith("lab 1: did not build"):
    bad.append("the broken build's row: %s" % g)
if "not on the roster" not in rows.get("carol", {}).get("notes", ""):
    bad.append("carol is not noted as off the roster")
if rc != 0:
    bad.append("exit status %d for a class that was graded (some students failing)" % rc)
# The per-check CSV: one row per student and check.
checks = list(csv.DictReader(open(os.path.join(out, "checks.csv"), newline="")))
if not checks or set(checks[0]) != {"student_id", "lab", "check", "title", "points", "max_points",
                                    "result", "visibility", "message"}:
    bad.append("checks.csv columns: %s" % (list(checks[0]) if checks else "none"))
if sum(float(c["points"]) for c in checks if c["student_id"] == "frank") != float(f["lab1"] if f else -1):
    bad.append("checks.csv does not add up to frank's lab 1")
# A build failure once in results.json: under the runs check only.
res = json.load(open(os.path.join(out, "students", "gina", "results.json")))
n = sum("Build errors:" in t["output"] for t in res["tests"])
if n != 1:
    bad.append("gina's build errors appear in %d tests of results.json, not 1" % n)
print("; ".join(bad))
PY
)
if [ -n "$problems" ]; then fail $name "$problems"
else pass $name; echo "    (gradebook: $(($(wc -l < "$T/class-out/gradebook.csv") - 1)) students, $(($(wc -l < "$T/class-out/checks.csv") - 1)) check rows)"; fi

# Regrades reproduce the class run's runs: frank alone (--only), and frank
# as one submission (--submission, the seed from his folder's name).
name=course-class-regrade
cp "$T/class-out/students/frank/grade.json" "$T/frank-class.json"
cp solutions/lab1_bootstrap/bootstrap.c solutions/lab1_bootstrap/answers.md "$class/frank/"
run_cmd $name 300 build/host/grader --lab 1 --submissions "$class" --roster "$T/roster.csv" \
    --out "$T/class-out" --only frank --no-color &&
    run_cmd $name.one 300 build/host/grader --lab 1 --submission "$class/frank" --out "$T/frank-one" --no-color
rc=$?
cp -R solutions/lab3_sgd "$class/alice/"
run_cmd $name.lab3 300 build/host/grader --lab 3 --submissions "$class" --roster "$T/roster.csv" \
    --out "$T/class-out" --only s-alice --no-color
problems=$(python3 - "$T/frank-class.json" "$T/class-out" "$T/frank-one/grade.json" "$rc" "$L/$name.params" << 'PY'
import csv, json, os, sys
# The runs drawn, without the task replays ("default/time: ..."): those
# follow from how the code did (the skeleton's runs stopped, the reference's
# do not), their parameters from the runs they stand for.
runs = lambda p: [r["label"] for l in json.load(open(p))["labs"] for r in l["runs"]
                  if "/" not in r["label"].split(":")[0]]
bad = []
before, out = runs(sys.argv[1]), sys.argv[2]
if sys.argv[4] != "0":
    bad.append("a regrade exited %s" % sys.argv[4])
if runs(os.path.join(out, "students", "frank", "grade.json")) != before:
    bad.append("--only frank drew other runs than the class run")
if runs(sys.argv[3]) != before:
    bad.append("--submission class/frank drew other runs than the class run")
with open(sys.argv[5], "w") as f: # the parameters, for the log
    f.write("frank: the same %d runs in the class run, --only frank and --submission class/frank, e.g.\n" % len(before))
    f.writelines("      %s\n" % r for r in before if r.startswith("hidden"))
rows = {r["student_id"]: r for r in csv.DictReader(open(os.path.join(out, "gradebook.csv")))}
if rows.get("frank", {}).get("lab1") != "24":
    bad.append("frank's regrade is not in the gradebook: %s" % rows.get("frank"))
a = rows.get("s-alice", {})
if a.get("lab1") != "24" or a.get("lab3") != "24" or a.get("lab3_status") != "graded":
    bad.append("lab 3 regraded for alice did not join her lab 1: %s" % a)
if rows.get("carol", {}).get("lab3_status") != "not graded":
    bad.append("carol's lab 3 should read 'not graded': %s" % rows.get("carol"))
print("; ".join(bad))
PY
)
if [ -n "$problems" ]; then fail $name "$problems"; else pass $name; sed 's/^/    /' "$L/$name.params"; fi

# The cluster path without Slurm (what tests/gpu/grade-class.sh runs on a
# GPU box): tools/grade-cluster --local grades each slice as an array task
# would, then merges; the Slurm section grades a class of five with sbatch.
name=course-cluster-local
rm -rf "$T/cl" && for s in r1 r2 r3; do mkdir -p "$T/cl/class/$s" && cp -R solutions/lab1_bootstrap "$T/cl/class/$s/"; done
run_cmd $name 300 tools/grade-cluster --local --chunks 3 -- --lab 1 --submissions "$T/cl/class" --out "$T/cl/out" --no-color
rc=$?
problems=$(python3 - "$T/cl/out" "$rc" << 'PY'
import csv, os, sys
rows = list(csv.DictReader(open(os.path.join(sys.argv[1], "gradebook.csv"), newline="")))
bad = [] if sys.argv[2] == "0" else ["exit status %s" % sys.argv[2]]
if sorted(r["student_id"] for r in rows) != ["r1", "r2", "r3"] or any(r["lab1"] != "24" for r in rows):
    bad.append("gradebook rows: %s" % [(r["student_id"], r["lab1"]) for r in rows])
print("; ".join(bad))
PY
)
if [ -n "$problems" ]; then fail $name "$problems"
elif [ "$(grep -c '^grade-cluster: slice [1-3]/3 ended with status 0' "$L/$name.log")" -ne 3 ]; then fail $name "not three slices, each ended 0"
else pass $name; fi

name=course-leaderboard-off
if run_cmd $name 60 python3 -c '
import json, sys
assert "leaderboard" not in json.load(open(sys.argv[1]))' "$T/class-out/students/carol/results.json"; then pass $name
else fail $name "a results.json without --leaderboard has a leaderboard"; fi
}

# Gradescope: the zip, setup.sh, run_autograder on uploads; the leaderboard.
group_gradescope() {
# ---- 5. Gradescope ----
echo "== course: Gradescope"
ag=$T/autograder
printf 'a-course-secret-for-the-tests\n' > "$T/secret"
expect_error course-gradescope-needs-secret 2 'make course-secret' 60 \
    make gradescope LAB=1 SECRET="$T/no-such-secret"
name=course-gradescope-zip
if run_cmd $name 120 make gradescope LAB=1 SECRET="$T/secret" LEADERBOARD=1 && [ -s build/gradescope/autograder.zip ] &&
    mkdir -p "$ag/source" "$ag/results" && (cd "$ag/source" && unzip -q "$TEST_ROOT/build/gradescope/autograder.zip") &&
    [ -x "$ag/source/setup.sh" ] && [ -x "$ag/source/run_autograder" ] && [ ! -e "$ag/source/kit/solutions" ]; then
    if ! cmp -s "$T/secret" "$ag/source/kit/grader/hidden/seed"; then fail $name "the course secret is not in the zip"
    elif ! grep -qx 'LEADERBOARD=1' "$ag/source/ncclab-autograder.conf"; then fail $name "LEADERBOARD=1 did not reach the zip"
    else pass $name; fi
else fail $name "no autograder.zip with setup.sh and run_autograder at its root (or solutions/ in it)"; fi
# What Gradescope does: setup.sh once (its apt step is a no-op here: the
# packages are installed), run_autograder copied to the root, then run.
name=course-gradescope-setup
if AUTOGRADER_ROOT=$ag run_cmd $name 300 bash "$ag/source/setup.sh" &&
    cp "$ag/source/run_autograder" "$ag/run_autograder"; then pass $name
else fail $name "setup.sh failed"; fi

gs_metadata() { # ID CREATED: Gradescope's submission_metadata.json for user ID, due 2026-11-20 23:59
    printf '{"id": 1, "created_at": "%s", "assignment": {"due_date": "2026-11-20T23:59:00.000000-08:00", "title": "Lab 1"},
 "users": [{"email": "", "id": %s, "name": "Student %s"}], "previous_submissions": []}\n' "$2" "$1" "$1" \
        > "$ag/submission_metadata.json"
}
gradescope_case() { # NAME WANT: run_autograder on $ag/submission, validate, print
    local name=$1 want=$2
    rm -rf "$ag/results"/*
    AUTOGRADER_ROOT=$ag run_cmd $name 300 "$ag/run_autograder"
    if python3 "$here/check-gradescope.py" "$ag/results/results.json" "$want" > "$L/$name.json" 2>&1; then
        pass $name
    else fail $name "results.json invalid or not the expected score ($(tail -1 "$L/$name.json"))"; fi
    echo "    --- $name: results.json, validated"
    sed 's/^/    | /' "$L/$name.json"
    cp "$ag/results/ncclab-grade.json" "$T/$name.grade.json" 2> /dev/null
}
rm -rf "$ag/submission"; mkdir -p "$ag/submission"
cp solutions/lab1_bootstrap/bootstrap.c solutions/lab1_bootstrap/answers.md "$ag/submission/"
gs_metadata 1001 2026-11-19T10:00:00.000000-08:00
gradescope_case course-gradescope-reference full
# A broken submission, uploaded as a repository: the all-reduce takes the
# maximum instead of the sum (a public run fails), and the launcher's world
# size is misread under srun (only a hidden run fails: the mutant
# lab1/slurm-wrong-size).
rm -rf "$ag/submission" "$T/mutant"; mkdir -p "$ag/submission/labs/lab1_bootstrap"
grader/tests/mutant-tree.sh grader/tests/mutants/lab1/slurm-wrong-size "$T/mutant" > /dev/null 2>&1
sed 's/ncclFloat, ncclSum, comm, stream/ncclFloat, ncclMax, comm, stream/' "$T/mutant/bootstrap.c" \
    > "$ag/submission/labs/lab1_bootstrap/bootstrap.c"
cp solutions/lab1_bootstrap/answers.md "$ag/submission/labs/lab1_bootstrap/"
if cmp -s "$T/mutant/bootstrap.c" "$ag/submission/labs/lab1_bootstrap/bootstrap.c" ||
    cmp -s solutions/lab1_bootstrap/bootstrap.c "$T/mutant/bootstrap.c"; then
    fail course-gradescope-broken "the test's edits no longer apply to the lab 1 reference (update them)"
else
    gs_metadata 1002 2026-11-19T11:00:00.000000-08:00
    gradescope_case course-gradescope-broken partial
    # Hidden runs as hidden tests: their own after_due_date entries, and
    # nothing of them (id, command line) in any text a student sees before.
    name=course-gradescope-hidden-stay-hidden
    problems=$(python3 - "$ag/results/results.json" "$T/course-gradescope-broken.grade.json" << 'PY'
import json, sys
res, grade = (json.load(open(p)) for p in sys.argv[1:3])
hidden = [r["label"] for l in grade["labs"] for r in l["runs"] if r["hidden"]]
ids = [h.split(":")[0] for h in hidden]
visible = res["output"] + "".join(t["name"] + t["output"] for t in res["tests"] if t["visibility"] == "visible")
bad = ["a hidden run's %s shows in a visible test" % x for x in hidden + ids if x in visible]
late = [t for t in res["tests"] if t["visibility"] == "after_due_date"]
lost = [t for t in late if t["score"] < 0]
if not hidden:
    bad.append("no hidden run was made")
if not lost or not any(i in t["output"] for t in lost for i in ids):
    bad.append("no after_due_date entry takes back points with its run named")
if [t for t in res["tests"] if t["visibility"] == "visible" and t["status"] == "failed"] == []:
    bad.append("the public failure (rank_sum) is not visible")
print("; ".join(bad))
PY
)
    if [ -n "$problems" ]; then fail $name "$problems"; else pass $name; fi
fi
# A hand-in tarball as the upload, by another student, after the due date.
rm -rf "$ag/submission"; mkdir -p "$ag/submission"
cp "$T/gs-handin/handin-alice-lab1.tar.gz" "$ag/submission/"
gs_metadata 1003 2026-11-21T09:30:00.000000-08:00
gradescope_case course-gradescope-handin-tarball full
# Gradescope's "Regrade" of student 1001: run_autograder again on the
# same submission and metadata.
rm -rf "$ag/submission"; mkdir -p "$ag/submission"
cp solutions/lab1_bootstrap/bootstrap.c solutions/lab1_bootstrap/answers.md "$ag/submission/"
gs_metadata 1001 2026-11-19T10:00:00.000000-08:00
gradescope_case course-gradescope-regrade full
source "$here/gradescope-due.sh" # before the due date: the visible total; the bonus as extra credit
source "$here/gradescope-collect.sh" # a loose answers.md and a renamed tarball, collected as what they are
# The seed rule on Gradescope: each student's runs come from the course
# secret and the submitters' ids (submission_metadata.json); the same code
# from two students is run differently, a regrade of one draws its runs
# again, and a late submission is flagged.
name=course-gradescope-students-differ
problems=$(python3 - "$T/course-gradescope-reference.grade.json" "$T/course-gradescope-handin-tarball.grade.json" "$L/$name.params" "$T/course-gradescope-regrade.grade.json" << 'PY'
import json, sys
bad = []
try:
    a, b, again = (json.load(open(p)) for p in sys.argv[1:3] + sys.argv[4:5])
except (OSError, ValueError) as e:
    print("no grade.json kept for staff in results/: %s" % e); sys.exit()
# The runs drawn, without the task replays: those follow from a run that
# stopped (a busy machine can stop one), not from the draw.
runs = lambda g: [r["label"] for l in g["labs"] for r in l["runs"]
                  if "/" not in r["label"].split(":")[0]]
if a["identity"] != "gradescope:1001" or b["identity"] != "gradescope:1003":
    bad.append("identities %s, %s: not the submitters' ids" % (a["identity"], b["identity"]))
if runs(a) == runs(b):
    bad.append("students 1001 and 1003 got the same runs")
if runs(again) != runs(a) or again["identity"] != a["identity"]:
    bad.append("the regrade of 1001 drew other runs than its first grading")
with open(sys.argv[3], "w") as f: # the parameters, for the log
    f.write("same code, two students: %d of %d runs drawn differently, e.g.\n" %
            (sum(x != y for x, y in zip(runs(a), runs(b))), len(runs(a))))
    for x, y in [(x, y) for x, y in zip(runs(a), runs(b)) if x != y][:3]:
        f.write("      1001 %s\n      1003 %s\n" % (x, y))
    f.write("1001 regraded: the same %d runs\n" % len(runs(again)))
if any(l["late"] for l in a["labs"]) or not all(l["late"] for l in b["labs"]):
    bad.append("late flags: 1001 %s, 1003 %s" % ([l["late"] for l in a["labs"]], [l["late"] for l in b["labs"]]))
if not b["submitted_at"].startswith("2026-11-21T09:30"):
    bad.append("submitted_at %r" % b["submitted_at"])
print("; ".join(bad))
PY
)
if [ -n "$problems" ]; then fail $name "$problems"; else pass $name; sed 's/^/    /' "$L/$name.params"; fi

# Lab 8's race on Gradescope's leaderboard (--leaderboard; LEADERBOARD=1 in
# the zip): the entries in results.json, as Gradescope reads them.
name=course-leaderboard
rm -rf "$T/lb" && mkdir -p "$T/lb/sub" && cp -R solutions/lab8_own_allreduce "$T/lb/sub/"
if run_cmd $name 300 build/host/grader --lab 8 --submission "$T/lb/sub" --out "$T/lb/out" --leaderboard --no-color &&
    tools/grader-json gradescope "$T/lb/out/results.json" > "$T/lb/gradescope.json" &&
    python3 "$here/check-gradescope.py" "$T/lb/gradescope.json" full > "$L/$name.json" 2>&1 &&
    python3 -c '
import json, sys
b = json.load(open(sys.argv[1])).get("leaderboard") or []
names = [e["name"] for e in b]
assert "busbw, % of ncclAllReduce" in names and all(isinstance(e["value"], (int, float)) for e in b), b
print("leaderboard:", ", ".join("%s = %.3g" % (e["name"], e["value"]) for e in b))' "$T/lb/gradescope.json" >> "$L/$name.log" 2>&1; then
    pass $name; echo "    ($(grep -m1 '^leaderboard:' "$L/$name.log"))"
else fail $name "no valid leaderboard in lab 8's results.json"; fi
}

# GitHub Classroom: the workflow's own commands (its own clone).
group_classroom() {

# ---- 6. GitHub Classroom: the workflow's own commands on the kit ----
echo "== course: GitHub Classroom"
name=course-classroom-workflow
: > "$L/$name.log"
git -C "$clone_d" checkout -q -- labs .github && drop_references "$clone_d"
# The assignment's template grades lab 1 (as an instructor sets it).
if (cd "$clone_d" && tools/classroom-grade --set-labs 1) >> "$L/$name.log" 2>&1 &&
    python3 "$here/classroom-steps.py" "$clone_d/.github/workflows/classroom.yml" > "$T/steps" 2>> "$L/$name.log"; then
    out=$T/github_output status=0
    : > "$out"
    while IFS= read -r -d '' cmd; do
        echo "--- run: $cmd" >> "$L/$name.log"
        (cd "$clone_d" && GITHUB_OUTPUT=$out GITHUB_ACTIONS=true timeout 600 bash -e -c "$cmd") >> "$L/$name.log" 2>&1 ||
            { status=1; echo "--- failed: $cmd" >> "$L/$name.log"; }
    done < "$T/steps"
    result=$(sed -n 's/^result=//p' "$out" | tail -1)
    verdict=$(base64 -d <<< "$result" 2> /dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
got = sum(t["score"] for t in r["tests"])
labs = sorted({t["name"].split(":")[0] for t in r["tests"]})
ok = r["status"] == "pass" and r["max_score"] > 0 and got == r["max_score"] and labs == ["Lab 1"]
print("%s %s/%s (%d checks of %s)" % ("ok" if ok else "bad", got, r["max_score"], len(r["tests"]), ", ".join(labs)))' 2>&1)
    echo "--- reporter input: $verdict" >> "$L/$name.log"
    if [ $status -ne 0 ]; then fail $name "a run step of the workflow failed"
    elif [[ $verdict != ok* ]]; then fail $name "the result for the reporter is not lab 1's full marks: ${verdict:-none}"
    else pass $name; echo "    (GitHub Classroom would read: Points ${verdict#ok })"; fi
else fail $name "the workflow is not one GitHub Classroom reads, or --set-labs failed"; fi
source "$here/classroom-per-lab.sh" # a lab 2 template whose lab 1 is the skeleton: said, not a silent 0
}

# Each group in a subshell of its own, all at once; their outputs in this
# order, their counts added to the section's.
run_group() { # NAME: group_NAME's tests, output and counts into $T/group-NAME.*
    (
        passed=0 failed=0 failures=()
        t_last=$SECONDS
        "group_$1"
        echo "$passed $failed" > "$T/group-$1.counts"
        printf '%s\n' "${failures[@]}" > "$T/group-$1.failures"
    ) > "$T/group-$1.out" 2>&1
}
course_groups="kit handins gradescope classroom"
for g in $course_groups; do run_group "$g" & done
wait
for g in $course_groups; do
    cat "$T/group-$g.out"
    if read -r p f < "$T/group-$g.counts" 2> /dev/null; then
        passed=$((passed + p)) failed=$((failed + f))
        while IFS= read -r x; do [ -n "$x" ] && failures+=("$x"); done < "$T/group-$g.failures"
    else
        fail "course-group-$g" "the group ended without its counts (see its output above)"
    fi
done
t_last=$SECONDS


# ---- the documentation's figures ----
# points.conf says what each lab is worth: the sums of its lines.
name=course-points-conf-headers
if run_cmd $name 30 python3 - grader/points.conf << 'PY'
import re, sys
text = open(sys.argv[1]).read()
pts = {}
for k, v in re.findall(r"^lab(\d)\.\S+\s*=\s*(\S+)", text, re.M):
    pts[int(k)] = pts.get(int(k), 0) + float(v)
bad = []
for lab, worth in re.findall(r"^# Lab (\d)\D.*?\((\d+)", text, re.M):
    if pts.get(int(lab)) != float(worth):
        bad.append("lab %s: header says %s, its lines add up to %s" % (lab, worth, pts.get(int(lab))))
print("\n".join(bad) or "every header matches: %s" % pts)
sys.exit(1 if bad else 0)
PY
then pass $name; else fail $name "$(head -1 "$L/$name.log")"; fi

# ---- 7. the README's instructor commands are the ones tested here ----
name=course-readme-instructor-commands
: > "$L/$name.log"
missing=""
for c in './ncclab export-student' 'make gradescope LAB=' 'make grade-handins HANDINS=' \
    '.github/workflows/classroom.yml' 'make handin LAB=' 'make student-kit DIR='; do
    grep -qF -- "$c" README.md || missing="$missing '$c'"
done
if [ -z "$missing" ]; then pass $name; else fail $name "README.md lacks:$missing"; fi

finish course
