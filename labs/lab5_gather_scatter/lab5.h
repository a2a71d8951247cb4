/* Lab 5 — all-gather and reduce-scatter. The functions you write, in
 * gather_scatter.c. Handout: handouts/lab5.md.
 *
 * Every function only enqueues work on `stream` and returns at once; the
 * driver times them (warm-up, CUDA events) and checks the results. `count`
 * is N, the number of floats each rank contributes (all-gather) or keeps
 * (reduce-scatter). */
#ifndef LAB5_H
#define LAB5_H

#include <cuda_runtime.h>
#include <nccl.h>
#include <stddef.h>

/* Task 1: all-gather. sendbuf holds `count` floats; afterwards recvbuf
 * (nranks * count floats) holds rank i's sendbuf in row i,
 * recvbuf[i*count .. (i+1)*count), on every rank. */
void lab5_allgather(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                    size_t count);

/* Task 2: sum reduce-scatter. sendbuf holds nranks * count floats;
 * afterwards recvbuf (`count` floats) on rank r holds the sum over all ranks
 * of their sendbuf[r*count .. (r+1)*count). */
void lab5_reduce_scatter(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                         size_t count);

/* Task 3: a sum all-reduce of nranks * count floats built from one
 * reduce-scatter followed by one all-gather (no ncclAllReduce). sendbuf and
 * recvbuf both hold nranks * count floats; afterwards recvbuf holds the
 * element-wise sum of every rank's sendbuf, as ncclAllReduce would leave it. */
void lab5_allreduce_composed(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                             float *recvbuf, size_t count);

#endif
