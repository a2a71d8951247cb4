/* Lab 6 — process groups: your code. Handout: handouts/lab6.md.
 * Declarations and the meaning of each function: lab6.h. */
#include "errors.h"
#include "lab6.h"

ncclComm_t lab6_split_node_local(ncclComm_t world, int rank, int node)
{
    ncclComm_t group = NULL;
    /* TODO(Task 1): return a new communicator holding exactly the ranks of
     * this rank's node, in world-rank order (contract in lab6.h). Every rank
     * of `world` takes part. Which value do exactly those ranks share, and
     * which value orders them?
     * See handout "Why a split needs a color and a key" and "Task 1". */
    return group;
}

ncclComm_t lab6_split_cross_node(ncclComm_t world, int rank, int local_rank)
{
    ncclComm_t group = NULL;
    /* TODO(Task 2): return a communicator of the ranks that have this rank's
     * local rank, one per node, in world-rank order. Trap: it must hold for
     * any placement and node count, uneven ones included, not only for the
     * layouts you try. See handout "Task 2". */
    return group;
}

void lab6_allreduce_in_group(ncclComm_t group, cudaStream_t stream, const float *sendbuf,
                             float *recvbuf, size_t count)
{
    /* TODO(Task 3): enqueue a sum all-reduce of `count` floats among the
     * members of `group` only, and return without waiting.
     * See handout "Task 3". */
}

ncclComm_t lab6_split_leaders(ncclComm_t world, int rank, int local_rank)
{
    ncclComm_t group = NULL;
    /* TODO(Task 4): the node leaders (local rank 0) get a communicator of
     * all leaders in world-rank order; every other rank gets NULL. Trap:
     * the ranks that get nothing still take part in the call, and must say
     * they want no group in the way NCCL documents. See handout "Task 4". */
    return group;
}

void lab6_allreduce_hierarchical(ncclComm_t world, ncclComm_t node_local, ncclComm_t cross_node,
                                 cudaStream_t stream, const float *sendbuf, float *recvbuf,
                                 size_t count)
{
    /* TODO(Task 5): enqueue a sum all-reduce of `count` floats over every
     * rank of `world`, built from your node-local and cross-node groups so
     * that only part of the data crosses between nodes: inside the node,
     * then across nodes, then inside the node again. Traps: `count` need not
     * divide by the node's size, and the last node may hold fewer ranks than
     * the others: then some cross-node groups miss a node. Work out when
     * that happens from the group sizes, and take a path that is still
     * right (the handout's "Uneven nodes" says which one we chose).
     * See handout "The hierarchical all-reduce" and "Task 5". */
}
