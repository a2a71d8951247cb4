/* The process-group patterns of labs 6 and 7, and what each rank should
 * see of them, computed from where every rank sits (not from the
 * communicators under test), so the drivers can check a student's
 * ncclCommSplit from the outside. */
#ifndef NCCLAB_GROUPS_H
#define NCCLAB_GROUPS_H

#include <nccl.h>

#include "bootstrap.h"
#include "lab.h"
#include "placement.h"
#include "results.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Collective over MPI_COMM_WORLD. */
void ncclab_placement_gather(const struct ncclab_world *w, struct ncclab_placement *pl);
void ncclab_placement_free(struct ncclab_placement *pl);

/* A one-element check record for a communicator: its size against the
 * expected size (0 = NULL, no group), failing also when this rank's place
 * in it is not the expected one. */
void ncclab_report_split(struct ncclab_report *r, const char *name, ncclComm_t comm,
                         const struct ncclab_expected_group *e);

/* One line for people (rank 0 prints it): the groups the n ranks' last
 * ncclCommSplit calls made (color[r], key[r] of world rank r; made[r] 0 when
 * rank r made none), each as its world ranks in the order NCCL ranks them
 * (key, then world rank), groups in order of their first member. What the
 * code under test made, not what it should make: that is the checks' job. */
void ncclab_print_split_groups(const char *pattern, const int *color, const int *key,
                               const int *made, int n);

/* Run `base` (a row of the lab's case table) in this rank's group of
 * pattern p, `comm` (NULL: this rank has none, so nothing runs and every
 * element counts as wrong): the perf record says group= and the group's
 * size, the check <pattern>_sum compares with the members' rank sum.
 * Returns this rank's time in us (NAN without a communicator). */
double ncclab_group_case(struct ncclab_lab *lab, const struct ncclab_case *base,
                         enum ncclab_pattern p, ncclComm_t comm,
                         const struct ncclab_expected_group *e, const char *what,
                         struct ncclab_bufs *b, size_t count);

/* Destroy comm[1..n) once each: not NULL, not the world's (a split may
 * hand it back), not one seen at an earlier index. */
void ncclab_destroy_groups(ncclComm_t *comm, int n, ncclComm_t world);

#ifdef __cplusplus
}
#endif
#endif
