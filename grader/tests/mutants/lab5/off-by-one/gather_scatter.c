/* MUTANT off-by-one: the reduce-scatter receives count - 1 floats: the last
 * element of the result is never written.
 * Derived from the reference solution; graded by grader/tests/run-mutants.sh. */
/* Lab 5 — all-gather and reduce-scatter: your code. Handout: handouts/lab5.md.
 * Declarations and the meaning of each function: lab5.h. */
#include "errors.h"
#include "lab5.h"

void lab5_allgather(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                    size_t count)
{
    /* TODO(Task 1): one ncclAllGather of `count` floats per rank on
     * `stream`, checked with NCCL_CHECK. Mind which count NCCL wants: the
     * per-rank one, not the size of recvbuf. See handout "Task 1". */
    NCCL_CHECK(ncclAllGather(sendbuf, recvbuf, count, ncclFloat, comm, stream));
}

void lab5_reduce_scatter(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                         size_t count)
{
    /* TODO(Task 2): one ncclReduceScatter (ncclFloat, ncclSum) on `stream`
     * that leaves `count` floats in recvbuf, checked with NCCL_CHECK.
     * See handout "Task 2". */
    NCCL_CHECK(ncclReduceScatter(sendbuf, recvbuf, count - 1, ncclFloat, ncclSum, comm, stream));
}

void lab5_allreduce_composed(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                             float *recvbuf, size_t count)
{
    /* TODO(Task 3): all-reduce = reduce-scatter + all-gather.
     *   - find this rank's index in comm (ncclCommUserRank)
     *   - reduce-scatter sendbuf so that this rank's summed chunk lands
     *     where it belongs in recvbuf: recvbuf + rank * count
     *   - all-gather in place: that chunk is the send buffer, recvbuf the
     *     receive buffer
     * Both calls go on the same stream, so the second starts after the
     * first. No synchronisation here. See handout "Task 3". */
    int rank = 0;
    NCCL_CHECK(ncclCommUserRank(comm, &rank));
    float *mine = recvbuf + (size_t)rank * count;
    lab5_reduce_scatter(comm, stream, sendbuf, mine, count);
    lab5_allgather(comm, stream, mine, recvbuf, count);
}
