/* Lab 1 — rank bootstrap. The functions you write, in bootstrap.c.
 * Handout: handouts/lab1.md. The driver (main.c) calls them in order. */
#ifndef LAB1_H
#define LAB1_H

#include <cuda_runtime.h>
#include <nccl.h>

/* What the launcher told this process about the job. */
struct lab1_launch {
    int rank;             /* global rank, 0 .. nranks-1 */
    int nranks;           /* number of processes in the job */
    int local_rank;       /* index among the processes on this node */
    int node;             /* node index (Slurm only; -1 when unknown) */
    const char *launcher; /* "slurm", "openmpi", "torchrun" */
};

/* Task 1: fill *out from the launcher's environment variables.
 * Return 0, or -1 when no known launcher variables are set. */
int lab1_read_launch(struct lab1_launch *out);

/* Task 2: make this process drive GPU `local_rank`; return that device. */
int lab1_choose_gpu(int local_rank);

/* Task 3a: create the communicator, sharing the ncclUniqueId with MPI. */
ncclComm_t lab1_comm_init_mpi(int rank, int nranks);

/* Task 3b: create the communicator, sharing the ncclUniqueId over TCP
 * (MASTER_ADDR/MASTER_PORT) with ncclab_tcp_share_unique_id(). */
ncclComm_t lab1_comm_init_tcp(int rank, int nranks);

/* Task 4: sum the one float at d_value over all ranks into d_sum (both
 * device memory), on `stream`. */
void lab1_allreduce_rank(ncclComm_t comm, cudaStream_t stream, const float *d_value, float *d_sum);

#endif
