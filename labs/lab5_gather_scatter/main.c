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
 * (allreduce_sum, same expected rows). Row-wise checks add to their record
 * the fields rows, bad_rows and first_bad_row. Every rank's input also
 * carries a random offset k_r that the others learn only after the student's
 * code ran (common/lab.h); the checks take it back out, so the values above
 * are the ones the records speak of.
 * --task allgather|reducescatter|composed runs one task alone. */
#include <stdio.h>
#include <stdlib.h>

#include "lab.h"
#include "lab5.h"

struct lab5 {
    struct ncclab_bufs b; /* send and recv point into the three buffers below */
    int me, n;
    float *part, *whole_send, *whole_recv; /* N, n*N and n*N floats */
    int bad_rows, first_bad_row;           /* of the last row-wise check */
    double *row_offsets;                   /* n: what the random offsets add to each row */
};

/* NCCL's all-reduce of the whole n*N buffer, the baseline Task 3 is
 * compared with (lab 2's Task 1, common/taught.h). */
static void native_allreduce(void *ctx, cudaStream_t s)
{
    struct lab5 *l = ctx;
    ncclab_taught_lab2_allreduce(l->b.comm, s, l->b.send, l->b.recv, l->b.count * l->n);
}

/* Task 1: N floats of `rank` (+ its offset) in, n rows out. Stale data must
 * not pass: -1 first. */
static void fill_allgather(struct ncclab_lab *lab, struct ncclab_bufs *b)
{
    struct lab5 *l = (struct lab5 *)b;
    b->send = l->part;
    b->recv = l->whole_recv;
    ncclab_lab_fill_input(lab, b->send, b->count, l->me);
    ncclab_fill(b->recv, b->count * l->n, -1.0f, lab->stream);
}
/* Task 2: n*N floats of `rank` (+ its offset) in, N sums out. */
static void fill_reduce_scatter(struct ncclab_lab *lab, struct ncclab_bufs *b)
{
    struct lab5 *l = (struct lab5 *)b;
    b->send = l->whole_send;
    b->recv = l->part;
    ncclab_lab_fill_input(lab, b->send, b->count * l->n, l->me);
    ncclab_fill(b->recv, b->count, -1.0f, lab->stream);
}
/* Task 3: row j of the input holds rank + n*j (+ the rank's offset), so row j
 * of the sum is n(n-1)/2 + n*n*j: a row that lands in the wrong place shows. */
static void fill_rows(struct ncclab_lab *lab, struct ncclab_bufs *b)
{
    struct lab5 *l = (struct lab5 *)b;
    b->send = l->whole_send;
    b->recv = l->whole_recv;
    for (int j = 0; j < l->n; j++)
        ncclab_lab_fill_input(lab, b->send + j * b->count, b->count, l->me + l->n * j);
    ncclab_fill(b->recv, b->count * l->n, -1.0f, lab->stream);
}

/* Row i of the n-row result holds b->expected + i * step: 1 for the
 * all-gather (whose rows start at 0), n*n for Task 3; plus what the offsets
 * add to it (row_offsets). */
static void check_rows(struct ncclab_lab *lab, struct ncclab_bufs *b, struct ncclab_summary *all)
{
    struct lab5 *l = (struct lab5 *)b;
    const double step = b->expected == 0 ? 1 : (double)l->n * l->n;
    const double sum = ncclab_lab_offsets_of(lab, NULL, NULL);
    for (int j = 0; j < l->n; j++) l->row_offsets[j] = b->expected == 0 ? lab->offsets[j] : sum;
    ncclab_lab_expect_rows(lab, b->recv, b->count, l->n, b->expected, step, l->row_offsets, all,
                           &l->bad_rows, &l->first_bad_row);
    /* The record's offsets: the first wrong row's, else the last row's. */
    lab->checked_offsets = l->row_offsets[l->first_bad_row >= 0 ? l->first_bad_row : l->n - 1];
}
/* The all-gather's rows start at 0 (row j: rank j's offset); Task 3's at
 * n(n-1)/2, like the reduce-scatter (every row: the sum of the offsets). */
static void rows_from_zero(struct ncclab_lab *lab, struct ncclab_bufs *b, struct ncclab_summary *s)
{
    double sum = b->expected;
    b->expected = 0;
    check_rows(lab, b, s);
    b->expected = sum;
}
/* Task 2: every element n(n-1)/2, plus the sum of the offsets. */
static void check_sum(struct ncclab_lab *lab, struct ncclab_bufs *b, struct ncclab_summary *s)
{
    ncclab_lab_expect_input(lab, b->recv, b->count, b->expected,
                            ncclab_lab_offsets_of(lab, NULL, NULL), 1e-6, s);
}
static void row_fields(struct ncclab_lab *lab, struct ncclab_bufs *b, struct ncclab_record *rec,
                       int perf)
{
    struct lab5 *l = (struct lab5 *)b;
    (void)lab;
    if (perf) return;
    ncclab_record_int(rec, "rows", l->n);
    ncclab_record_int(rec, "bad_rows", l->bad_rows);
    ncclab_record_int(rec, "first_bad_row", l->first_bad_row);
}

/* What Task 3 called (a reduce-scatter and an all-gather, not an all-reduce), after its perf record. */
static void composed_fields(struct ncclab_lab *lab, struct ncclab_bufs *b,
                            struct ncclab_record *rec, int perf)
{
    if (!perf) {
        row_fields(lab, b, rec, perf);
        return;
    }
    long native = ncclab_trace_count(NCCLAB_TRACE_ALLREDUCE);
    rec = ncclab_record_begin(&lab->report, "info", "composed_calls");
    ncclab_record_int(rec, "count", (long long)b->count * lab->world.nranks);
    ncclab_record_int(rec, "reducescatter", ncclab_trace_count(NCCLAB_TRACE_REDUCESCATTER));
    ncclab_record_int(rec, "allgather", ncclab_trace_count(NCCLAB_TRACE_ALLGATHER));
    ncclab_record_int(rec, "allreduce", native);
    if (native > 0 && lab->world.rank == 0)
        printf("# note: lab5_allreduce_composed called ncclAllReduce %ld times; Task 3 asks for "
               "a reduce-scatter and an all-gather instead\n",
               native);
}

/* clang-format off */
static const struct ncclab_case cases[] = {
    {.task = "allgather", .name = "allgather", .coll = NCCLAB_ALLGATHER, .redop = "none",
     .traced = NCCLAB_TRACED(ALLGATHER), .what = "running lab5_allgather",
     .hint = "a rank skipped the all-gather or passed a different count (ncclAllGather takes the "
             "per-rank count, not the n*N total)",
     .fill = fill_allgather, .call = lab5_allgather, .check = "allgather_rows",
     .verify = rows_from_zero, .fields = row_fields, .whole = 1, .random = 1,
     .args = NCCLAB_ARGS_BUFFERS},
    {.task = "reducescatter", .name = "reducescatter", .coll = NCCLAB_REDUCESCATTER,
     .redop = "sum", .traced = NCCLAB_TRACED(REDUCESCATTER), .what = "running lab5_reduce_scatter",
     .hint = "a rank skipped the reduce-scatter or passed a different count (ncclReduceScatter "
             "takes the per-rank result count, not the n*N total)",
     .fill = fill_reduce_scatter, .call = lab5_reduce_scatter, .check = "reducescatter_sum",
     .verify = check_sum, .whole = 1, .random = 1, .args = NCCLAB_ARGS_OP | NCCLAB_ARGS_BUFFERS},
    {.task = "composed", .name = "allreduce_composed", .coll = NCCLAB_ALLREDUCE, .redop = "sum",
     .traced = NCCLAB_TRACED(REDUCESCATTER) | NCCLAB_TRACED(ALLGATHER),
     .what = "running lab5_allreduce_composed",
     .hint = "ranks disagree on the order or count of the reduce-scatter and all-gather",
     .fill = fill_rows, .call = lab5_allreduce_composed, .check = "allreduce_composed_sum",
     .verify = check_rows, .fields = composed_fields, .whole = 1, .random = 1,
     .args = NCCLAB_ARGS_OP},
    {.task = "composed", .name = "allreduce", .coll = NCCLAB_ALLREDUCE, .redop = "sum",
     .traced = NCCLAB_TRACED(ALLREDUCE), .what = "running ncclAllReduce (driver baseline)",
     .hint = "a rank stopped early", .fill = fill_rows, .enqueue = native_allreduce,
     .check = "allreduce_sum", .verify = check_rows, .fields = row_fields, .whole = 1,
     .random = 1},
};

static const struct ncclab_lab_config config = {
    .number = 5, .name = "lab5", .tasks = "allgather|reducescatter|composed",
    .defaults = NCCLAB_DEFAULTS(1UL << 29), .host_defaults = NCCLAB_DEFAULTS(1UL << 20),
    .summary = "Lab 5: all-gather and reduce-scatter, and an all-reduce built from them. "
               "-b/-e are PER-RANK sizes (each rank's share N); the table's size column is the "
               "whole n*N buffer, as in nccl-tests."};
/* clang-format on */

int main(int argc, char **argv)
{
    struct ncclab_lab lab;
    ncclab_lab_start(&lab, &config, NULL, argc, argv);
    const size_t n = (size_t)lab.world.nranks, max_count = lab.max_count;
    if (lab.world.rank == 0)
        printf("# per-rank share N = %zu .. %zu floats (-b/-e); each row below moves n*N = %zu*N "
               "floats\n",
               lab.sizes[0] / sizeof(float), max_count, n);
    struct lab5 l = {.b = {.comm = lab.comm, .expected = n * (n - 1) / 2.0},
                     .me = lab.world.rank,
                     .n = (int)n,
                     .part = ncclab_device_alloc(max_count, "the per-rank buffer (N floats)"),
                     .whole_send = ncclab_device_alloc(max_count * n, "the n*N send buffer"),
                     .whole_recv = ncclab_device_alloc(max_count * n, "the n*N receive buffer"),
                     .row_offsets = calloc(n, sizeof(double))};
    if (!l.row_offsets) ncclab_die(1, "out of memory");
    ncclab_lab_sweep(&lab, cases, sizeof cases / sizeof *cases, &l.b);
    CUDA_CHECK(cudaFree(l.part));
    CUDA_CHECK(cudaFree(l.whole_send));
    CUDA_CHECK(cudaFree(l.whole_recv));
    free(l.row_offsets);
    return ncclab_lab_finish(&lab);
}
