/* Lab 2 driver — provided, do not edit. Your code goes in allreduce.c.
 *
 * For each size: fill the send buffer with the rank plus a random offset k_r
 * the other ranks learn only afterwards (common/lab.h), let the student's
 * code time the all-reduce, then check from the data that every element of
 * the result is n(n-1)/2 + the sum of the offsets, and that every call was a
 * sum of sendbuf into recvbuf. Then time communication and computation apart
 * and together (Task 3) to show what overlap buys. --task time runs Tasks
 * 1-2 only, --task overlap Task 3 only (at the largest size). */
#include <stdio.h>

#include "lab.h"
#include "lab2.h"
#include "streamprobe.h"

/* The Task 3 baseline: one all-reduce alone, timed by the driver (the
 * kit's Task 1, common/taught.h). */
static void enqueue_baseline(void *ctx, cudaStream_t s)
{
    struct ncclab_bufs *b = ctx;
    ncclab_taught_lab2_allreduce(b->comm, s, b->send, b->recv, b->count);
}
struct busy {
    float *buf;
    size_t count;
    int rounds;
};
static void enqueue_busy(void *ctx, cudaStream_t s)
{
    struct busy *b = ctx;
    ncclab_busy_work(b->buf, b->count, b->rounds, s);
}

/* The least of three single runs of the compute, or `least` if smaller: a
 * neighbour on a busy machine can only stretch a measurement. */
static double fastest_compute(struct busy *w, cudaStream_t compute, double least)
{
    for (int k = 0; k < 3; k++) {
        struct ncclab_timing one;
        ncclab_time_op(enqueue_busy, w, compute, 0, 1, &one);
        if (one.avg_us > 0 && one.avg_us < least) least = one.avg_us;
    }
    return least;
}

/* Work still queued or running on s (cudaStreamQuery's "not ready"). */
static int stream_busy(cudaStream_t s)
{
    cudaError_t e = cudaStreamQuery(s);
    if (e == cudaErrorNotReady) {
        (void)cudaGetLastError(); /* an answer, not an error to keep */
        return 1;
    }
    CUDA_CHECK(e);
    return 0;
}

static void overlap_demo(struct ncclab_lab *lab, struct ncclab_bufs *b, int rounds)
{
    const size_t count = b->count = lab->max_count;
    cudaStream_t compute;
    CUDA_CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    float *work = ncclab_device_alloc(count, "the Task 3 work buffer");
    ncclab_fill(work, count, 1.0f, compute);

    struct ncclab_timing comm_t, work_t;
    ncclab_time_op(enqueue_baseline, b, lab->stream, 2, 5, &comm_t);
    struct busy w = {work, count, rounds > 0 ? rounds : 8};
    ncclab_time_op(enqueue_busy, &w, compute, 1, 3, &work_t);
    /* Size the work to take about as long as the all-reduce. Few rounds are
     * bound by memory bandwidth, so the time grows slower than the rounds:
     * scale up a few times rather than once. */
    for (int step = 0; rounds <= 0 && step < 6 && work_t.avg_us > 0 &&
                       work_t.avg_us < 0.8 * comm_t.avg_us && w.rounds < 100000;
         step++) {
        double grow = comm_t.avg_us / work_t.avg_us;
        double r = w.rounds * (grow < 2.0 ? 2.0 : grow);
        w.rounds = r > 1e5 ? 100000 : (int)r;
        ncclab_time_op(enqueue_busy, &w, compute, 1, 3, &work_t);
    }

    /* The compute alone at its fastest, before and after the overlapped
     * call, is the honest bound it is compared with. */
    double compute_min_us = fastest_compute(&w, compute, work_t.avg_us);

    ncclab_lab_draw(lab);
    ncclab_lab_fill_input(lab, b->send, count, lab->world.rank);
    ncclab_fill(b->recv, count, -1.0f, lab->stream);
    CUDA_CHECK(cudaStreamSynchronize(lab->stream));
    ncclab_watchdog_arm(lab->opts.timeout_s, "running lab2_allreduce_overlapped",
                        "a rank skipped the all-reduce, or one stream was never waited for");
    double t0 = ncclab_now_us();
    lab2_allreduce_overlapped(lab->comm, lab->stream, compute, b->send, b->recv, count, work, count,
                              w.rounds);
    double both_us = ncclab_now_us() - t0;
    /* The student's function must have waited for both streams itself; the
     * driver synchronises only after reading the clock. */
    CUDA_CHECK(cudaStreamSynchronize(lab->stream));
    CUDA_CHECK(cudaStreamSynchronize(compute));
    ncclab_watchdog_disarm();
    ncclab_lab_reveal(lab);
    /* Once more: when the machine got quieter during the call, these runs see it too. */
    compute_min_us = fastest_compute(&w, compute, compute_min_us);
    /* The timed call's result, before the probe below writes it again. */
    struct ncclab_summary s;
    const double offsets = ncclab_lab_offsets_of(lab, NULL, NULL);
    ncclab_lab_expect_input(lab, b->recv, count, b->expected, offsets, 1e-6, &s);

    /* Did it wait for both streams? Two more calls, untimed: one with the
     * busy work held back 100 ms on its stream (common/streamprobe.h: the
     * first busy work enqueued on it starts that late, the rest after), one
     * with a single round of it while the all-reduce is far longer. Right
     * after the call returns the longer stream is still busy, unless it was
     * waited for. */
    int busy_at_return[2];
    ncclab_watchdog_arm(lab->opts.timeout_s, "running lab2_allreduce_overlapped",
                        "a rank skipped the all-reduce, or one stream was never waited for");
    for (int k = 0; k < 2; k++) {
        if (k == 0) ncclab_stream_hold_once(compute, 100000.0);
        lab2_allreduce_overlapped(lab->comm, lab->stream, compute, b->send, b->recv, count, work,
                                  count, k == 0 ? w.rounds : 1);
        ncclab_stream_hold(compute, 0);
        busy_at_return[k] = stream_busy(k == 0 ? compute : lab->stream);
        CUDA_CHECK(cudaStreamSynchronize(lab->stream));
        CUDA_CHECK(cudaStreamSynchronize(compute));
    }
    ncclab_watchdog_disarm();

    struct ncclab_record *rec = ncclab_record_begin(&lab->report, "info", "overlap");
    ncclab_record_int(rec, "count", (long long)count);
    ncclab_record_int(rec, "work_rounds", w.rounds);
    ncclab_record_num(rec, "comm_us", comm_t.avg_us);
    ncclab_record_num(rec, "compute_us", work_t.avg_us);
    ncclab_record_num(rec, "compute_min_us", compute_min_us);
    ncclab_record_num(rec, "overlapped_us", both_us);
    ncclab_record_int(rec, "compute_busy_at_return", busy_at_return[0]);
    ncclab_record_int(rec, "comm_busy_at_return", busy_at_return[1]);
    ncclab_report_check(&lab->report, "overlap_sum", &s);
    ncclab_lab_note_offsets(lab, offsets);
    if (lab->world.rank == 0)
        printf(
            "# overlap (%zu floats): all-reduce %.1f us, compute %.1f us, both overlapped %.1f us "
            "(serial would be %.1f us)\n",
            count, comm_t.avg_us, work_t.avg_us, both_us, comm_t.avg_us + work_t.avg_us);
    CUDA_CHECK(cudaFree(work));
    CUDA_CHECK(cudaStreamDestroy(compute));
}

/* Tasks 1-2: the rank and its random offset in, the student's timing loop,
 * then the sum checked. */
static void fill_input(struct ncclab_lab *lab, struct ncclab_bufs *b)
{
    ncclab_lab_fill_input(lab, b->send, b->count, lab->world.rank);
    ncclab_fill(b->recv, b->count, -1.0f, lab->stream); /* stale results must not pass */
}
static void check_sum(struct ncclab_lab *lab, struct ncclab_bufs *b, struct ncclab_summary *s)
{
    ncclab_lab_expect_input(lab, b->recv, b->count, b->expected,
                            ncclab_lab_offsets_of(lab, NULL, NULL), 1e-6, s);
}
/* clang-format off */
static const struct ncclab_case time_case = {
    .name = "allreduce", .coll = NCCLAB_ALLREDUCE, .redop = "sum",
    .traced = NCCLAB_TRACED(ALLREDUCE), .time_call = lab2_time_allreduce,
    .what = "running lab2_time_allreduce", .check = "allreduce_sum",
    .hint = "a rank skipped an all-reduce or used a different count",
    .random = 1, .fill = fill_input, .verify = check_sum,
    .args = NCCLAB_ARGS_OP | NCCLAB_ARGS_BUFFERS};

static const struct ncclab_lab_config config = {
    .number = 2, .name = "lab2", .tasks = "time|overlap",
    .defaults = NCCLAB_DEFAULTS(1UL << 32), .host_defaults = NCCLAB_DEFAULTS(8UL << 20),
    .summary = "Lab 2: time ncclAllReduce properly (warm-up, CUDA events, synchronisation), "
               "check the sum, report algbw and busbw, and overlap it with computation."};
/* clang-format on */

int main(int argc, char **argv)
{
    int overlap_rounds = 0;
    const struct ncclab_opt extra[] = {
        {"overlap-rounds", 0, NCCLAB_OPT_INT, &overlap_rounds,
         "busy-work rounds for Task 3 (0: 8, raised while the work takes under 0.8x the "
         "all-reduce's time, never lowered; -1: skip Task 3)",
         -1, 1000000, NULL},
        NCCLAB_OPT_END,
    };
    struct ncclab_lab lab;
    ncclab_lab_start(&lab, &config, extra, argc, argv);
    const int n = lab.world.nranks;
    struct ncclab_bufs b = ncclab_lab_bufs(&lab, n * (n - 1) / 2.0);
    if (ncclab_lab_runs(&lab, "time")) ncclab_lab_sweep(&lab, &time_case, 1, &b);
    if (overlap_rounds >= 0 && ncclab_lab_runs(&lab, "overlap"))
        overlap_demo(&lab, &b, overlap_rounds);
    ncclab_lab_free_bufs(&b);
    return ncclab_lab_finish(&lab);
}
