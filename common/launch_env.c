#include "launch_env.h"

#include <stdlib.h>

const char *const ncclab_rank_vars[] = {"OMPI_COMM_WORLD_RANK", "RANK", "SLURM_PROCID", "PMIX_RANK",
                                        NULL};

const char *ncclab_env_first(const char *const *names, const char **which)
{
    for (int i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) {
            if (which) *which = names[i];
            return v;
        }
    }
    return NULL;
}

int ncclab_env_rank_hint(void)
{
    const char *v = ncclab_env_first(ncclab_rank_vars, NULL);
    if (!v) return -1;
    char *end;
    long r = strtol(v, &end, 10);
    return (end != v && !*end && r >= 0 && r < (1L << 24)) ? (int)r : -1;
}
