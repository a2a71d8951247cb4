// Device helpers on the GPU: fill, SGD step, busy work and a buffer summary.
// Grid-stride loops so any element count works with one launch shape.
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "device.h"

namespace
{

constexpr int kThreads = 256;

unsigned blocks_for(size_t count)
{
    size_t b = (count + kThreads - 1) / kThreads;
    if (b > 65535u * 8u) b = 65535u * 8u; // grid-stride covers the rest
    return b ? (unsigned)b : 1u;
}

__global__ void fill_kernel(float *buf, size_t count, float value)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x)
        buf[i] = value;
}

__global__ void sgd_kernel(float *params, const float *grads, size_t count, float step)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x)
        params[i] -= step * grads[i];
}

__global__ void busy_kernel(float *buf, size_t count, int rounds)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        float x = buf[i], acc = x;
        for (int r = 0; r < rounds; r++) acc = fmaf(acc, 1.0000001f, 0.0f);
        // Write back x unless acc is a value it can never be; the compiler
        // cannot drop the loop, and the data stays unchanged.
        buf[i] = (acc == -12345.678f) ? acc : x;
    }
}

struct Summary {
    unsigned long long mismatches;
    unsigned long long first_bad; // ULLONG_MAX when none
    int min_bits, max_bits;       // floats as order-preserving ints
    int saw_nan;
};

// Map a float to an int whose order matches the float order, so atomicMin/Max work.
__device__ int ordered(float f)
{
    int i = __float_as_int(f);
    return i >= 0 ? i : i ^ 0x7fffffff;
}
float unordered_host(int i)
{
    int b = i >= 0 ? i : i ^ 0x7fffffff;
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

__global__ void summary_kernel(const float *buf, size_t count, float expected, float tol,
                               Summary *s)
{
    int lmin = INT_MAX, lmax = INT_MIN;
    unsigned long long bad = 0, first = ULLONG_MAX;
    int nan = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
         i += (size_t)gridDim.x * blockDim.x) {
        float x = buf[i];
        if (isnan(x))
            nan = 1;
        else {
            int o = ordered(x);
            lmin = min(lmin, o);
            lmax = max(lmax, o);
        }
        if (!(fabsf(x - expected) <= tol)) {
            bad++;
            if (i < first) first = i;
        }
    }
    if (bad) {
        atomicAdd(&s->mismatches, bad);
        atomicMin(&s->first_bad, first);
    }
    if (lmin != INT_MAX) atomicMin(&s->min_bits, lmin);
    if (lmax != INT_MIN) atomicMax(&s->max_bits, lmax);
    if (nan) atomicOr(&s->saw_nan, 1);
}

} // namespace

extern "C" void ncclab_fill(float *buf, size_t count, float value, cudaStream_t stream)
{
    if (count == 0) return;
    fill_kernel<<<blocks_for(count), kThreads, 0, stream>>>(buf, count, value);
    CUDA_CHECK(cudaGetLastError());
}

extern "C" void ncclab_sgd_step(float *params, const float *grads, size_t count, float lr,
                                float grad_scale, cudaStream_t stream)
{
    if (count == 0) return;
    sgd_kernel<<<blocks_for(count), kThreads, 0, stream>>>(params, grads, count, lr * grad_scale);
    CUDA_CHECK(cudaGetLastError());
}

extern "C" void ncclab_busy_work(float *buf, size_t count, int rounds, cudaStream_t stream)
{
    if (count == 0) return;
    busy_kernel<<<blocks_for(count), kThreads, 0, stream>>>(buf, count, rounds);
    CUDA_CHECK(cudaGetLastError());
}

extern "C" void ncclab_summarise(const float *buf, size_t count, float expected, double rel_tol,
                                 cudaStream_t stream, struct ncclab_summary *out)
{
    Summary init = {0, ULLONG_MAX, INT_MAX, INT_MIN, 0}, host;
    Summary *d = nullptr;
    CUDA_CHECK(cudaMalloc((void **)&d, sizeof *d));
    CUDA_CHECK(cudaMemcpyAsync(d, &init, sizeof init, cudaMemcpyHostToDevice, stream));
    const double e = expected;
    const float tol = (float)(rel_tol * (fabs(e) > 1.0 ? fabs(e) : 1.0));
    if (count > 0)
        summary_kernel<<<blocks_for(count), kThreads, 0, stream>>>(buf, count, expected, tol, d);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpyAsync(&host, d, sizeof host, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaFree(d));

    out->count = count;
    out->expected = expected;
    out->mismatches = (size_t)host.mismatches;
    out->first_bad = host.first_bad == ULLONG_MAX ? -1 : (long long)host.first_bad;
    if (host.saw_nan || count == 0) {
        out->min = out->max = NAN;
    } else {
        out->min = unordered_host(host.min_bits);
        out->max = unordered_host(host.max_bits);
    }
}
