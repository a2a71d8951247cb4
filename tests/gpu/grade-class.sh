#!/bin/bash
# A class graded on a GPU box the way a cluster grades it, in one command: three
# copies of the reference solutions (every lab) graded in three slices — what
# each task of the Slurm job array runs (course/cluster/grade-class.sbatch,
# grader --chunk K/3) — one after another on all the GPUs, then the merge step
# that writes the one gradebook (grader --merge). No Slurm is needed: this is
# tools/grade-cluster --local. Prints each student's score and grading time
# (per student, all labs: 213.8 s on 4 x H200 with one run at a time; 148 s
# on 4 x H100 with a run per GPU) and the gradebook.
# NCCLAB_BASELINE=1 also grades the first copy with --jobs 1 (one run at a
# time, the grader's former default on GPUs) and compares every check's
# points with the class run's: the speed-up must not change a score.
# NCCLAB_BASELINE=only skips the class: one copy graded with the default
# --jobs (the GPU count) and with --jobs 1, times and points compared (one
# device call of its own: the class and the baseline together may pass 10
# minutes).
#   source .gpu/gpu-box-env.sh && tests/gpu/grade-class.sh OUTDIR
# Needs: the CUDA build (nvcc, NCCL, Open MPI: .gpu/gpu-box-env.sh), the grader's
# jansson and bubblewrap (tests/gpu/grader-deps.sh), nothing of Slurm.
set -uo pipefail
out=${1:?usage: tests/gpu/grade-class.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$(dirname "$0")/../.." || exit 1
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
# shellcheck source=tests/gpu/grader-deps.sh
source tests/gpu/grader-deps.sh
nvidia-smi -L | tee "$out/gpus.txt"
t0=$SECONDS
make -j"$(nproc)" cuda host grader CUDA_ARCHS="${CUDA_ARCHS:-90}" > "$out/build.txt" 2>&1 ||
    { tail -30 "$out/build.txt"; exit 1; }
echo "=== built in $((SECONDS - t0)) s"

class=$out/class
rm -rf "$class" "$out/graded"
for s in ref1 ref2 ref3; do
    mkdir -p "$class/$s"
    for d in solutions/lab[0-9]_*; do cp -R "$d" "$class/$s/"; done
done

# The grader's sandbox where bubblewrap can start here, else --no-sandbox
# (the references are trusted code).
read -r -a sandbox <<< "$(tools/sandbox-flag)"
baseline=${NCCLAB_BASELINE:-0}
status=0
if [ "$baseline" = only ]; then
    echo "=== one student (ref1), runs at once as many as the GPUs (the default) ${sandbox[*]}"
    t0=$SECONDS
    build/host/grader --lab all --submission "$class/ref1" --backend cuda --out "$out/graded/students/ref1" \
        --no-color "${sandbox[@]}" > "$out/default-jobs.txt" 2>&1
    echo "=== graded in $((SECONDS - t0)) s, exit $?"
    grep -E 'TOTAL' "$out/default-jobs.txt" | tail -1
else
    echo "=== the class on the cluster path: 3 slices, then the merge ${sandbox[*]}"
    t0=$SECONDS
    tools/grade-cluster --local --chunks 3 -- --lab all --submissions "$class" --out "$out/graded" \
        --backend cuda --no-color "${sandbox[@]}" 2>&1 | tee "$out/grade-class.txt"
    status=${PIPESTATUS[0]}
    echo "=== class graded in $((SECONDS - t0)) s, merge exit status $status (0: every student graded)"
    cat "$out/graded/gradebook.csv"
    python3 - "$out/graded" << 'PY'
import json, os, sys
d = os.path.join(sys.argv[1], "students")
for s in sorted(os.listdir(d)):
    g = json.load(open(os.path.join(d, s, "grade.json")))
    labs = " ".join("%d:%g/%g(%.0fs)" % (l["lab"], l["score"], l["max_score"], l["seconds"]) for l in g["labs"])
    print("student %s: %.1f s for all labs; %s" % (s, g["seconds"], labs))
PY
fi

if [ "$baseline" = 1 ] || [ "$baseline" = only ]; then
    echo "=== baseline: ref1 with --jobs 1 (one run at a time)"
    t0=$SECONDS
    build/host/grader --lab all --submission "$class/ref1" --backend cuda --jobs 1 --out "$out/baseline" \
        --no-color "${sandbox[@]}" > "$out/baseline.txt" 2>&1
    echo "=== baseline graded in $((SECONDS - t0)) s, exit $?"
    grep -E 'TOTAL' "$out/baseline.txt" | tail -1
    python3 - "$out/baseline/grade.json" "$out/graded/students/ref1/grade.json" << 'PY'
import json, sys
pts = lambda p: {c["key"]: c["points"] for l in json.load(open(p))["labs"] for c in l["checks"]}
a, b = pts(sys.argv[1]), pts(sys.argv[2])
diff = {k: (a.get(k), b.get(k)) for k in set(a) | set(b) if a.get(k) != b.get(k)}
print("points per check, --jobs 1 vs the default --jobs: %s" % ("identical (%d checks)" % len(a) if not diff else diff))
PY
fi
echo "results in $out (gradebook: $out/graded/gradebook.csv)"
exit "$status"
