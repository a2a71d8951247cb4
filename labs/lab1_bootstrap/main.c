/* Lab 1 driver — provided, do not edit. Your code goes in bootstrap.c.
 *
 * Runs the student's bootstrap, then checks from the data that the
 * all-reduce of the ranks gives n(n-1)/2 on every rank, and reports what
 * each rank saw of its launch so the grader can compare it with MPI's view.
 *
 * --task launch|gpu|comm|allreduce runs one task with your code and does the
 * other steps the kit's own way (not with your other functions), so that one
 * task can be tried (and graded) on its own; the all-reduce (Task 4), which
 * the others do not need, is left out of their runs. --launcher-env makes this mpirun job look like another launch
 * to lab1_read_launch: mpirun inside a Slurm allocation, srun, or torchrun
 * started by srun (the variables each one sets, the values from the job). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "lab1.h"

enum { BOOT_MPI, BOOT_TCP };
enum { ENV_REAL, ENV_MPIRUN_IN_SLURM, ENV_SRUN, ENV_SRUN_TORCHRUN };
static const char *const TASKS = "all|launch|gpu|comm|allreduce";

static void set_int(const char *name, int value)
{
    char v[32];
    snprintf(v, sizeof v, "%d", value);
    if (setenv(name, v, 1) != 0) ncclab_die(2, "cannot set %s", name);
}

static void unset(const char *const *names)
{
    for (int i = 0; names[i]; i++) unsetenv(names[i]);
}

static const char *const OMPI_VARS[] = {"OMPI_COMM_WORLD_RANK",       "OMPI_COMM_WORLD_SIZE",
                                        "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE",
                                        "OMPI_COMM_WORLD_NODE_RANK",  NULL};
static const char *const TORCH_VARS[] = {
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "GROUP_RANK", "NODE_RANK", "LOCAL_WORLD_SIZE", NULL};
static const char *const SLURM_VARS[] = {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
                                         "SLURM_NODEID", "SLURM_NNODES", NULL};

/* Rewrite this process's launcher variables as `mode` would have set them,
 * with the values of this job (after MPI or the kit has read the real ones). */
static void simulate_launcher(int mode, const struct ncclab_world *w)
{
    if (mode == ENV_REAL) return;
    unset(TORCH_VARS);
    unset(SLURM_VARS);
    if (mode != ENV_MPIRUN_IN_SLURM) unset(OMPI_VARS);
    /* What a per-node helper sees: mpirun's daemons, torchrun's agents,
     * one per node, started by Slurm as task `node` of `nnodes`. */
    int helper = mode == ENV_MPIRUN_IN_SLURM || mode == ENV_SRUN_TORCHRUN;
    set_int("SLURM_PROCID", helper ? w->node : w->rank);
    set_int("SLURM_NTASKS", helper ? w->nnodes : w->nranks);
    set_int("SLURM_LOCALID", helper ? 0 : w->local_rank);
    set_int("SLURM_NODEID", w->node);
    set_int("SLURM_NNODES", w->nnodes);
    if (mode == ENV_SRUN_TORCHRUN) {
        set_int("RANK", w->rank);
        set_int("WORLD_SIZE", w->nranks);
        set_int("LOCAL_RANK", w->local_rank);
        set_int("LOCAL_WORLD_SIZE", w->local_size);
        set_int("GROUP_RANK", w->node);
    }
}

int main(int argc, char **argv)
{
    int bootstrap = BOOT_MPI, env_mode = ENV_REAL, task_index = 0;
    const struct ncclab_opt extra[] = {
        {"bootstrap", 0, NCCLAB_OPT_CHOICE, &bootstrap, "how the ranks agree on the ncclUniqueId",
         0, 0, "mpi|tcp"},
        {"launcher-env", 0, NCCLAB_OPT_CHOICE, &env_mode,
         "show lab1_read_launch the variables of another launch (real: as started)", 0, 0,
         "real|mpirun-in-slurm|srun|srun-torchrun"},
        ncclab_task_option(&task_index, TASKS),
        NCCLAB_OPT_END,
    };
    struct ncclab_opts defaults = NCCLAB_SWEEP(4, 4, 2, 1, 0);
    defaults.timeout_s = 120;
    struct ncclab_opts opts;
    ncclab_parse_options(argc, argv, "lab1",
                         "Lab 1: read the launcher's view of the job, pick a GPU, create an NCCL "
                         "communicator (MPI or TCP bootstrap) and all-reduce the ranks.",
                         &defaults, extra, &opts);
    char task_buf[32];
    const char *task = ncclab_task_name(task_index, TASKS, task_buf, sizeof task_buf);
#define RUNS(t) (!task || strcmp(task, t) == 0)
    /* With --ranks-per-node, srun and srun torchrun describe nodes of that
     * many ranks (local rank, node index): the local rank then differs from
     * the global one, as on a real cluster. mpirun's own variables stay
     * the real ones, so mpirun inside Slurm does not mix with them. */
    if (env_mode == ENV_MPIRUN_IN_SLURM && opts.ranks_per_node > 0)
        ncclab_die(2, "--launcher-env mpirun-in-slurm describes real nodes: leave out "
                      "--ranks-per-node");

    /* The truth to compare the student's reading against: MPI's own view,
     * or (TCP mode, no MPI) the environment as the kit reads it. */
    struct ncclab_world world;
    if (bootstrap == BOOT_MPI)
        ncclab_mpi_bootstrap(&argc, &argv, opts.ranks_per_node, opts.net, &world);
    else
        ncclab_env_world(opts.ranks_per_node, opts.net, &world);
    simulate_launcher(env_mode, &world);

    /* Task 1, or the kit's reading of the same job (a simulated launcher's
     * local rank is the one it describes). */
    struct lab1_launch launch = {world.rank, world.nranks,
                                 env_mode == ENV_REAL ? world.gpu_local_rank : world.local_rank, -1,
                                 "kit"};
    if (RUNS("launch") && lab1_read_launch(&launch) != 0)
        ncclab_die(2, "lab1_read_launch found no launcher variables: start the lab with mpirun "
                      "or srun (or set RANK, WORLD_SIZE, LOCAL_RANK)");

    /* Task 2, or the kit's choice. Too few GPUs for this node's ranks: stop
     * with the explanation before the student's code meets an invalid device. */
    int visible = ncclab_visible_gpus();
    ncclab_check_gpu_count(world.gpu_local_rank, world.gpu_local_size);
    int chosen = RUNS("gpu") ? lab1_choose_gpu(launch.local_rank)
                             : ncclab_kit_gpu(world.gpu_local_rank, world.gpu_local_size);
    int device = -1;
    CUDA_CHECK(cudaGetDevice(&device));
    /* Trying Task 2 alone: what it chose is recorded; the rest of the run
     * uses the kit's device so that the communicator can still be made. */
    if (task && strcmp(task, "gpu") == 0)
        ncclab_kit_gpu(world.gpu_local_rank, world.gpu_local_size);

    ncclab_watchdog_arm(opts.timeout_s, "creating the NCCL communicator",
                        "the ranks did not all receive the same ncclUniqueId (rank 0 creates it, "
                        "everyone else must receive it), or a rank never called ncclCommInitRank");
    ncclComm_t comm = NULL;
    if (RUNS("comm"))
        comm = bootstrap == BOOT_MPI ? lab1_comm_init_mpi(launch.rank, launch.nranks)
                                     : lab1_comm_init_tcp(launch.rank, launch.nranks);
    else
        comm = ncclab_kit_world_comm(&world, bootstrap == BOOT_TCP);
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
    CUDA_CHECK(cudaStreamSynchronize(stream));

    ncclab_watchdog_arm(opts.timeout_s, "all-reducing the ranks",
                        "a rank skipped the all-reduce, or the ranks used different counts");
    ncclab_trace_reset();
    /* A run of another task leaves Task 4 out (its checks do not read the
     * sum), so that a Task 4 bug (a flood of output, a crash) costs Task 4
     * only, as in the course's grader. */
    const int allreduce = RUNS("allreduce");
    if (allreduce) lab1_allreduce_rank(comm, stream, d_value, d_sum);
    /* What Task 4 handed to NCCL, before anything else calls it. */
    long ar_calls = ncclab_trace_count(NCCLAB_TRACE_ALLREDUCE);
    long long ar_bytes = ncclab_trace_bytes(NCCLAB_TRACE_ALLREDUCE);
    long zero_calls = ncclab_trace_zero_calls(NCCLAB_TRACE_ALLREDUCE);
    long other_calls = ncclab_trace_data_calls_except(1u << NCCLAB_TRACE_ALLREDUCE);
    struct ncclab_summary sum;
    ncclab_summarise(d_sum, 1, (float)world.nranks * (world.nranks - 1) / 2.0f, 1e-6, stream, &sum);
    ncclab_watchdog_disarm();

    /* The harness's end of a run from here: records gathered, everything freed. */
    static const struct ncclab_lab_config config = {.number = 1, .name = "lab1"};
    struct ncclab_lab lab = {
        .config = &config, .opts = opts, .world = world, .device = device, .stream = stream};
    lab.comm = comm;
    struct ncclab_report *report = &lab.report;
    ncclab_report_init(report, 1, &lab.world, device);
    struct ncclab_record *rec = ncclab_record_begin(report, "env", "launch");
    ncclab_record_int(rec, "env_rank", launch.rank);
    ncclab_record_int(rec, "env_nranks", launch.nranks);
    ncclab_record_int(rec, "env_local_rank", launch.local_rank);
    ncclab_record_int(rec, "env_node", launch.node);
    ncclab_record_str(rec, "launcher", launch.launcher ? launch.launcher : "none");
    ncclab_record_str(rec, "bootstrap", bootstrap == BOOT_MPI ? "mpi" : "tcp");
    ncclab_record_int(rec, "gpus_visible", visible);
    ncclab_record_int(rec, "chosen_device", chosen);
    rec = ncclab_record_begin(report, "info", "comm");
    ncclab_record_int(rec, "comm_rank", comm_rank);
    ncclab_record_int(rec, "comm_nranks", comm_nranks);
    rec = ncclab_record_begin(report, "info", "allreduce");
    ncclab_record_int(rec, "calls", ar_calls);
    ncclab_record_int(rec, "traced_bytes", ar_bytes);
    ncclab_record_int(rec, "zero_calls", zero_calls);
    ncclab_record_int(rec, "other_calls", other_calls);
    if (allreduce) ncclab_report_check(report, "rank_sum", &sum);

    if (world.rank == 0) {
        char name[128];
        ncclab_gpu_name(name, sizeof name);
        printf("# ncclab lab1 | backend %s | %s bootstrap | %d rank(s) | %s\n",
               ncclab_backend_name(), bootstrap == BOOT_MPI ? "MPI" : "TCP", world.nranks, name);
        if (task)
            printf("# --task %s: only this task runs your code; the kit does the other steps\n",
                   task);
    }
    /* The nodes and the transports between them (every rank takes part). */
    ncclab_lab_network(report, &world, opts.ranks_per_node, comm, world.rank == 0);
    CUDA_CHECK(cudaFree(d_value));
    CUDA_CHECK(cudaFree(d_sum));
    return ncclab_lab_finish(&lab);
}
