/* Lab 4 — ring send/recv: your code. Handout: handouts/lab4.md.
 * Declarations and the meaning of each function: lab4.h. */
#include "errors.h"
#include "lab4.h"

static void neighbours(ncclComm_t c, int *rank, int *left, int *right)
{
    int n;
    NCCL_CHECK(ncclCommCount(c, &n));
    NCCL_CHECK(ncclCommUserRank(c, rank));
    *right = (*rank + 1) % n;
    *left = (*rank - 1) % n;
    if (*left < 0) *left += n; /* C's % keeps the sign */
}

void lab4_ring_naive(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                     size_t count)
{
    /* TODO(Task 1): the ring written the obvious way: every rank first
     * sends its buffer to its right neighbour, then receives from its left
     * one, two separate calls and no group. It is meant to deadlock: run it
     * with --naive and explain the watchdog's message. Trap: in C the
     * remainder of a negative number is negative. See handout "Task 1". */
    int me, l, r;
    neighbours(comm, &me, &l, &r);
    NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, r, comm, stream));
    NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, l, comm, stream));
}

void lab4_ring_ordered(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    /* TODO(Task 2): the same exchange with a send and a receive that are
     * each outside any group, in an order chosen per rank so that no cycle
     * of waits can form. Contract: correct for every n, odd n included,
     * with one send and one receive per call on every rank (the kit counts
     * them). At n == 1 a rank is its own neighbour.
     * See handout "Breaking the cycle by ordering" and "Task 2". */
    int me, l, r;
    neighbours(comm, &me, &l, &r);
    int alone = (l == me);
    if (alone) NCCL_CHECK(ncclGroupStart());
    if (alone || me != 0) {
        NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, r, comm, stream));
        NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, l, comm, stream));
    } else {
        /* rank 0 receives first: breaks the cycle */
        NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, l, comm, stream));
        NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, r, comm, stream));
    }
    if (alone) NCCL_CHECK(ncclGroupEnd());
}

void lab4_ring_grouped(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    /* TODO(Task 3): the same exchange, but NCCL gets the send and the
     * receive as one fused operation, so they progress at the same time.
     * Contract: correct for every n, the same calls on every rank, no
     * special case.
     * Trap: an opened fusion that is never closed launches nothing.
     * See handout "Fusing calls" and "Task 3". */
    int me, l, r;
    neighbours(comm, &me, &l, &r);
    NCCL_CHECK(ncclGroupStart());
    NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, r, comm, stream));
    NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, l, comm, stream));
    NCCL_CHECK(ncclGroupEnd());
}
