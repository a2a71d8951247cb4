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
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));

    double t0 = ncclab_now_us();
    for (int i = 0; i < warmup; i++) fn(ctx, stream);
    CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < iters; i++) fn(ctx, stream);
    CUDA_CHECK(cudaEventRecord(stop, stream));
    /* The events are only meaningful once the GPU has reached `stop`. */
    CUDA_CHECK(cudaEventSynchronize(stop));
    double t1 = ncclab_now_us();

    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    out->avg_us = iters > 0 ? (double)ms * 1e3 / iters : 0.0;
    out->wall_us = t1 - t0;
    out->iters = iters;
    out->warmup = warmup;
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
}
