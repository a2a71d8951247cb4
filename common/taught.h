/* What the harness borrows from the labs.
 *
 * Where the kit needs what a lab teaches — lab 1's GPU choice and
 * communicator for every later lab, lab 2's all-reduce as the baseline labs
 * 5 and 8 race against, lab 7's CSV row for lab 8, the steps a `--task` run
 * does not test — it does not write that code a second time here. It calls
 * the lab's own function, renamed ncclab_taught_<function> when the library
 * is built (the Makefile's "functions the harness borrows"):
 *   - in the instructor's tree, its grader and Gradescope's copy of the kit,
 *     from the reference solutions, so that every lab is graded on its own;
 *   - in a student kit, from the student's own files in labs/: the bootstrap
 *     you write in lab 1 starts every later lab, the all-reduce of lab 2 is
 *     what lab 8 races.
 * A lab file that does not compile gives stand-ins that stop the run with a
 * message saying which file to fix (common/taught_missing.c). */
#ifndef NCCLAB_TAUGHT_H
#define NCCLAB_TAUGHT_H

#include <cuda_runtime.h>
#include <nccl.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lab1_launch; /* labs/lab1_bootstrap/lab1.h */
struct lab7_row;    /* labs/lab7_sweep/lab7.h */

/* Lab 1: the launcher's view, the GPU, the communicator, a one-float sum.
 * Lab 1's own runs of one task do not borrow them: the kit picks the GPU
 * and makes the communicator itself there (ncclab_kit_gpu,
 * ncclab_kit_world_comm), so that a bug in one task of lab 1 costs that
 * task in the kit as in the course's grader. */
int ncclab_taught_lab1_read_launch(struct lab1_launch *out);
int ncclab_taught_lab1_choose_gpu(int local_rank);
ncclComm_t ncclab_taught_lab1_comm_init_mpi(int rank, int nranks);
ncclComm_t ncclab_taught_lab1_comm_init_tcp(int rank, int nranks);
void ncclab_taught_lab1_allreduce_rank(ncclComm_t comm, cudaStream_t stream, const float *d_value,
                                       float *d_sum);

/* Lab 2: the sum all-reduce of count floats. */
void ncclab_taught_lab2_allreduce(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                                  float *recvbuf, size_t count);

/* Lab 4: the ring exchange in one fused operation. */
void ncclab_taught_lab4_ring_grouped(ncclComm_t comm, cudaStream_t stream, const float *sendbuf,
                                     float *recvbuf, size_t count);

/* Lab 6 borrows nothing: its runs of one task make the groups another way
 * (ncclCommInitRank from the placement), so that a student's split cannot
 * fail Task 3 or 5 in the kit where the instructor's grader would not. */

/* Lab 7: one row of the sweep's CSV. */
void ncclab_taught_lab7_write_csv_row(FILE *f, const struct lab7_row *row);

/* For the stand-ins of a lab file that does not compile: stops the run
 * saying which function was needed and which file to fix. */
__attribute__((noreturn)) void ncclab_taught_missing(const char *function, const char *file);

#ifdef __cplusplus
}
#endif
#endif
