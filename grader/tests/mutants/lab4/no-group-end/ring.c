/* MUTANT no-group-end: Part B opens a group and never closes it: nothing
 * in it is launched.
 * Derived from the reference solution; graded by grader/tests/run-mutants.sh. */
/* Lab 4 — ring send/recv: your code. Handout: handouts/lab4.md.
 * Declarations and the meaning of each function: lab4.h. */
#include "errors.h"
#include "lab4.h"

void lab4_ring_naive(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                     size_t count)
{
    /* TODO(Task 1): find rank and n (ncclCommUserRank, ncclCommCount) and
     * the two neighbours; then, on every rank and with no group,
     *     ncclSend(sendbuf, count, ncclFloat, next, comm, stream);
     *     ncclRecv(recvbuf, count, ncclFloat, prev, comm, stream);
     * each wrapped in NCCL_CHECK. Run it with --naive and watch it hang
     * until the watchdog stops it. See handout "Task 1". */
    int rank = 0, n = 1;
    NCCL_CHECK(ncclCommUserRank(comm, &rank));
    NCCL_CHECK(ncclCommCount(comm, &n));
    const int next = (rank + 1) % n, prev = (rank - 1 + n) % n;
    NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, next, comm, stream));
    NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, prev, comm, stream));
}

void lab4_ring_ordered(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    /* TODO(Task 2): the same two calls, still with no group, but even
     * ranks send first and odd ranks receive first. Think about odd n
     * (ranks n-1 and 0 are both even) and n == 1 (a rank sending to itself
     * cannot wait for a receive it has not posted yet). See handout
     * "Task 2". */
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
}

void lab4_ring_grouped(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count)
{
    /* TODO(Task 3): ncclGroupStart(), then the send and the receive (in
     * either order), then ncclGroupEnd(); every call in NCCL_CHECK. No
     * special case is needed for odd n or n == 1. See handout "Task 3". */
    int rank = 0, n = 1;
    NCCL_CHECK(ncclCommUserRank(comm, &rank));
    NCCL_CHECK(ncclCommCount(comm, &n));
    NCCL_CHECK(ncclGroupStart());
    NCCL_CHECK(ncclSend(sendbuf, count, ncclFloat, (rank + 1) % n, comm, stream));
    NCCL_CHECK(ncclRecv(recvbuf, count, ncclFloat, (rank - 1 + n) % n, comm, stream));
}
