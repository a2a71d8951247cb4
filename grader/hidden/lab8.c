/* Lab 8, hidden runs: each algorithm on a ring size and message size the
 * public runs do not use, and the whole lab with another slice count and
 * crossover, so that an algorithm tuned to 4 or 5 ranks or to the public
 * --slices still has to be right. */
#include "../grader.h"

#define K 1024

static const struct variation v[] = {
    /* id                  ranks  min      max      step iters warmup root rpn extra flags */
    {"hidden-ring3", 3, 1000012, 1000012, 2, 2, 1, -1, 0, "--task ring --csv none", 0},
    {"hidden-pipelined4", 4, 36, 2400036, 311, 2, 1, -1, 0,
     "--task pipelined --slices 6 --csv none", 0},
    {"hidden-rd2", 2, 4, 1200004, 311, 2, 1, -1, 0, "--task rd --csv none", 0},
    {"hidden-own5", 5, 44, 3 * K *K, 311, 2, 1, -1, 0, "--slices 3 --threshold 64K --csv none", 0},
};

const struct hidden_variations lab8_hidden = {v, sizeof v / sizeof *v};
