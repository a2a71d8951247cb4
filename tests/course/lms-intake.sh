# shellcheck shell=bash disable=SC2154
# Sourced by tests/course/run.sh (its $T, $L, run_cmd, pass, fail): a class
# of 14 handed in through Canvas, Blackboard and a Gradescope export, each
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
# --merge exactly as docs/grader.md writes it: the same gradebook, exit 0.
# Refused, exit 2 and 3 as the docs say, changing no file of OUT: on a folder
# it did not grade, and on the class with a student who has no grade yet.
name=course-lms-merge
grades=$lms/canvas-out/grades
for f in gradebook.csv canvas-gradebook.csv checks.csv; do cp "$grades/$f" "$lms/before-$f"; done
same_as_class_run() {
    local f
    for f in gradebook.csv canvas-gradebook.csv checks.csv; do cmp -s "$lms/before-$f" "$grades/$f" || return 1; done
}
out_state() { (cd "$grades" && find . -type f -printf '%p %s %T@\n' | sort && find . -type f -exec sha256sum {} + | sort -k2); }
if run_cmd $name 60 build/host/grader --lab all --submissions "$lms/canvas-out/class" --out "$grades" --merge &&
    same_as_class_run; then
    out_state > "$lms/state-before"
    build/host/grader --lab all --submissions "$lms/canvas" --out "$grades" --merge >> "$L/$name.log" 2>&1
    rc_other=$?
    mkdir -p "$lms/canvas-out/class/zoe/lab1_bootstrap" && cp solutions/lab1_bootstrap/bootstrap.c "$lms/canvas-out/class/zoe/lab1_bootstrap/"
    build/host/grader --lab all --submissions "$lms/canvas-out/class" --out "$grades" --merge >> "$L/$name.log" 2>&1
    rc_ungraded=$?
    rm -rf "$lms/canvas-out/class/zoe"
    out_state > "$lms/state-after"
    if [ $rc_other -ne 2 ] || [ $rc_ungraded -ne 3 ]; then
        fail $name "refusals exited $rc_other (another folder, want 2) and $rc_ungraded (a student with no grade, want 3)"
    elif ! cmp -s "$lms/state-before" "$lms/state-after"; then
        fail $name "a refused --merge changed OUT: $(diff "$lms/state-before" "$lms/state-after" | grep -m3 '^[<>]' | paste -sd' ')"
    else pass $name; fi
else fail $name "--merge as documented did not exit 0 with the class run's gradebook, Canvas import and checks.csv"; fi
