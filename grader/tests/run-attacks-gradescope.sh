#!/usr/bin/env bash
# The attack corpus where Gradescope grades: the attacks whose `modes` file
# names `gradescope` (grader/tests/attacks/README.md), each uploaded alone to
# a fake /autograder tree and graded by the kit's own run_autograder, as
# root, with bubblewrap unusable (a `bwrap` first on PATH that fails as it
# does in a container without user namespaces): the grader then runs every
# build and run as an unprivileged uid under its system-call filter. Asserts,
# per attack:
#   - the grader said it ran the student's code as unprivileged uids;
#   - results.json's score is the grader's own TOTAL (nothing rewrote the
#     tools run_autograder runs after grading), and the `expect` lines hold
#     against run_autograder's output and results.json;
#   - no process of the grader's uids is left, nothing of theirs either (a
#     file in the machine's folders all may write, a System V IPC object),
#     and the uploaded autograder (/autograder/source) is unchanged.
# Two attacks are graded at once (GS_ATTACKS_AT_ONCE, default 2), each in a
# /autograder tree and a range of uids of its own, so each one's checks see
# only its own processes and files; the CPU hogs (ALONE below) are graded
# alone first, so that no other attack's runs are slowed by them.
# Usage: grader/tests/run-attacks-gradescope.sh [ATTACK...]   (as root)
# Env: KEEP=1 keeps the work directory (each attack's results.json is
#      w*/ATTACK.json there); GS_JOBS=J grades with --jobs J (the
#      conf's JOBS; default: the grader's own), so that two passes, --jobs 1
#      and --jobs 8, can be compared test by test (grades must not depend
#      on it).
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
corpus=grader/tests/attacks
pass=0 fail=0
ok() { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
# Attacks that load the whole machine: graded with nothing beside them.
ALONE=" cpu-hog-fork cpu-hog-threads "

if [ "$(id -u)" -ne 0 ]; then
    echo "run-attacks-gradescope: Gradescope runs the autograder as root; run this as root"
    echo "gradescope-attacks: 0 passed, 1 failed"
    exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/ncclab-attacks-gs.XXXXXX")
[ "${KEEP:-}" = 1 ] && echo "work directory: $work" || trap 'rm -rf "$work"' EXIT
chmod 755 "$work" # as /autograder: the student's uids pass through to the kit's copy
# Each worker's 64 uids: uid_base + 64 * worker.
uid_base=$((1930000000 + ($$ % 10000) * 256))

attacks=()
if [ $# -gt 0 ]; then
    for a in "$@"; do attacks+=("$corpus/$a"); done
else
    for d in "$corpus"/*/; do grep -qw gradescope "$d/modes" 2>/dev/null && attacks+=("${d%/}"); done
fi

# ---- the fake /autograder: what tools/gradescope-pack zips, set up ----
# setup.sh's build is this tree's own (the same sources): copied, then made
# newer than the exported sources, so run_autograder's make has nothing to do.
ag=$work/autograder
mkdir -p "$ag/source" "$ag/results" "$work/bin"
if ! tools/export-student --for-gradescope "$ag/source/kit" >"$work/export.log" 2>&1; then
    bad "export-student --for-gradescope failed: $(tail -3 "$work/export.log")"
    echo "gradescope-attacks: $pass passed, $fail failed"
    exit 1
fi
cp course/gradescope/setup.sh course/gradescope/run_autograder "$ag/source/"
cp course/gradescope/run_autograder "$ag/run_autograder"
mkdir -p "$ag/source/kit/build/host"
cp -a build/host/lib build/host/obj build/host/bin build/host/grader build/host/unpack-handins build/host/clean-text \
    "$ag/source/kit/build/host/"
rm -rf "$ag/source/kit/build/host/obj/solutions" "$ag/source/kit/build/host/obj/taught" \
    "$ag/source/kit/build/host/bin/"*-ref
find "$ag/source/kit/build" -exec touch {} +
# The borrowed lab functions (obj/taught): built as setup.sh does, from the
# copy's grader/hidden/reference (this tree's depend on solutions/).
make -C "$ag/source/kit" -s -j2 host NOCUDA=1 >>"$work/export.log" 2>&1 ||
    bad "the fake autograder's kit does not build: $(tail -3 "$work/export.log")"
cat >"$work/bin/bwrap" <<'EOF'
#!/bin/sh
echo "bwrap: No permissions to create a new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2
exit 1
EOF
chmod 755 "$work/bin/bwrap"

uid_procs() { # live processes of this worker's uids
    ps -eo pid=,uid=,stat=,args= | awk -v lo="$NCCLAB_SANDBOX_UID_BASE" \
        '$2 >= lo && $2 < lo + 64 && $3 !~ /^Z/ { print }'
}
uid_leftovers() { # files and System V IPC objects of this worker's uids
    {
        find /tmp /var/tmp /dev/shm /run /var/crash -xdev -printf '%U %p\n' 2>/dev/null
        awk 'NR > 1 { print $8, "shm segment " $2 }' /proc/sysvipc/shm
        awk 'NR > 1 { print $5, "semaphore set " $2 }' /proc/sysvipc/sem
        awk 'NR > 1 { print $8, "message queue " $2 }' /proc/sysvipc/msg
    } | awk -v lo="$NCCLAB_SANDBOX_UID_BASE" '$1 >= lo && $1 < lo + 64 { print }'
}
snapshot() { (cd "$ag/source" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

# shellcheck source=grader/tests/attack-prepare.sh
. grader/tests/attack-prepare.sh
grade_one() { # ATTACK: graded in this worker's $ag, $w (its scratch) and uids
    local a=$1 name=${1##*/} secs total score expect want op m left missing t0
    rm -rf "$w/class" "$ag/submission" "$ag/results"
    mkdir -p "$w/class" "$ag/submission" "$ag/results"
    ATTACK_AIM=$ag/source/kit ATTACK_GRADETMP=$w \
        attack_prepare "$a" "$w/class" "$ag/results" "$w"
    cp -r "$w/class/$attack_student/." "$ag/submission/"
    printf 'LABS=%s\nSTDOUT_VISIBILITY=hidden\nJOBS=%s\n' "$(cat "$a/lab")" "${GS_JOBS:-}" \
        >"$ag/source/ncclab-autograder.conf"
    # An attack's env-gradescope: KEY=VALUE lines for run_autograder's
    # environment (NCCLAB_UID_ONLY_VIEW=0: the runs without a view of their
    # own, where the sweep of the folders all may write is what protects).
    local -a genv=()
    [ -f "$a/env-gradescope" ] && mapfile -t genv < <(grep -E '^[A-Z_][A-Z0-9_]*=' "$a/env-gradescope")
    snapshot >"$w/before"
    t0=$(date +%s)
    # Its copy of the kit in its worker's $w, not the machine's /tmp: on a
    # machine shared with other gradings, theirs are there (a Gradescope
    # container holds only this one).
    env "${genv[@]}" AUTOGRADER_ROOT="$ag" TMPDIR="$w" PATH="$work/bin:$PATH" timeout 900 "$ag/run_autograder" \
        >"$w/$name.out" 2>&1
    secs=$(($(date +%s) - t0))
    cp "$ag/results/results.json" "$w/$name.json" 2>/dev/null
    missing=""
    grep -q 'every build and run as an unprivileged uid' "$w/$name.out" ||
        missing+=" [the grader did not run the code as unprivileged uids]"
    total=$(sed -nE 's/^TOTAL: ([0-9.]+) \/.*/\1/p' "$w/$name.out" | tail -1)
    score=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["score"])' "$w/$name.json" 2>/dev/null)
    if [ -z "$total" ] || [ -z "$score" ]; then
        missing+=" [no TOTAL line or no results.json score]"
    elif ! awk -v a="$total" -v b="$score" 'BEGIN { exit !(a == b) }'; then
        missing+=" [results.json says $score, the grader $total]"
    fi
    # Gradescope takes only the files the labs name, each at most 2 MiB
    # (tools/collect-submission): an attack may say what differs there.
    expect=$a/expect
    [ -f "$a/expect-gradescope" ] && expect=$a/expect-gradescope
    while IFS= read -r want; do
        case "$want" in
        '' | '#'* | gradebook-safe) ;;
        '!'*) grep -qE -- "${want#!}" "$w/$name.out" "$w/$name.json" && missing+=" [found ${want#!}]" ;;
        'points '*)
            op=${want#points } m=${op#* } op=${op%% *}
            awk -v t="${total:-0}" -v m="$m" -v op="$op" \
                'BEGIN { exit !((op == "<=" && t <= m) || (op == ">=" && t >= m) || (op == "==" && t == m)) }' ||
                missing+=" [total ${total:-none}, want $want]" ;;
        *) grep -qE -- "$want" "$w/$name.out" || missing+=" [$want]" ;;
        esac
    done <"$expect"
    for _ in 1 2 3 4 5; do
        left=$(uid_procs)
        [ -z "$left" ] && break
        sleep 1
    done
    [ -n "$left" ] && missing+=" [processes left: $(echo "$left" | head -3 | tr '\n' ';')]"
    left=$(uid_leftovers)
    [ -n "$left" ] && missing+=" [left behind: $(echo "$left" | head -4 | tr '\n' ';')]"
    snapshot | diff -q "$w/before" - >/dev/null || missing+=" [/autograder/source changed]"
    if [ -z "$missing" ]; then
        ok "attack $name on Gradescope (${secs} s, $total points): $(cut -c1-80 "$a/about")"
    else
        bad "attack $name on Gradescope:$missing"
        sed 's/^/     /' "$w/$name.out" | tail -40
    fi
}

# The workers: worker k grades the attacks given to it, in its own copy of
# the /autograder tree (the uploaded one is never changed; each attack's
# check of that is against its own copy), its output kept per attack.
mkdir -p "$work/res"
worker() { # K ATTACK...: worker K grades these attacks one after another
    local k=$1 a
    shift
    w=$work/w$k ag=$work/ag$k
    mkdir -p "$w"
    [ -d "$ag" ] || cp -a "$work/autograder" "$ag"
    export NCCLAB_SANDBOX_UID_BASE=$((uid_base + 64 * k))
    for a in "$@"; do grade_one "$a" >"$work/res/${a##*/}.out" 2>&1; done
}
at_once=${GS_ATTACKS_AT_ONCE:-2}
alone=() shared=()
for a in "${attacks[@]}"; do
    case $ALONE in *" ${a##*/} "*) alone+=("$a") ;; *) shared+=("$a") ;; esac
done
[ ${#alone[@]} -eq 0 ] || (worker 0 "${alone[@]}")
for ((k = 0; k < at_once; k++)); do
    mine=()
    for ((i = k; i < ${#shared[@]}; i += at_once)); do mine+=("${shared[i]}"); done
    [ ${#mine[@]} -eq 0 ] || worker "$k" "${mine[@]}" &
done
wait
for a in "${attacks[@]}"; do
    out=$work/res/${a##*/}.out
    if [ ! -s "$out" ]; then bad "attack ${a##*/} on Gradescope: no result (its worker died?)"; continue; fi
    cat "$out"
    pass=$((pass + $(grep -c '^ok ' "$out"))) fail=$((fail + $(grep -c '^FAIL ' "$out")))
done
echo "gradescope-attacks: ${#attacks[@]} attacks through run_autograder"
echo "gradescope-attacks: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
