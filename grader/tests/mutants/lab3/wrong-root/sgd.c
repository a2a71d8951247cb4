/* MUTANT wrong-root: reduces the gradients to rank 0 whatever the root.
 * Derived from the reference solution; graded by grader/tests/run-mutants.sh. */
/* Lab 3 — reduce + broadcast SGD: your code. Handout: handouts/lab3.md.
 * Declarations and the meaning of each function: lab3.h. */
#include "errors.h"
#include "kernels.h"
#include "lab3.h"

void lab3_reduce_gradients(ncclComm_t comm, cudaStream_t stream, const float *grads,
                           float *grad_sum, size_t count, int root)
{
    /* TODO(Task 1): one ncclReduce (ncclFloat, ncclSum) of grads into
     * grad_sum with root `root`, on `stream`, checked with NCCL_CHECK.
     * Every rank makes the same call, root included. See handout "Task 1". */
    // >>> solution
    NCCL_CHECK(ncclReduce(grads, grad_sum, count, ncclFloat, ncclSum, 0 /* BUG: not root */, comm, stream));
    // <<< solution
}

void lab3_apply_step_on_root(ncclComm_t comm, cudaStream_t stream, float *params,
                             const float *grad_sum, size_t count, float lr, int root)
{
    /* TODO(Task 2): find this rank (ncclCommUserRank) and the number of
     * ranks (ncclCommCount); on the root only, call
     *     ncclab_sgd_step(params, grad_sum, count, lr, 1.0f / nranks, stream);
     * The scale 1/nranks turns the summed gradient into the average.
     * Do not synchronise: the step is ordered after the reduce because both
     * are on `stream`. See handout "Task 2". */
    // >>> solution
    int rank = 0, nranks = 1;
    NCCL_CHECK(ncclCommUserRank(comm, &rank));
    NCCL_CHECK(ncclCommCount(comm, &nranks));
    if (rank == root) ncclab_sgd_step(params, grad_sum, count, lr, 1.0f / (float)nranks, stream);
    // <<< solution
}

void lab3_broadcast_params(ncclComm_t comm, cudaStream_t stream, float *params, size_t count,
                           int root)
{
    /* TODO(Task 3): one in-place ncclBroadcast of params (send and receive
     * buffer are both `params`) from `root`, on `stream`, checked with
     * NCCL_CHECK. See handout "Task 3". */
    // >>> solution
    NCCL_CHECK(ncclBroadcast(params, params, count, ncclFloat, root, comm, stream));
    // <<< solution
}

void lab3_allreduce_update(ncclComm_t comm, cudaStream_t stream, float *params, const float *grads,
                           float *grad_sum, size_t count, float lr)
{
    /* TODO(Task 4): ncclAllReduce (ncclFloat, ncclSum) of grads into
     * grad_sum, then — on every rank — the same averaged step as in Task 2.
     * See handout "Task 4". */
    // >>> solution
    int nranks = 1;
    NCCL_CHECK(ncclCommCount(comm, &nranks));
    NCCL_CHECK(ncclAllReduce(grads, grad_sum, count, ncclFloat, ncclSum, comm, stream));
    ncclab_sgd_step(params, grad_sum, count, lr, 1.0f / (float)nranks, stream);
    // <<< solution
}
