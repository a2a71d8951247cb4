# shellcheck shell=bash disable=SC2154
# Sourced by tests/course/run.sh (its $T, $L, run_cmd, pass, fail): a class
# of 12 handed in through Canvas, Blackboard and a Gradescope export, each
# folder read by its own platform's names (tests/course/lms-class.py says who
# is who), graded with a late rule; every student on a row, no file lost, the
# Canvas import as Canvas reads it, and --merge as the docs write it.
echo "== course: hand-ins from Canvas, Blackboard and Gradescope"
lms=$T/lms
rm -rf "$lms" && python3 "$here/lms-class.py" make "$lms" solutions/lab1_bootstrap labs/lab1_bootstrap
name=course-lms-intake
: > "$L/$name.log"
rc_all=0
for p in canvas blackboard gradescope; do
    run_cmd $name-$p 300 tools/grade-handins "$lms/$p" "$lms/$p-out" -- --lab 1 --jobs 2 \
        --roster "$lms/roster.csv" --course "$lms/course.conf" || rc_all=1
    cat "$L/$name-$p.log" >> "$L/$name.log"
done
python3 "$here/lms-class.py" check "$lms" > "$L/$name.checks" 2>&1
cat "$L/$name.checks" >> "$L/$name.log"
if [ $rc_all -ne 0 ]; then fail $name "tools/grade-handins exited non-zero on a platform's folder"
elif grep -q '^BAD' "$L/$name.checks"; then fail $name "$(grep -c '^BAD' "$L/$name.checks") problem(s): $(grep -m3 '^BAD' "$L/$name.checks" | paste -sd';')"
else pass $name; echo "    ($(tail -1 "$L/$name.checks"))"; fi
# A folder that mixes platforms is refused, nothing unpacked.
expect_error course-lms-mixed-refused 2 'unpack each platform' 60 \
    build/host/unpack-handins "$lms/mixed" "$lms/mixed-out"
# --merge exactly as docs/grader.md writes it: the same gradebook, exit 0;
# on a folder it did not grade: a refusal that changes nothing.
name=course-lms-merge
cp "$lms/canvas-out/grades/gradebook.csv" "$lms/before.csv"
if run_cmd $name 60 build/host/grader --lab all --submissions "$lms/canvas-out/class" --out "$lms/canvas-out/grades" --merge &&
    cmp -s "$lms/before.csv" "$lms/canvas-out/grades/gradebook.csv"; then
    if build/host/grader --lab all --submissions "$lms/canvas" --out "$lms/canvas-out/grades" --merge >> "$L/$name.log" 2>&1; then
        fail $name "--merge on another folder than the class's did not refuse"
    elif ! cmp -s "$lms/before.csv" "$lms/canvas-out/grades/gradebook.csv"; then
        fail $name "a refused --merge changed the gradebook"
    else pass $name; fi
else fail $name "--merge as documented did not exit 0 with the class run's gradebook"; fi
