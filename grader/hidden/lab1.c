/* Lab 1, hidden runs: plain srun (Slurm's variables alone), and the TCP
 * bootstrap on 3 ranks. */
#include "../grader.h"

static const struct variation v[] = {
    /* id                ranks bytes step iters warmup root rpn extra flags */
    {"hidden-srun", 4, 0, 0, 0, -1, -1, -1, 0, "--task launch --launcher-env srun", 0},
    {"hidden-tcp3", 3, 0, 0, 0, -1, -1, -1, 0, "--bootstrap tcp", VAR_TCP},
};

const struct hidden_variations lab1_hidden = {v, sizeof v / sizeof *v};
