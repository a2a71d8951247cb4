/* Lab 1 driver — provided, do not edit. Your code goes in bootstrap.c.
 *
 * Runs the student's bootstrap, then checks from the data that the
 * all-reduce of the ranks gives n(n-1)/2 on every rank, and reports what
 * each rank saw of its launch so the grader can compare it with MPI's view. */
#include <stdio.h>
#include <string.h>

#include "lab.h"
#include "lab1.h"

enum { BOOT_MPI, BOOT_TCP };

int main(int argc, char **argv)
{
    int bootstrap = BOOT_MPI;
    const struct ncclab_opt extra[] = {
        {"bootstrap", 0, NCCLAB_OPT_CHOICE, &bootstrap, "how the ranks agree on the ncclUniqueId",
         0, 0, "mpi|tcp"},
        {NULL, 0, 0, NULL, NULL, 0, 0, NULL},
    };
    const struct ncclab_opts defaults = {.min_bytes = 4,
                                         .max_bytes = 4,
                                         .step_factor = 2,
                                         .iters = 1,
                                         .warmup = 0,
                                         .check = 1,
                                         .timeout_s = 120};
    struct ncclab_opts opts;
    ncclab_parse_options(argc, argv, "lab1",
                         "Lab 1: read the launcher's view of the job, pick a GPU, create an NCCL "
                         "communicator (MPI or TCP bootstrap) and all-reduce the ranks.",
                         &defaults, extra, &opts);

    /* The truth to compare the student's reading against: MPI's own view,
     * or (TCP mode, no MPI) the environment as the kit reads it. */
    struct ncclab_world world;
    if (bootstrap == BOOT_MPI)
        ncclab_mpi_bootstrap(&argc, &argv, opts.ranks_per_node, &world);
    else
        ncclab_env_world(opts.ranks_per_node, &world);

    struct lab1_launch launch = {-1, -1, -1, -1, "none"};
    if (lab1_read_launch(&launch) != 0)
        ncclab_die(2, "lab1_read_launch found no launcher variables: start the lab with mpirun "
                      "or srun (or set RANK, WORLD_SIZE, LOCAL_RANK)");

    int visible = ncclab_visible_gpus();
    /* Too few GPUs for this node's ranks: stop with the explanation before
     * the student's code meets an invalid device. */
    ncclab_gpu_for_rank(world.gpu_local_rank, world.gpu_local_size);
    int chosen = lab1_choose_gpu(launch.local_rank);
    int device = -1;
    CUDA_CHECK(cudaGetDevice(&device));

    ncclab_watchdog_arm(opts.timeout_s, "creating the NCCL communicator",
                        "the ranks did not all receive the same ncclUniqueId (rank 0 creates it, "
                        "everyone else must receive it), or a rank never called ncclCommInitRank");
    ncclComm_t comm = bootstrap == BOOT_MPI ? lab1_comm_init_mpi(launch.rank, launch.nranks)
                                            : lab1_comm_init_tcp(launch.rank, launch.nranks);
    ncclab_watchdog_disarm();
    if (!comm)
        ncclab_die(1, "lab1_comm_init_%s returned no communicator — Task 3 is not done yet",
                   bootstrap == BOOT_MPI ? "mpi" : "tcp");

    int comm_rank = -1, comm_nranks = -1;
    NCCL_CHECK(ncclCommUserRank(comm, &comm_rank));
    NCCL_CHECK(ncclCommCount(comm, &comm_nranks));

    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    float *d_value = ncclab_device_alloc(1, "the rank value"),
          *d_sum = ncclab_device_alloc(1, "the sum");
    ncclab_fill(d_value, 1, (float)world.rank, stream);
    ncclab_fill(d_sum, 1, -1.0f, stream); /* a stale value must not pass */

    ncclab_watchdog_arm(opts.timeout_s, "all-reducing the ranks",
                        "a rank skipped the all-reduce, or the ranks used different counts");
    lab1_allreduce_rank(comm, stream, d_value, d_sum);
    struct ncclab_summary sum;
    ncclab_summarise(d_sum, 1, (float)world.nranks * (world.nranks - 1) / 2.0f, 1e-6, stream, &sum);
    ncclab_watchdog_disarm();

    struct ncclab_report report;
    ncclab_report_init(&report, 1, &world, device);
    struct ncclab_record *rec = ncclab_record_begin(&report, "env", "launch");
    ncclab_record_int(rec, "env_rank", launch.rank);
    ncclab_record_int(rec, "env_nranks", launch.nranks);
    ncclab_record_int(rec, "env_local_rank", launch.local_rank);
    ncclab_record_int(rec, "env_node", launch.node);
    ncclab_record_str(rec, "launcher", launch.launcher);
    ncclab_record_str(rec, "bootstrap", bootstrap == BOOT_MPI ? "mpi" : "tcp");
    ncclab_record_int(rec, "gpus_visible", visible);
    ncclab_record_int(rec, "chosen_device", chosen);
    rec = ncclab_record_begin(&report, "info", "comm");
    ncclab_record_int(rec, "comm_rank", comm_rank);
    ncclab_record_int(rec, "comm_nranks", comm_nranks);
    ncclab_report_check(&report, "rank_sum", &sum);

    if (world.rank == 0) {
        char name[128];
        ncclab_gpu_name(name, sizeof name);
        printf("# ncclab lab1 | backend %s | %s bootstrap | %d rank(s) | %s\n",
               ncclab_backend_name(), bootstrap == BOOT_MPI ? "MPI" : "TCP", world.nranks, name);
    }
    ncclab_watchdog_arm(opts.timeout_s, "gathering results", "a rank stopped early");
    int failed = ncclab_report_flush(&report, comm, stream);
    ncclab_watchdog_disarm();
    if (world.rank == 0)
        printf("# lab1: %s\n", failed ? "FAILED — see the check lines above" : "all checks passed");
    fflush(stdout);

    ncclab_report_free(&report);
    CUDA_CHECK(cudaFree(d_value));
    CUDA_CHECK(cudaFree(d_sum));
    CUDA_CHECK(cudaStreamDestroy(stream));
    NCCL_CHECK(ncclCommDestroy(comm));
    ncclab_finalize();
    return failed ? 1 : 0;
}
