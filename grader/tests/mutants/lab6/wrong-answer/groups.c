/* Lab 6 — process groups: your code. Handout: handouts/lab6.md.
 * Declarations and the meaning of each function: lab6.h. */
#include "errors.h"
#include "lab6.h"

ncclComm_t lab6_split_node_local(ncclComm_t world, int rank, int node)
{
    ncclComm_t group = NULL;
    /* TODO(Task 1): ncclCommSplit(world, color, key, &group, NULL), checked
     * with NCCL_CHECK. Ranks with the same color end up together; the key
     * orders them inside the new communicator. See handout "Task 1". */
    // >>> solution
    NCCL_CHECK(ncclCommSplit(world, node, rank, &group, NULL));
    // <<< solution
    return group;
}

ncclComm_t lab6_split_cross_node(ncclComm_t world, int rank, int local_rank)
{
    ncclComm_t group = NULL;
    /* TODO(Task 2): the same call with another color: which value do the
     * ranks that belong together here share? See handout "Task 2". */
    // >>> solution
    NCCL_CHECK(ncclCommSplit(world, local_rank, rank, &group, NULL));
    // <<< solution
    return group;
}

void lab6_allreduce_in_group(ncclComm_t group, cudaStream_t stream, const float *sendbuf,
                             float *recvbuf, size_t count)
{
    /* TODO(Task 3): one ncclAllReduce (ncclFloat, ncclSum) on `group`,
     * checked with NCCL_CHECK. Nothing else changes from lab 2: a group is
     * just a smaller communicator. See handout "Task 3". */
    // >>> solution
    NCCL_CHECK(ncclAllReduce(sendbuf, recvbuf, count, ncclFloat, ncclSum, group, stream));
    // <<< solution
}

ncclComm_t lab6_split_leaders(ncclComm_t world, int rank, int local_rank)
{
    ncclComm_t group = NULL;
    /* TODO(Task 4): every rank calls ncclCommSplit; the leaders (local
     * rank 0) pass one shared color, the others NCCL_SPLIT_NOCOLOR, and
     * NCCL leaves their `group` NULL. See handout "Task 4". */
    // >>> solution
    int color = local_rank == 0 ? 0 : NCCL_SPLIT_NOCOLOR;
    NCCL_CHECK(ncclCommSplit(world, color, rank, &group, NULL));
    // <<< solution
    return group;
}
