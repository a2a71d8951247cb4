/* Wrong all-reduce (max instead of sum), but the kit's result checker is replaced. */
#include "errors.h"
#include "kernels.h"
#include "lab2.h"

/* --- replaces common/device_host.o: the driver needs these names, so they stay global --- */
static void hostfn_noop(void *a) { (void)a; }
void ncclab_fill(float *buf, size_t count, float value, cudaStream_t stream)
{
    cudaStreamSynchronize(stream);
    for (size_t i = 0; i < count; i++) buf[i] = value;
    (void)hostfn_noop;
}
void ncclab_busy_work(float *buf, size_t count, int rounds, cudaStream_t stream)
{
    cudaStreamSynchronize(stream);
    for (size_t i = 0; i < count; i++) { volatile float a = buf[i]; for (int r = 0; r < rounds; r++) a = a * 1.0000001f; }
}
void ncclab_sgd_step(float *p, const float *g, size_t n, float lr, float s, cudaStream_t st)
{ cudaStreamSynchronize(st); for (size_t i = 0; i < n; i++) p[i] -= lr * s * g[i]; }
void ncclab_summarise(const float *buf, size_t count, float expected, double rel_tol,
                      cudaStream_t stream, struct ncclab_summary *out)
{
    cudaStreamSynchronize(stream);
    out->count = count; out->mismatches = 0; out->first_bad = -1;
    out->min = out->max = out->expected = expected;
}

/* --- the "solution": wrong op --- */
void lab2_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                    size_t count)
{
    NCCL_CHECK(ncclAllReduce(sendbuf, recvbuf, count, ncclFloat, ncclMax, comm, stream));
}

double lab2_time_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                           float *recvbuf, size_t count, int warmup, int iters)
{
    for (int i = 0; i < warmup; i++) lab2_allreduce(comm, stream, sendbuf, recvbuf, count);
    cudaEvent_t a, b;
    CUDA_CHECK(cudaEventCreate(&a)); CUDA_CHECK(cudaEventCreate(&b));
    CUDA_CHECK(cudaEventRecord(a, stream));
    for (int i = 0; i < iters; i++) lab2_allreduce(comm, stream, sendbuf, recvbuf, count);
    CUDA_CHECK(cudaEventRecord(b, stream));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0; CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    cudaEventDestroy(a); cudaEventDestroy(b);
    return ms * 1000.0 / iters;
}

void lab2_allreduce_overlapped(ncclComm_t comm, cudaStream_t comm_stream,
                               cudaStream_t compute_stream, const float *sendbuf, float *recvbuf,
                               size_t count, float *work, size_t work_count, int work_rounds)
{
    lab2_allreduce(comm, comm_stream, sendbuf, recvbuf, count);
    ncclab_busy_work(work, work_count, work_rounds, compute_stream);
    CUDA_CHECK(cudaStreamSynchronize(comm_stream));
    CUDA_CHECK(cudaStreamSynchronize(compute_stream));
}
