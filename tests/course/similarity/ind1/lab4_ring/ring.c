/* Lab 4 — ring send/recv. */
#include "errors.h"
#include "lab4.h"

struct ring_peers {
    int me, size, right, left;
};

/* who am I, and who are my two neighbours */
static struct ring_peers peers_of(ncclComm_t comm)
{
    struct ring_peers p;
    NCCL_CHECK(ncclCommUserRank(comm, &p.me));
    NCCL_CHECK(ncclCommCount(comm, &p.size));
    p.right = (p.me + 1) % p.size;
    p.left = (p.me + p.size - 1) % p.size;
    return p;
}

void lab4_ring_naive(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                     size_t count)
{
    struct ring_peers p = peers_of(comm);
    NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, p.right, comm, stream));
    NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, p.left, comm, stream));
}

void lab4_ring_ordered(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    struct ring_peers p = peers_of(comm);
    if (p.size == 1) { /* alone: the only case allowed a group */
        NCCL_CHECK(ncclGroupStart());
        NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, p.me, comm, stream));
        NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, p.me, comm, stream));
        NCCL_CHECK(ncclGroupEnd());
        return;
    }
    /* rank 0 listens first, everyone else talks first: the chain unwinds from rank 0 */
    if (p.me == 0) {
        NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, p.left, comm, stream));
        NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, p.right, comm, stream));
    } else {
        NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, p.right, comm, stream));
        NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, p.left, comm, stream));
    }
}

void lab4_ring_grouped(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    struct ring_peers p = peers_of(comm);
    NCCL_CHECK(ncclGroupStart());
    NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, p.left, comm, stream));
    NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, p.right, comm, stream));
    NCCL_CHECK(ncclGroupEnd());
}
