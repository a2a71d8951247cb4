/* Lab 7 — the size sweep: your code. Handout: handouts/lab7.md.
 * Declarations and the meaning of each function: lab7.h. */
#include "check.h"
#include "lab7.h"

void lab7_split_groups(ncclComm_t world, int rank, int node, int local_rank, ncclComm_t *node_local,
                       ncclComm_t *cross_node)
{
    *node_local = NULL;
    *cross_node = NULL;
    /* TODO(Task 1): two ncclCommSplit calls, as in lab 6 — which color do
     * the members of each group share, and which key keeps them in world
     * rank order? Check each call with NCCL_CHECK. See handout "Task 1". */
}

double lab7_time_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                           float *recvbuf, size_t count, int warmup, int iters)
{
    double avg_us = 0.0;
    /* TODO(Task 2): the timing you wrote in lab 2, on any communicator:
     *   - warm-up loop of ncclAllReduce (ncclFloat, ncclSum), untimed
     *   - cudaEventRecord(start, stream); timed loop; cudaEventRecord(stop, stream)
     *   - wait for `stop` BEFORE reading cudaEventElapsedTime (milliseconds)
     *   - return microseconds per all-reduce; destroy the events
     * See handout "Task 2". */
    return avg_us;
}

void lab7_write_csv_row(FILE *f, const struct lab7_row *row)
{
    /* TODO(Task 3): one fprintf of the 14 columns of LAB7_CSV_HEADER.
     * algbw = bytes / time; busbw = algbw * 2(ranks-1)/ranks; mind the
     * units (bytes per microsecond is not GB/s). A skipped row has empty
     * time and bandwidths and status skipped_memory. See handout "Task 3". */
}
