#!/bin/bash
# The Check unit tests: common/ (single process), the host backend's runtime
# (single process) and its NCCL (under mpirun at 1-5 ranks, and once over
# TCP only), ordinary NCCL programs on it (several devices in one process,
# plain MPI_Init, no MPI under tools/launch), the deadlock behaviour of
# unfused send/recv, and the example NCCL programs (tests/examples/).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../examples/run.sh"
cd "$TEST_ROOT" || exit 1
T=build/host/tests

check_run() { # NAME CMD...: a Check program; its own summary goes to the log
    local name=$1; shift
    run_cmd "$name" 300 "$@"; local rc=$?
    grep -E '^[0-9]+%: Checks' "$NCCLAB_TEST_LOGS/$name.log" | tail -1 | sed "s/^/        $name: /"
    if [ $rc -eq 0 ]; then pass "$name"; else fail "$name" "exit status $rc"; fi
}

echo "== unit tests (Check)"
check_run unit-common $T/test_common
[ -x $T/test_host_runtime ] && check_run unit-host-runtime $T/test_host_runtime
if [ -x $T/test_host_nccl ]; then
    for np in 1 2 3 4 5; do check_run "unit-host-nccl-np$np" mpirun --oversubscribe -np $np $T/test_host_nccl; done
fi
if [ -x $T/test_host_nccl ]; then
    # Every rank its own "host": the TCP data path and the collectives over it.
    check_run unit-host-nccl-tcp-np3 env NCCLAB_HOST_FORCE_TCP=1 \
        mpirun --oversubscribe -np 3 -x NCCLAB_HOST_FORCE_TCP $T/test_host_nccl
fi
if [ -x $T/test_host_standalone ]; then
    # Ordinary NCCL programs: ncclCommInitAll and a rank per thread in one
    # process; after a plain MPI_Init; with no MPI at all (tools/launch).
    check_run unit-host-standalone-single $T/test_host_standalone single
    for np in 1 2 3 4 5; do
        check_run "unit-host-standalone-mpi-np$np" mpirun --oversubscribe -np $np $T/test_host_standalone mpi
        check_run "unit-host-standalone-launch-np$np" tools/launch -n $np $T/test_host_standalone env
    done
fi
if [ -x $T/host_deadlock_probe ]; then
    # NCCL semantics: an unfused ring where everyone sends first completes
    # for tiny messages (eager) and deadlocks for large ones.
    expect_status deadlock-probe-small 0 60 mpirun --oversubscribe -np 3 $T/host_deadlock_probe 8
    # 6 s: the deadlock never ends on its own; a ring that completes does so in well under that.
    run_cmd deadlock-probe-large 6 mpirun --oversubscribe -np 3 $T/host_deadlock_probe $((64 << 20)); rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then pass deadlock-probe-large
    else fail deadlock-probe-large "exit status $rc: the unfused ring should have deadlocked"; fi
fi
if [ -x $T/host_mismatch_probe ]; then
    # A rank that skips a collective must be named, not corrupt memory.
    expect_error collective-mismatch-detected 1 "disagree on collective #0" 60 \
        mpirun --oversubscribe -np 3 $T/host_mismatch_probe
fi
if [ -x $T/host_mpi_wait_probe ]; then
    # The MPI collectives the kit uses, on the host backend: right results,
    # and ranks waiting in them for a busy peer nap instead of polling.
    expect_status mpi-wait-naps 0 60 mpirun --oversubscribe -np 3 $T/host_mpi_wait_probe
fi
if [ -x $T/host_peer_gone_probe ]; then
    # A rank that goes away (its process ends, or it destroys the communicator)
    # while the others wait for it: they stop with a message, over shared
    # memory and over TCP, instead of hanging.
    expect_error peer-gone-exit 1 "rank 2 \(pid [0-9]+\) has ended or crashed while this rank still waited for it in ncclAllReduce" 60 \
        tools/launch -n 3 $T/host_peer_gone_probe exit
    expect_error peer-gone-destroy 1 "rank 2 has finalized or destroyed the communicator" 60 \
        tools/launch -n 3 $T/host_peer_gone_probe destroy
    expect_error peer-gone-p2p 1 "has ended or crashed while this rank still waited for it in ncclRecv from rank 2" 60 \
        tools/launch -n 3 $T/host_peer_gone_probe p2p
    expect_error peer-gone-tcp 1 "the connection to rank 2 broke" 60 \
        env NCCLAB_HOST_FORCE_TCP=1 tools/launch -n 3 $T/host_peer_gone_probe destroy
fi
[ -x $T/test_host_link ] && check_run unit-host-link $T/test_host_link
if [ -x build/host/run-slots ]; then
    # The run slots graders and tests share (grader/slots.h), two here: a
    # busy job holding both keeps a one-rank job from starting until it
    # ends; a job that only waits gives them back; the command's exit status
    # comes back.
    slots=$(mktemp -d "${TMPDIR:-/tmp}/ncclab-slots.XXXXXX")
    name=run-slots
    (
        export NCCLAB_RUN_SLOTS=$slots/locks:2
        mkdir -p "$slots/locks"
        build/host/run-slots 3 -- sh -c "touch $slots/a; while [ ! -e $slots/go ]; do :; done" &
        for _ in $(seq 600); do [ -e "$slots/a" ] && break; sleep 0.05; done
        build/host/run-slots 1 -- touch "$slots/b" &
        sleep 0.5
        [ -e "$slots/b" ] && { echo "a one-rank job ran while a busy job held both slots"; exit 1; }
        touch "$slots/go"
        wait
        [ -e "$slots/b" ] || { echo "the one-rank job never ran"; exit 1; }
        build/host/run-slots 2 -- sh -c "touch $slots/held; exec sleep 60" &
        holder=$!
        for _ in $(seq 600); do [ -e "$slots/held" ] && break; sleep 0.05; done
        build/host/run-slots 1 -- touch "$slots/c"
        kill $holder
        [ -e "$slots/c" ] || { echo "a job that only waits kept its slots"; exit 1; }
        build/host/run-slots 1 -- sh -c 'exit 7'
        [ $? -eq 7 ] || { echo "the exit status was not passed on"; exit 1; }
    ) > "$NCCLAB_TEST_LOGS/$name.log" 2>&1
    if [ $? -eq 0 ]; then pass $name; else fail $name "$(tail -1 "$NCCLAB_TEST_LOGS/$name.log")"; fi
    rm -rf "$slots"
    expect_error run-slots-usage 2 'usage: run-slots RANKS' 10 build/host/run-slots 0 -- true
fi
source "$(dirname "$0")/vnodes.sh"
echo "== example NCCL programs (tests/examples/, also built against the real NCCL by the cuda section)"
run_examples host
finish unit
