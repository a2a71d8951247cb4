#!/bin/bash
# Lab 7's two-node curve on a lent GPU box: the reference sweep on the
# visible GPUs as 2 virtual nodes (4 GPUs: 2 nodes of 2; 2 GPUs: 2 of 1),
# once with the network on (each rank's NCCL_HOSTID is its virtual node, so
# NCCL uses NET between the nodes and P2P/NVLink inside) and once with it
# off (one host: the old single-node curves), then plots, the hand-in report
# of the network-on sweep and a summary:
#   lab7-net-on.csv / .txt / .png / .svg    the sweep with the network on
#   lab7-net-off.csv / .txt / .png / .svg   the same, network off
#   handin/                                 make report's hand-in from net-on
#   nccl-tests.txt                          all_reduce_perf with the same host
#                                           identities, when it is installed
#   lab7-vnodes-summary.txt                 peaks per pattern, the node-local :
#                                           cross-node ratio, and the verdicts:
#     cross-node curve flat at the top (last two sizes within 15 %),
#     node-local at least 10x cross-node (network on), and with the network
#     off cross-node not below half of node-local (no network, no drop).
#   tests/gpu/lab7-vnodes.sh [OUTDIR]      default: $OUT if set, else results/lab7-vnodes
# Env: LAB7_NP (ranks, even; default every GPU), LAB7_ARGS (lab options; default
#      -b 4K -e 1G -f 4 -n 10 -w 3: over sockets a 16 GiB all-reduce takes
#      seconds per call), NCCL_TESTS (all_reduce_perf's path; default: PATH),
#      NCCL_NVLS_ENABLE (default 0), CUDA_ARCHS (default 90).
set -uo pipefail
out=${1:-${OUT:-results/lab7-vnodes}}
cd "$(dirname "$0")/../.." || exit 2
mkdir -p "$out"
out=$(cd "$out" && pwd)
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0} # NVLink multicast stays off on shared machines
command -v nvidia-smi >/dev/null || { echo "lab7-vnodes.sh: nvidia-smi not found: this script is for a GPU machine" >&2; exit 2; }
np=${LAB7_NP:-$(nvidia-smi -L | grep -c '^GPU ')}
if ! [[ "$np" =~ ^[0-9]+$ ]] || [ "$np" -lt 2 ] || [ $((np % 2)) -ne 0 ]; then
    echo "lab7-vnodes.sh: $np ranks: 2 virtual nodes need an even number, at least 2 (LAB7_NP)" >&2
    exit 2
fi
rpn=$((np / 2))
CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((np - 1)))}
export CUDA_VISIBLE_DEVICES
nvidia-smi -L | tee "$out/gpus.txt"

echo "=== build (CUDA backend)"
make -j"$(nproc)" cuda CUDA_ARCHS="${CUDA_ARCHS:-90}" > "$out/build.txt" 2>&1 ||
    { tail -30 "$out/build.txt"; echo "lab7-vnodes.sh: the CUDA build failed" >&2; exit 1; }

read -r -a args <<< "${LAB7_ARGS:--b 4K -e 1G -f 4 -n 10 -w 3}"
mpi=(mpirun --allow-run-as-root -np "$np" -x NCCL_NVLS_ENABLE -x NCCL_DEBUG -x CUDA_VISIBLE_DEVICES)
status=0
for net in on off; do
    run=$out/lab7-net-$net
    echo "=== ${mpi[*]} build/cuda/bin/lab7-ref --ranks-per-node $rpn --net $net ${args[*]}"
    t0=$SECONDS
    NCCL_DEBUG=${NCCL_DEBUG:-INFO} timeout 240 "${mpi[@]}" build/cuda/bin/lab7-ref --ranks-per-node "$rpn" \
        --net "$net" "${args[@]}" --csv "$run.csv" > "$run.txt" 2>&1
    rc=$?
    echo "exit $rc in $((SECONDS - t0)) s"
    [ $rc -eq 0 ] || { status=1; tail -20 "$run.txt"; }
    grep -E '^# nodes:|all checks' "$run.txt"
    # NCCL's own account of the channels between the nodes.
    grep -oE 'via (NET/[A-Za-z]+|P2P/[A-Za-z]+|SHM)' "$run.txt" | sort | uniq -c
    if [ -s "$run.csv" ]; then tools/lab7-plot "$run.csv" "$run"; fi
done
[ -s "$out/lab7-net-on.csv" ] && tools/lab7-report --force "$out/lab7-net-on.csv" "$out/handin" > /dev/null 2>&1

# nccl-tests with the same host identities, for the comparison the handouts quote.
perf=${NCCL_TESTS:-$(command -v all_reduce_perf || true)}
if [ -n "$perf" ] && [ -x "$perf" ]; then
    echo "=== nccl-tests all_reduce_perf as 2 hosts of $rpn (NCCL_HOSTID per virtual node)"
    # shellcheck disable=SC2016 # expanded by each rank's shell
    timeout 120 "${mpi[@]}" bash -c 'NCCL_HOSTID=$(hostname)-vnode$((OMPI_COMM_WORLD_RANK / '"$rpn"')) exec "$0" -b 4K -e 1G -f 4 -g 1 -n 10 -w 3' \
        "$perf" > "$out/nccl-tests.txt" 2>&1
    echo "exit $?"; grep -E '^ +[0-9]+ ' "$out/nccl-tests.txt" | tail -4
else
    echo "=== nccl-tests: all_reduce_perf not found (NCCL_TESTS=path to compare)" | tee "$out/nccl-tests.txt"
fi

# The summary: peaks, the ratio, the shape.
summary() { # CSV -> pattern peak and the busbw of the last two sizes
    awk -F, 'NR > 1 && !/^#/ && $14 == "ok" {
        if ($6 + 0 > peak[$1] + 0) peak[$1] = $6
        prev[$1] = last[$1]; last[$1] = $6 }
    END { for (p in peak) printf "%s %s %s %s\n", p, peak[p], prev[p], last[p] }' "$1"
}
{
    echo "lab 7 on $np GPU(s) as 2 virtual nodes of $rpn ($(head -1 "$out/gpus.txt" | sed 's/ (UUID.*//'))"
    for net in on off; do
        [ -s "$out/lab7-net-$net.csv" ] || { echo "network $net: no CSV"; continue; }
        summary "$out/lab7-net-$net.csv" | sort | awk -v net=$net '
            { printf "network %-3s %-10s peak busbw %8.2f GB/s; last two sizes %8.2f %8.2f\n", net, $1, $2, $3, $4
              peak[$1] = $2; prev[$1] = $3; last[$1] = $4 }
            END {
                if (peak["cross_node"] > 0) printf "network %-3s node-local : cross-node = %.1f : 1\n", net, peak["node_local"] / peak["cross_node"]
                if (net == "on") {
                    flat = prev["cross_node"] > 0 && last["cross_node"] / prev["cross_node"] < 1.15 && last["cross_node"] / prev["cross_node"] > 0.85
                    print (flat ? "PASS" : "FAIL") " cross-node curve flat at the top (last two sizes within 15 %)"
                    print (peak["cross_node"] > 0 && peak["node_local"] >= 10 * peak["cross_node"] ? "PASS" : "FAIL") " node-local at least 10x cross-node with the network on"
                } else
                    print (peak["node_local"] > 0 && peak["cross_node"] >= 0.5 * peak["node_local"] ? "PASS" : "FAIL") " network off: cross-node not below half of node-local"
            }'
    done
} | tee "$out/lab7-vnodes-summary.txt"
grep -q '^FAIL' "$out/lab7-vnodes-summary.txt" && status=1
exit $status
