/* Lab 5 driver — provided, do not edit. Your code goes in gather_scatter.c.
 *
 * Sizes: -b/-e give N, the PER-RANK share in bytes (N/4 floats each rank
 * sends to the all-gather and keeps from the reduce-scatter). Records and
 * the table count bytes as nccl-tests does for these collectives: the whole
 * nranks * N buffer, so busbw = algbw * (n-1)/n compares with its output.
 *
 * For each size the driver fills the buffers, times each student function
 * (warm-up, then CUDA events around the timed calls) and checks the data:
 *   allgather_rows      row i of the gathered buffer holds i, on every rank
 *   reducescatter_sum   every element of the scattered result is n(n-1)/2
 *   allreduce_composed_sum   Task 3's all-reduce of an n*N buffer whose row j
 *                       holds rank + n*j: row j of the result is n(n-1)/2 + n*n*j
 * and times ncclAllReduce itself on the same buffer for comparison
 * (allreduce_sum, same expected rows). Row-wise checks add one record per
 * buffer, with the fields rows, bad_rows and first_bad_row.
 * --task allgather|reducescatter|composed runs one task alone. */
#include <math.h>
#include <stdio.h>

#include "lab.h"
#include "lab5.h"

#define MAX_STEPS 64

struct coll_args {
    ncclComm_t comm;
    const float *send;
    float *recv;
    size_t count; /* N: per-rank floats */
};

static void enqueue_allgather(void *ctx, cudaStream_t s)
{
    struct coll_args *a = ctx;
    lab5_allgather(a->comm, s, a->send, a->recv, a->count);
}
static void enqueue_reduce_scatter(void *ctx, cudaStream_t s)
{
    struct coll_args *a = ctx;
    lab5_reduce_scatter(a->comm, s, a->send, a->recv, a->count);
}
static void enqueue_composed(void *ctx, cudaStream_t s)
{
    struct coll_args *a = ctx;
    lab5_allreduce_composed(a->comm, s, a->send, a->recv, a->count);
}
/* The driver's own all-reduce of the whole n*N buffer: the baseline Task 3 is compared with. */
static void enqueue_native_allreduce(void *ctx, cudaStream_t s)
{
    struct coll_args *a = ctx;
    int n = 0;
    NCCL_CHECK(ncclCommCount(a->comm, &n));
    NCCL_CHECK(
        ncclAllReduce(a->send, a->recv, a->count * (size_t)n, ncclFloat, ncclSum, a->comm, s));
}

/* Time one operation under the watchdog; returns the timing and how many
 * times the traced NCCL calls ran (sum of the `traced` counters), and what
 * moved (into *moved). */
static long timed_run(struct ncclab_lab *lab, ncclab_enqueue_fn fn, struct coll_args *a,
                      const char *what, const char *hint, const enum ncclab_traced *traced,
                      int ntraced, struct ncclab_timing *t, struct ncclab_perf *moved)
{
    CUDA_CHECK(cudaStreamSynchronize(lab->stream)); /* the fills are done before the clock starts */
    ncclab_lab_time(lab, fn, a, what, hint, t);
    long calls = 0;
    unsigned mask = 0;
    for (int i = 0; i < ntraced; i++) {
        calls += ncclab_trace_count(traced[i]);
        mask |= 1u << traced[i];
    }
    ncclab_perf_trace(moved, mask);
    return calls;
}

static void add_perf(struct ncclab_lab *lab, const char *name, enum ncclab_coll coll,
                     size_t total_count, const char *redop, const struct ncclab_timing *t,
                     long calls, long long wrong, const struct ncclab_perf *moved)
{
    struct ncclab_perf p = {.name = name,
                            .coll = coll,
                            .bytes = total_count * sizeof(float),
                            .count = total_count,
                            .type = "float",
                            .redop = redop,
                            .root = -1,
                            .time_us = t->avg_us,
                            .iters = t->iters,
                            .warmup = t->warmup,
                            .wall_us = t->wall_us,
                            .calls = calls,
                            .wrong = wrong,
                            .traced = 1,
                            .traced_bytes = moved->traced_bytes,
                            .zero_calls = moved->zero_calls,
                            .other_calls = moved->other_calls};
    ncclab_report_perf(&lab->report, &p);
}

/* Check an n-row result row by row, row i against base + i * step, and add
 * ONE check record `name` for the whole buffer: mismatches summed over the
 * rows; first_bad is an index into the whole n*N buffer (row = first_bad / N).
 * When a row is wrong, `expected`, `min` and `max` describe the first wrong
 * row; when all are right, min/max span the buffer and expected is the last
 * row's value. Extra fields: rows, bad_rows, first_bad_row. Returns the
 * number of wrong elements. */
static long long check_rows(struct ncclab_lab *lab, const char *name, const float *buf,
                            size_t count, int n, double base, double step)
{
    struct ncclab_summary all = {.count = count * (size_t)n,
                                 .first_bad = -1,
                                 .min = INFINITY,
                                 .max = -INFINITY,
                                 .expected = base + (n - 1) * step};
    int bad_rows = 0, first_bad_row = -1;
    for (int i = 0; i < n; i++) {
        struct ncclab_summary row;
        const double want = base + i * step;
        ncclab_summarise(buf + (size_t)i * count, count, (float)want, 1e-6, lab->stream, &row);
        all.mismatches += row.mismatches;
        if (row.mismatches == 0) {
            if (first_bad_row < 0) {
                all.min = fmin(all.min, row.min);
                all.max = fmax(all.max, row.max);
            }
            continue;
        }
        if (first_bad_row < 0) {
            first_bad_row = i;
            all.first_bad = (long long)((size_t)i * count) + row.first_bad;
            all.expected = want;
            all.min = row.min;
            all.max = row.max;
        }
        bad_rows++;
    }
    ncclab_report_check(&lab->report, name, &all);
    struct ncclab_record *rec = &lab->report.recs[lab->report.nrecs - 1];
    ncclab_record_int(rec, "rows", n);
    ncclab_record_int(rec, "bad_rows", bad_rows);
    ncclab_record_int(rec, "first_bad_row", first_bad_row);
    return (long long)all.mismatches;
}

static long long check_value(struct ncclab_lab *lab, const char *name, const float *buf,
                             size_t count, float expected)
{
    struct ncclab_summary s;
    ncclab_summarise(buf, count, expected, 1e-6, lab->stream, &s);
    ncclab_report_check(&lab->report, name, &s);
    return (long long)s.mismatches;
}

int main(int argc, char **argv)
{
    static const struct ncclab_lab_config config = {
        .number = 5,
        .name = "lab5",
        .summary = "Lab 5: all-gather and reduce-scatter, and an all-reduce built from them. "
                   "-b/-e are PER-RANK sizes (each rank's share N); the table's size column is the "
                   "whole n*N buffer, as in nccl-tests.",
        .defaults = {.min_bytes = 1UL << 29,
                     .max_bytes = 1UL << 29,
                     .step_factor = 2,
                     .iters = 20,
                     .warmup = 5,
                     .check = 1,
                     .timeout_s = 300},
        .host_default_bytes = 1UL << 20,
        .init_comm = 1,
        .tasks = "allgather|reducescatter|composed",
    };
    struct ncclab_lab lab;
    ncclab_lab_start(&lab, &config, argc, argv);
    const int n = lab.world.nranks, me = lab.world.rank;
    const float sum = (float)n * (n - 1) / 2.0f;
    const int check = lab.opts.check;

    size_t sizes[MAX_STEPS];
    int nsizes = ncclab_size_steps(&lab.opts, sizeof(float), sizes, MAX_STEPS);
    size_t max_count = sizes[nsizes - 1] / sizeof(float);
    if (me == 0)
        printf("# per-rank share N = %zu .. %zu floats (-b/-e); each row below moves n*N = %d*N "
               "floats\n",
               sizes[0] / sizeof(float), max_count, n);
    float *part = ncclab_device_alloc(max_count, "the per-rank buffer (N floats)");
    float *whole_send = ncclab_device_alloc(max_count * (size_t)n, "the n*N send buffer");
    float *whole_recv = ncclab_device_alloc(max_count * (size_t)n, "the n*N receive buffer");

    static const enum ncclab_traced ag[] = {NCCLAB_TRACE_ALLGATHER};
    static const enum ncclab_traced rs[] = {NCCLAB_TRACE_REDUCESCATTER};
    static const enum ncclab_traced both[] = {NCCLAB_TRACE_REDUCESCATTER, NCCLAB_TRACE_ALLGATHER};
    static const enum ncclab_traced ar[] = {NCCLAB_TRACE_ALLREDUCE};

    for (int i = 0; i < nsizes; i++) {
        const size_t count = sizes[i] / sizeof(float), total = count * (size_t)n;
        struct ncclab_timing t;
        struct ncclab_perf moved = {0};
        long calls;
        long long wrong;
        struct coll_args a;

        if (ncclab_lab_runs(&lab, "allgather")) {
            /* Task 1: N floats of `rank` in, n rows out. Stale data must not pass: -1 first. */
            a = (struct coll_args){lab.comm, part, whole_recv, count};
            ncclab_fill(part, count, (float)me, lab.stream);
            ncclab_fill(whole_recv, total, -1.0f, lab.stream);
            calls = timed_run(&lab, enqueue_allgather, &a, "running lab5_allgather",
                              "a rank skipped the all-gather or passed a different count "
                              "(ncclAllGather takes the per-rank count, not the n*N total)",
                              ag, 1, &t, &moved);
            wrong = check ? check_rows(&lab, "allgather_rows", whole_recv, count, n, 0, 1) : -1;
            add_perf(&lab, "allgather", NCCLAB_ALLGATHER, total, "none", &t, calls, wrong, &moved);
        }

        if (ncclab_lab_runs(&lab, "reducescatter")) {
            /* Task 2: n*N floats of `rank` in, N sums out. */
            a = (struct coll_args){lab.comm, whole_send, part, count};
            ncclab_fill(whole_send, total, (float)me, lab.stream);
            ncclab_fill(part, count, -1.0f, lab.stream);
            calls =
                timed_run(&lab, enqueue_reduce_scatter, &a, "running lab5_reduce_scatter",
                          "a rank skipped the reduce-scatter or passed a different count "
                          "(ncclReduceScatter takes the per-rank result count, not the n*N total)",
                          rs, 1, &t, &moved);
            wrong = check ? check_value(&lab, "reducescatter_sum", part, count, sum) : -1;
            add_perf(&lab, "reducescatter", NCCLAB_REDUCESCATTER, total, "sum", &t, calls, wrong,
                     &moved);
        }
        if (!ncclab_lab_runs(&lab, "composed")) continue;

        /* Task 3: an all-reduce of the n*N buffer, composed and native. Row j
         * of the input holds rank + n*j, so row j of the sum is
         * n(n-1)/2 + n*n*j: a row that lands in the wrong place shows. */
        a = (struct coll_args){lab.comm, whole_send, whole_recv, count};
        for (int j = 0; j < n; j++)
            ncclab_fill(whole_send + (size_t)j * count, count, (float)(me + n * j), lab.stream);
        ncclab_fill(whole_recv, total, -1.0f, lab.stream);
        calls =
            timed_run(&lab, enqueue_composed, &a, "running lab5_allreduce_composed",
                      "ranks disagree on the order or count of the reduce-scatter and all-gather",
                      both, 2, &t, &moved);
        long native_calls = ncclab_trace_count(NCCLAB_TRACE_ALLREDUCE);
        wrong = check ? check_rows(&lab, "allreduce_composed_sum", whole_recv, count, n, sum,
                                   (double)n * n)
                      : -1;
        add_perf(&lab, "allreduce_composed", NCCLAB_ALLREDUCE, total, "sum", &t, calls, wrong,
                 &moved);
        struct ncclab_record *rec = ncclab_record_begin(&lab.report, "info", "composed_calls");
        ncclab_record_int(rec, "count", (long long)total);
        ncclab_record_int(rec, "reducescatter", ncclab_trace_count(NCCLAB_TRACE_REDUCESCATTER));
        ncclab_record_int(rec, "allgather", ncclab_trace_count(NCCLAB_TRACE_ALLGATHER));
        ncclab_record_int(rec, "allreduce", native_calls);
        if (native_calls > 0 && me == 0)
            printf(
                "# note: lab5_allreduce_composed called ncclAllReduce %ld times; Task 3 asks for "
                "a reduce-scatter and an all-gather instead\n",
                native_calls);

        ncclab_fill(whole_recv, total, -1.0f, lab.stream);
        calls =
            timed_run(&lab, enqueue_native_allreduce, &a, "running ncclAllReduce (driver baseline)",
                      "a rank stopped early", ar, 1, &t, &moved);
        wrong = check ? check_rows(&lab, "allreduce_sum", whole_recv, count, n, sum, (double)n * n)
                      : -1;
        add_perf(&lab, "allreduce", NCCLAB_ALLREDUCE, total, "sum", &t, calls, wrong, &moved);
    }

    CUDA_CHECK(cudaFree(part));
    CUDA_CHECK(cudaFree(whole_send));
    CUDA_CHECK(cudaFree(whole_recv));
    return ncclab_lab_finish(&lab);
}
