/* Lab 3 — reduce + broadcast SGD. The functions you write, in sgd.c.
 * Handout: handouts/lab3.md.
 *
 * Every function only enqueues work on `stream` and returns at once; the
 * driver (main.c) times them with CUDA events and checks the parameters.
 * Your rank and the number of ranks come from the communicator:
 * ncclCommUserRank(comm, &rank) and ncclCommCount(comm, &nranks). */
#ifndef LAB3_H
#define LAB3_H

#include <cuda_runtime.h>
#include <nccl.h>
#include <stddef.h>

/* Task 1: sum the `count` floats of `grads` over all ranks into `grad_sum`
 * on rank `root` (ncclReduce). grad_sum is meaningful on the root only. */
void lab3_reduce_gradients(ncclComm_t comm, cudaStream_t stream, const float *grads,
                           float *grad_sum, size_t count, int root);

/* Task 2: on rank `root` only, apply one SGD step with the averaged
 * gradient, params[i] -= lr * grad_sum[i] / nranks (ncclab_sgd_step).
 * Every other rank does nothing. */
void lab3_apply_step_on_root(ncclComm_t comm, cudaStream_t stream, float *params,
                             const float *grad_sum, size_t count, float lr, int root);

/* Task 3: copy the root's `params` to every rank, in place (ncclBroadcast). */
void lab3_broadcast_params(ncclComm_t comm, cudaStream_t stream, float *params, size_t count,
                           int root);

/* Task 4: the same update with one collective: sum `grads` into `grad_sum`
 * on every rank (ncclAllReduce), then every rank applies the averaged step
 * to its own `params`. */
void lab3_allreduce_update(ncclComm_t comm, cudaStream_t stream, float *params, const float *grads,
                           float *grad_sum, size_t count, float lr);

#endif
