#!/bin/bash
# One whole GPU session in one command, for a lent GPU box: build, run every
# reference lab on all GPUs, the lab 4 deadlock demo, the grader with the
# system's profile on the references and on the missing-sync mutant. All
# output goes to OUTDIR/gpu-session.tgz (one file to bring back).
#   source .gpu/gpu-box-env.sh && tests/gpu/session.sh OUTDIR
# Env: SESSION_SKIP, a list of parts to leave out when device time is short:
#   labs naive grid lab8 lab6vnodes grader mutants (default: none); lab 8's race runs with
#   SLICES and LAB8_ARGS as tests/gpu/lab8.sh reads them.
set -uo pipefail
out=${1:?usage: tests/gpu/session.sh OUTDIR}
work=$(mktemp -d)
cd "$(dirname "$0")/../.." || exit 1
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
# The grader's jansson and bubblewrap (tests/gpu/grader-deps.sh says how to bring them).
# shellcheck source=tests/gpu/grader-deps.sh
source tests/gpu/grader-deps.sh
ngpu=$(nvidia-smi -L | grep -c '^GPU ')

want() { [[ " ${SESSION_SKIP:-} " != *" $1 "* ]]; }
t0=$(date +%s)
stamp() { echo "=== [$(( $(date +%s) - t0 )) s] $*"; }
# The results are packed however the session ends: a device call that runs
# out of time (timeout sends TERM) still brings back what was measured.
finish() {
    stamp "done"
    mkdir -p "$out"
    tar czf "$out/gpu-session.tgz" -C "$work" .
    echo "session results: $out/gpu-session.tgz"
}
trap finish EXIT
trap 'exit 143' TERM INT
if want labs; then
stamp "labs"
tests/gpu/run-all.sh "$work/labs" 2>&1 | tee "$work/labs.log"
else make -j"$(nproc)" cuda CUDA_ARCHS="${CUDA_ARCHS:-90}" > "$work/build.txt" 2>&1 || tail -30 "$work/build.txt"
fi

if want naive; then
stamp "lab 4 --naive (must end with the watchdog, exit 3)"
timeout 180 mpirun --allow-run-as-root -np "$ngpu" -x NCCL_NVLS_ENABLE build/cuda/bin/lab4-ref --naive > "$work/lab4-naive.txt" 2>&1
echo "exit $?" | tee -a "$work/lab4-naive.txt"; grep -i watchdog "$work/lab4-naive.txt" | head -3
fi

if want grid; then
stamp "lab 7 on nccl-tests' size grid (8 B .. 8 GiB, x4), for the comparison"
timeout 300 mpirun --allow-run-as-root -np "$ngpu" -x NCCL_NVLS_ENABLE build/cuda/bin/lab7-ref --ranks-per-node 1 \
    -b 8 -e 8G -f 4 --csv "$work/lab7-nccl-tests-grid.csv" > "$work/lab7-nccl-tests-grid.txt" 2>&1
echo "exit $?"; grep -E ' global$' "$work/lab7-nccl-tests-grid.txt" | head -20
fi
cp results/lab7-*.csv "$work/" 2>/dev/null

if want lab8; then
stamp "lab 8: the race against NCCL (CSV, fitted alpha/beta, summary)"
want grader && export LAB8_GRADE=0
timeout 900 tests/gpu/lab8.sh "$work/lab8" 2>&1 | tail -40
fi

if want lab6vnodes; then
stamp "lab 6 on virtual nodes with the network on: node-local vs cross-node, the hierarchical race"
LAB6_GRADE=0 timeout 900 tests/gpu/lab6-vnodes.sh "$work/lab6-vnodes" 2>&1 | tail -30
fi

if want grader; then
stamp "grader on the reference solutions (cuda backend)"
make -s grader > "$work/grader-build.txt" 2>&1 || tail -20 "$work/grader-build.txt"
build/host/grader --lab all --submission solutions --backend cuda --out "$work/grade-ref" 2>&1 | tee "$work/grade-ref.txt"
echo "grader exit ${PIPESTATUS[0]}"
fi
want mutants && for m in grader/tests/mutants/lab2/no-sync grader/tests/mutants/lab2/no-warmup; do
    [ -d "$m" ] || continue
    name=$(basename "$m")
    echo "=== grader on mutant $m"
    grader/tests/mutant-tree.sh "$m" "$work/tree-$name" || continue
    build/host/grader --lab 2 --submission "$work/tree-$name" --backend cuda --out "$work/grade-$name" 2>&1 | tee "$work/grade-$name.txt" | grep -iE "FAIL|timer|warm|total" | head -12
done

