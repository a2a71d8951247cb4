#!/bin/bash
# Virtual nodes across NCCL's network, on a GPU box (build/cuda built, e.g.
# by tests/gpu/run-all.sh): the kit gives every virtual node its own
# NCCL_HOSTID, so NCCL must connect ranks of one node via P2P (or SHM) and
# ranks of different nodes via NET (Socket on a box without a NIC).
#   tests/gpu/vnodes.sh OUTDIR [RPN]     (RPN: ranks per virtual node, default NGPU/2)
# 1. lab 1's reference with NCCL_DEBUG=INFO: every "via ..." connection line
#    is classified by the virtual nodes of its two ranks; any NET inside a
#    node or P2P/SHM between nodes fails. With --net off there is no NET.
# 2. lab 2's reference (an all-reduce timed as nccl-tests times it) on the
#    virtual nodes and with --net off, three alternating runs each, 64 MiB to
#    1 GiB: the medians of busbw go to OUTDIR/vnodes-lab2.txt.
# The repository builds no nccl-tests: compare with all_reduce_perf run by hand
# with the same host identities (NCCL_HOSTID=vnodeK per rank, see the report).
set -uo pipefail
out=${1:?usage: tests/gpu/vnodes.sh OUTDIR [RPN]}
mkdir -p "$out"
cd "$(dirname "$0")/../.." || exit 1
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
ngpu=$(nvidia-smi -L | grep -c '^GPU ')
rpn=${2:-$((ngpu / 2))}
((rpn >= 1 && ngpu >= 2)) || { echo "vnodes: need at least 2 GPUs (found $ngpu)"; exit 2; }
for b in lab1-ref lab2-ref; do
    [[ -x build/cuda/bin/$b ]] || { echo "vnodes: build/cuda/bin/$b missing: make cuda first"; exit 2; }
done
mpi=(mpirun --allow-run-as-root -np "$ngpu" -x NCCL_NVLS_ENABLE)
status=0

# connections FILE: "inside P2P/CUMEM 8" lines, from NCCL's "a[da] -> b[db] ... via T" lines.
connections() {
    awk -v rpn="$rpn" '/ via / {
        if (!match($0, /[0-9]+\[[0-9a-fx]+\] -> [0-9]+\[[0-9a-fx]+\]/)) next
        split(substr($0, RSTART, RLENGTH), p, /[][ >-]+/)
        via = $0; sub(/.* via /, "", via); sub(/ .*/, "", via); sub(/\/[0-9]+$/, "", via)
        where = int(p[1] / rpn) == int(p[3] / rpn) ? "inside" : "between"
        n[where " " via]++
    } END { for (k in n) print k, n[k] }' "$1" | sort
}

echo "=== 1. NCCL's transports, $ngpu ranks as virtual nodes of $rpn"
for net in on off; do
    f=$out/vnodes-lab1-net-$net.txt
    timeout 300 "${mpi[@]}" -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,P2P,NET \
        build/cuda/bin/lab1-ref --ranks-per-node "$rpn" --net "$net" > "$f" 2>&1
    rc=$?
    grep -E '^# (nodes|check|lab1)' "$f"
    connections "$f" | tee "$out/vnodes-connections-net-$net.txt"
    bad=""
    [[ $rc -eq 0 ]] || bad+=" exit $rc;"
    grep -q '^inside NET' "$out/vnodes-connections-net-$net.txt" && bad+=" NET inside a node;"
    if [[ $net == on ]]; then
        grep -Eq '^between (P2P|SHM)' "$out/vnodes-connections-net-$net.txt" && bad+=" P2P/SHM between nodes;"
        grep -q '^between NET' "$out/vnodes-connections-net-$net.txt" || bad+=" no NET connection between nodes;"
    else
        grep -q 'NET' "$out/vnodes-connections-net-$net.txt" && bad+=" NET with --net off;"
    fi
    if [[ -n $bad ]]; then echo "FAIL net $net:$bad"; status=1; else echo "PASS net $net"; fi
done

echo "=== 2. lab 2's all-reduce on the virtual nodes and without them, 3 alternating runs"
for run in 1 2 3; do
    for net in on off; do
        timeout 300 "${mpi[@]}" build/cuda/bin/lab2-ref --ranks-per-node "$rpn" --net "$net" \
            -b 64M -e 1G -f 4 -n 10 -w 3 --task time > "$out/vnodes-lab2-net-$net-run$run.txt" 2>&1 || status=1
    done
done
{
    echo "# busbw GB/s, medians of 3 runs, $ngpu GPUs as virtual nodes of $rpn ($(nvidia-smi -L | head -1))"
    echo "# bytes net_on net_off"
    for f in "$out"/vnodes-lab2-net-*-run*.txt; do
        net=${f##*net-}; net=${net%%-*}
        awk -v net="$net" '/^ +[0-9]+ +[0-9]+ +float/ {print $1, net, $8}' "$f"
    done | sort -k1,1n -k2,2 -k3,3g | awk '
        { v[$1, $2] = v[$1, $2] " " $3; b[$1] = 1 }
        function med(s,   a, n) { n = split(s, a, " "); return a[int((n + 1) / 2)] }
        END { for (x in b) print x, med(v[x, "on"]), med(v[x, "off"]) }' | sort -n
} | tee "$out/vnodes-lab2.txt"
exit $status
