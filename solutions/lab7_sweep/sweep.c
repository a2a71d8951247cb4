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
    // >>> solution
    NCCL_CHECK(ncclCommSplit(world, node, rank, node_local, NULL));
    NCCL_CHECK(ncclCommSplit(world, local_rank, rank, cross_node, NULL));
    // <<< solution
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
    // >>> solution
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < warmup; i++)
        NCCL_CHECK(ncclAllReduce(sendbuf, recvbuf, count, ncclFloat, ncclSum, comm, stream));
    CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < iters; i++)
        NCCL_CHECK(ncclAllReduce(sendbuf, recvbuf, count, ncclFloat, ncclSum, comm, stream));
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    avg_us = (double)ms * 1000.0 / iters;
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    // <<< solution
    return avg_us;
}

void lab7_write_csv_row(FILE *f, const struct lab7_row *row)
{
    /* TODO(Task 3): write `row` as one CSV line, the 14 columns of
     * LAB7_CSV_HEADER in order (format rules in lab7.h). You compute the two
     * bandwidths, as nccl-tests defines them for an all-reduce over the
     * row's group. Traps: units (GB/s is 10^9 bytes per second, time_us is in
     * microseconds); a skipped row. See handout "Task 3". */
    // >>> solution
    if (row->skipped) {
        fprintf(f, "%s,%zu,%zu,,,,%d,%d,%d,%d,%s,%s,%s,skipped_memory\n", row->pattern, row->bytes,
                row->elements, row->ranks, row->world_ranks, row->nodes, row->hosts, row->backend,
                row->gpu, row->nccl_version);
        return;
    }
    double algbw = (double)row->bytes / (row->time_us * 1e-6) / 1e9;
    double busbw = algbw * 2.0 * (row->ranks - 1) / row->ranks;
    fprintf(f, "%s,%zu,%zu,%.3f,%.6g,%.6g,%d,%d,%d,%d,%s,%s,%s,ok\n", row->pattern, row->bytes,
            row->elements, row->time_us, algbw, busbw, row->ranks, row->world_ranks, row->nodes,
            row->hosts, row->backend, row->gpu, row->nccl_version);
    // <<< solution
}
