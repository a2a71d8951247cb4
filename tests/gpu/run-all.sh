#!/bin/bash
# Build the CUDA backend and run every lab's reference solution on all the
# GPUs of this machine, saving each output under OUTDIR. For GPU boxes; the
# figures in the handouts come from here.
#   tests/gpu/run-all.sh OUTDIR [LAB...]
set -uo pipefail
out=${1:?usage: tests/gpu/run-all.sh OUTDIR [LAB...]}; shift
mkdir -p "$out"
cd "$(dirname "$0")/../.." || exit 1
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}   # NVLink multicast stays off on shared machines
ngpu=$(nvidia-smi -L | grep -c '^GPU ')
nvidia-smi -L | tee "$out/gpus.txt"
{ nvidia-smi topo -m; } > "$out/topo.txt" 2>&1
make -j"$(nproc)" cuda CUDA_ARCHS="${CUDA_ARCHS:-90}" > "$out/build.txt" 2>&1 || { tail -30 "$out/build.txt"; exit 1; }
labs=${*:-$(ls -d labs/lab[0-9]_* | sed 's|labs/lab\([0-9]\).*|\1|')}
mpi=(mpirun --allow-run-as-root -np "$ngpu" -x NCCL_NVLS_ENABLE -x NCCL_DEBUG)
status=0
# Labs 6 and 7 play nodes with --ranks-per-node: one GPU a node on 2 GPUs,
# two nodes of half the GPUs each on 4 or more (RPN in the .args files).
rpn=1
[ "$ngpu" -ge 4 ] && rpn=$((ngpu / 2))
for n in $labs; do
    args=()
    [ -f "tests/gpu/lab$n.args" ] && read -r -a args < <(sed -e "s/RPN/$rpn/g" -e "s/NGPU/$ngpu/g" "tests/gpu/lab$n.args")
    echo "=== lab $n: ${mpi[*]} build/cuda/bin/lab$n-ref ${args[*]}"
    timeout 300 "${mpi[@]}" "build/cuda/bin/lab$n-ref" "${args[@]}" > "$out/lab$n.txt" 2>&1
    rc=$?
    grep -v '^#ncclab ' "$out/lab$n.txt" | tail -25
    echo "=== lab $n exit $rc"
    [ $rc -eq 0 ] || status=1
done
exit $status
