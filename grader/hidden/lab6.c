/* Lab 6, hidden runs: virtual nodes of 4 (an uneven last node), the splits
 * on nodes of 1, and the hierarchical all-reduce on 2 nodes of 2 with an odd
 * count, and on a node of 4 with a last node of 1. */
#include "../grader.h"

#define K 1024

static const struct variation v[] = {
    /* id               ranks  min      max      step iters warmup root rpn extra flags */
    {"hidden-rpn4", 5, 64 * K, 64 * K, 2, 2, 1, -1, 4, NULL, 0},
    {"hidden-splits1", 3, 4 * K, 4 * K, 2, 1, 1, -1, 1, "--task splits", 0},
    {"hidden-hier-odd", 4, 800012, 800012, 2, 2, 1, -1, 2, "--task hier", 0},
    {"hidden-hier-uneven4", 5, 4 * K + 4, 4 * K + 4, 2, 2, 1, -1, 4, "--task hier", 0},
};

const struct hidden_variations lab6_hidden = {v, sizeof v / sizeof *v};
