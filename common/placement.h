/* Where ranks sit (node, local rank) and the process-group patterns of labs
 * 6 and 7 that follow from it: which ranks share a group, and what each
 * rank should see of its own.
 *
 * Plain C with no CUDA, NCCL or MPI, so that the grader compiles this file
 * too: the drivers check a student's ncclCommSplit with it, the grader
 * checks the drivers' records with it. */
#ifndef NCCLAB_PLACEMENT_H
#define NCCLAB_PLACEMENT_H

#ifdef __cplusplus
extern "C" {
#endif

enum ncclab_pattern {
    NCCLAB_GLOBAL,     /* every rank */
    NCCLAB_NODE_LOCAL, /* the ranks of one node: color = node */
    NCCLAB_CROSS_NODE, /* the same local rank on every node: color = local rank */
    NCCLAB_LEADERS,    /* local rank 0 of every node; the others in no group */
};

const char *ncclab_pattern_name(enum ncclab_pattern p);

/* Where every world rank sits: node and local rank (virtual nodes applied). */
struct ncclab_placement {
    int n;
    int *node, *local_rank;
};

/* 1 when ranks a and b are in one group of pattern p. */
int ncclab_same_group(const struct ncclab_placement *pl, enum ncclab_pattern p, int a, int b);

/* What rank `me` should see of its group: size 0 means "in no group". Keys
 * are world ranks, so members are in world-rank order. */
struct ncclab_expected_group {
    int size, group_rank;
    double rank_sum;
};
struct ncclab_expected_group ncclab_expect_group(const struct ncclab_placement *pl,
                                                 enum ncclab_pattern p, int me);

#ifdef __cplusplus
}
#endif

#endif
