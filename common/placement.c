#include "placement.h"

const char *ncclab_pattern_name(enum ncclab_pattern p)
{
    switch (p) {
    case NCCLAB_GLOBAL: return "global";
    case NCCLAB_NODE_LOCAL: return "node_local";
    case NCCLAB_CROSS_NODE: return "cross_node";
    case NCCLAB_LEADERS: return "leaders";
    }
    return "unknown";
}

int ncclab_same_group(const struct ncclab_placement *pl, enum ncclab_pattern p, int a, int b)
{
    switch (p) {
    case NCCLAB_GLOBAL: return 1;
    case NCCLAB_NODE_LOCAL: return pl->node[a] == pl->node[b];
    case NCCLAB_CROSS_NODE: return pl->local_rank[a] == pl->local_rank[b];
    case NCCLAB_LEADERS: return pl->local_rank[a] == 0 && pl->local_rank[b] == 0;
    }
    return 0;
}

struct ncclab_expected_group ncclab_expect_group(const struct ncclab_placement *pl,
                                                 enum ncclab_pattern p, int me)
{
    struct ncclab_expected_group e = {0, -1, 0.0};
    if (p == NCCLAB_LEADERS && pl->local_rank[me] != 0) return e;
    for (int r = 0; r < pl->n; r++) {
        if (!ncclab_same_group(pl, p, me, r)) continue;
        if (r == me) e.group_rank = e.size;
        e.size++;
        e.rank_sum += r;
    }
    return e;
}
