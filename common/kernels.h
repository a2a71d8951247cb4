/* Device helpers, so labs never write kernels. Each has a CUDA
 * implementation (kernels.cu) and a host-backend one (kernels_host.c); all are
 * asynchronous on `stream` except ncclab_summarise, which waits for its
 * result. */
#ifndef NCCLAB_KERNELS_H
#define NCCLAB_KERNELS_H

#include <cuda_runtime.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* buf[i] = value for i < count. */
void ncclab_fill(float *buf, size_t count, float value, cudaStream_t stream);

/* One SGD step: params[i] -= lr * grad_scale * grads[i]. grad_scale = 1/n
 * turns a summed gradient into the average. */
void ncclab_sgd_step(float *params, const float *grads, size_t count, float lr, float grad_scale,
                     cudaStream_t stream);

/* Arithmetic busy work on buf (rounds multiply-adds per element, leaving
 * the values unchanged), used to show compute overlapping communication. */
void ncclab_busy_work(float *buf, size_t count, int rounds, cudaStream_t stream);

struct ncclab_summary {
    size_t count;        /* elements examined */
    size_t mismatches;   /* elements with |x - expected| > tolerance */
    long long first_bad; /* index of the first mismatch, -1 if none */
    double min, max;     /* extremes found (NaN counts as a mismatch) */
    double expected;
};

/* Compare buf[0..count) with `expected`; tolerance is relative,
 * |x - expected| <= rel_tol * max(1, |expected|). Synchronises `stream`. */
void ncclab_summarise(const float *buf, size_t count, float expected, double rel_tol,
                      cudaStream_t stream, struct ncclab_summary *out);

/* Lab 8's reduction step: acc[i] += in[i] for i < count, the element-wise
 * sum an all-reduce built from send/recv needs after each receive. acc and
 * in must not overlap. */
void ncclab_reduce_add(float *acc, const float *in, size_t count, cudaStream_t stream);

/* A buffer whose neighbouring elements differ, so data in the wrong place
 * shows: buf[i] = base + step * (i % period), period >= 1. */
void ncclab_fill_pattern(float *buf, size_t count, float base, float step, unsigned period,
                         cudaStream_t stream);

/* ncclab_summarise against that pattern: element i is expected to hold
 * base + step * (i % period); out->expected is base. Synchronises `stream`. */
void ncclab_summarise_pattern(const float *buf, size_t count, float base, float step,
                              unsigned period, double rel_tol, cudaStream_t stream,
                              struct ncclab_summary *out);

#ifdef __cplusplus
}
#endif
#endif
