/* Lab 3 — reduce + broadcast SGD: your code. Handout: handouts/lab3.md.
 * Declarations and the meaning of each function: lab3.h. */
#include "errors.h"
#include "kernels.h"
#include "lab3.h"

void lab3_reduce_gradients(ncclComm_t comm, cudaStream_t stream, const float *grads,
                           float *grad_sum, size_t count, int root)
{
    /* TODO(Task 1): after `stream` has run, grad_sum on rank `root` holds
     * the element-wise sum of every rank's `count` gradients; other ranks'
     * grad_sum does not matter. Trap: a collective is called by every rank,
     * not only by the one that gets the result. See handout "Task 1". */
    // >>> solution
    NCCL_CHECK(ncclReduce(grads, grad_sum, count, ncclFloat, ncclSum, root, comm, stream));
    // <<< solution
}

void lab3_apply_step_on_root(ncclComm_t comm, cudaStream_t stream, float *params,
                             const float *grad_sum, size_t count, float lr, int root)
{
    /* TODO(Task 2): on the root only, apply one SGD step with the AVERAGE
     * gradient (grad_sum holds the sum over all ranks) using the device
     * helper ncclab_sgd_step (common/kernels.h); the other ranks do nothing.
     * Your rank and the rank count come from the communicator.
     * Traps: integer division; waiting on the host here (stream order
     * already puts the step after the reduce). See handout "Task 2". */
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
    /* TODO(Task 3): after `stream` has run, every rank's `params` holds
     * what rank `root` had in its `params` (there is only one buffer: the
     * operation works in place). See handout "Task 3". */
    // >>> solution
    NCCL_CHECK(ncclBroadcast(params, params, count, ncclFloat, root, comm, stream));
    // <<< solution
}

void lab3_allreduce_update(ncclComm_t comm, cudaStream_t stream, float *params, const float *grads,
                           float *grad_sum, size_t count, float lr)
{
    /* TODO(Task 4): the same update as Tasks 1-3 with no root: every rank
     * obtains the gradient sum in grad_sum with one collective, then applies
     * the same averaged step to its own params. No reduce, no broadcast.
     * Trap: the order of the two on the stream. See handout "Task 4". */
    // >>> solution
    int nranks = 1;
    NCCL_CHECK(ncclCommCount(comm, &nranks));
    NCCL_CHECK(ncclAllReduce(grads, grad_sum, count, ncclFloat, ncclSum, comm, stream));
    ncclab_sgd_step(params, grad_sum, count, lr, 1.0f / (float)nranks, stream);
    // <<< solution
}
