#include "groups.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "errors.h"

void ncclab_placement_gather(const struct ncclab_world *w, struct ncclab_placement *pl)
{
    pl->n = w->nranks;
    pl->node = calloc((size_t)w->nranks, sizeof(int));
    pl->local_rank = calloc((size_t)w->nranks, sizeof(int));
    if (!pl->node || !pl->local_rank) ncclab_die(1, "out of memory");
    MPI_CHECK(MPI_Allgather(&w->node, 1, MPI_INT, pl->node, 1, MPI_INT, MPI_COMM_WORLD));
    MPI_CHECK(
        MPI_Allgather(&w->local_rank, 1, MPI_INT, pl->local_rank, 1, MPI_INT, MPI_COMM_WORLD));
}

void ncclab_placement_free(struct ncclab_placement *pl)
{
    free(pl->node);
    free(pl->local_rank);
    pl->node = pl->local_rank = NULL;
}

void ncclab_report_split(struct ncclab_report *r, const char *name, ncclComm_t comm,
                         const struct ncclab_expected_group *e)
{
    int size = 0, grank = -1;
    if (comm) {
        NCCL_CHECK(ncclCommCount(comm, &size));
        NCCL_CHECK(ncclCommUserRank(comm, &grank));
    }
    int wrong = size != e->size || grank != e->group_rank;
    struct ncclab_summary s = {.count = 1,
                               .mismatches = (size_t)wrong,
                               .first_bad = wrong ? 0 : -1,
                               .min = size,
                               .max = size,
                               .expected = e->size};
    ncclab_report_check(r, name, &s);
    struct ncclab_record *rec = &r->recs[r->nrecs - 1];
    ncclab_record_int(rec, "group_rank", grank);
    ncclab_record_int(rec, "expected_group_rank", e->group_rank);
    ncclab_record_int(rec, "null_comm", comm == NULL);
}

double ncclab_group_case(struct ncclab_lab *lab, const struct ncclab_case *base,
                         enum ncclab_pattern p, ncclComm_t comm,
                         const struct ncclab_expected_group *e, const char *what,
                         struct ncclab_bufs *b, size_t count)
{
    struct ncclab_case c = *base;
    char check[32];
    snprintf(check, sizeof check, "%s_sum", ncclab_pattern_name(p));
    c.check = check;
    c.what = what;
    c.group = ncclab_pattern_name(p);
    c.nranks = e->size;
    if (comm) NCCL_CHECK(ncclCommCount(comm, &c.nranks)); /* the group it really runs in */
    c.absent = comm == NULL;
    b->comm = comm;
    b->expected = e->rank_sum;
    return ncclab_lab_case(lab, &c, b, count);
}

void ncclab_destroy_groups(ncclComm_t *comm, int n, ncclComm_t world)
{
    for (int p = 1; p < n; p++) {
        int seen = comm[p] == NULL || comm[p] == world;
        for (int q = 1; q < p && !seen; q++) seen = comm[q] == comm[p];
        if (seen) continue;
        NCCL_CHECK(ncclCommFinalize(comm[p]));
        NCCL_CHECK(ncclCommDestroy(comm[p]));
    }
}

#define NCCLAB_MAX_GROUP_PRINT 4096 /* the host backend's rank limit */

void ncclab_print_split_groups(const char *pattern, const int *color, const int *key,
                               const int *made, int n)
{
    printf("# %-10s groups:", pattern);
    int ngroups = 0, none = 0;
    for (int r = 0; r < n; r++) {
        if (!made[r]) none++;
        if (!made[r] || color[r] == NCCL_SPLIT_NOCOLOR) continue;
        int first = 1; /* r opens its group when no lower rank has its color */
        for (int q = 0; q < r && first; q++) first = !(made[q] && color[q] == color[r]);
        if (!first) continue;
        printf(" [");
        /* The members in the order NCCL ranks them: by key, then world rank
         * (insertion into members[], n is small). */
        int members[NCCLAB_MAX_GROUP_PRINT], m = 0;
        for (int q = r; q < n && m < NCCLAB_MAX_GROUP_PRINT; q++) {
            if (!made[q] || color[q] != color[r]) continue;
            int at = m++;
            while (at > 0 && key[members[at - 1]] > key[q]) {
                members[at] = members[at - 1];
                at--;
            }
            members[at] = q;
        }
        for (int k = 0; k < m; k++) printf(k ? " %d" : "%d", members[k]);
        printf("]");
        ngroups++;
    }
    if (none == n)
        printf(" none: no ncclCommSplit call\n");
    else
        printf("  (%d group%s%s)\n", ngroups, ngroups == 1 ? "" : "s",
               none ? ", some ranks made no ncclCommSplit call" : "");
}
