#!/bin/bash
# Lab 8's GPU measurements in one command, for a lent GPU box: build the CUDA
# backend, race the reference all-reduces against ncclAllReduce on every
# visible GPU (one rank per GPU, mpirun -np <GPUs>) without pipelining
# (--slices 1) and with 2, 4 and 8 slices, then write under OUTDIR
#   lab8-slicesK.csv / .txt / .png / .svg   each run: CSV, output, plot
#   lab8-fit.txt                            the fitted alpha and beta of every run
#   lab8-summary.txt                        busbw of each algorithm against NCCL's
#                                           per size, and the acceptance verdicts
#   grade-lab8.txt                          the grader on the references (cuda)
# and print the summary. The handout's "Measured on GPUs" figures come from here.
#   tests/gpu/lab8.sh [OUTDIR]     default: $OUT if set, else results/lab8-gpu
# Env: SLICES (default "1 2 4 8"; 1 must be among them for the acceptance lines),
#      LAB8_NP (race on the first LAB8_NP GPUs only, e.g. 2 on a 4-GPU box),
#      LAB8_GRADE=0 (no grader run: a session that grades every lab anyway), LAB8_ARGS (extra lab options, e.g. -e 4G),
#      NCCL_NVLS_ENABLE (default 0), CUDA_ARCHS (default 90).
set -uo pipefail
out=${1:-${OUT:-results/lab8-gpu}}
cd "$(dirname "$0")/../.." || exit 2
mkdir -p "$out"
out=$(cd "$out" && pwd)
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0} # NVLink multicast stays off on shared machines
# The grader's jansson and bubblewrap (tests/gpu/grader-deps.sh says how to bring them).
# shellcheck source=tests/gpu/grader-deps.sh
source tests/gpu/grader-deps.sh
command -v nvidia-smi >/dev/null || { echo "lab8.sh: nvidia-smi not found: this script is for a GPU machine" >&2; exit 2; }
ngpu=$(nvidia-smi -L | grep -c '^GPU ')
if [ -n "${LAB8_NP:-}" ]; then
    [[ "$LAB8_NP" =~ ^[0-9]+$ ]] && [ "$LAB8_NP" -le "$ngpu" ] ||
        { echo "lab8.sh: LAB8_NP=$LAB8_NP: give a number of ranks up to the $ngpu GPU(s) here" >&2; exit 2; }
    ngpu=$LAB8_NP
    # The first LAB8_NP GPUs, one rank each (nvidia-smi still lists all).
    CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((ngpu - 1)))
    export CUDA_VISIBLE_DEVICES
fi
[ "$ngpu" -ge 2 ] || { echo "lab8.sh: $ngpu GPU(s) visible; the race needs 2 or more" >&2; exit 2; }
nvidia-smi -L | tee "$out/gpus.txt"
{ nvidia-smi topo -m; } > "$out/topo.txt" 2>&1

echo "=== build (CUDA backend)"
make -j"$(nproc)" cuda CUDA_ARCHS="${CUDA_ARCHS:-90}" > "$out/build.txt" 2>&1 ||
    { tail -30 "$out/build.txt"; echo "lab8.sh: the CUDA build failed" >&2; exit 1; }

mpi=(mpirun --allow-run-as-root -np "$ngpu" -x NCCL_NVLS_ENABLE -x NCCL_DEBUG)
read -r -a extra <<< "${LAB8_ARGS:-}"
status=0
: > "$out/lab8-fit.txt"
for k in ${SLICES:-1 2 4 8}; do
    run=$out/lab8-slices$k
    echo "=== ${mpi[*]} build/cuda/bin/lab8-ref --slices $k ${extra[*]}"
    timeout 300 "${mpi[@]}" build/cuda/bin/lab8-ref --slices "$k" --csv "$run.csv" "${extra[@]}" \
        > "$run.txt" 2> "$run.err"
    rc=$?
    grep -v '^#ncclab ' "$run.txt" | grep -E '^# (alpha|  |at |lab8|race)' | head -20
    echo "=== --slices $k: exit $rc"
    [ $rc -eq 0 ] || { status=1; tail -20 "$run.err"; continue; }
    { echo "--slices $k:"; grep -E '^#   [a-z]+ +alpha' "$run.txt"; } >> "$out/lab8-fit.txt"
    if command -v gnuplot >/dev/null; then
        tools/lab8-plot "$run.csv" "$run" || status=1
    else
        echo "gnuplot is not installed here: plot later with  make plot-race CSV=$run.csv"
    fi
done

# busbw of every algorithm against NCCL's in the same run, sizes >= 64 MiB
# (MIN_BYTES), and issue 24's acceptance: what lab8_allreduce picks (own)
# reaches >= 90 % of NCCL's busbw at >= 1 GiB and >= 80 % at 256 MiB, for
# the best --slices; the pipelined ring with some --slices K > 1 beats it
# with --slices 1 (and Task 1's ring) at every size >= 64 MiB.
min=${MIN_BYTES:-67108864}
summary() {
    awk -F, -v min="$min" '
    FNR == 1 { k = FILENAME; sub(/.*slices/, "", k); sub(/\.csv$/, "", k); next }
    $14 == "ok" { bw[k, $1, $2] = $6; t[k, $1, $2] = $4; sizes[$2] = 1; runs[k] = 1 }
    END {
        for (k in runs) for (s in sizes) {
            if (s + 0 < min || !((k, "nccl", s) in bw)) continue
            n = bw[k, "nccl", s]
            printf "%-7s %12d %9.1f %9.1f %9.1f %9s %9.1f   ring %5.1f %%  pipelined %5.1f %%  own %5.1f %%\n", \
                k, s, n, bw[k, "ring", s], bw[k, "pipelined", s], \
                ((k, "rd", s) in bw) ? sprintf("%.1f", bw[k, "rd", s]) : "-", bw[k, "own", s], \
                100 * bw[k, "ring", s] / n, 100 * bw[k, "pipelined", s] / n, \
                100 * bw[k, "own", s] / n | "sort -k1,1n -k2,2n"
        }
        close("sort -k1,1n -k2,2n")
        own_ok = own_seen = pipe_ok = pipe_seen = 0
        for (s in sizes) {
            if (s + 0 < min) continue
            best = 0; bestk = "-"; fast = 0; one = ("1" SUBSEP "pipelined" SUBSEP s) in t
            for (k in runs) {
                if (!((k SUBSEP "own" SUBSEP s) in bw) || !((k SUBSEP "nccl" SUBSEP s) in bw)) continue
                f = bw[k, "own", s] / bw[k, "nccl", s]
                if (f > best) { best = f; bestk = k }
                if (k + 0 > 1 && one && t[k, "pipelined", s] < t["1", "pipelined", s] && t[k, "pipelined", s] < t[k, "ring", s]) fast = 1
            }
            want = s + 0 >= 1073741824 ? 0.90 : (s + 0 >= 268435456 ? 0.80 : 0)
            if (want > 0) { own_seen++; if (best >= want) own_ok++ }
            if (one) { pipe_seen++; pipe_ok += fast }
            printf "  %12d bytes: own at best %5.1f %% of NCCL (--slices %s)%s; pipelined beats --slices 1 and Task 1: %s\n", \
                s, 100 * best, bestk, (want > 0 ? sprintf(", wanted %d %%", 100 * want) : ""), (fast ? "yes" : "no") | "sort -k1,1n"
        }
        close("sort -k1,1n")
        printf "\nrecursive doubling against the pipelined ring (the threshold of Task 3):\n"
        for (k in runs) {
            last = -1
            for (s in sizes)
                if ((k, "rd", s) in t && (k, "pipelined", s) in t && t[k, "rd", s] < t[k, "pipelined", s] && s + 0 > last)
                    last = s + 0
            printf "  --slices %s: %s\n", k, last < 0 ? "recursive doubling never faster (or not run: n not a power of two)" : "recursive doubling faster up to " last " bytes (check the sizes below it on the plot)"
        }
        printf "\nacceptance (issue 24), from these runs:\n"
        printf "  own >= 90 %% of NCCL busbw at >= 1 GiB and >= 80 %% at 256 MiB (best --slices): %d of %d sizes\n", own_ok, own_seen
        printf "  pipelined (some --slices > 1) faster than --slices 1 and than Task 1 at >= %d bytes: %d of %d sizes\n", min, pipe_ok, pipe_seen
    }' "$@"
}
{
    printf "%-7s %12s %9s %9s %9s %9s %9s   %s\n" slices bytes nccl ring pipelined rd own \
        "(busbw GB/s; share of NCCL's busbw)"
    summary "$out"/lab8-slices*.csv
} | tee "$out/lab8-summary.txt"
echo "fitted alpha and beta:"; cat "$out/lab8-fit.txt"

if [ "${LAB8_GRADE:-1}" = 0 ]; then
    echo "lab8.sh: results in $out (grader not run: LAB8_GRADE=0)"
    exit $status
fi
echo "=== grader on the reference solutions, lab 8 (cuda backend)"
if make -s grader > "$out/grader-build.txt" 2>&1; then
    build/host/grader --lab 8 --submission solutions --backend cuda --out "$out/grade-lab8" \
        > "$out/grade-lab8.txt" 2>&1
    echo "grader exit $?"; grep -E 'PASS|FAIL|WARN|TOTAL' "$out/grade-lab8.txt"
else
    echo "grader did not build (jansson missing?): $out/grader-build.txt"
fi
echo "lab8.sh: results in $out"
exit $status
