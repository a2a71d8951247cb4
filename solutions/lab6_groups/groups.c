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
    // >>> solution
    NCCL_CHECK(ncclCommSplit(world, node, rank, &group, NULL));
    // <<< solution
    return group;
}

ncclComm_t lab6_split_cross_node(ncclComm_t world, int rank, int local_rank)
{
    ncclComm_t group = NULL;
    /* TODO(Task 2): return a communicator of the ranks that have this rank's
     * local rank, one per node, in world-rank order. Trap: it must hold for
     * any placement and node count, uneven ones included, not only for the
     * layouts you try. See handout "Task 2". */
    // >>> solution
    NCCL_CHECK(ncclCommSplit(world, local_rank, rank, &group, NULL));
    // <<< solution
    return group;
}

void lab6_allreduce_in_group(ncclComm_t group, cudaStream_t stream, const float *sendbuf,
                             float *recvbuf, size_t count)
{
    /* TODO(Task 3): enqueue a sum all-reduce of `count` floats among the
     * members of `group` only, and return without waiting.
     * See handout "Task 3". */
    // >>> solution
    NCCL_CHECK(ncclAllReduce(sendbuf, recvbuf, count, ncclFloat, ncclSum, group, stream));
    // <<< solution
}

ncclComm_t lab6_split_leaders(ncclComm_t world, int rank, int local_rank)
{
    ncclComm_t group = NULL;
    /* TODO(Task 4): the node leaders (local rank 0) get a communicator of
     * all leaders in world-rank order; every other rank gets NULL. Trap:
     * the ranks that get nothing still take part in the call, and must say
     * they want no group in the way NCCL documents. See handout "Task 4". */
    // >>> solution
    int color = local_rank == 0 ? 0 : NCCL_SPLIT_NOCOLOR;
    NCCL_CHECK(ncclCommSplit(world, color, rank, &group, NULL));
    // <<< solution
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
    // >>> solution
    int n = 0, k = 0, nodes = 0, local = 0;
    NCCL_CHECK(ncclCommCount(world, &n));
    NCCL_CHECK(ncclCommCount(node_local, &k));
    NCCL_CHECK(ncclCommCount(cross_node, &nodes));
    NCCL_CHECK(ncclCommUserRank(node_local, &local));
    if (k * nodes != n) {
        /* Nodes of unequal size: local rank 0's cross-node group is the only
         * one with a rank on every node. Reduce to it, all-reduce among the
         * node leaders, broadcast back. */
        NCCL_CHECK(ncclReduce(sendbuf, recvbuf, count, ncclFloat, ncclSum, 0, node_local, stream));
        if (local == 0)
            NCCL_CHECK(
                ncclAllReduce(recvbuf, recvbuf, count, ncclFloat, ncclSum, cross_node, stream));
        NCCL_CHECK(ncclBroadcast(recvbuf, recvbuf, count, ncclFloat, 0, node_local, stream));
        return;
    }
    /* Equal nodes of k ranks: this rank owns piece `local` of k. */
    const size_t piece = count / (size_t)k, whole = piece * (size_t)k;
    float *mine = recvbuf + (size_t)local * piece;
    if (piece > 0) {
        NCCL_CHECK(ncclReduceScatter(sendbuf, mine, piece, ncclFloat, ncclSum, node_local, stream));
        NCCL_CHECK(ncclAllReduce(mine, mine, piece, ncclFloat, ncclSum, cross_node, stream));
        NCCL_CHECK(ncclAllGather(mine, recvbuf, piece, ncclFloat, node_local, stream));
    }
    /* The last count % k floats: fewer than k, over the world at once. */
    if (whole < count)
        NCCL_CHECK(ncclAllReduce(sendbuf + whole, recvbuf + whole, count - whole, ncclFloat,
                                 ncclSum, world, stream));
    // <<< solution
}
