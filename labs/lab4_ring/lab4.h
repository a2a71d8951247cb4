/* Lab 4 — ring send/recv. The functions you write, in ring.c.
 * Handout: handouts/lab4.md.
 *
 * In every function each rank sends `count` floats from sendbuf to rank
 * (rank + 1) % n and receives `count` floats from rank (rank - 1 + n) % n
 * into recvbuf. The functions only enqueue work on `stream`; the driver
 * (main.c) synchronises, times and checks. Your rank and n come from the
 * communicator: ncclCommUserRank(comm, &rank), ncclCommCount(comm, &n). */
#ifndef LAB4_H
#define LAB4_H

#include <cuda_runtime.h>
#include <nccl.h>
#include <stddef.h>

/* Task 1 (run with --naive): every rank calls ncclSend first, then
 * ncclRecv, each on its own (no group). Meant to hang: see the handout. */
void lab4_ring_naive(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                     size_t count);

/* Task 2 (Part A): one ncclSend and one ncclRecv, each outside any group,
 * in an order chosen per rank so that no cycle of waits forms, for any n,
 * odd n included. At n == 1 the rank is its own neighbour: NCCL pairs a
 * send to self with its receive only inside one group, the one group Part A
 * may use (handout, "Breaking the cycle by ordering"). */
void lab4_ring_ordered(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count);

/* Task 3 (Part B): the same exchange with both calls between
 * ncclGroupStart() and ncclGroupEnd(). */
void lab4_ring_grouped(ncclComm_t comm, cudaStream_t stream, const float *sendbuf, float *recvbuf,
                       size_t count);

#endif
