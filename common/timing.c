#include "timing.h"

#include <time.h>

#include "errors.h"

double ncclab_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

void ncclab_time_op(ncclab_enqueue_fn fn, void *ctx, cudaStream_t stream, int warmup, int iters,
                    struct ncclab_timing *out)
{
    /* nccl-tests' way (src/common.cu): the host clock around a loop the
     * stream has finished, read after the stream is idle at both ends. */
    double t0 = ncclab_now_us();
    for (int i = 0; i < warmup; i++) fn(ctx, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    double t1 = ncclab_now_us();
    for (int i = 0; i < iters; i++) fn(ctx, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    double t2 = ncclab_now_us();

    out->avg_us = iters > 0 ? (t2 - t1) / iters : 0.0;
    out->wall_us = t2 - t0;
    out->iters = iters;
    out->warmup = warmup;
}
