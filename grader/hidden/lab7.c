/* Lab 7, hidden run: the sweep on virtual nodes of 3 (uneven). */
#include "../grader.h"

static const struct variation v[] = {
    /* id              ranks  min   max     step iters warmup root rpn extra flags */
    {"hidden-rpn3", 5, 4096, 262144, 8, 2, 1, -1, 3, "--csv none", 0},
};

const struct hidden_variations lab7_hidden = {v, sizeof v / sizeof *v};
