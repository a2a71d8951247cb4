/* Lab 5, hidden runs: 5 ranks at an odd per-rank size, and the composed
 * all-reduce alone on 4 ranks at another odd size. */
#include "../grader.h"

static const struct variation v[] = {
    /* id                  ranks  min      max      step iters warmup root rpn extra flags */
    {"hidden-odd5", 5, 1000004, 1000004, 2, 2, 1, -1, 0, NULL, 0},
    {"hidden-composed4", 4, 400004, 400004, 2, 2, 1, -1, 0, "--task composed", 0},
};

const struct hidden_variations lab5_hidden = {v, sizeof v / sizeof *v};
