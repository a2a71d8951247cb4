# shellcheck shell=bash disable=SC2154
# Sourced by tests/course/run.sh ($kit, $T, $L, $here, git_q, run_cmd, pass,
# fail): GitHub Classroom with one template repository per lab. Lab N's
# driver calls the student's own functions of the earlier labs, so a lab 2
# template whose lab 1 is still the skeleton cannot give what the course's
# record gives (the reference's lab 2 scores 0 there). That 0 must not come
# silently: the grading step names lab 1 as the skeleton in its log, in the
# job summary, and beside every check that lost points in the result the
# reporter shows. With the student's lab 1 carried into the template, lab 2
# gets full marks and no note.
echo "== course: GitHub Classroom, one template per lab"
tpl=$T/classroom-lab2
rm -rf "$tpl" && git_q clone "$kit" "$tpl"
(cd "$tpl" && tools/classroom-grade --set-labs 2) > /dev/null 2>&1
cp -R solutions/lab2_allreduce/. "$tpl/labs/lab2_allreduce/" # the code, answers.md and run.txt
classroom_grading_step() { # NAME: the workflow's grading step (its env as GitHub sets it) in $tpl
    local cmd
    : > "$T/$1.output" && : > "$T/$1.summary" && : > "$L/$1.log"
    python3 "$here/classroom-steps.py" "$tpl/.github/workflows/classroom.yml" > "$T/$1.steps" 2>> "$L/$1.log" || return 1
    while IFS= read -r -d '' cmd; do
        [[ $cmd == *tools/classroom-grade* ]] || continue
        (cd "$tpl" && GITHUB_OUTPUT=$T/$1.output GITHUB_STEP_SUMMARY=$T/$1.summary GITHUB_ACTIONS=true \
            timeout "$(scaled 600)" bash -e -c "$cmd") >> "$L/$1.log" 2>&1 || return 1
    done < "$T/$1.steps"
    sed -n 's/^result=//p' "$T/$1.output" | tail -1 | base64 -d > "$T/$1.runner.json"
}
# shellcheck disable=SC2016 # a Python program, not shell
reporter_check='
import json, sys
r, want = json.load(open(sys.argv[1])), sys.argv[2]
got = sum(t["score"] for t in r["tests"])
labs = sorted({t["name"].split(":")[0] for t in r["tests"]})
lost = [t for t in r["tests"] if t["status"] != "pass"]
noted = [t for t in lost if "lab(s) 1 in this repository are still the skeleton" in (t["message"] or "")]
print("reporter input: %s / %s, %d checks lost points, %d of them with the note, labs %s"
      % (got, r["max_score"], len(lost), len(noted), labs))
assert labs == ["Lab 2"] and r["max_score"] > 0, "not lab 2 alone"
if want == "skeleton":
    assert got < r["max_score"] and lost and len(noted) == len(lost), "a loss without the note"
else:
    assert got == r["max_score"] and not noted, "lab 1 carried over: not full marks, or a note"
'
name=course-classroom-template-lab1-skeleton
if ! classroom_grading_step $name; then fail $name "the workflow's grading step failed"
elif ! grep -q 'lab(s) 1 in this repository are still the skeleton' "$L/$name.log"; then
    fail $name "the grading step's log does not say lab 1 is still the skeleton"
elif ! grep -q 'lab(s) 1 in this repository are still the skeleton' "$T/$name.summary"; then
    fail $name "the job summary does not say lab 1 is still the skeleton"
elif python3 -c "$reporter_check" "$T/$name.runner.json" skeleton >> "$L/$name.log" 2>&1; then
    pass $name; echo "    ($(grep '^reporter input' "$L/$name.log"))"
else fail $name "the result the reporter shows loses points without saying why ($(tail -1 "$L/$name.log"))"; fi
name=course-classroom-template-lab1-carried
cp -R solutions/lab1_bootstrap/. "$tpl/labs/lab1_bootstrap/"
if ! classroom_grading_step $name; then fail $name "the workflow's grading step failed"
elif grep -q 'still the skeleton' "$L/$name.log" "$T/$name.summary"; then
    fail $name "lab 1 carried into the template, and still a note that it is the skeleton"
elif python3 -c "$reporter_check" "$T/$name.runner.json" carried >> "$L/$name.log" 2>&1; then
    pass $name; echo "    ($(grep '^reporter input' "$L/$name.log"))"
else fail $name "with lab 1 carried over lab 2 is not full marks ($(tail -1 "$L/$name.log"))"; fi
