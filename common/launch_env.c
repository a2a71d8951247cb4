#include "launch_env.h"

#include <stdlib.h>

/* Every launcher's rank variable, in no particular order: which one to
 * believe when they differ is lab 1's question, and the hint below only
 * answers when they agree. */
static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "RANK", "SLURM_PROCID",
                                        NULL};

int ncclab_env_rank_hint(void)
{
    int rank = -1;
    for (int i = 0; rank_vars[i]; i++) {
        const char *v = getenv(rank_vars[i]);
        if (!v || !*v) continue;
        char *end;
        long r = strtol(v, &end, 10);
        if (end == v || *end || r < 0 || r >= (1L << 24)) return -1;
        if (rank >= 0 && r != rank) return -1; /* launchers disagree: no hint */
        rank = (int)r;
    }
    return rank;
}
