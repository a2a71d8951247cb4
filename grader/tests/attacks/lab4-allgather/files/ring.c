/* Attack: the "ring" is an all-gather of everyone's buffer, from which each
 * rank copies its left neighbour's row; a zero-count send and receive per
 * call keep the call counters at one each. */
#include "errors.h"
#include "lab4.h"

static void fake_ring(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                      size_t count, int grouped)
{
    int rank = 0, n = 1;
    NCCL_CHECK(ncclCommUserRank(comm, &rank));
    NCCL_CHECK(ncclCommCount(comm, &n));
    float *all = NULL;
    CUDA_CHECK(cudaMalloc((void **)&all, count * (size_t)n * sizeof(float)));
    NCCL_CHECK(ncclAllGather(sendbuf, all, count, ncclFloat, comm, stream));
    CUDA_CHECK(cudaMemcpyAsync(recvbuf, all + (size_t)((rank - 1 + n) % n) * count,
                               count * sizeof(float), cudaMemcpyDeviceToDevice, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaFree(all));
    if (grouped) NCCL_CHECK(ncclGroupStart());
    NCCL_CHECK(ncclSend(sendbuf, 0, ncclFloat, (rank + 1) % n, comm, stream));
    NCCL_CHECK(ncclRecv(recvbuf, 0, ncclFloat, (rank - 1 + n) % n, comm, stream));
    if (grouped) NCCL_CHECK(ncclGroupEnd());
}

void lab4_ring_naive(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                     size_t count)
{
    fake_ring(comm, stream, sendbuf, recvbuf, count, 0);
}

void lab4_ring_ordered(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    fake_ring(comm, stream, sendbuf, recvbuf, count, 0);
}

void lab4_ring_grouped(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    fake_ring(comm, stream, sendbuf, recvbuf, count, 1);
}
