/* Lab 6 — process groups. The functions you write, in groups.c.
 * Handout: handouts/lab6.md.
 *
 * Each split function is collective: EVERY rank of `world` must call it,
 * also the ranks that end up in no group. `rank` is the world rank, `node`
 * the node index and `local_rank` the rank's index on its node (with
 * --ranks-per-node K these describe virtual nodes). */
#ifndef LAB6_H
#define LAB6_H

#include <cuda_runtime.h>
#include <nccl.h>
#include <stddef.h>

/* Task 1: a communicator of the ranks on this rank's node, ordered by world
 * rank. */
ncclComm_t lab6_split_node_local(ncclComm_t world, int rank, int node);

/* Task 2: a communicator of the ranks with this rank's local rank, one per
 * node, ordered by world rank. */
ncclComm_t lab6_split_cross_node(ncclComm_t world, int rank, int local_rank);

/* Task 3: enqueue a sum all-reduce of `count` floats inside `group` on
 * `stream` and return without waiting. */
void lab6_allreduce_in_group(ncclComm_t group, cudaStream_t stream, const float *sendbuf,
                             float *recvbuf, size_t count);

/* Task 4: a communicator of the node leaders (local rank 0), ordered by world
 * rank. Every other rank takes part in the split but gets no communicator:
 * return NULL there. */
ncclComm_t lab6_split_leaders(ncclComm_t world, int rank, int local_rank);

/* Task 5: enqueue a sum all-reduce of `count` floats over every rank of
 * `world` on `stream`, built from this rank's groups of Tasks 1 and 2
 * (`node_local`, `cross_node`: never NULL here) so that only part of the
 * data crosses between nodes, and return without waiting. Right for any
 * placement: nodes of unequal size and any count. */
void lab6_allreduce_hierarchical(ncclComm_t world, ncclComm_t node_local, ncclComm_t cross_node,
                                 cudaStream_t stream, const float *sendbuf, float *recvbuf,
                                 size_t count);

#endif
