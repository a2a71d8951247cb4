#!/bin/bash
# The student-facing text: handouts short enough to read (at most 2,000
# words each), no reference-solution code in the handouts or in the
# skeletons that tools/mkskel generates, no pointer to solutions/ (the
# student kit ships without it), every section a TODO or the grader sends a
# student to exists in that lab's handout, and what the handouts say about a
# run agrees with a real run (check lines, lab 4's send to self, lab 7's
# report template), and tools/export-student answers --help with its usage.
# Needs the host build (make host) for the runs.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1
MAX_WORDS=2000
log() { printf '%s\n' "$*" >> "$NCCLAB_TEST_LOGS/$name.log"; }

echo "== docs: handouts and skeletons"

# 1. Length.
name=docs-handout-length
: > "$NCCLAB_TEST_LOGS/$name.log"
long=
for f in handouts/lab*.md; do
    words=$(wc -w < "$f")
    log "$f: $words words"
    [ "$words" -le $MAX_WORDS ] || long="$long $f ($words)"
done
if [ -n "$long" ]; then fail $name "more than $MAX_WORDS words:$long"; else pass $name; fi

# 2. No solution code in what students read: every handout text file and the
#    student file generated from each solution file.
sols=(solutions/lab*/*.c)
student=()
for s in "${sols[@]}"; do student+=("labs/${s#solutions/}"); done
mapfile -t texts < <(find handouts -type f \( -name '*.md' -o -name '*.txt' \) | sort)
name=docs-no-solution-code
if run_cmd $name 60 tests/docs/no-solution-code "${sols[@]}" -- "${texts[@]}" "${student[@]}" \
    labs/lab7_sweep/report-template.md; then pass $name
else fail $name "solution lines copied into handouts/ or labs/ (listed above)"; fi

# 3. The check above can fail: a solution line, re-spaced and without its
#    check macro, planted in a scratch handout must be found.
name=docs-no-solution-code-catches-a-plant
plant=$(mktemp)
needle=$(tests/docs/no-solution-code --needles "${sols[@]}" | grep -m1 -E '^[a-z][A-Za-z]*\(.{12,}\)$')
printf '# A handout\n\nThen write\n\n    %s;\n' "$(sed 's/,/, /g' <<< "$needle")" > "$plant"
run_cmd $name 60 tests/docs/no-solution-code "${sols[@]}" -- "$plant"
rc=$?
if [ -z "$needle" ]; then fail $name "no call-shaped needle among the solution lines"
elif [ $rc -eq 1 ] && grep -q "$plant:5: solution code" "$NCCLAB_TEST_LOGS/$name.log"; then pass $name
else fail $name "the planted line '$needle' was not found (exit $rc)"; fi
rm -f "$plant"

# 4. The student kit has no solutions/ and no reference binaries to run.
name=docs-no-pointer-to-solutions
if grep -rnE 'solutions/|--ref\b|lab[0-9]-ref\b|NCCLAB_REF' handouts > "$NCCLAB_TEST_LOGS/$name.log"; then
    fail $name "handouts point at the reference solutions (listed in the log)"
else pass $name; fi

# 5. Sections named by the TODOs (`See handout "X"`) and by the grader exist.
name=docs-sections-exist
: > "$NCCLAB_TEST_LOGS/$name.log"
missing=
# A heading (any level, backticks ignored) containing the name as a phrase.
has_heading() {
    awk -v want="$2" '/^#+ / { h = $0; gsub(/`/, "", h); i = index(h, want)
        if (i && substr(h, i - 1, 1) !~ /[A-Za-z0-9]/ && substr(h, i + length(want), 1) !~ /[A-Za-z0-9]/) found = 1 }
        END { exit !found }' "$1"
}
for s in "${sols[@]}"; do
    dir=${s#solutions/}; dir=${dir%%/*}
    n=${dir#lab}; n=${n%%_*}
    h=handouts/lab$n.md
    if [ ! -f "$h" ]; then missing="$missing $h"; continue; fi
    want=$( { grep -oE 'TODO\(Task [0-9]+' "$s" | sed 's/TODO(//'
              tr '\n' ' ' < "$s" | grep -oE 'handout( sections?)?( "[^"]+"( *(,|and|\*) *)*)+' |
                  grep -oE '"[^"]+"' | tr -d '"'
              echo "Common mistakes"
              [ "$n" = 1 ] && echo "Choosing the GPU"
              [ "$n" = 7 ] && echo "Hand-in"; } | sort -u)
    while IFS= read -r sec; do
        [ -n "$sec" ] || continue
        if has_heading "$h" "$sec"; then log "$h: \"$sec\" found"
        else log "$h: no heading \"$sec\""; missing="$missing $h:\"$sec\""; fi
    done <<< "$want"
done
if [ -n "$missing" ]; then fail $name "missing sections:$missing"; else pass $name; fi

# 6. The check lines a handout shows (`# check …` at the start of a line in
#    its expected output) are what the driver prints for the run the handout
#    names: each lab's reference solution on the host backend, in that run.
B=build/host/bin
expected_run() { # NAME LAB NP ARGS...: every `# check` line of handouts/labLAB.md printed by the run
    local name=$1 lab=$2 np=$3; shift 3
    if [ ! -x $B/lab$lab-ref ]; then fail $name "$B/lab$lab-ref missing: run make host first"; return; fi
    run_split $name 120 mpirun --oversubscribe -np "$np" $B/lab$lab-ref "$@"; local rc=$?
    local out=$NCCLAB_TEST_LOGS/$name.log bad=
    if [ $rc -ne 0 ]; then fail $name "exit status $rc"; return; fi
    while IFS= read -r line; do
        grep -qxF -- "$line" <(grep '^# check' "$out" | tr -s ' ') || bad="$bad
        not printed: $line"
    done < <(grep '^# check' handouts/lab$lab.md | tr -s ' ' | sort -u)
    if [ -n "$bad" ]; then fail $name "handouts/lab$lab.md shows check lines the run does not print:$bad"
    else pass $name; fi
}
expected_run docs-lab1-output 1 4
expected_run docs-lab2-output 2 2
expected_run docs-lab3-output 3 2
expected_run docs-lab4-output 4 2
expected_run docs-lab5-output 5 4
expected_run docs-lab6-output 6 4 --ranks-per-node 2
expected_run docs-lab7-output 7 4 --ranks-per-node 2 -f 4 --csv none
expected_run docs-lab8-output 8 4 -b 64K -e 1M --slices 2 --csv none

# 7. Lab 4's handout says what the host backend does with an ungrouped send
#    to self (n = 1): it refuses it like NCCL, exit status 1; it does not hang.
name=docs-lab4-send-to-self
run_cmd $name 60 mpirun -np 1 $B/lab4-ref --naive -T 20; rc=$?
if [ $rc -ne 1 ]; then fail $name "lab4 --naive at n = 1: exit status $rc, the handout says 1"
elif ! grep -q 'sends to or receives from itself outside a group' "$NCCLAB_TEST_LOGS/$name.log"; then
    fail $name "the host backend's refusal is not the message handouts/lab4.md quotes"
elif ! grep -q 'sends to or receives from itself outside a group' handouts/lab4.md; then
    fail $name "handouts/lab4.md no longer quotes the refusal"
elif grep -qiE 'host backend (hangs|deadlocks)' handouts/lab4.md; then
    fail $name "handouts/lab4.md says the host backend hangs"
else pass $name; fi

# 8. The lab 7 report template's note names its sections as they are: the
#    ones filled from the CSV are unnumbered headings, the student writes
#    "## 1." to "## 3.".
name=docs-lab7-template-note
t=labs/lab7_sweep/report-template.md
: > "$NCCLAB_TEST_LOGS/$name.log"
note=$(awk '/<!--/,/-->/' "$t" | tr '\n' ' ')
bad=
while IFS= read -r q; do
    case $q in _*|Hand-in|'') continue ;; esac
    grep -qxF "## $q" "$t" || bad="$bad \"$q\""
done < <(grep -oE '"[^"]+"' <<< "$note" | tr -d '"')
for k in 1 2 3; do grep -qE "^## $k\. " "$t" || bad="$bad ## $k."; done
grep -qE 'sections 1[-–]3|sections 1, 2 and 3' <<< "$note" || bad="$bad (no mention of sections 1-3)"
grep -qiE 'first three sections' <<< "$note" && bad="$bad (\"first three sections\" is ambiguous)"
if [ -n "$bad" ]; then fail $name "template note and headings disagree:$bad"; else pass $name; fi

# 9. tools/export-student's --help prints its usage (it once made a folder
#    named --help, then ran mkdir --help), through ./ncclab too; an unknown
#    option is refused by name and nothing is written.
name=docs-export-student-help
: > "$NCCLAB_TEST_LOGS/$name.log"
bad=
for cmd in "tools/export-student --help" "tools/export-student -h" "./ncclab export-student --help"; do
    out=$($cmd 2>&1); rc=$?
    printf '$ %s\n%s\n' "$cmd" "$out" >> "$NCCLAB_TEST_LOGS/$name.log"
    [ $rc -eq 0 ] || bad="$bad ($cmd: exit status $rc)"
    grep -q 'tools/export-student \[--for-gradescope\] DIR' <<< "$out" || bad="$bad ($cmd: no usage line)"
    grep -qi 'mkdir' <<< "$out" && bad="$bad ($cmd: mkdir's output)"
done
[ -e ./--help ] && bad="$bad (a folder named --help was made)"
out=$(tools/export-student --no-such-option /nonexistent/kit 2>&1); rc=$?
[ $rc -eq 2 ] || bad="$bad (unknown option: exit status $rc, expected 2)"
grep -q "unknown option '--no-such-option'" <<< "$out" || bad="$bad (unknown option not named: $out)"
[ -e /nonexistent/kit ] && bad="$bad (unknown option still exported)"
if [ -n "$bad" ]; then fail $name "export-student's options:$bad"; else pass $name; fi

finish docs
