#!/bin/bash
# Stress of the host backend: every lab's reference solution at 1-8 ranks,
# many runs, several at once (so the machine is loaded and ranks are
# preempted at random points), with sizes, roots, slices, piece sizes and
# transports drawn per run; in plain builds, under AddressSanitizer +
# UndefinedBehaviorSanitizer and under ThreadSanitizer; and lab 5's np5 case
# as the grader runs it, inside a copy of its sandbox. A run passes when it exits 0
# with no sanitizer report; a signal, a report, a timeout or the lab's
# watchdog (status 3) is counted and its output kept. The sandboxed runs are
# exactly the grader's `mpirun -np 5 lab5 -b 4 -e 4096 -f 32 -n 4 -w 4 -T 14`,
# the run that once crashed in a full CI run.
#
#   tests/stress/run.sh                 the suite's section: a few minutes
#   NCCLAB_STRESS=release tests/stress/run.sh    before a release: hours
#                                       (200 runs per lab: 25 at each of 1-8
#                                       ranks; 5 per lab and rank count under
#                                       each sanitizer; 1000 sandboxed lab 5
#                                       runs)
# Finer control (each overrides the preset):
#   STRESS_RUNS=N      runs per lab and rank count in the plain build
#   STRESS_SAN_RUNS=N  the same in each sanitizer build (default: STRESS_RUNS)
#   STRESS_JOBS=J      runs at once (default: the CPU count + 2)
#   STRESS_RANKS="1 2 .. 8"  STRESS_LABS="1 .. 8"  STRESS_BUILDS="plain asan tsan"
#                      (none: only the sandboxed runs)
#   STRESS_SAN_RANKS="..."   rank counts of the sanitizer builds (short form: 3 5)
#   STRESS_SANDBOX_RUNS=N   lab 5 -np 5 runs in the grader's sandbox (0: none)
#   STRESS_TIMEOUT=S   seconds per run before it counts as a hang (default 180); the
#                      ranks' stacks are then added to its output (with gdb)
#   STRESS_LATE_EXIT=S a run of the plain build that ends more than S seconds after
#                      its last output line fails as "late" (default 10: a finished
#                      program exits; sanitizer builds spend long at exit checking
#                      for leaks, so there the time is only reported)
# Long runs are niced, so the machine stays usable for others.
source "$(dirname "$0")/../lib.sh"
cd "$TEST_ROOT" || exit 1

if [ "${NCCLAB_STRESS:-}" = release ]; then
    runs=${STRESS_RUNS:-25} san_runs=${STRESS_SAN_RUNS:-5}
    sandbox_runs=${STRESS_SANDBOX_RUNS:-1000} builds=${STRESS_BUILDS:-plain asan tsan}
else
    runs=${STRESS_RUNS:-1} san_runs=${STRESS_SAN_RUNS:-${STRESS_RUNS:-1}}
    sandbox_runs=${STRESS_SANDBOX_RUNS:-12} builds=${STRESS_BUILDS:-plain tsan}
    san_ranks=${STRESS_SAN_RANKS:-3 5}
fi
ranks=${STRESS_RANKS:-1 2 3 4 5 6 7 8}
san_ranks=${san_ranks:-${STRESS_SAN_RANKS:-$ranks}}
labs=${STRESS_LABS:-1 2 3 4 5 6 7 8}
jobs=${STRESS_JOBS:-$(($(nproc) + 2))}
run_slots=$TEST_ROOT/build/host/run-slots
[ -z "${NCCLAB_RUN_SLOTS:-}" ] || [ -x "$run_slots" ] || { echo "stress: $run_slots is missing (make grader)"; exit 1; }
tmo=${STRESS_TIMEOUT:-180}
late=${STRESS_LATE_EXIT:-10}
logs=$NCCLAB_TEST_LOGS/stress
rm -rf "$logs"
mkdir -p "$logs"
renice -n 10 $$ > /dev/null 2>&1 || true

# ---- builds -------------------------------------------------------------
# A sanitizer build is a copy of the tree built with -fsanitize (as the asan
# section does), so the plain build stays untouched.
declare -A bindir=([plain]=build/host/bin)
declare -A san_flags=(
    [asan]="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
    [tsan]="-fsanitize=thread -fno-omit-frame-pointer")
build_ok=1
for b in $builds; do
    [ "$b" = plain ] || [ "$b" = none ] && continue
    if [ -z "${san_flags[$b]:-}" ]; then fail "stress-build-$b" "unknown build '$b' (plain asan tsan, or none)"; build_ok=0; continue; fi
    tree=build/stress-$b
    rm -rf "$tree"; mkdir -p "$tree"
    tar --exclude=./build --exclude=./.git --exclude=./.gpu -cf - . | tar -xf - -C "$tree"
    if make -C "$tree" -s -j2 NOCUDA=1 host SAN="${san_flags[$b]}" > "$NCCLAB_TEST_LOGS/stress-build-$b.log" 2>&1; then
        pass "stress-build-$b"; bindir[$b]=$tree/build/host/bin
    else
        fail "stress-build-$b" "build failed"; build_ok=0
    fi
done
for n in $labs; do
    [ -x "build/host/bin/lab$n-ref" ] || { fail stress-plain-build "build/host/bin/lab$n-ref missing (make host)"; build_ok=0; }
done

# Sanitizers: report into the run's output, exit with a status of their own.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=99:fast_unwind_on_malloc=0
export LSAN_OPTIONS=suppressions=$TEST_ROOT/tests/asan/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=98
export TSAN_OPTIONS="exitcode=66 report_signal_unsafe=0 second_deadlock_stack=1 suppressions=$TEST_ROOT/tests/stress/tsan.supp"
export OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1
export OMPI_MCA_btl=self,vader
mpi_env=(-x ASAN_OPTIONS -x LSAN_OPTIONS -x UBSAN_OPTIONS -x TSAN_OPTIONS
    -x OMPI_MCA_mca_base_component_disable_dlclose -x PMIX_MCA_mca_base_component_disable_dlclose)

# ---- one run --------------------------------------------------------------
# A size in bytes: a multiple of 4 from 4 to about MAX, odd float counts included.
rand_bytes() { echo $((4 * (1 + (RANDOM * 32768 + RANDOM) % ($1 / 4)))); }

# lab_args LAB NP SMALL: the lab's options for one run, drawn afresh; SMALL=1
# keeps the sizes down (for runs cut into tiny pieces).
lab_args() {
    local n=$1 np=$2 small=$3 b big=$((1 << 20)) top=256K
    b=$(rand_bytes $((64 << 10)))
    [ "$small" -eq 1 ] && b=$(rand_bytes $((8 << 10))) big=$((64 << 10)) top=32K
    case $n in
    1) case $((RANDOM % 3)) in 0) echo "--bootstrap tcp" ;; 1) echo "--task comm --bootstrap tcp" ;; *) echo "" ;; esac ;;
    2) echo "-b $b -e $((b * 16)) -f 8 -n 2 -w 1 --overlap-rounds $((1 + RANDOM % 3))" ;;
    3) echo "-b $b -e $((b * 4)) -f 4 -n 2 -w 1 -r $((RANDOM % np))" ;;
    4) echo "-b $b -e $((b * 16)) -f 4 -n 2 -w 1" ;;
    5) if [ "$np" -eq 5 ] && [ $((RANDOM % 2)) -eq 0 ]; then echo "-b 4 -e 4096 -f 32 -n 4 -w 4"
       else echo "-b $b -e $((b * 16)) -f 16 -n 2 -w 2"; fi ;;
    6) echo "-b $b -e $((b * 4)) -f 4 -n 2 -w 1 --ranks-per-node $((RANDOM % 4))" ;;
    7) echo "--ranks-per-node $((1 + RANDOM % 3)) -b 4K -e $top -f 8 -n 2 -w 1 --csv none" ;;
    8) echo "-b 4 -e $(rand_bytes $big) -f 33 --slices $((1 + RANDOM % 5)) -n 2 -w 1 --csv none" ;;
    esac
}

# descendants PID: every process below PID (a sandbox's ranks are in a session
# of their own, so the tree is followed rather than the session).
descendants() {
    ps -e -o pid=,ppid= | awk -v root="$1" '
        { parent[$1] = $2 }
        END { for (p in parent) { q = p; while (q in parent && q != root && q > 1) q = parent[q]; if (q == root && p != root) print p } }'
}

# run_one ID BUILD LAB NP [sandbox]: one run; its result line goes to $logs/results.
run_one() {
    local id=$1 b=$2 n=$3 np=$4 how=${5:-mpirun} args env=(NCCLAB_STRESS_RUN=1) out rc t0 verdict small=0
    # Transport and piece size vary too: every rank its own "host" (TCP),
    # or collectives cut into small pieces (many scratch rounds). The
    # sandboxed runs are the grader's run of lab 5 that once crashed,
    # exactly (its options, its watchdog).
    if [ "$how" = sandbox ]; then
        args=(-b 4 -e 4096 -f 32 -n 4 -w 4)
    else
        case $((RANDOM % 4)) in
        0) env+=(NCCLAB_HOST_FORCE_TCP=1) ;;
        1) env+=(NCCLAB_HOST_CHUNK_ELEMS=$((1 + RANDOM % 5000))) small=1 ;;
        esac
        read -r -a args <<< "$(lab_args "$n" "$np" "$small")"
    fi
    local xs=()
    for e in "${env[@]}"; do xs+=(-x "${e%%=*}"); done
    out=$logs/run-$id.txt
    local port=$((20000 + (id * 7 + RANDOM) % 12000)) cmd
    if [ "$how" = sandbox ]; then
        cmd=(tests/stress/sandboxed "$sandbox_bin/lab$n-ref" "$np" "${args[@]}" -T 14)
    else
        cmd=(mpirun --oversubscribe "${mpi_env[@]}" "${xs[@]}" -x MASTER_ADDR -x MASTER_PORT
            -np "$np" "${bindir[$b]}/lab$n-ref" "${args[@]}" -T 600)
    fi
    # Inside the whole suite, a slot per rank among the graders' runs and
    # the rest (NCCLAB_RUN_SLOTS, grader/slots.h): the runs still outnumber
    # the cores, without piling the suite's other work onto them too.
    [ -n "${NCCLAB_RUN_SLOTS:-}" ] && cmd=("$run_slots" "$np" -- "${cmd[@]}")
    t0=$(date +%s.%N)
    # In a session of its own, so that a hang can be looked at (the ranks'
    # stacks, when gdb is there) and then ended whole. The lab's watchdog is
    # pushed out of the way: the time limit here decides what a hang is.
    env "${env[@]}" MASTER_ADDR=127.0.0.1 MASTER_PORT=$port setsid "${cmd[@]}" > "$out" 2>&1 < /dev/null &
    local pid=$! waited=0
    while kill -0 "$pid" 2> /dev/null && [ $waited -lt $((tmo * 2)) ]; do
        sleep 0.5
        waited=$((waited + 1))
    done
    if kill -0 "$pid" 2> /dev/null; then
        # Noted apart: the run still writes to its own output meanwhile.
        echo "# stress: still running after $tmo s; the ranks' stacks:" > "$out.hang"
        if command -v gdb > /dev/null; then
            for p in $(descendants "$pid"); do
                [[ $(cat "/proc/$p/comm" 2> /dev/null) == lab* ]] || continue
                echo "## pid $p" >> "$out.hang"
                timeout 60 gdb -p "$p" -batch -ex "thread apply all bt 15" 2>&1 | grep -E '^(#|Thread)' >> "$out.hang"
            done
        fi
        local kids
        kids=$(descendants "$pid")
        kill -KILL -- -"$pid" $kids 2> /dev/null
        wait "$pid" 2> /dev/null
        cat "$out.hang" >> "$out"
        rm -f "$out.hang"
        rc=124
    else
        wait "$pid"
        rc=$?
    fi
    local secs t_end gap
    t_end=$(date +%s.%N)
    secs=$(awk -v a="$t0" -v b="$t_end" 'BEGIN { printf "%.1f", b - a }')
    # From the run's last output to its end: what exiting took (MPI_Finalize,
    # the ranks' teardown, the launcher noticing).
    gap=$(awk -v a="$(stat -c %.9Y "$out")" -v b="$t_end" 'BEGIN { g = b - a; printf "%.1f", g < 0 ? 0 : g }')
    if grep -Eq 'ERROR: (Address|Leak)Sanitizer|WARNING: ThreadSanitizer|runtime error:' "$out"; then verdict=report
    elif grep -Eq 'exited on signal|Segmentation fault|Bus error|Aborted' "$out" ||
        { [ $rc -gt 128 ] && [ $rc -ne 137 ]; }; then verdict=crash
    elif [ $rc -eq 124 ] || [ $rc -eq 137 ] || [ $rc -eq 3 ]; then verdict=hang
    elif [ $rc -ne 0 ]; then verdict=fail
    elif [ "$b" = plain ] && awk -v g="$gap" -v m="$late" 'BEGIN { exit !(g > m) }'; then verdict=late
    else verdict=ok; fi
    {
        echo "# $how $b lab$n np$np: ${env[*]} ${args[*]}"
        echo "# exit status $rc after $secs s, $gap s after its last output: $verdict"
    } >> "$out"
    [ "$verdict" = ok ] && rm -f "$out"
    echo "$how $b $n $np $verdict $secs $id $gap" >> "$logs/results"
}

# ---- the runs -------------------------------------------------------------
plan=$logs/plan
: > "$plan"
for b in $builds; do
    [ -n "${bindir[$b]:-}" ] || continue
    nr=$runs nps=$ranks
    [ "$b" = plain ] || nr=$san_runs nps=$san_ranks
    for ((r = 0; r < nr; r++)); do
        for n in $labs; do for np in $nps; do echo "mpirun $b $n $np" >> "$plan"; done; done
    done
done
can_sandbox=0
# The sandboxed runs' binaries, copied where the sandbox's unprivileged uid
# reaches them: a grader run as root in uid-only mode (--no-sandbox, as the
# grader section's launch-retry test does beside this one) makes its kit's
# build/ private (grader/sandbox.c, sandbox_hide_kit), and the runs from
# build/host/bin were then skipped as if bubblewrap could not start.
if [ "$sandbox_runs" -gt 0 ]; then
    sandbox_bin=$(mktemp -d "${TMPDIR:-/tmp}/ncclab-stress-bin.XXXXXX")
    trap 'rm -rf "$sandbox_bin"' EXIT
    chmod 755 "$sandbox_bin"
    for n in 1 5; do install -m 755 "build/host/bin/lab$n-ref" "$sandbox_bin/"; done
    if tests/stress/sandboxed "$sandbox_bin/lab1-ref" 1 > "$logs/sandbox-probe.txt" 2>&1; then
        can_sandbox=1
        for ((r = 0; r < sandbox_runs; r++)); do echo "sandbox plain 5 5" >> "$plan"; done
    else
        echo "  SKIP  sandboxed runs: bubblewrap cannot start here ($(tail -1 "$logs/sandbox-probe.txt"))"
    fi
fi
total=$(wc -l < "$plan")
echo "== stress: $total runs, $jobs at a time (builds: $builds; ranks: $ranks, under sanitizers $san_ranks; labs: $labs; sandboxed lab 5 np5: $((can_sandbox * sandbox_runs)))"
t_start=$(date +%s)
id=0
# Shuffled, so labs, rank counts and builds overlap in time.
while read -r how b n np; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    id=$((id + 1))
    run_one "$id" "$b" "$n" "$np" "$how" &
done < <(shuf "$plan")
wait
echo "   ($(($(date +%s) - t_start)) s for the runs)"

# ---- verdicts ---------------------------------------------------------------
# One test per build and lab (and one for the sandboxed runs): every run ok.
[ -f "$logs/results" ] || : > "$logs/results"
while read -r how b n; do
    name="stress-$b-lab$n"
    [ "$how" = sandbox ] && name="stress-sandboxed-lab$n-np5"
    line=$(awk -v h="$how" -v b="$b" -v n="$n" '
        $1 == h && $2 == b && $3 == n { c[$5]++; t++; if ($6 > m) m = $6; if ($8 > g) g = $8 }
        END { printf "%d runs: %d ok, %d crashed, %d sanitizer reports, %d hung, %d failed, %d late to exit (slowest %.1f s, exit %.1f s after the output at most)",
              t, c["ok"], c["crash"], c["report"], c["hang"], c["fail"], c["late"], m, g }' "$logs/results")
    bad=$(awk -v h="$how" -v b="$b" -v n="$n" '$1 == h && $2 == b && $3 == n && $5 != "ok" { print "run-" $7 ".txt (np" $4 " " $5 ")" }' "$logs/results" | head -5)
    if [ -z "$bad" ]; then
        pass "$name: $line"
    else
        fail "$name" "$line; outputs in $logs: $(echo $bad)"
        first=$(sed -E 's/ .*//' <<< "$bad" | head -1)
        tail -n 20 "$logs/$first" | sed 's/^/        | /'
    fi
done < <(awk '{ print $1, $2, $3 }' "$plan" | sort -u)
[ "$build_ok" -eq 1 ] || echo "  (some builds failed: see above)"
finish stress
