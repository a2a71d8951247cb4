/* Lab 2, hidden runs: 5 ranks at another odd size, and no warm-up at all. */
#include "../grader.h"

#define K 1024
#define M (1024 * 1024)

static const struct variation v[] = {
    /* id            ranks  min      max      step iters warmup root rpn extra flags */
    {"hidden-odd5", 5, 2000004, 2000004, 2, 2, 1, -1, 0, "--task time", 0},
    {"hidden-w0", 3, 128 * K, 1 * M, 8, 6, 0, -1, 0, "--task time", 0},
};

const struct hidden_variations lab2_hidden = {v, sizeof v / sizeof *v};
