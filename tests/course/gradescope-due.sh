# shellcheck shell=bash disable=SC2154
# Sourced by tests/course/run.sh after its Gradescope cases (their $ag,
# gs_metadata, $here, run_cmd, pass, fail). Before the due date Gradescope
# shows students the total at once: it must be what the visible tests add
# up to. A submission tuned to the public runs (the mutant
# lab1/slurm-wrong-size: only a hidden run fails) with a wrong fixed answer
# (Q1) shows its visible total, and the visible Q1 test says only
# "answered"; the after_due_date entries hold what they cost. The bonus labs'
# tests are extra credit (max_score 0).
name=course-gradescope-before-due
rm -rf "$ag/submission" "$T/mutant-due"; mkdir -p "$ag/submission"
grader/tests/mutant-tree.sh grader/tests/mutants/lab1/slurm-wrong-size "$T/mutant-due" > /dev/null 2>&1
cp "$T/mutant-due/bootstrap.c" "$ag/submission/"
sed 's/^Q1: 9$/Q1: 8/' "$T/mutant-due/answers.md" > "$ag/submission/answers.md"
printf '{"id": 7, "created_at": "2026-11-19T10:00:00.000000-08:00", "assignment": {"due_date": "2099-11-20T23:59:00.000000-08:00", "title": "Lab 1"},
 "users": [{"email": "", "id": 1007, "name": "Student 1007"}], "previous_submissions": []}\n' > "$ag/submission_metadata.json"
rm -rf "$ag/results"/*
if ! grep -q '^Q1: 8$' "$ag/submission/answers.md"; then
    fail $name "the reference's answers.md has no 'Q1: 9' line to make wrong (update the test)"
elif AUTOGRADER_ROOT=$ag run_cmd $name 300 "$ag/run_autograder" &&
    python3 "$here/check-gradescope.py" "$ag/results/results.json" full before-due > "$L/$name.json" 2>&1 &&
    python3 - "$ag/results/results.json" >> "$L/$name.log" 2>&1 << 'PY'
import json, sys
r = json.load(open(sys.argv[1]))
vis = [t for t in r["tests"] if t["visibility"] == "visible"]
late = [t for t in r["tests"] if t["visibility"] == "after_due_date"]
shown = sum(t["score"] for t in vis)
lost = sum(t["score"] for t in late)
q1 = [t for t in vis if "Q1" in t["name"]]
assert r["score"] == shown == sum(t["max_score"] for t in vis), (r["score"], shown)
assert lost < 0, "nothing taken back after the due date: %s" % late
assert q1 and q1[0]["status"] == "passed" and "right" in q1[0]["output"] and "Answered" in q1[0]["output"], q1
assert any("Q1" in t["name"] and t["score"] < 0 for t in late), "Q1's after_due_date entry takes nothing back"
print("before the due date: %g shown (the visible tests' sum); after it: %g (%g taken back)" % (shown, shown + lost, -lost))
PY
then pass $name; echo "    ($(tail -1 "$L/$name.log"))"
else fail $name "before the due date the score is not the visible tests' sum, or Q1 tells right from wrong ($(tail -1 "$L/$name.json"))"; fi
name=course-gradescope-bonus-extra-credit
printf '%s\n' '{"score": 30, "max_score": 24, "execution_time": 1, "output": "", "tests": [
 {"name": "Lab 1: a", "score": 24, "max_score": 24, "status": "passed", "output": "", "visibility": "visible", "bonus": false},
 {"name": "Lab 8 (bonus): b", "score": 6, "max_score": 20, "status": "failed", "output": "", "visibility": "visible", "bonus": true}]}' > "$T/bonus-results.json"
# shellcheck disable=SC2016
if run_cmd $name 30 sh -c 'tools/grader-json gradescope "$1" > "$2"' _ "$T/bonus-results.json" "$T/bonus-gs.json" &&
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
b = [t for t in r["tests"] if "bonus" in t["name"]][0]
assert b["max_score"] == 0 and b["score"] == 6 and r["score"] == 30, r
assert sum(t["max_score"] for t in r["tests"]) == 24, r' "$T/bonus-gs.json" >> "$L/$name.log" 2>&1
then pass $name; else fail $name "a bonus test is not extra credit (max_score 0) in Gradescope's results.json"; fi
