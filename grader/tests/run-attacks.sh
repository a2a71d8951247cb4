#!/usr/bin/env bash
# The attack corpus (grader/tests/attacks/, format in its README): grade one
# class — the reference solutions as student `ref` plus every attack — in
# instructor mode, sandboxed, with --jobs 4 (several students at once), then
# once more with --jobs 1 (one run at a time) the students where the
# schedule could matter: every attack with a run that hung or was not made,
# and `ref` in those attacks' labs (ATTACKS_COMPARE=all: the whole class
# again), and assert:
#   - the two gradebooks give those students the same points (the checks
#     that judge timings apart: next to a busy machine their verdict on a
#     measurement near a limit is the machine's, not the schedule's; a
#     difference there is printed as a note);
#   - `ref` gets full marks (the attacks did not reach it);
#   - each attack's report matches its `expect` lines (`!PATTERN`: must not
#     match the report, results.json or junit.xml; `points <= N` / `points == N` bound
#     its total; `gradebook-safe`: its gradebook cells do not start with
#     = + - @);
#   - no file changed outside the output directory (the kit, the class);
#   - no process of the sandboxes is left (ps, by the sandboxes' uids);
#   - the machine's OOM killer did not run (dmesg, where it can be read).
# Usage: grader/tests/run-attacks.sh [ATTACK...]   (from anywhere)
# Env: GRADER (default build/host/grader), KEEP=1 keeps the work directory,
#      ATTACKS_JOBS=J the first grading's --jobs (default 4),
#      ATTACKS_COMPARE=all grades the whole class with --jobs 1 too, =none
#      grades it once; ATTACKS_SHARDS=S grades the class as S graders at once
#      (default 3, at most 4: each grader's throughput runs are made alone
#      among its own runs, which held one grader's whole class back; each
#      its own part of the class, uids, output, same options; ref and the
#      attacks that aim at the class's other folders in the first part, the
#      gradebooks joined before any check); ATTACKS_REFS=N puts N copies of the references in the
#      class (ref, ref-2 ... ref-N; each must get full marks), ATTACKS_LABS=all
#      grades every lab (default: the labs the attacks name). With
#      ATTACKS_REFS=10 ATTACKS_LABS=all ATTACKS_COMPARE=none it is the
#      class-size benchmark of docs/grader.md.
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
GRADER=${GRADER:-build/host/grader}
corpus=grader/tests/attacks
pass=0 fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

work=$(mktemp -d "${TMPDIR:-/tmp}/ncclab-attacks.XXXXXX")
[ "${KEEP:-}" = 1 ] && echo "work directory: $work" || trap 'rm -rf "$work"' EXIT
cp "$GRADER" "$work/grader" && GRADER=$work/grader
class="$work/class dir" # a space in the submissions path, on purpose
mkdir -p "$class"
shards=${ATTACKS_SHARDS:-3}
case $shards in [1-4]) ;; *) echo "ATTACKS_SHARDS=$shards: 1 to 4"; exit 2 ;; esac
# Part k of the class: "$class" for the first, "$class k" for the others.
class_of() { if [ "$1" = 0 ]; then echo "$class"; else echo "$class $1"; fi; }
# Sandbox uids of this test's own, 64 per part: other graders on the machine use others.
uid_base=$((1950000000 + ($$ % 10000) * 256))
export NCCLAB_SANDBOX_UID_BASE=$uid_base

# The same mapping as safe_name() in grader/files.c (its buffer: 800 bytes).
safe_name() {
    local LC_ALL=C name=$1 out="" i c b keep h=$((0xcbf29ce484222325))
    for ((i = 0; i < ${#name}; i++)); do
        c=${name:i:1}
        printf -v b '%d' "'$c"
        b=$((b & 255))
        h=$(((h ^ b) * 0x100000001b3))
        case $c in
        [A-Za-z0-9_]) out+=$c ;;
        [.-]) if [ "$i" -gt 0 ]; then out+=$c; else out+=$(printf '%%%02X' "$b"); fi ;;
        *) out+=$(printf '%%%02X' "$b") ;;
        esac
    done
    if [ ${#out} -gt 255 ]; then # longer than a file name: a prefix and the hash
        keep=238
        if [ "${out:keep-1:1}" = % ]; then keep=$((keep - 1)); elif [ "${out:keep-2:1}" = % ]; then keep=$((keep - 2)); fi
        printf -v out '%s~%016x' "${out:0:keep}" "$h"
    fi
    printf '%s' "${out:-%00}"
}

# ---- the class ----
attacks=()
if [ $# -gt 0 ]; then
    for a in "$@"; do attacks+=("$corpus/$a"); done
else
    for d in "$corpus"/*/; do [ -f "$d/expect" ] && attacks+=("${d%/}"); done
fi
declare -A labset=() student_of=()
for a in "${attacks[@]}"; do
    for l in $(tr ',' ' ' <"$a/lab"); do labset[$l]=1; done
done
labs=$(printf '%s\n' "${!labset[@]}" | sort -n | paste -sd,)
[ "${ATTACKS_LABS:-}" = all ] && labs=$(ls -d solutions/lab[0-9]_* | sed -E 's#.*/lab([0-9]+)_.*#\1#' | sort -n | paste -sd,)
refs=(ref)
for i in $(seq 2 "${ATTACKS_REFS:-1}"); do refs+=("ref-$i"); done
for r in "${refs[@]}"; do
    mkdir -p "$class/$r"
    for l in ${labs//,/ }; do
        d=$(ls -d solutions/lab"$l"_* 2>/dev/null | head -1)
        [ -n "$d" ] && cp -r "$d" "$class/$r/"
    done
done
# shellcheck source=grader/tests/attack-prepare.sh
. grader/tests/attack-prepare.sh
# The parts: ref and every attack that names the class's folders (its setup
# or files aim at @CLASS@, another student's folder) in the first; the
# others each where the least work is yet, heaviest first (a lab's grading
# each, and more for those that wait or fill memory).
declare -A shard_of=() load_of=()
for ((k = 0; k < shards; k++)); do load_of[$k]=0; done
load_of[0]=$(($(tr ',' '\n' <<<"$labs" | wc -l) * ${#refs[@]}))
weight_of() {
    local w
    w=$(tr ',' '\n' <"$1/lab" | wc -l)
    case ${1##*/} in *memory* | *hog* | *hang* | uid-only-* | *flood* | disk-fill | replay-*) w=$((w + 3)) ;; esac
    echo "$w"
}
while read -r w a; do
    if grep -rqlE '@CLASS@|ATTACK_CLASS' "$a" 2>/dev/null; then k=0
    else
        k=0
        for ((i = 1; i < shards; i++)); do [ "${load_of[$i]}" -lt "${load_of[$k]}" ] && k=$i; done
    fi
    shard_of[${a##*/}]=$k
    load_of[$k]=$((load_of[$k] + w))
done < <(for a in "${attacks[@]}"; do echo "$(weight_of "$a") $a"; done | sort -k1,1nr -k2)
for ((k = 1; k < shards; k++)); do mkdir -p "$(class_of $k)"; done
declare -A part_of=()
for r in "${refs[@]}"; do part_of[$r]=0; done
for a in "${attacks[@]}"; do
    side=""
    [ "$shards" -gt 1 ] && side=$(class_of $(((shard_of[${a##*/}] + 1) % shards)))
    ATTACK_SIDE_CLASS=$side attack_prepare "$a" "$(class_of "${shard_of[${a##*/}]}")" "$work/out4" "$work"
    student_of[${a##*/}]=$attack_student
    part_of[$attack_student]=${shard_of[${a##*/}]}
done

# ---- snapshots: the kit, the class, leftovers ----
# results/ is left out: the kit's own runs write there (make run, sbatch, the
# e2e and Slurm tests, which the suite runs beside this one); the sandbox
# gives a student no more access to it than to the rest of the kit.
snapshot() {
    (
        cd "$ROOT" &&
            find . \( -path ./build -o -path ./.git -o -path ./results \) -prune -o -type f -print0 |
            sort -z |
            xargs -0 sha256sum
        find build/host/bin build/host/lib -type f -print0 2>/dev/null | sort -z | xargs -0 sha256sum
        for ((k = 0; k < shards; k++)); do
            cd "$(class_of $k)" && find . -printf '%y %m %s %p -> %l\n' | sort
            find . -type f -print0 | sort -z | xargs -0 sha256sum
        done
    )
}
sandbox_procs() { # live ones: a zombie is gone, only not reaped yet
    ps -eo pid=,uid=,stat=,args= | awk -v lo="$uid_base" -v n=$((64 * shards)) \
        '$2 >= lo && $2 < lo + n && $3 !~ /^Z/ { print }'
}
# The machine's own OOM killer (not a group's, whose kernel line starts
# "Memory cgroup"): where the kernel log can be read, it must not run while
# the class is graded (attack memory-all-it-may fills the memory pool).
machine_ooms() { dmesg 2>/dev/null | grep -c 'Out of memory: Killed process'; }
snapshot >"$work/before"
ls -d /tmp/ncclab-pwned-* 2>/dev/null >"$work/pwned-before"
ooms_before=$(machine_ooms)

# ---- grade it, then again one run at a time ----
# --timeout 20 (the labs' watchdog at 10 s): a correct run slowed by a busy
# machine must not pass for a hang in one grading and not in the other.
# The second grading: the students whose first grading had a hang or a run
# not made (there the order of the runs decides what is made), and ref.
declare -A again=([ref]=1)
# The parts' outputs joined into OUT: every student's folder, and each
# gradebook's rows under one header (every part grades the same labs, so
# the columns are the same).
join_outputs() { # OUT PART-OUT...
    local out=$1 f d first
    shift
    mkdir -p "$out/students"
    for f in gradebook.csv checks.csv; do
        first=1
        for d in "$@"; do
            [ -f "$d/$f" ] || continue
            if [ $first = 1 ]; then cp "$d/$f" "$out/$f"; first=0; else tail -n +2 "$d/$f" >>"$out/$f"; fi
        done
    done
    for d in "$@"; do
        [ -d "$d/students" ] && find "$d/students" -mindepth 1 -maxdepth 1 -exec mv -t "$out/students/" {} +
    done
}
for jobs in 4 1; do
    [ "$jobs" = 1 ] && [ "${ATTACKS_COMPARE:-hangs}" = none ] && break
    for ((k = 0; k < shards; k++)); do cls[$k]=$(class_of $k) lablist[$k]=$labs; done
    if [ "$jobs" = 1 ] && [ "${ATTACKS_COMPARE:-hangs}" != all ]; then
        declare -A again_labs=()
        for a in "${attacks[@]}"; do
            st=${student_of[${a##*/}]}
            if grep -qE 'deadlock or hang|not made|time limit' "$work/out4/students/$(safe_name "$st")/report.txt" 2>/dev/null; then
                again[$st]=1
                for l in $(tr ',' ' ' <"$a/lab"); do again_labs[${part_of[$st]}:$l]=1; done
            fi
        done
        # No attack graded again: ref alone, in every lab, as before.
        [ ${#again_labs[@]} -eq 0 ] && for l in ${labs//,/ }; do again_labs[0:$l]=1; done
        # The first part's grader grades the references again in the labs of
        # every attack graded again (beside which they must keep full marks).
        for ((k = 0; k < shards; k++)); do
            cls[$k]=$work/again-$k
            if [ "$k" = 0 ]; then
                lablist[0]=$(printf '%s\n' "${!again_labs[@]}" | cut -d: -f2 | sort -nu | paste -sd,)
            else
                lablist[$k]=$(printf '%s\n' "${!again_labs[@]}" | sed -n "s/^$k://p" | sort -nu | paste -sd,)
            fi
        done
        for st in "${!again[@]}"; do
            k=${part_of[$st]:-0}
            [ -n "${lablist[$k]}" ] || continue
            mkdir -p "${cls[$k]}"
            case " ${refs[*]} " in
            *" $st "*)
                mkdir -p "${cls[$k]}/$st"
                for l in ${lablist[$k]//,/ }; do cp -a "$class/$st/lab${l}"_* "${cls[$k]}/$st/" 2>/dev/null; done ;;
            *) cp -a "$(class_of "$k")/$st" "${cls[$k]}/$st" ;;
            esac
        done
    elif [ "$jobs" = 1 ]; then
        for a in "${attacks[@]}"; do again[${student_of[${a##*/}]}]=1; done
    fi
    j=$jobs
    [ "$jobs" = 4 ] && j=${ATTACKS_JOBS:-4}
    # The parts at once, each a grader of its own with its own uids.
    parts=()
    for ((k = 0; k < shards; k++)); do
        [ -n "${lablist[$k]}" ] && [ -n "$(ls -A "${cls[$k]}" 2>/dev/null)" ] || continue
        parts+=("$k")
        (
            t0=$(date +%s)
            NCCLAB_SANDBOX_UID_BASE=$((uid_base + 64 * k)) "$GRADER" --lab "${lablist[$k]}" \
                --submissions "${cls[$k]}" --out "$work/out$jobs-$k" --jobs "$j" \
                --timeout 20 --mem-mb 1536 --no-color >"$work/grade$jobs-$k.txt" 2>&1
            echo "$? $(($(date +%s) - t0))" >"$work/grade$jobs-$k.rc"
        ) &
    done
    wait
    outs=()
    for k in "${parts[@]}"; do
        outs+=("$work/out$jobs-$k")
        read -r rc secs <"$work/grade$jobs-$k.rc"
        n=$(find "${cls[$k]}" -mindepth 1 -maxdepth 1 | wc -l)
        what="part $((k + 1)) of $shards: $n students"
        [ "$k" = 0 ] && what+=" (${#refs[@]} reference submission(s) among them)"
        [ "$jobs" = 1 ] && what="again, part $((k + 1)) of $shards: $n students (where a run hung or was not made$([ "$k" = 0 ] && echo ", and ref in their labs"))"
        want=0 # a class run: every student graded, whatever their scores
        if [ "$rc" -ne "$want" ] || [ ! -f "$work/out$jobs-$k/gradebook.csv" ]; then
            bad "grading the class with --jobs $jobs ($what): exit $rc (want $want), no gradebook?"
            sed 's/^/     /' "$work/grade$jobs-$k.txt" | tail -30
        else
            ok "graded $what, labs ${lablist[$k]}, --jobs $j in $secs s"
        fi
    done
    join_outputs "$work/out$jobs" "${outs[@]}"
    for _ in 1 2 3 4 5; do # the last sandboxes' processes may still be dying
        left=$(sandbox_procs)
        [ -z "$left" ] && break
        sleep 1
    done
    if [ -n "$left" ]; then
        bad "processes left after --jobs $j:"
        echo "$left" | sed 's/^/     /'
    else
        ok "no process left after --jobs $j (ps, sandbox uids from $uid_base, $((64 * shards)) of them)"
    fi
done

if dmesg >/dev/null 2>&1; then
    if [ "$(machine_ooms)" -gt "${ooms_before:-0}" ]; then
        bad "the machine's OOM killer ran during the gradings (dmesg: $(dmesg | grep 'Out of memory: Killed process' | tail -1))"
    else
        ok "the machine's OOM killer did not run (dmesg; a group's own did, for the memory hogs)"
    fi
fi
snapshot >"$work/after"
if diff "$work/before" "$work/after" >"$work/changed"; then
    ok "no file changed in the kit or the class"
else
    bad "files changed outside the output directory:"
    head -20 "$work/changed" | sed 's/^/     /'
fi
if ls -d /tmp/ncclab-pwned-* 2>/dev/null | diff -q "$work/pwned-before" - >/dev/null; then
    ok "nothing written to the machine's /tmp"
else
    bad "an attack wrote into the machine's /tmp: $(ls -d /tmp/ncclab-pwned-*)"
fi
for f in x y; do
    for ((k = 0; k < shards; k++)); do [ -e "$(class_of $k)/$f" ] && touch "$work/$f"; done
    [ -e "$ROOT/$f" ] || [ -e "$work/$f" ] &&
        bad "a file named $f appeared: a student's name was run as a command"
done

# ---- the gradebooks: same points, full marks for ref, safe cells ----
if [ ! -f "$work/out1/gradebook.csv" ]; then # ATTACKS_COMPARE=none: nothing graded twice
    mkdir -p "$work/out1" && head -1 "$work/out4/gradebook.csv" >"$work/out1/gradebook.csv" 2>/dev/null
fi
if [ ! -f "$work/out1/checks.csv" ]; then
    head -1 "$work/out4/checks.csv" >"$work/out1/checks.csv" 2>/dev/null
fi
python3 - "$work/out1" "$work/out4" "${refs[@]}" >"$work/gradebooks.txt" 2>&1 <<'EOF'
import csv, glob, json, os, sys
one, four = sys.argv[1], sys.argv[2]
# Points per student and check (checks.csv); the checks that judge a
# measured time (the grader marks them "timed" in results.json) are
# compared apart.
timed_keys = set()
for path in glob.glob(os.path.join(four, "students", "*", "results.json")):
    try:
        timed_keys |= {t["key"] for t in json.load(open(path))["tests"] if t.get("timed")}
    except (OSError, ValueError, KeyError, TypeError):
        pass
if not timed_keys:
    print("no results.json says which checks are timed"); sys.exit()
def points(d):
    rows = {}
    for r in csv.DictReader(open(os.path.join(d, "checks.csv"), newline="")):
        rows.setdefault(r["student_id"], {})[(r["check"], r["visibility"])] = r["points"]
    return rows
p1, p4 = points(one), points(four)
problems, notes = [], []
for name, checks in p1.items():
    other = p4.get(name)
    if other is None:
        problems.append("%r graded with --jobs 1 only" % name); continue
    diff = ["%s %s vs %s" % (k[0], v, other.get(k)) for k, v in sorted(checks.items()) if other.get(k) != v]
    d = [x for x in diff if x.split()[0] not in timed_keys]
    t = [x for x in diff if x.split()[0] in timed_keys]
    if d: problems.append("%s differs: %s" % (name, ", ".join(d)))
    if t: notes.append("%s: timing verdicts differ (machine load): %s" % (name, ", ".join(t)))
book = {r["student_id"]: r for r in csv.DictReader(open(os.path.join(four, "gradebook.csv"), newline=""))}
for name in sys.argv[3:]:
    ref = book.get(name)
    if not ref:
        problems.append("no row for %s" % name)
    elif ref["all_passed"] != "1" or ref["total"] != ref["total_max"]:
        problems.append("%s: %s / %s, not full marks (%s)" % (name, ref["total"], ref["total_max"], ref["first_problem"]))
print("\n".join(problems) if problems else "same")
for n in notes: print("note " + n)
EOF
if [ "$(head -1 "$work/gradebooks.txt")" = same ]; then
    ok "gradebooks of --jobs ${ATTACKS_JOBS:-4} and --jobs 1 give the same points to the ${#again[@]} students graded twice; ${refs[*]} full marks"
    grep '^note' "$work/gradebooks.txt"
else
    bad "gradebooks:"
    sed 's/^/     /' "$work/gradebooks.txt"
    # What each grading said about a student whose points differ (the
    # reports go with the work directory unless KEEP=1).
    sed -n 's/^\([^ ]*\) differs:.*/\1/p' "$work/gradebooks.txt" | while read -r who; do
        for out in out4 out1; do
            echo "     --- $who, $out: report.txt's failed checks"
            grep -hE 'FAIL|hung|did not finish|crash' "$work/$out/students/$(safe_name "$who")/report.txt" 2>/dev/null |
                head -12 | cut -c1-300 | sed 's/^/     | /'
        done
    done
fi

# ---- each attack's diagnosis ----
for a in "${attacks[@]}"; do
    name=${a##*/}
    student=${student_of[$name]}
    safe=$(safe_name "$student")
    missing=""
    for jobs in 4 1; do
        [ "$jobs" = 1 ] && [ -z "${again[$student]:-}" ] && continue
        dir="$work/out$jobs/students/$safe"
        rep="$dir/report.txt"
        if [ ! -f "$rep" ]; then
            missing+=" [no report at students/$safe/]"
            continue
        fi
        total=$(sed -nE 's/^TOTAL: ([0-9.]+) \/.*/\1/p' "$rep")
        while IFS= read -r want; do
            case "$want" in
            '' | '#'*) ;;
            '!'*) grep -qE -- "${want#!}" "$rep" "$dir/results.json" "$dir/junit.xml" 2>/dev/null && missing+=" [--jobs $jobs: found ${want#!}]" ;;
            'points <= '*) awk -v t="$total" -v m="${want#points <= }" 'BEGIN { exit !(t <= m) }' ||
                missing+=" [--jobs $jobs: total $total, want $want]" ;;
            'points == '*) awk -v t="$total" -v m="${want#points == }" 'BEGIN { exit !(t == m) }' ||
                missing+=" [--jobs $jobs: total $total, want $want]" ;;
            'points >= '*) awk -v t="$total" -v m="${want#points >= }" 'BEGIN { exit !(t >= m) }' ||
                missing+=" [--jobs $jobs: total $total, want $want]" ;;
            gradebook-safe)
                python3 - "$work/out$jobs/gradebook.csv" "$student" <<'EOF' || missing+=" [--jobs $jobs: a gradebook cell starts with = + - @]"
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1], newline="")) if r and r[0].lstrip("'") .strip() != "" ]
mine = [r for r in rows[1:] if sys.argv[2] in r[0] or r[0].endswith(sys.argv[2])]
sys.exit(0 if mine and all(not c[:1] in ("=", "+", "-", "@") for r in mine for c in r) else 1)
EOF
                ;;
            *) grep -qE -- "$want" "$rep" || missing+=" [--jobs $jobs: $want]" ;;
            esac
        done <"$a/expect"
    done
    if [ -z "$missing" ]; then
        ok "attack $name: $(cat "$a/about" | cut -c1-110)"
    else
        bad "attack $name:$missing"
        sed 's/^/     /' "$work/out4/students/$safe/report.txt" 2>/dev/null | head -40
    fi
done
echo "attacks: ${#attacks[@]} in the corpus"
echo "attacks: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
