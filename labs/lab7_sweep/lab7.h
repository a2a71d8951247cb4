/* Lab 7 — the size sweep. The functions you write, in sweep.c.
 * Handout: handouts/lab7.md. */
#ifndef LAB7_H
#define LAB7_H

#include <cuda_runtime.h>
#include <nccl.h>
#include <stddef.h>
#include <stdio.h>

/* Task 1: split `world` into the two kinds of group lab 6 taught, in one
 * call: *node_local gets the ranks on this rank's node, *cross_node the ranks
 * with this rank's local rank (one per node), both ordered by world rank.
 * Collective: every rank of `world` calls it. */
void lab7_split_groups(ncclComm_t world, int rank, int node, int local_rank, ncclComm_t *node_local,
                       ncclComm_t *cross_node);

/* Task 2: time a sum all-reduce of `count` floats from sendbuf into recvbuf
 * on `comm`: `warmup` untimed calls, then `iters` calls between two CUDA
 * events on `stream`. Return the mean time of one all-reduce in
 * microseconds. */
double lab7_time_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                           float *recvbuf, size_t count, int warmup, int iters);

/* One measurement of the sweep, as the driver hands it to Task 3. Strings
 * never hold a comma, a quote or a newline. */
struct lab7_row {
    const char *pattern;      /* "global", "node_local" or "cross_node" */
    size_t bytes;             /* message size, as nccl-tests counts it */
    size_t elements;          /* floats */
    double time_us;           /* mean time of one all-reduce, the pattern's slowest rank's */
    int ranks;                /* ranks in the group that ran it */
    int world_ranks;          /* ranks in the whole job */
    int nodes;                /* nodes of the job (virtual ones with --ranks-per-node) */
    int hosts;                /* physical machines the ranks ran on */
    const char *backend;      /* "cuda" or "host" */
    const char *gpu;          /* e.g. "NVIDIA H200" */
    const char *nccl_version; /* e.g. "2.21.5" */
    int skipped;              /* 1: the size did not fit in memory, nothing was measured */
};

/* The CSV's first line: the columns of every row, in this order. The driver
 * writes it, then your rows, then one comment line of its own ("# lab7-sweep
 * ...": which sweep.c made the sweep, and how; handouts/lab7.md, "Hand-in"). */
#define LAB7_CSV_HEADER                                                                            \
    "pattern,bytes,elements,time_us,algbw_gbps,busbw_gbps,ranks,world_ranks,nodes,hosts,backend,"  \
    "gpu,nccl_version,status"

/* Task 3: write `row` to `f` as one CSV line ending in '\n', columns as in
 * LAB7_CSV_HEADER. algbw_gbps and busbw_gbps are yours to compute from
 * bytes, time_us and ranks (GB/s = 10^9 bytes/s; all-reduce busbw factor
 * 2(ranks-1)/ranks). Numbers with "%.6g" (time_us may use "%.3f"). status is
 * "ok", or "skipped_memory" for a skipped row, whose time_us, algbw_gbps and
 * busbw_gbps are left empty. */
void lab7_write_csv_row(FILE *f, const struct lab7_row *row);

#endif
