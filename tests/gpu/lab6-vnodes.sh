#!/bin/bash
# Lab 6 on one GPU box as virtual nodes with a network between them (issue
# 33): 4 GPUs as 2 virtual nodes of 2 (2 GPUs: 2 of 1), each rank's NCCL
# host identity its virtual node, so NCCL uses its network transport between
# them (sockets here: NCCL_IB_DISABLE=1, as the grader's runs) and NVLink
# inside. Runs the reference: the network on and off, NCCL_ALGO's ring and
# tree for the flat all-reduce, more socket threads; the hierarchical race in
# each; then the grader on lab 6 (reference and the cross-node mutant).
# Writes OUTDIR/lab6-vnodes.md, a summary table, and each run's output.
#   source .gpu/gpu-box-env.sh && tests/gpu/lab6-vnodes.sh OUTDIR
# Env: SIZES (default "-b 16M -e 1G -f 4"), ITERS (default "-n 10 -w 3"),
#      LAB6_GRADE=0 to skip the grader.
set -uo pipefail
out=${1:?usage: tests/gpu/lab6-vnodes.sh OUTDIR}
mkdir -p "$out"
cd "$(dirname "$0")/../.." || exit 1
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
export NCCL_IB_DISABLE=1
ngpu=$(nvidia-smi -L | grep -c '^GPU ')
[ "$ngpu" -ge 2 ] || { echo "lab6-vnodes: needs 2 or more GPUs, found $ngpu" >&2; exit 1; }
np=$(( ngpu >= 4 ? 4 : 2 )) rpn=$(( ngpu >= 4 ? 2 : 1 ))
nvidia-smi -L > "$out/gpus.txt"
make -j"$(nproc)" cuda CUDA_ARCHS="${CUDA_ARCHS:-90}" > "$out/build.txt" 2>&1 ||
    { tail -30 "$out/build.txt"; exit 1; }
read -r -a sizes <<< "${SIZES:--b 16M -e 1G -f 4}"
read -r -a iters <<< "${ITERS:--n 10 -w 3}"

# NAME ENV... -- LAB OPTIONS: one run of the reference, its output in NAME.txt.
run() {
    local name=$1; shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    local xs=(-x NCCL_NVLS_ENABLE -x NCCL_IB_DISABLE)
    for e in "${envs[@]}"; do xs+=(-x "$e"); done
    echo "=== $name: ${envs[*]} mpirun -np $np lab6-ref $*"
    env "${envs[@]}" timeout 400 mpirun --allow-run-as-root -np "$np" "${xs[@]}" \
        build/cuda/bin/lab6-ref --ranks-per-node "$rpn" "${sizes[@]}" "${iters[@]}" "$@" \
        > "$out/$name.txt" 2>&1
    local rc=$?
    grep -E '^# (nodes|race)|allreduce|hierarchical|lab6:' "$out/$name.txt" | grep -v '^#ncclab' | head -30
    echo "=== $name exit $rc"
}
run net-on -- -T 300
run net-off -- --net off -T 300
run algo-ring NCCL_ALGO=allreduce:ring -- -T 300
run algo-tree NCCL_ALGO=allreduce:tree -- -T 300
run socket-threads NCCL_NSOCKS_PERTHREAD=4 NCCL_SOCKET_NTHREADS=4 -- -T 300
# The transports NCCL chose, for the record.
run net-on-debug NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET -- -b 16M -e 16M -n 2 -w 1 -T 120
grep -hoE 'via (NET/[A-Za-z]+|P2P/[A-Za-z/]+|SHM[A-Za-z/]*)' "$out/net-on-debug.txt" | sort | uniq -c \
    > "$out/transports.txt"

# The summary: busbw (GB/s) per size of each run, and the race.
{
    echo "# Lab 6 on $(head -1 "$out/gpus.txt" | sed 's/ (UUID.*//') x $ngpu as virtual nodes of $rpn ($np ranks)"
    echo
    echo "Transports (NCCL_DEBUG=INFO, network on): $(tr -s ' ' < "$out/transports.txt" | paste -sd ';')"
    echo
    echo "| run | size (B) | global | node_local | cross_node | hierarchical | node_local / cross_node | flat / hierarchical time |"
    echo "|---|---|---|---|---|---|---|---|"
    for name in net-on net-off algo-ring algo-tree socket-threads; do
        awk -v run="$name" '
            /^#/ { next }
            $NF == "global" && $(NF-1) == "allreduce" { g[$1] = $8; t[$1] = $6; s[$1] = 1 }
            $NF == "node_local" { l[$1] = $8 }
            $NF == "cross_node" { c[$1] = $8 }
            $NF == "hierarchical" { h[$1] = $8; th[$1] = $6 }
            END { for (z in s) {
                      ratio = c[z] > 0 ? sprintf("%.1f", l[z] / c[z]) : "-"
                      race = th[z] > 0 ? sprintf("%.2f", t[z] / th[z]) : "-"
                      printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", run, z, g[z], l[z], c[z], h[z], ratio, race
                  } }' \
            "$out/$name.txt" | sort -t'|' -k3,3n
    done
} > "$out/lab6-vnodes.md"
cat "$out/lab6-vnodes.md"

if [ "${LAB6_GRADE:-1}" != 0 ]; then
    # shellcheck source=tests/gpu/grader-deps.sh
    source tests/gpu/grader-deps.sh
    make -s grader > "$out/grader-build.txt" 2>&1 || tail -20 "$out/grader-build.txt"
    echo "=== grader, lab 6, reference (cuda)"
    build/host/grader --lab 6 --submission solutions --backend cuda --out "$out/grade-ref" \
        > "$out/grade-ref.txt" 2>&1
    echo "grader exit $?"; grep -E 'PASS|FAIL|WARN|TOTAL' "$out/grade-ref.txt" | head -20
    # The cross-node mutants: one host identity for every rank (real NCCL
    # may keep the world's identities in a split: then it is not caught
    # here, which the summary shows), and the cross-node all-reduce on a
    # stream the timer does not wait for (its timer stops before the data
    # crossed: caught by the data check and the network ceiling).
    for m in grader/tests/mutants/lab6/cross-node-on-local-links grader/tests/mutants/lab6/cross-node-side-stream; do
        name=${m##*/}
        rm -rf "$out/tree-$name"
        grader/tests/mutant-tree.sh "$m" "$out/tree-$name" || continue
        echo "=== grader, lab 6, mutant $name (cuda): each line of its expect must be in the report"
        build/host/grader --lab 6 --submission "$out/tree-$name" --backend cuda \
            --out "$out/grade-$name" > "$out/grade-$name.txt" 2>&1
        echo "grader exit $?"
        grep -E 'more than their links|cross_node_sum|timing honest|each group|TOTAL' "$out/grade-$name.txt" | head -8
        while IFS= read -r want; do
            case "$want" in '' | '#'*) continue ;; esac
            if grep -qF -- "$want" "$out/grade-$name/report.txt"; then echo "  found:   $want"
            else echo "  MISSING: $want"; fi
        done < "$m/expect"
    done
fi
