/* Lab 7 — the size sweep: your code. Handout: handouts/lab7.md.
 * Declarations and the meaning of each function: lab7.h. */
#include "errors.h"
#include "lab7.h"

void lab7_split_groups(ncclComm_t world, int rank, int node, int local_rank, ncclComm_t *node_local,
                       ncclComm_t *cross_node)
{
    *node_local = NULL;
    *cross_node = NULL;
    /* TODO(Task 1): the node-local and the cross-node communicators of lab
     * 6, both in world-rank order (contract in lab7.h). Every rank makes the
     * same splits in the same order. See handout "Task 1". */
}

double lab7_time_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                           float *recvbuf, size_t count, int warmup, int iters)
{
    double avg_us = 0.0;
    /* TODO(Task 2): lab 2's measurement on any communicator: the mean time
     * in microseconds of one sum all-reduce of `count` floats on `comm`,
     * measured on `stream` after `warmup` untimed calls, exactly
     * warmup + iters calls in all. The same traps as in lab 2.
     * See handout "Task 2". */
    return avg_us;
}

void lab7_write_csv_row(FILE *f, const struct lab7_row *row)
{
    /* TODO(Task 3): write `row` as one CSV line, the 14 columns of
     * LAB7_CSV_HEADER in order (format rules in lab7.h). You compute the two
     * bandwidths, as nccl-tests defines them for an all-reduce over the
     * row's group. Traps: units (GB/s is 10^9 bytes per second, time_us is in
     * microseconds); a skipped row. See handout "Task 3". */
}
