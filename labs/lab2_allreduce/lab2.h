/* Lab 2 — timing all-reduce. The functions you write, in allreduce.c.
 * Handout: handouts/lab2.md. */
#ifndef LAB2_H
#define LAB2_H

#include <cuda_runtime.h>
#include <nccl.h>
#include <stddef.h>

/* Task 1: enqueue one sum all-reduce of `count` floats from sendbuf into
 * recvbuf on `stream`. Returns without waiting for it. */
void lab2_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                    size_t count);

/* Task 2: time the all-reduce: `warmup` untimed calls, then `iters` timed
 * calls between two CUDA events. Return the mean time of one all-reduce in
 * microseconds. */
double lab2_time_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                           float *recvbuf, size_t count, int warmup, int iters);

/* Task 3: start the all-reduce on comm_stream, then — while it is in
 * flight — run ncclab_busy_work(work, work_count, work_rounds) on
 * compute_stream; return once both have finished. */
void lab2_allreduce_overlapped(ncclComm_t comm, cudaStream_t comm_stream,
                               cudaStream_t compute_stream, const float *sendbuf, float *recvbuf,
                               size_t count, float *work, size_t work_count, int work_rounds);

#endif
