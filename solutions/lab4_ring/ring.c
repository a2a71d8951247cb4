/* Lab 4 — ring send/recv: your code. Handout: handouts/lab4.md.
 * Declarations and the meaning of each function: lab4.h. */
#include "errors.h"
#include "lab4.h"

void lab4_ring_naive(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                     size_t count)
{
    /* TODO(Task 1): the ring written the obvious way: every rank first
     * sends its buffer to its right neighbour, then receives from its left
     * one, two separate calls and no group. It is meant to deadlock: run it
     * with --naive and explain the watchdog's message. Trap: in C the
     * remainder of a negative number is negative. See handout "Task 1". */
    // >>> solution
    int rank = 0, n = 1;
    NCCL_CHECK(ncclCommUserRank(comm, &rank));
    NCCL_CHECK(ncclCommCount(comm, &n));
    const int next = (rank + 1) % n, prev = (rank - 1 + n) % n;
    NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, next, comm, stream));
    NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, prev, comm, stream));
    // <<< solution
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
    // >>> solution
    int rank = 0, n = 1;
    NCCL_CHECK(ncclCommUserRank(comm, &rank));
    NCCL_CHECK(ncclCommCount(comm, &n));
    const int next = (rank + 1) % n, prev = (rank - 1 + n) % n;
    if (n == 1) {
        /* Send and receive to self only match when NCCL sees both at once. */
        NCCL_CHECK(ncclGroupStart());
        NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, next, comm, stream));
        NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, prev, comm, stream));
        NCCL_CHECK(ncclGroupEnd());
    } else if (rank % 2 == 0) {
        NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, next, comm, stream));
        NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, prev, comm, stream));
    } else {
        NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, prev, comm, stream));
        NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, next, comm, stream));
    }
    // <<< solution
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
    // >>> solution
    int rank = 0, n = 1;
    NCCL_CHECK(ncclCommUserRank(comm, &rank));
    NCCL_CHECK(ncclCommCount(comm, &n));
    NCCL_CHECK(ncclGroupStart());
    NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, (rank + 1) % n, comm, stream));
    NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, (rank - 1 + n) % n, comm, stream));
    NCCL_CHECK(ncclGroupEnd());
    // <<< solution
}
