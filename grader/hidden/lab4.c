/* Lab 4, hidden runs: each part on another odd ring at an odd size. */
#include "../grader.h"

#define K 1024

static const struct variation v[] = {
    /* id               ranks  min      max      step iters warmup root rpn extra flags */
    {"hidden-ordered3", 3, 2000004, 2000004, 2, 2, 1, -1, 0, "--task ordered", 0},
    {"hidden-grouped5", 5, 1000004, 1000004, 2, 2, 1, -1, 0, "--task grouped", 0},
};

const struct hidden_variations lab4_hidden = {v, sizeof v / sizeof *v};
