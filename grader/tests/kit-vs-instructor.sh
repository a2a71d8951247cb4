#!/usr/bin/env bash
# The student kit grades like the instructor: every mutant of the given labs
# (default 1-8) graded by the exported kit's own grader (tools/export-student,
# built there) and by this repository's; each check's points compared. The
# kit is the one of a student who has done every lab (its labs/ hold the
# reference's files) and whose lab N is the mutant: labs/labN_* holds the
# mutant's files too, as `make grade` in a kit grades labs/ itself, so the
# functions the kit borrows from lab N (common/taught.h) are the mutant's,
# where the instructor's grader borrows the reference's. The timed checks
# (timing honest, overlap, the race against NCCL) are left out: their
# verdict on a broken measurement near a limit is the machine's speed then.
#   grader/tests/kit-vs-instructor.sh [LAB...]      (from the repo root; slow: use nice)
# A mutant caught only by the hidden variations (which the kit leaves out)
# has a file `hidden-only` naming, one a line, the checks the kit cannot
# see fail: there the kit must give at least the instructor's points and
# the instructor fewer than the kit's; every other check must agree.
# Env: KIT (an exported and built kit to reuse), GRADER (default build/host/grader),
#      MUTANTS (only the mutants of these names, space-separated), KEEP (a
#      directory: both gradings' reports of a mutant that differs are kept
#      there, in labN-NAME/first/ and again/; default
#      build/test-logs/kit-vs-instructor).
# A mutant whose points differ is graded both ways once more: a difference
# that does not come back (a run slowed past its limits on a loaded
# machine) is a note naming the kept reports, one that does is a failure.
# Exit 0 when every mutant gets the same points in both, 1 otherwise.
set -u
cd "$(dirname "$0")/../.." || exit 1
GRADER=${GRADER:-build/host/grader}
labs=("$@")
[ ${#labs[@]} -gt 0 ] || labs=(1 2 3 4 5 6 7 8)
work=$(mktemp -d "${TMPDIR:-/tmp}/ncclab-kitcmp.XXXXXX")
keep=${KEEP:-$PWD/build/test-logs/kit-vs-instructor}
trap 'rm -rf "$work"' EXIT
kit=${KIT:-}
if [ -z "$kit" ]; then
    kit=$work/kit
    tools/export-student "$kit" > "$work/export.log" 2>&1 || { cat "$work/export.log"; exit 1; }
    make -C "$kit" -s -j2 host grader > "$work/kit-build.log" 2>&1 ||
        { tail -20 "$work/kit-build.log"; exit 1; }
fi
[ -x "$kit/build/host/grader" ] || { echo "no grader built in $kit" >&2; exit 1; }
set_lab() { # N FROM_DIR: the kit's labs/labN_*/ *.c from FROM_DIR
    local to
    to=$(ls -d "$kit"/labs/lab"$1"_* | head -1)
    cp "$2"/*.c "$to"/
}
for s in solutions/lab[0-9]_*/; do
    n=${s#solutions/lab}; set_lab "${n%%_*}" "$s"
done
points() { # RESULTS.JSON: "key score / max" per untimed check that has points
    # (per key, summed: the instructor's results.json repeats a check with 0
    # points for the hidden tests' release; a question whose answer key stays
    # with the instructor has none in the kit, and is not compared)
    python3 - "$1" <<'PY'
import json, sys
try:
    tests = json.load(open(sys.argv[1]))["tests"]
except (OSError, ValueError, KeyError):
    print("no results.json"); sys.exit()
got = {}
for t in tests:
    if t.get("timed"):
        continue
    k = t.get("key")
    s, m = got.get(k, (0, 0))
    got[k] = (s + t.get("score", 0), m + t.get("max_score", 0))
for k, (s, m) in got.items():
    if m > 0:
        print("%s %g / %g" % (k, s, m))
PY
}
keep_both() { # LAB-NAME WHICH: both gradings' reports kept in $keep/labLAB-NAME/WHICH/
    local to=$keep/lab$1/$2 side
    rm -rf "$to" && mkdir -p "$to"
    for side in instructor kit; do
        cp -r "$work/out-$side" "$to/$side" 2> /dev/null
        cp "$work/$side.txt" "$to/$side.txt" 2> /dev/null
    done
}
# compare_once MUTANT_DIR TREE LAB: the mutant graded by both graders; sets
# verdict (a line) and detail (the checks that differ); 0 when they agree.
compare_once() {
    local d=$1 tree=$2 lab=$3 side g dir hidden missing k bad
    detail=
    for side in instructor kit; do
        g=$GRADER dir=$PWD
        [ $side = kit ] && g=$kit/build/host/grader dir=$kit
        rm -rf "${work:?}/out-$side"
        (cd "$dir" && "$g" --lab "$lab" --submission "$tree" --out "$work/out-$side" --no-color \
            --timeout 20 > "$work/$side.txt" 2>&1)
        points "$work/out-$side/results.json" > "$work/$side.points"
    done
    # Checks scored on one side only (answer keys) are not compared.
    join <(sort "$work/instructor.points") <(sort "$work/kit.points") | awk '{print $1}' > "$work/both"
    for side in instructor kit; do
        grep -Fwf "$work/both" "$work/$side.points" | sort > "$work/$side.cmp"
    done
    hidden=$(grep -v '^#' "$d/hidden-only" 2> /dev/null | awk 'NF {print $1}' | sort -u | tr '\n' ' ')
    missing=
    for k in $hidden; do grep -qxF "$k" "$work/both" || missing="$missing $k"; done
    if [ ! -s "$work/instructor.cmp" ] || [ ! -s "$work/kit.cmp" ] || [ -n "$missing" ]; then
        # Nothing (or not the named checks) to compare is no agreement:
        # a grading that did not run, or a kit that is gone.
        verdict="no points to compare${missing:+ for$missing} (instructor: $(head -1 "$work/instructor.points"); kit: $(head -1 "$work/kit.points"))"
        detail=$(tail -3 "$work/kit.txt" "$work/instructor.txt" 2> /dev/null)
        return 1
    elif [ -n "$hidden" ]; then
        # The listed checks lose points only in the instructor's grade.
        bad=$(join "$work/instructor.cmp" "$work/kit.cmp" | awk -v h=" $hidden" '
            index(h, " " $1 " ") { if (!($2 < $5)) print $1 " (instructor " $2 ", kit " $5 ": the hidden runs should cost it in the instructor'"'"'s grade only)"; next }
            $2 != $5 || $4 != $7 { print $1 " (instructor " $2 "/" $4 ", kit " $5 "/" $7 ")" }')
        if [ -z "$bad" ]; then
            verdict="$(grep -c . "$work/kit.cmp") checks, same points but $hidden(its hidden runs)"
            return 0
        fi
        verdict="the kit's grade differs from the instructor's beyond the hidden runs:"
        detail=$bad
        return 1
    elif diff -q "$work/instructor.cmp" "$work/kit.cmp" > /dev/null; then
        verdict="$(grep -c . "$work/kit.cmp") checks, same points"
        return 0
    fi
    verdict="the kit's grade differs from the instructor's (instructor < > kit):"
    detail=$(diff "$work/instructor.cmp" "$work/kit.cmp" | grep '^[<>]')
    return 1
}
fail=0 n=0 nbad=0
for lab in "${labs[@]}"; do
    for d in grader/tests/mutants/lab"$lab"/*/; do
        [ -f "$d/expect" ] || continue
        d=${d%/} name=lab$lab/${d##*/}
        if [ -n "${MUTANTS:-}" ] && [[ " $MUTANTS " != *" ${d##*/} "* ]]; then continue; fi
        tree=$work/tree/$lab-${d##*/}
        grader/tests/mutant-tree.sh "$d" "$tree" 2> "$work/tree.err" ||
            { echo "FAIL $name: $(head -1 "$work/tree.err")"; fail=1; n=$((n + 1)) nbad=$((nbad + 1)); continue; }
        set_lab "$lab" "$tree"
        # A difference is graded both ways once more, one after the other:
        # one that does not come back was the machine's (both gradings are
        # kept, and a note says where); one that does is a failure.
        if compare_once "$d" "$tree" "$lab"; then
            echo "ok   $name: $verdict"
        else
            first_detail=$verdict$'\n'$detail
            keep_both "$lab-${d##*/}" first
            if compare_once "$d" "$tree" "$lab"; then
                echo "ok   $name: $verdict (graded twice: the first gradings differed, see the note)"
                echo "note $name: the first gradings differed, the second agreed: both kept in $keep/lab$lab-${d##*/}/first/"
                [ -n "$first_detail" ] && echo "$first_detail" | sed 's/^/     /'
            else
                keep_both "$lab-${d##*/}" again
                echo "FAIL $name: $verdict"
                [ -n "$detail" ] && echo "$detail" | sed 's/^/     /'
                echo "     (twice; both gradings kept in $keep/lab$lab-${d##*/}/)"
                fail=1 nbad=$((nbad + 1))
            fi
        fi
        set_lab "$lab" "$(ls -d solutions/lab"$lab"_* | head -1)"
        n=$((n + 1))
    done
done
echo "kit vs instructor: $n mutant(s) compared, $([ $fail = 0 ] && echo all agree || echo some differ)"
echo "kit-vs-instructor: $((n - nbad)) passed, $nbad failed"
exit $fail
