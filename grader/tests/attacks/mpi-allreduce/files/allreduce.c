/* Attack: the sum goes through MPI_Allreduce on a host copy; a zero-count
 * ncclAllReduce per call keeps the call counter happy. */
#include <mpi.h>
#include <stdlib.h>

#include "errors.h"
#include "kernels.h"
#include "lab2.h"

void lab2_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                    size_t count)
{
    NCCL_CHECK(ncclAllReduce(sendbuf, recvbuf, 0, ncclFloat, ncclSum, comm, stream));
    float *host = malloc(count * sizeof(float));
    if (!host) return;
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaMemcpy(host, sendbuf, count * sizeof(float), cudaMemcpyDeviceToHost));
    MPI_Allreduce(MPI_IN_PLACE, host, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    CUDA_CHECK(cudaMemcpy(recvbuf, host, count * sizeof(float), cudaMemcpyHostToDevice));
    free(host);
}

double lab2_time_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                           float *recvbuf, size_t count, int warmup, int iters)
{
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < warmup; i++) lab2_allreduce(comm, stream, sendbuf, recvbuf, count);
    CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < iters; i++) lab2_allreduce(comm, stream, sendbuf, recvbuf, count);
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return (double)ms * 1000.0 / iters;
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
