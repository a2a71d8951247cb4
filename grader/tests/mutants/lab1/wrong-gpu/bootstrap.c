/* MUTANT wrong-gpu: every rank drives device 0
 * Derived from the reference solution; graded by grader/tests/run-mutants.sh. */
/* Lab 1 — rank bootstrap: your code. Handout: handouts/lab1.md.
 * Declarations and the meaning of each function: lab1.h. */
#include <stdlib.h>

#include "bootstrap.h"
#include "errors.h"
#include "lab1.h"

/* Read an integer environment variable; -1 when unset. */
static inline int env_int(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : -1;
}

int lab1_read_launch(struct lab1_launch *out)
{
    /* TODO(Task 1): fill *out from the environment and return 0.
     *   srun sets  SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID
     *   mpirun sets OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK (no node index)
     *   torchrun sets RANK, WORLD_SIZE, LOCAL_RANK
     * Check Open MPI's and torchrun's variables before Slurm's: processes
     * that mpirun (or torchrun) starts inside a Slurm job also inherit
     * SLURM_* values, which then describe mpirun's helper daemons, not you.
     * Node index: -1 when the launcher gives none.
     * Return -1 if none of them is there. See handout "Task 1". */
    // >>> solution
    if (getenv("OMPI_COMM_WORLD_RANK")) {
        /* mpirun, also inside an allocation (where SLURM_* describe its daemons) */
        out->rank = env_int("OMPI_COMM_WORLD_RANK");
        out->nranks = env_int("OMPI_COMM_WORLD_SIZE");
        out->local_rank = env_int("OMPI_COMM_WORLD_LOCAL_RANK");
        out->node = -1;
        out->launcher = "openmpi";
    } else if (getenv("RANK")) {
        /* torchrun, also when srun started one torchrun per node */
        out->rank = env_int("RANK");
        out->nranks = env_int("WORLD_SIZE");
        out->local_rank = env_int("LOCAL_RANK");
        out->node = env_int("GROUP_RANK");
        out->launcher = "torchrun";
    } else if (getenv("SLURM_PROCID")) {
        out->rank = env_int("SLURM_PROCID");
        out->nranks = env_int("SLURM_NTASKS");
        out->local_rank = env_int("SLURM_LOCALID");
        out->node = env_int("SLURM_NODEID");
        out->launcher = "slurm";
    } else {
        return -1;
    }
    return 0;
    // === skeleton
    // return -1;
    // <<< solution
}

int lab1_choose_gpu(int local_rank)
{
    /* TODO(Task 2): make this process use GPU number `local_rank`
     * (cudaSetDevice, wrapped in CUDA_CHECK) and return it. Every process
     * on a node must drive a different GPU. See handout "Task 2". */
    // >>> solution
    CUDA_CHECK(cudaSetDevice(0)); /* every rank on device 0 */
    return 0;
    // === skeleton
    // return -1;
    // <<< solution
}

ncclComm_t lab1_comm_init_mpi(int rank, int nranks)
{
    ncclComm_t comm = NULL;
    /* TODO(Task 3a): rank 0 creates an ncclUniqueId (ncclGetUniqueId);
     * every rank receives it (ncclab_mpi_share_unique_id, or MPI_Bcast
     * yourself); then every rank calls ncclCommInitRank. Wrap NCCL calls in
     * NCCL_CHECK. See handout "Task 3". */
    // >>> solution
    ncclUniqueId id;
    if (rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_CHECK(MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD));
    NCCL_CHECK(ncclCommInitRank(&comm, nranks, id, rank));
    // <<< solution
    return comm;
}

ncclComm_t lab1_comm_init_tcp(int rank, int nranks)
{
    ncclComm_t comm = NULL;
    /* TODO(Task 3b): as Task 3a, but share the id over TCP with
     * ncclab_tcp_share_unique_id(&id, rank, nranks, timeout_seconds): rank 0
     * serves it on MASTER_ADDR:MASTER_PORT, the others fetch it. No MPI. */
    // >>> solution
    ncclUniqueId id;
    if (rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    ncclab_tcp_share_unique_id(&id, rank, nranks, 60.0);
    NCCL_CHECK(ncclCommInitRank(&comm, nranks, id, rank));
    // <<< solution
    return comm;
}

void lab1_allreduce_rank(ncclComm_t comm, cudaStream_t stream, const float *d_value, float *d_sum)
{
    /* TODO(Task 4): one ncclAllReduce of 1 float, ncclSum, from d_value into
     * d_sum on `stream`. See handout "Task 4". */
    // >>> solution
    NCCL_CHECK(ncclAllReduce(d_value, d_sum, 1, ncclFloat, ncclSum, comm, stream));
    // <<< solution
}
