/* MUTANT composed-allreduce: Task 3 calls ncclAllReduce instead of composing a
 * reduce-scatter and an all-gather: right data, wrong calls.
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
    NCCL_CHECK(ncclReduceScatter(sendbuf, recvbuf, count, ncclFloat, ncclSum, comm, stream));
}

void lab5_allreduce_composed(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                             float *recvbuf, size_t count)
{
    int n = 1;
    NCCL_CHECK(ncclCommCount(comm, &n));
    NCCL_CHECK(ncclAllReduce(sendbuf, recvbuf, count * (size_t)n, ncclFloat, ncclSum, comm,
                             stream));
}
