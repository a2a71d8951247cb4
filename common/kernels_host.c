/* Device helpers for the host backend: the same work as kernels.cu, run on
 * the stream's worker thread through cudaLaunchHostFunc so that it is
 * ordered and asynchronous exactly like a kernel launch. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"
#include "kernels.h"
#include "streamprobe.h"

struct host_op {
    float *buf;
    const float *src;
    size_t count;
    float value, lr, scale;
    int rounds;
};

static struct host_op *new_op(void)
{
    struct host_op *op = calloc(1, sizeof *op);
    if (!op) ncclab_die(1, "out of memory");
    return op;
}

static void run_fill(void *arg)
{
    struct host_op *op = arg;
    for (size_t i = 0; i < op->count; i++) op->buf[i] = op->value;
    free(op);
}

static void run_sgd(void *arg)
{
    struct host_op *op = arg;
    const float step = op->lr * op->scale;
    for (size_t i = 0; i < op->count; i++) op->buf[i] -= step * op->src[i];
    free(op);
}

static void run_busy(void *arg)
{
    struct host_op *op = arg;
    for (size_t i = 0; i < op->count; i++) {
        float x = op->buf[i];
        volatile float acc = x;
        for (int r = 0; r < op->rounds; r++) acc = acc * 1.0000001f + 0.0f;
        op->buf[i] = x; /* leave the data as it was */
    }
    free(op);
}

void ncclab_fill(float *buf, size_t count, float value, cudaStream_t stream)
{
    struct host_op *op = new_op();
    op->buf = buf;
    op->count = count;
    op->value = value;
    CUDA_CHECK(cudaLaunchHostFunc(stream, run_fill, op));
}

void ncclab_sgd_step(float *params, const float *grads, size_t count, float lr, float grad_scale,
                     cudaStream_t stream)
{
    struct host_op *op = new_op();
    op->buf = params;
    op->src = grads;
    op->count = count;
    op->lr = lr;
    op->scale = grad_scale;
    CUDA_CHECK(cudaLaunchHostFunc(stream, run_sgd, op));
}

void ncclab_busy_work(float *buf, size_t count, int rounds, cudaStream_t stream)
{
    ncclab_stream_hold_point(stream);
    struct host_op *op = new_op();
    op->buf = buf;
    op->count = count;
    op->rounds = rounds;
    CUDA_CHECK(cudaLaunchHostFunc(stream, run_busy, op));
}

void ncclab_summarise(const float *buf, size_t count, float expected, double rel_tol,
                      cudaStream_t stream, struct ncclab_summary *out)
{
    /* A constant is the pattern with no step: one loop for both (count 0
     * gives NaN min and max, as on the CUDA backend). */
    ncclab_summarise_pattern(buf, count, expected, 0.0f, 1, rel_tol, stream, out);
}

/* ---- lab 8: the reduction step of a hand-built all-reduce, and patterned buffers ---- */

struct pattern_op {
    float *buf;
    const float *src;
    size_t count;
    float base, step;
    unsigned period;
    double rel_tol;
    struct ncclab_summary *summary;
};

static struct pattern_op *new_pattern_op(void)
{
    struct pattern_op *op = calloc(1, sizeof *op);
    if (!op) ncclab_die(1, "out of memory");
    return op;
}

static void run_reduce_add(void *arg)
{
    struct pattern_op *op = arg;
    for (size_t i = 0; i < op->count; i++) op->buf[i] += op->src[i];
    free(op);
}

static void run_fill_pattern(void *arg)
{
    struct pattern_op *op = arg;
    unsigned j = 0; /* i % period, counted along */
    for (size_t i = 0; i < op->count; i++) {
        op->buf[i] = op->base + op->step * (float)j;
        if (++j == op->period) j = 0;
    }
    free(op);
}

static void run_summary_pattern(void *arg)
{
    struct pattern_op *op = arg;
    struct ncclab_summary *s = op->summary;
    s->count = op->count;
    s->mismatches = 0;
    s->first_bad = -1;
    s->min = INFINITY;
    s->max = -INFINITY;
    s->expected = op->base;
    int saw_nan = 0;
    /* The position in the period counts along (a division per element was
     * most of this loop's time; every lab run checks its buffers with it),
     * and within a period of one the expected value and its tolerance are
     * worked out once. */
    unsigned j = 0;
    double want = op->base + op->step * 0.0f;
    double tol = op->rel_tol * (fabs(want) > 1.0 ? fabs(want) : 1.0);
    for (size_t i = 0; i < op->count; i++) {
        if (op->period > 1) {
            want = op->base + op->step * (float)j;
            tol = op->rel_tol * (fabs(want) > 1.0 ? fabs(want) : 1.0);
            if (++j == op->period) j = 0;
        }
        double x = op->src[i];
        if (isnan(x))
            saw_nan = 1;
        else {
            if (x < s->min) s->min = x;
            if (x > s->max) s->max = x;
        }
        if (!(fabs(x - want) <= tol)) { /* NaN fails too */
            if (s->first_bad < 0) s->first_bad = (long long)i;
            s->mismatches++;
        }
    }
    if (saw_nan || op->count == 0) s->min = s->max = NAN;
    free(op);
}

void ncclab_reduce_add(float *acc, const float *in, size_t count, cudaStream_t stream)
{
    if (count == 0) return;
    ncclab_stream_hold_point(stream);
    struct pattern_op *op = new_pattern_op();
    op->buf = acc;
    op->src = in;
    op->count = count;
    CUDA_CHECK(cudaLaunchHostFunc(stream, run_reduce_add, op));
}

void ncclab_fill_pattern(float *buf, size_t count, float base, float step, unsigned period,
                         cudaStream_t stream)
{
    if (count == 0) return;
    struct pattern_op *op = new_pattern_op();
    op->buf = buf;
    op->count = count;
    op->base = base;
    op->step = step;
    op->period = period ? period : 1;
    CUDA_CHECK(cudaLaunchHostFunc(stream, run_fill_pattern, op));
}

void ncclab_summarise_pattern(const float *buf, size_t count, float base, float step,
                              unsigned period, double rel_tol, cudaStream_t stream,
                              struct ncclab_summary *out)
{
    struct pattern_op *op = new_pattern_op();
    op->src = buf;
    op->count = count;
    op->base = base;
    op->step = step;
    op->period = period ? period : 1;
    op->rel_tol = rel_tol;
    op->summary = out;
    CUDA_CHECK(cudaLaunchHostFunc(stream, run_summary_pattern, op));
    CUDA_CHECK(cudaStreamSynchronize(stream));
}
