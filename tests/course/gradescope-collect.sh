# shellcheck shell=bash disable=SC2154
# Sourced by tests/course/run.sh ($T, $L, run_cmd, pass, fail): what
# Gradescope's run_autograder collects (tools/collect-submission) from two
# uploads that used to be misread. Every lab has an answers.md, so a loose
# one belongs only to the lab whose code lies beside it (before, it was
# copied into labs 1-6 and labs 2-6 said "build failed", not "nothing
# handed in"); alone, it is taken for none and the output says so. A hand-in
# tarball renamed lab2.tar.gz is taken, its lab read from the folder inside,
# and the output names the handin-<you>-labN.tar.gz that make handin makes.
name=course-gradescope-collect-loose-answers
up=$T/collect-up col=$T/collect-out
rm -rf "$up" "$col" && mkdir -p "$up"
cp solutions/lab1_bootstrap/bootstrap.c solutions/lab1_bootstrap/answers.md "$up/"
if run_cmd $name 60 tools/collect-submission --labs all "$up" "$col"; then
    got=$(cd "$col" && find . -type f | sort | paste -sd' ')
    if [ "$got" != "./lab1_bootstrap/answers.md ./lab1_bootstrap/bootstrap.c" ]; then
        fail $name "a loose bootstrap.c and answers.md were collected as: $got"
    else pass $name; fi
else fail $name "tools/collect-submission failed"; fi
name=course-gradescope-collect-answers-alone
rm -rf "$up" "$col" && mkdir -p "$up" && cp solutions/lab1_bootstrap/answers.md "$up/"
if run_cmd $name 60 tools/collect-submission --labs all "$up" "$col" &&
    [ -z "$(find "$col" -type f)" ] && grep -q 'answers.md lies loose, without a lab.s code beside it' "$L/$name.log"; then
    pass $name
else fail $name "a loose answers.md alone was taken for a lab, or the output does not say it was taken for none"; fi
name=course-gradescope-collect-renamed-tarball
rm -rf "$up" "$col" "$T/collect-tb" && mkdir -p "$up" "$T/collect-tb/lab2_allreduce"
cp solutions/lab2_allreduce/allreduce.c solutions/lab2_allreduce/answers.md "$T/collect-tb/lab2_allreduce/"
tar -C "$T/collect-tb" -czf "$up/lab2.tar.gz" lab2_allreduce
if run_cmd $name 60 tools/collect-submission --labs 2 "$up" "$col" &&
    cmp -s "$col/lab2_allreduce/allreduce.c" solutions/lab2_allreduce/allreduce.c &&
    grep -q 'lab2.tar.gz: not named as make handin names a hand-in (handin-<you>-lab<N>.tar.gz)' "$L/$name.log"; then
    pass $name
else fail $name "lab2.tar.gz was not collected as lab 2, or the output does not name handin-<you>-labN.tar.gz"; fi
