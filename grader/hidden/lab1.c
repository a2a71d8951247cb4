/* Lab 1, hidden runs: plain srun (Slurm's variables alone), the TCP
 * bootstrap on 3 ranks, and nodes of 3 and 2 ranks. */
#include "../grader.h"

static const struct variation v[] = {
    /* id                ranks bytes step iters warmup root rpn extra flags */
    {"hidden-srun", 4, 0, 0, 0, -1, -1, -1, 0, "--task launch --launcher-env srun", 0},
    {"hidden-tcp3", 3, 0, 0, 0, -1, -1, -1, 0, "--bootstrap tcp", VAR_TCP},
    /* Nodes of 3 and 2 ranks: local rank != global rank, through torchrun
     * started by srun and through plain srun. */
    {"hidden-launch-nodes", 5, 0, 0, 0, -1, -1, -1, 3, "--task launch --launcher-env srun-torchrun",
     0},
    {"hidden-gpu-nodes", 5, 0, 0, 0, -1, -1, -1, 3, "--task gpu --launcher-env srun", 0},
};

const struct hidden_variations lab1_hidden = {v, sizeof v / sizeof *v};
