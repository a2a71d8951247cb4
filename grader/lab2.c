/* Lab 2 — timing all-reduce: correct sums, honest timing, overlap. */
#include <string.h>

#include "grader.h"

#define K 1024
#define M (1024 * 1024)

/* Host-backend sizes: small enough to grade in seconds, large enough that a
 * timer stopped early stands out. The odd count (4000012 bytes = 1000003
 * floats) catches code that assumes a power of two or a multiple of n. */
static const struct variation variations[] = {
    /* id       ranks  min      max      step iters warmup root rpn extra flags */
    {"default", 4, 1 * M, 4 * M, 2, 5, 2, -1, 0, "--overlap-rounds 2", 0},
    {"np1", 1, 256 * K, 256 * K, 2, 3, 1, -1, 0, "--overlap-rounds 2", 0},
    /* Tasks 1-2 alone (--task time), and Task 3 alone (--task overlap). */
    {"odd", 3, 4000012, 4000012, 2, 3, 1, -1, 0, "--task time", 0},
    {"np5", 5, 4, 64 * K, 16, 4, 3, -1, 0, "--task time", 0},
    {"warmup3", 2, 512 * K, 512 * K, 2, 7, 3, -1, 0, "--task time", 0},
    /* Task 3 alone, as a throughput run: its rule compares two times. */
    {"overlap", 2, 2 * M, 2 * M, 2, 3, 1, -1, 0, "--task overlap", VAR_TIMING},
    /* A timer stopped before the sum is done stands out at 1 MiB already
     * (as in lab 5); 16 MiB more made this run, alone among the grader's,
     * 4 times longer (0.9 CPU s against 0.24 on the 2-core VM). */
    {"timing", 2, 1 * M, 4 * M, 4, 10, 3, -1, 0, "--task time", VAR_TIMING | VAR_HOST},
    /* On GPUs: large enough for the floors of the profile to apply. */
    {"timing-gpu", 8, 64 * M, 1024 * M, 4, 20, 5, -1, 0, NULL, VAR_TIMING | VAR_CUDA},
};

static void check_sum(const struct run *run, struct check_result *res)
{
    int n = run->nranks;
    size_t sizes[64], counts[64];
    int k = variation_sizes(run->var, sizeof(float), sizes, 64);
    for (int i = 0; i < k; i++) counts[i] = sizes[i] / sizeof(float);
    expect_buffer_checks(run, res, "allreduce_sum", n * (n - 1) / 2.0, counts, k);
    /* A perf row for every size too, with the count the grader asked for. */
    for (int rank = 0; rank < n; rank++)
        for (int i = 0; i < k; i++)
            if (!find_record(run, "perf", "allreduce", rank, "bytes", (long long)sizes[i]))
                check_fail(res, run, "rank %d: no measurement for %zu bytes", rank, sizes[i]);
}

static void check_warmup(const struct run *run, struct check_result *res)
{
    expect_perf_calls(run, res, "allreduce", 1);
}

/* The result must have come through NCCL: every call given the whole
 * buffer, nothing else called (a zero-count all-reduce to please the call
 * counter next to a hand-written or MPI_Allreduce result fails here). */
static void check_traffic(const struct run *run, struct check_result *res)
{
    expect_perf_traffic(run, res, "allreduce", "ncclAllReduce", 1.0);
}

static void check_sum_and_traffic(const struct run *run, struct check_result *res)
{
    check_sum(run, res);
    check_traffic(run, res);
    expect_perf_args(run, res, "allreduce", "ncclAllReduce", "sendbuf in, recvbuf out");
}

static void check_timing(const struct run *run, struct check_result *res)
{
    expect_perf_sane(run, res, "allreduce");
}

/* Task 3 must return only once both streams are done: the driver reads
 * the clock right after it returns. */
static void check_overlap(const struct run *run, struct check_result *res)
{
    if (run->var->extra && strstr(run->var->extra, "--overlap-rounds -1")) return;
    const struct ncclab_limits *lim = &run->env->profile->limits;
    int n = run->nranks;
    for (int rank = 0; rank < n; rank++) {
        const struct record *r = find_record(run, "info", "overlap", rank, NULL, 0);
        if (!r) {
            check_fail(res, run, "rank %d: no overlap measurement (Task 3 did not run)", rank);
            continue;
        }
        double both = 0, compute = 0, comm = 0;
        if (rec_num(r, "overlapped_us", &both) != REC_OK ||
            rec_num(r, "compute_us", &compute) != REC_OK ||
            rec_num(r, "comm_us", &comm) != REC_OK) {
            check_fail(res, run, "rank %d: overlap times missing, NaN or inf", rank);
            continue;
        }
        /* The compute's fastest single run, when the driver recorded it: a
         * busy neighbour can only stretch the average. */
        double fastest = 0;
        if (rec_num(r, "compute_min_us", &fastest) == REC_OK && fastest > 0 && fastest < compute)
            compute = fastest;
        /* The driver's two untimed calls: work far longer, then far
         * shorter, than the all-reduce; a stream not waited for is still
         * busy when the call returns. */
        long long compute_busy = 0, comm_busy = 0;
        rec_int(r, "compute_busy_at_return", &compute_busy);
        rec_int(r, "comm_busy_at_return", &comm_busy);
        if (compute_busy || comm_busy) {
            check_fail(res, run,
                       "rank %d: lab2_allreduce_overlapped returned while %s: it must return "
                       "only once both streams are done (the caller reads the clock as soon as "
                       "it returns)%s",
                       rank,
                       compute_busy && comm_busy ? "both streams were still busy"
                       : compute_busy ? "the busy work on compute_stream was still running"
                                      : "the all-reduce on comm_stream was still running",
                       compute_busy && comm_busy ? ""
                       : compute_busy            ? " — it waited for comm_stream only"
                                                 : " — it waited for compute_stream only");
            continue;
        }
        char why[512];
        if (ncclab_overlap_impossible(lim, compute, both, why, sizeof why))
            check_fail(res, run, "rank %d: %s", rank, why);
    }
    static const size_t any = 0;
    expect_buffer_checks(run, res, "overlap_sum", n * (n - 1) / 2.0, &any, 1);
}

static int full(const struct variation *v) { return runs_task(v, NULL); }
static int time_runs(const struct variation *v) { return runs_task(v, "time"); }
static int overlap_runs(const struct variation *v)
{
    return runs_task(v, "overlap") && (!v->extra || !strstr(v->extra, "--overlap-rounds -1"));
}

static const struct lab_check checks[] = {
    {"runs", "runs to the end on 1-5 ranks and odd sizes", "Common mistakes", check_runs_cleanly,
     NULL, CHECK_RUNS, full},
    {"allreduce_sum", "every element equals n(n-1)/2, every size", "Task 1", check_sum_and_traffic,
     NULL, 0, time_runs},
    {"warmup", "warm-up calls untimed, then the timed ones", "Task 2", check_warmup, NULL, 0,
     time_runs},
    {"timing", "timing honest: synchronised, below the ceiling", "Common mistakes", check_timing,
     NULL, CHECK_TIMED, time_runs},
    {"overlap", "overlapped all-reduce correct and waited for", "Task 3", check_overlap, NULL,
     CHECK_TIMED, overlap_runs},
};

/* A crash in a task run belongs to the function that was running. */
static const struct crash_owner crash_owners[] = {
    {"lab2_time_allreduce", "warmup"},
    {"lab2_allreduce_overlapped", "overlap"},
    {NULL, NULL},
};

/* clang-format off */
const struct lab_module lab2_module = {
    LAB_MODULE(2, "All-reduce timing", "allreduce.c"), .crash_owners = crash_owners,
    .hang_cause = "a rank skipped an all-reduce or used a different count than the others (every "
                  "rank must make the same calls with the same count), or a stream was never "
                  "waited for",
};
/* clang-format on */
