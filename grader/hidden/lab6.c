/* Lab 6, hidden runs: virtual nodes of 4 (an uneven last node), the splits
 * on nodes of 1, and the hierarchical all-reduce on 2 nodes of 3 with a
 * count that does not divide by 3, and on nodes of 4 with a last node of 2. */
#include "../grader.h"

#define K 1024

static const struct variation v[] = {
    /* id               ranks  min      max      step iters warmup root rpn extra flags */
    {"hidden-rpn4", 5, 64 * K, 64 * K, 2, 2, 1, -1, 4, NULL, 0},
    {"hidden-splits1", 3, 4 * K, 4 * K, 2, 1, 1, -1, 1, "--task splits", 0},
    {"hidden-hier3", 6, 200008, 200008, 2, 2, 1, -1, 3, "--task hier", 0},
    {"hidden-hier-uneven4", 6, 4 * K + 4, 4 * K + 4, 2, 2, 1, -1, 4, "--task hier", 0},
};

const struct hidden_variations lab6_hidden = {v, sizeof v / sizeof *v};
