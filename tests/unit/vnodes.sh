# shellcheck shell=bash
# Virtual nodes across a network, on the host backend (sourced by
# tests/unit/run.sh): 4 ranks as 2 virtual nodes of 2 use shared memory
# inside a node and TCP between nodes, as every rank's `kind=info
# name=nodes` record counts its peers; --net off and NCCLAB_NET=off give one
# host again; a malformed link model stops the run with a message. The
# pacing arithmetic itself is test_host_link's (no timing is asserted here).

# vnode_peers NAME SHM TCP BETWEEN CMD...: every one of the 4 ranks reports
# SHM shared-memory and TCP peers, and rank 0's header says BETWEEN.
vnode_peers() {
    local name=$1 shm=$2 tcp=$3 between=$4 log n
    shift 4
    run_split "$name" 120 "$@"; local rc=$?
    log=$NCCLAB_TEST_LOGS/$name.log
    n=$(grep -c "^#ncclab .*kind=info name=nodes .*shm_peers=$shm tcp_peers=$tcp " "$log")
    if [ "$rc" -ne 0 ]; then fail "$name" "exit status $rc"
    elif [ "$n" -ne 4 ]; then fail "$name" "$n of 4 ranks report shm_peers=$shm tcp_peers=$tcp"
    elif ! grep -q "^# nodes: .*between: $between" "$log"; then fail "$name" "no '# nodes: ... between: $between' header"
    else pass "$name"; fi
}

echo "== virtual nodes across a network (host identities: SHM inside, TCP between)"
MPI4=(mpirun --oversubscribe -np 4)
vnode_peers vnodes-net-on-mpi 1 2 "TCP, link model" \
    "${MPI4[@]}" build/host/bin/lab1-ref --ranks-per-node 2
vnode_peers vnodes-net-on-tcp-bootstrap 1 2 "TCP, link model" \
    tools/launch -n 4 build/host/bin/lab1-ref --bootstrap tcp --ranks-per-node 2
vnode_peers vnodes-one-per-node 0 3 "TCP, link model" \
    "${MPI4[@]}" build/host/bin/lab1-ref --ranks-per-node 1
vnode_peers vnodes-net-off 3 0 "none" \
    "${MPI4[@]}" build/host/bin/lab1-ref --ranks-per-node 2 --net off
vnode_peers vnodes-net-off-env 3 0 "none" \
    env NCCLAB_NET=off "${MPI4[@]}" -x NCCLAB_NET build/host/bin/lab1-ref --ranks-per-node 2
vnode_peers vnodes-real-node 3 0 "none" "${MPI4[@]}" build/host/bin/lab1-ref
# The network carries lab 6's collectives correctly (its checks), paced.
vnode_peers vnodes-lab6 1 2 "TCP, link model 2 GB/s 5 us" \
    env NCCLAB_NET_GBPS=2 NCCLAB_NET_LATENCY_US=5 "${MPI4[@]}" -x NCCLAB_NET_GBPS -x NCCLAB_NET_LATENCY_US \
    build/host/bin/lab6-ref --ranks-per-node 2 -b 64K -e 256K -n 3 -w 1
vnode_peers vnodes-no-link-model 1 2 "TCP, no link model" \
    env NCCLAB_NET_GBPS=0 "${MPI4[@]}" -x NCCLAB_NET_GBPS build/host/bin/lab1-ref --ranks-per-node 2
expect_error vnodes-bad-net-option 2 "invalid value 'maybe' for --net" 60 \
    build/host/bin/lab1-ref --net maybe
expect_error vnodes-bad-net-env 2 "NCCLAB_NET='sometimes' is neither 'on' nor 'off'" 60 \
    env NCCLAB_NET=sometimes RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 build/host/bin/lab1-ref --bootstrap tcp
expect_error vnodes-bad-link-model 1 "NCCLAB_NET_GBPS must be a number of GB/s" 120 \
    env NCCLAB_NET_GBPS=fast "${MPI4[@]}" -x NCCLAB_NET_GBPS build/host/bin/lab1-ref --ranks-per-node 2
