/* MUTANT no-warmup: the warm-up iterations are skipped
 * Derived from the reference solution; graded by grader/tests/run-mutants.sh. */
/* Lab 2 — timing all-reduce: your code. Handout: handouts/lab2.md.
 * Declarations and the meaning of each function: lab2.h. */
#include "errors.h"
#include "kernels.h"
#include "lab2.h"

void lab2_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                    size_t count)
{
    /* TODO(Task 1): one ncclAllReduce (ncclFloat, ncclSum) on `stream`,
     * checked with NCCL_CHECK. See handout "Task 1". */
    // >>> solution
    NCCL_CHECK(ncclAllReduce(sendbuf, recvbuf, count, ncclFloat, ncclSum, comm, stream));
    // <<< solution
}

double lab2_time_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                           float *recvbuf, size_t count, int warmup, int iters)
{
    double avg_us = 0.0;
    /* TODO(Task 2): time `iters` all-reduces after `warmup` untimed ones.
     *   - create two events (cudaEventCreate)
     *   - warm-up loop of lab2_allreduce
     *   - cudaEventRecord(start, stream); timed loop; cudaEventRecord(stop, stream)
     *   - wait for the GPU to reach `stop` BEFORE reading the time
     *   - cudaEventElapsedTime gives milliseconds; return microseconds per call
     *   - destroy the events
     * See handout "Task 2" and "Common mistakes". */
    // >>> solution
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    (void)warmup; /* BUG: straight into the timed loop */
    CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < iters; i++) lab2_allreduce(comm, stream, sendbuf, recvbuf, count);
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    avg_us = (double)ms * 1000.0 / iters;
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    // <<< solution
    return avg_us;
}

void lab2_allreduce_overlapped(ncclComm_t comm, cudaStream_t comm_stream,
                               cudaStream_t compute_stream, const float *sendbuf, float *recvbuf,
                               size_t count, float *work, size_t work_count, int work_rounds)
{
    /* TODO(Task 3): start the all-reduce on comm_stream (it returns at
     * once), then ncclab_busy_work(work, work_count, work_rounds,
     * compute_stream), then wait for both streams. See handout "Task 3". */
    // >>> solution
    lab2_allreduce(comm, comm_stream, sendbuf, recvbuf, count);
    ncclab_busy_work(work, work_count, work_rounds, compute_stream);
    CUDA_CHECK(cudaStreamSynchronize(comm_stream));
    CUDA_CHECK(cudaStreamSynchronize(compute_stream));
    // <<< solution
}
