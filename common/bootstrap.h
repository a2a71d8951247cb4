/* Who am I, who else is there, and the world's communicator.
 *
 * Two ways to bootstrap, both taught in lab 1 (and done here with lab 1's
 * own functions, common/taught.h): over MPI, which the launcher (mpirun,
 * srun --mpi=pmix) starts; or with no MPI at all, the ranks learning who they
 * are from the launcher's environment and meeting at MASTER_ADDR:MASTER_PORT,
 * the way torchrun's rendezvous and init_method="tcp://" do. */
#ifndef NCCLAB_BOOTSTRAP_H
#define NCCLAB_BOOTSTRAP_H

#include <nccl.h>
#include <stddef.h>

#include "options.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ncclab_world {
    int rank; /* 0 .. nranks-1 */
    int nranks;
    int local_rank; /* index among the ranks of this (possibly virtual) node */
    int local_size; /* ranks on this node */
    int node;       /* node index, 0 .. nnodes-1 */
    int nnodes;
    /* The physical placement, which picks the GPU: with virtual nodes
     * (--ranks-per-node) several virtual nodes share one machine's GPUs. */
    int gpu_local_rank;
    int gpu_local_size;
    char host[64];
    /* The host identity the kit gave this rank (NCCL_HOSTID, which NCCL and
     * the host backend read to tell hosts apart): "<host>-vnode<node>" for
     * virtual nodes, "<host>-<slurm node>" for Slurm nodes that share one
     * machine; empty when the kit set none (real nodes, or --net off). */
    char host_id[160];
    int net_between; /* 1: ranks of different (virtual) nodes are different hosts */
};

/* Start MPI (thread level MULTIPLE) and fill `w`. Local rank and node come
 * from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) (and, where several Slurm
 * nodes share one machine, SLURM_NODEID). With ranks_per_node > 0 the nodes
 * are virtual: node = rank / ranks_per_node. With net == NCCLAB_NET_ON
 * (options.h) each node gets its own host identity (NCCL_HOSTID, set here,
 * before any NCCL call), so NCCL and the host backend put a network between
 * nodes; NCCLAB_NET_OFF sets none. */
void ncclab_mpi_bootstrap(int *argc, char ***argv, int ranks_per_node, int net,
                          struct ncclab_world *w);

/* Fill `w` from the launcher's environment alone (no MPI), as lab 1's
 * lab1_read_launch reads it, and set the host identity as above. Dies with
 * status 2 when it finds no launcher. */
void ncclab_env_world(int ranks_per_node, int net, struct ncclab_world *w);

/* The communicator of all w->nranks ranks, made by lab 1's own function
 * (common/taught.h): over MPI, or over TCP (MASTER_ADDR/MASTER_PORT). Dies
 * when it returns none, or one in which this process is not w->rank. */
ncclComm_t ncclab_world_comm(const struct ncclab_world *w, int over_tcp);

/* The same communicator made by the kit itself, without lab 1's function:
 * for lab 1's runs of another task than Task 3, so that a Task 3 bug costs
 * Task 3 only, as in the course's grader. Collective over the job. */
ncclComm_t ncclab_kit_world_comm(const struct ncclab_world *w, int over_tcp);

/* Rank 0 serves `id` on MASTER_ADDR:MASTER_PORT until all nranks-1 peers
 * have fetched it; the others connect (retrying until `timeout_s`) and read
 * it. Dies with status 2 and a clear message when MASTER_ADDR/MASTER_PORT is
 * missing or malformed, the port is in use, or the master cannot be reached
 * in time. NCCLAB_BOOTSTRAP_TIMEOUT (seconds) overrides timeout_s. */
void ncclab_tcp_share_unique_id(ncclUniqueId *id, int rank, int nranks, double timeout_s);

/* Finalise MPI if it is running. Safe to call more than once. */
void ncclab_finalize(void);

#ifdef __cplusplus
}
#endif
#endif
