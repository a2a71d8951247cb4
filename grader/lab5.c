/* Lab 5 — all-gather, reduce-scatter, and an all-reduce composed of the
 * two. -b/-e are per-rank sizes (N floats); records count the whole n*N
 * buffer in `bytes`. Row-wise checks carry rows, bad_rows and
 * first_bad_row. */
#include <math.h>
#include <string.h>

#include "grader.h"

#define K 1024
#define M (1024 * 1024)

static const struct variation variations[] = {
    /* id       ranks  min      max      step iters warmup root rpn extra flags */
    {"default", 4, 64 * K, 256 * K, 4, 3, 2, -1, 0, NULL, 0},
    {"odd", 3, 1000004, 1000004, 2, 2, 1, -1, 0, NULL, 0},
    {"np1", 1, 64 * K, 64 * K, 2, 3, 1, -1, 0, NULL, 0},
    {"np5", 5, 4, 4 * K, 32, 3, 2, -1, 0, NULL, 0},
    /* Each task alone, so that one task's crash or hang leaves the others graded. */
    {"allgather", 3, 400004, 400004, 2, 3, 1, -1, 0, "--task allgather", 0},
    {"reducescatter", 3, 400004, 400004, 2, 3, 1, -1, 0, "--task reducescatter", 0},
    {"composed", 3, 400004, 400004, 2, 3, 1, -1, 0, "--task composed", 0},
    {"timing", 2, 1 * M, 4 * M, 4, 8, 2, -1, 0, NULL, VAR_TIMING | VAR_HOST},
    {"timing-gpu", 8, 16 * M, 128 * M, 4, 20, 5, -1, 0, NULL, VAR_TIMING | VAR_CUDA},
};

/* Per-rank counts N of the run's sizes; returns how many. */
static int per_rank_counts(const struct run *run, size_t *counts)
{
    size_t sizes[64];
    int k = variation_sizes(run->var, sizeof(float), sizes, 64);
    for (int i = 0; i < k; i++) counts[i] = sizes[i] / sizeof(float);
    return k;
}

/* One check record `name` of `rows` rows of N elements each (rows == 1: a
 * plain buffer), row j expected to hold base + step * j, on every rank. */
static void expect_rows(const struct run *run, struct check_result *res, const char *name, int rows,
                        double base, double step, const char *row_meaning)
{
    size_t counts[64];
    int k = per_rank_counts(run, counts);
    for (int rank = 0; rank < run->nranks; rank++)
        for (int i = 0; i < k; i++) {
            long long N = (long long)counts[i], total = N * rows;
            const struct record *r = find_record(run, "check", name, rank, "count", total);
            if (!r) {
                check_fail(res, run,
                           "rank %d: no `%s` check of %lld elements (N = %lld): the "
                           "buffer was not checked at the size the grader asked for",
                           rank, name, total, N);
                continue;
            }
            double mn, mx;
            long long mism, first_bad = rec_field(r, "first_bad");
            if (check_record_values(run, res, r, rank, name, &mn, &mx, &mism) != 0) continue;
            long long bad_row = rows > 1 ? rec_field(r, "first_bad_row") : (mism ? 0 : -1);
            if (rows > 1 && rec_field(r, "rows") != rows) {
                check_fail(res, run, "rank %d: `%s` reports %lld rows, expected %d", rank, name,
                           rec_field(r, "rows"), rows);
                continue;
            }
            if (mism == 0 && bad_row < 0) {
                /* min/max span the rows: the first and the last row's values. */
                double lo = base, hi = base + step * (rows - 1);
                if (fabs(mn - lo) > 1e-3 * (1 + fabs(lo)) || fabs(mx - hi) > 1e-3 * (1 + fabs(hi)))
                    check_fail(res, run,
                               "rank %d: `%s` holds values from %g to %g, expected "
                               "%g to %g",
                               rank, name, mn, mx, lo, hi);
                continue;
            }
            /* The driver's min/max describe the first wrong row. */
            double want = base + step * (double)(bad_row < 0 ? 0 : bad_row);
            long long in_row = first_bad >= 0 ? first_bad - (bad_row < 0 ? 0 : bad_row) * N : -1;
            const char *why = "";
            if (mn == -1 && mx == -1)
                why = ": nothing was written there (it still holds the -1 it started with)";
            else if (N > 1 && in_row == N - 1 && mism == (rows > 1 ? rec_field(r, "bad_rows") : 1))
                why = rows > 1 ? ": only the last element of each bad row is wrong — a count "
                                 "of N-1 (off by one)?"
                               : ": only the last element is wrong — a count of N-1 (off by "
                                 "one)?";
            else if (*random_inputs_note(r, mn, mx, want))
                why = random_inputs_note(r, mn, mx, want);
            else if (rows > 1 && mn == mx && step != 0 && fmod(mn - base, step) == 0 &&
                     (mn - base) / step >= 0 && (mn - base) / step < rows)
                why = ": that row holds another row's data — written at the wrong offset "
                      "(row i starts at recvbuf + i * count)";
            if (rows > 1)
                check_fail(res, run,
                           "rank %d: wrong result in `%s`, N = %lld: row %lld of %d "
                           "should hold %g (%s) but holds values from %g to %g (%lld wrong "
                           "elements in %lld rows, first at index %lld)%s",
                           rank, name, N, bad_row, rows, want, row_meaning, mn, mx, mism,
                           rec_field(r, "bad_rows"), first_bad, why);
            else
                check_fail(res, run,
                           "rank %d: wrong result in `%s`, N = %lld: expected %g (%s) "
                           "in every element, found values from %g to %g (%lld wrong, first at "
                           "index %lld)%s",
                           rank, name, N, want, row_meaning, mn, mx, mism, first_bad, why);
        }
}

static void check_allgather(const struct run *run, struct check_result *res)
{
    expect_perf_args(run, res, "allgather", "ncclAllGather", "sendbuf in, recvbuf out");
    expect_rows(run, res, "allgather_rows", run->nranks, 0, 1, "row i holds rank i's share");
    expect_perf_calls(run, res, "allgather", 1);
    expect_perf_traffic(run, res, "allgather", "ncclAllGather", 1.0 / run->nranks);
}

static void check_reducescatter(const struct run *run, struct check_result *res)
{
    expect_perf_args(run, res, "reducescatter", "ncclReduceScatter", "sendbuf in, recvbuf out");
    int n = run->nranks;
    expect_rows(run, res, "reducescatter_sum", 1, n * (n - 1) / 2.0, 0, "n(n-1)/2");
    expect_perf_calls(run, res, "reducescatter", 1);
    expect_perf_traffic(run, res, "reducescatter", "ncclReduceScatter", 1.0 / n);
}

static void check_composed(const struct run *run, struct check_result *res)
{
    int n = run->nranks;
    expect_rows(run, res, "allreduce_composed_sum", n, n * (n - 1) / 2.0, (double)n * n,
                "n(n-1)/2 + n*n*j in row j");
}

/* Task 3 must be one reduce-scatter and one all-gather per call. */
static void check_composed_calls(const struct run *run, struct check_result *res)
{
    size_t counts[64];
    int k = per_rank_counts(run, counts);
    for (int rank = 0; rank < run->nranks; rank++)
        for (int i = 0; i < k; i++) {
            long long total = (long long)counts[i] * run->nranks;
            const struct record *info =
                find_record(run, "info", "composed_calls", rank, "count", total);
            const struct record *perf =
                find_record(run, "perf", "allreduce_composed", rank, "count", total);
            if (!info || !perf) {
                check_fail(res, run,
                           "rank %d: no record of lab5_allreduce_composed's calls at "
                           "N = %zu",
                           rank, counts[i]);
                continue;
            }
            long long calls = rec_field(perf, "iters") + rec_field(perf, "warmup");
            long long ar = rec_field(info, "allreduce"), rs = rec_field(info, "reducescatter");
            long long ag = rec_field(info, "allgather");
            if (ar != 0)
                check_fail(res, run,
                           "rank %d: lab5_allreduce_composed called ncclAllReduce "
                           "%lld times: Task 3 builds the all-reduce from one reduce-scatter "
                           "and one all-gather, without ncclAllReduce",
                           rank, ar);
            else if (rs != calls || ag != calls)
                check_fail(res, run,
                           "rank %d, N = %zu: lab5_allreduce_composed made %lld "
                           "reduce-scatters and %lld all-gathers in %lld calls (timed + warm-up): "
                           "expected exactly one of each per call",
                           rank, counts[i], rs, ag, calls);
        }
    /* Each of the two calls moves this rank's share N, nothing else runs. */
    expect_perf_traffic(run, res, "allreduce_composed", "ncclReduceScatter/ncclAllGather",
                        1.0 / run->nranks);
    expect_perf_args(run, res, "allreduce_composed", "ncclReduceScatter", "a sum");
}

static void check_timing(const struct run *run, struct check_result *res)
{
    expect_perf_sane(run, res, "allgather");
    expect_perf_sane(run, res, "reducescatter");
    expect_perf_sane(run, res, "allreduce_composed");
}

static int full(const struct variation *v) { return runs_task(v, NULL); }
static int allgather_runs(const struct variation *v) { return runs_task(v, "allgather"); }
static int reducescatter_runs(const struct variation *v) { return runs_task(v, "reducescatter"); }
static int composed_runs(const struct variation *v) { return runs_task(v, "composed"); }

static const struct lab_check checks[] = {
    {"runs", "runs to the end on 1-5 ranks and odd sizes", "Common mistakes", check_runs_cleanly,
     NULL, CHECK_RUNS, full},
    {"allgather", "all-gather: row i holds rank i, one call", "Task 1", check_allgather, NULL, 0,
     allgather_runs},
    {"reducescatter", "reduce-scatter: every element n(n-1)/2", "Task 2", check_reducescatter, NULL,
     0, reducescatter_runs},
    {"composed_sum", "composed all-reduce: row j = n(n-1)/2+n*n*j", "Task 3", check_composed, NULL,
     0, composed_runs},
    {"composed_calls", "composed = reduce-scatter + all-gather", "Task 3", check_composed_calls,
     NULL, 0, composed_runs},
    CHECK_TIMING_HONEST(check_timing),
};

static const struct output_hint hints[] = {
    {"is too small",
     "a buffer too small for the count, or a pointer into the middle of one: both collectives "
     "take the per-rank count N, not the n*N total, and an offset added to a float pointer "
     "counts floats (recvbuf + rank * count), not bytes",
     "Common mistakes"},
    {"is not device memory",
     "a pointer that lies in no cudaMalloc'ed buffer: computed from a buffer with an offset in "
     "bytes? Adding k to a float pointer moves k floats, so a row starts at recvbuf + rank * "
     "count (an offset in floats, not bytes: no sizeof(float))",
     "Task 3"},
    {"is not the in-place layout",
     "a collective's input overlaps its output in a layout NCCL leaves undefined: the only "
     "in-place layouts are the rank's own row of the larger buffer (all-gather: sendbuff == "
     "recvbuff + rank * count; reduce-scatter: recvbuff == sendbuff + rank * count) — in Task 3 "
     "the reduce-scatter's result goes in the rank's own row, an offset in floats, not bytes",
     "Task 3"},
    HINTS_END,
};

/* clang-format off */
const struct lab_module lab5_module = {
    LAB_MODULE(5, "All-gather and reduce-scatter", "gather_scatter.c"), .hints = hints,
    .hang_cause = "a rank skipped an all-gather or reduce-scatter, or the ranks passed different "
                  "counts (every rank passes the same per-rank N), or called the two collectives "
                  "of Task 3 in a different order",
};
/* clang-format on */
