/* Lab 5 — all-gather and reduce-scatter: your code. Handout: handouts/lab5.md.
 * Declarations and the meaning of each function: lab5.h. */
#include "errors.h"
#include "lab5.h"

void lab5_allgather(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                    size_t count)
{
    /* TODO(Task 1): after `stream` has run, recvbuf on every rank holds
     * every rank's `count` floats, rank i's in row i (contract in lab5.h).
     * Trap: which count the call takes — the buffers' sizes are not passed,
     * so a wrong count reads or writes out of bounds. See handout "Task 1". */
}

void lab5_reduce_scatter(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                         size_t count)
{
    /* TODO(Task 2): after `stream` has run, recvbuf on rank r holds the
     * element-wise sum over all ranks of row r of their sendbuf (`count`
     * floats per row; contract in lab5.h). Odd counts must work.
     * See handout "Task 2". */
}

void lab5_allreduce_composed(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                             float *recvbuf, size_t count)
{
    /* TODO(Task 3): the result of a sum all-reduce of nranks * count floats,
     * built from one call of your Task 2 and one of your Task 1 (no
     * ncclAllReduce).
     * Traps: NCCL allows a send and a receive buffer to overlap only in its
     * documented in-place layout, so think about where each rank's summed
     * row must land; do not wait on the host between the two steps.
     * See handout "All-reduce = reduce-scatter + all-gather" and "Task 3". */
}
