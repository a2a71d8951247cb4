#!/bin/bash
# Grade the CUDA builds of the reference solutions on a GPU box (all its GPUs,
# the profile chosen from the GPU name), and check that the missing-sync
# mutant of lab 2 is caught by the throughput ceiling there.
#   grader/tests/gpu-grade.sh OUTDIR [LABS]        (LABS default 1,2)
# On a box without Open MPI, prepare it with ../shared/tools/gpu-box-prepare
# (.gpu/); if libjansson is missing, put its .debs in build/gpu-deps/.
set -u
out=${1:?usage: grader/tests/gpu-grade.sh OUTDIR [LABS]}; labs=${2:-1,2}
cd "$(dirname "$0")/../.."
mkdir -p "$out"
[ -f .gpu/gpu-box-env.sh ] && source .gpu/gpu-box-env.sh
if ls build/gpu-deps/*.deb >/dev/null 2>&1; then
    mkdir -p /tmp/jansson && for f in build/gpu-deps/*.deb; do dpkg -x "$f" /tmp/jansson; done
    j=/tmp/jansson/usr; l=$j/lib/x86_64-linux-gnu
    export CPATH=$j/include:${CPATH:-} LIBRARY_PATH=$l:${LIBRARY_PATH:-} LD_LIBRARY_PATH=$l:${LD_LIBRARY_PATH:-}
fi
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
nvidia-smi -L
make -j"$(nproc)" build/cuda/lib/libncclab.a CUDA_ARCHS="${CUDA_ARCHS:-90}" >"$out/build.txt" 2>&1 || { tail -30 "$out/build.txt"; exit 1; }
make -s grader >>"$out/build.txt" 2>&1 || { tail -30 "$out/build.txt"; exit 1; }
status=0
build/host/grader --lab "$labs" --backend cuda --submission solutions --out "$out/ref" --no-color -v \
    >"$out/ref.txt" 2>&1 || status=1
cat "$out/ref.txt"
build/host/grader --lab 2 --backend cuda --submission grader/tests/mutants/lab2/no-sync \
    --out "$out/nosync" --no-color -v >"$out/nosync.txt" 2>&1
rc=$?
grep -A4 "timing honest" "$out/nosync.txt"
grep "above what this system can do" "$out/nosync.txt" | head -3
if [ $rc -eq 1 ] && grep -q "above what this system can do" "$out/nosync.txt"; then
    echo "ok: no-sync mutant caught by the ceiling"
else
    echo "FAIL: no-sync mutant not caught by the ceiling (exit $rc)"; status=1
fi
exit $status
