/* Lab 3, hidden runs: the whole update with root 3 of 4 at an odd size, and
 * the broadcast alone from root 1 at another odd size. */
#include "../grader.h"

#define K 1024

static const struct variation v[] = {
    /* id              ranks  min      max      step iters warmup root rpn extra flags */
    {"hidden-root3", 4, 1000004, 1000004, 2, 2, 1, 3, 0, "--lr 0.3", 0},
    {"hidden-broadcast1", 3, 4000012, 4000012, 2, 2, 1, 1, 0, "--task broadcast --lr 0.7", 0},
};

const struct hidden_variations lab3_hidden = {v, sizeof v / sizeof *v};
