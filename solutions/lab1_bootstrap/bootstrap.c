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
    /* TODO(Task 1): describe this process as its launcher sees it: global
     * rank, number of ranks, local rank, node index (-1 when the launcher
     * gives none) and which launcher it was; return 0, or -1 when no
     * launcher's variables are set.
     * Contract: one launcher's variables at a time, and the launcher that
     * started THIS process wins. Under `mpirun` or `srun torchrun` inside a
     * Slurm allocation the SLURM_* variables are also set, but they describe
     * a Slurm task (mpirun's daemon, or the torchrun agent), not this rank.
     * Trap: the local rank has its own variable; do not derive it from the
     * global rank. Which variables exist: handout "Background" and "Task 1". */
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
    /* TODO(Task 2): bind this process to its own GPU and return the device
     * index it now uses. When the node's GPUs are all visible, the processes
     * of one node must end up on different GPUs, chosen from the local rank.
     * Trap: a launcher may already have restricted this process to a single
     * visible GPU (srun --gpus-per-task=1); inside the process that GPU is
     * not numbered `local_rank`. Check every CUDA call (CUDA_CHECK).
     * See handout "Choosing the GPU" and "Task 2". */
    // >>> solution
    int visible = 0;
    CUDA_CHECK(cudaGetDeviceCount(&visible));
    int device = visible == 1 ? 0 : local_rank;
    CUDA_CHECK(cudaSetDevice(device));
    return device;
    // === skeleton
    // return -1;
    // <<< solution
}

ncclComm_t lab1_comm_init_mpi(int rank, int nranks)
{
    ncclComm_t comm = NULL;
    /* TODO(Task 3a): create a communicator of all `nranks` ranks in which
     * this process is `rank`. Every rank must pass the SAME ncclUniqueId,
     * made exactly once; MPI (already initialised by the driver) is how it
     * travels here. Check every NCCL/MPI call (NCCL_CHECK, MPI_CHECK).
     * See handout "The ncclUniqueId and how it travels" and "Task 3". */
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
    /* TODO(Task 3b): the same communicator, but the id travels over TCP
     * through MASTER_ADDR:MASTER_PORT (helper in common/bootstrap.h).
     * Traps: no MPI call at all in this function (MPI may not be running);
     * the rank that serves the id must hold it before it starts serving.
     * See handout "Task 3". */
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
    /* TODO(Task 4): afterwards (once `stream` has run) every rank's *d_sum
     * holds the sum of every rank's *d_value: one float each, both pointers
     * device memory. Only enqueue the work; the driver waits for it.
     * See handout "Task 4". */
    // >>> solution
    NCCL_CHECK(ncclAllReduce(d_value, d_sum, 1, ncclFloat, ncclSum, comm, stream));
    // <<< solution
}
