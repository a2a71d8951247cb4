/* Device helpers, so labs never write kernels. Each has a CUDA
 * implementation (device.cu) and a host-backend one (device_host.c); all are
 * asynchronous on `stream` except ncclab_summarise, which waits for its
 * result. */
#ifndef NCCLAB_DEVICE_H
#define NCCLAB_DEVICE_H

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

#ifdef __cplusplus
}
#endif
#endif
