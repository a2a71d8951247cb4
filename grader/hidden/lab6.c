/* Lab 6, hidden runs: virtual nodes of 4 (an uneven last node), and the
 * splits on nodes of 1. */
#include "../grader.h"

#define K 1024

static const struct variation v[] = {
    /* id               ranks  min      max      step iters warmup root rpn extra flags */
    {"hidden-rpn4", 5, 64 * K, 64 * K, 2, 2, 1, -1, 4, NULL, 0},
    {"hidden-splits1", 3, 4 * K, 4 * K, 2, 1, 1, -1, 1, "--task splits", 0},
};

const struct hidden_variations lab6_hidden = {v, sizeof v / sizeof *v};
