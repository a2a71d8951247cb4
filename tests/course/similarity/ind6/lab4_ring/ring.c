#include "errors.h"
#include "lab4.h"

// ---------------------------------------------------------------------------
// Lab 4. Every rank gives its sendbuf to rank+1 and takes rank-1's into recvbuf.
// ---------------------------------------------------------------------------

void lab4_ring_naive(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                     size_t count)
{
    int nr = 0, id = 0;
    NCCL_CHECK(ncclCommCount(comm, &nr));
    NCCL_CHECK(ncclCommUserRank(comm, &id));
    // send, then receive: hangs once a send has to wait for its receiver
    NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, (id + 1) % nr, comm, stream));
    NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, (id + nr - 1) % nr, comm, stream));
}

void lab4_ring_ordered(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    int nr = 0, id = 0;
    NCCL_CHECK(ncclCommCount(comm, &nr));
    NCCL_CHECK(ncclCommUserRank(comm, &id));
    int to = (id + 1) % nr;
    int from = id ? id - 1 : nr - 1;

    // A single rank sends to itself; NCCL only matches that inside a group.
    if (nr == 1) {
        NCCL_CHECK(ncclGroupStart());
        NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, from, comm, stream));
        NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, to, comm, stream));
        NCCL_CHECK(ncclGroupEnd());
        return;
    }

    // Odd-numbered ranks send first, even ones (rank 0 included) receive
    // first: any rank that sends first has a receiver waiting or about to be.
    int send_first = id & 1;
    if (!send_first) NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, from, comm, stream));
    NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, to, comm, stream));
    if (send_first) NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, from, comm, stream));
}

void lab4_ring_grouped(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    int nr = 0, id = 0;
    NCCL_CHECK(ncclCommCount(comm, &nr));
    NCCL_CHECK(ncclCommUserRank(comm, &id));
    NCCL_CHECK(ncclGroupStart());
    NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, (id + nr - 1) % nr, comm, stream));
    NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, (id + 1) % nr, comm, stream));
    NCCL_CHECK(ncclGroupEnd());
}
