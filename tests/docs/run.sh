#!/bin/bash
# The student-facing text: handouts short enough to read (at most 2,000
# words each), no reference-solution code in the handouts or in the
# skeletons that tools/mkskel generates, no pointer to solutions/ (the
# student kit ships without it), and every section a TODO or the grader
# sends a student to exists in that lab's handout.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT"
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

finish docs
