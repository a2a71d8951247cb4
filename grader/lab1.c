/* Lab 1 — rank bootstrap: who am I, which GPU, one communicator, one sum. */
#include <stdio.h>
#include <string.h>

#include "grader.h"

/* Runs of the whole lab, then one task at a time (--task: the kit does the
 * other steps), so that a bug in one task costs that task only. The launch
 * task also runs under simulated launchers that set two launchers'
 * variables at once (--launcher-env), where the order they are read in
 * decides. */
static const struct variation variations[] = {
    /* id          ranks  bytes   step iters warmup root rpn extra flags */
    {"default", 4, 0, 0, 0, -1, -1, -1, 0, NULL, 0},
    {"np1", 1, 0, 0, 0, -1, -1, -1, 0, NULL, 0},
    {"np5", 5, 0, 0, 0, -1, -1, -1, 0, NULL, 0},
    {"tcp2", 2, 0, 0, 0, -1, -1, -1, 0, "--bootstrap tcp", VAR_TCP},
    {"tcp5", 5, 0, 0, 0, -1, -1, -1, 0, "--bootstrap tcp", VAR_TCP},
    {"vnodes", 4, 0, 0, 0, -1, -1, -1, 2, NULL, 0},
    {"launch-in-slurm", 3, 0, 0, 0, -1, -1, -1, 0, "--task launch --launcher-env mpirun-in-slurm",
     0},
    {"launch-torchrun", 3, 0, 0, 0, -1, -1, -1, 0, "--task launch --launcher-env srun-torchrun", 0},
    /* srun over two nodes of two ranks (--ranks-per-node: the simulated
     * launcher describes them): local rank != global rank, the srun branch. */
    {"launch-srun-nodes", 4, 0, 0, 0, -1, -1, -1, 2, "--task launch --launcher-env srun", 0},
    {"gpu-srun-nodes", 4, 0, 0, 0, -1, -1, -1, 2, "--task gpu --launcher-env srun", 0},
    {"gpu", 4, 0, 0, 0, -1, -1, -1, 0, "--task gpu", 0},
    {"comm-mpi", 3, 0, 0, 0, -1, -1, -1, 0, "--task comm", 0},
    {"comm-tcp", 3, 0, 0, 0, -1, -1, -1, 0, "--task comm --bootstrap tcp", VAR_TCP},
    {"allreduce", 3, 0, 0, 0, -1, -1, -1, 0, "--task allreduce", 0},
};

/* Which launcher a run shows lab1_read_launch (its --launcher-env). */
static const char *launch_of(const struct variation *v)
{
    const char *p = v->extra ? strstr(v->extra, "--launcher-env ") : NULL;
    if (!p) return "real";
    p += strlen("--launcher-env ");
    if (strncmp(p, "mpirun-in-slurm", 15) == 0) return "mpirun-in-slurm";
    if (strncmp(p, "srun-torchrun", 13) == 0) return "srun-torchrun";
    if (strncmp(p, "srun", 4) == 0) return "srun";
    return "real";
}

/* The launcher's view must agree with MPI's. */
static void check_launch_env(const struct run *run, struct check_result *res)
{
    const char *env = launch_of(run->var);
    const char *want = strcmp(env, "srun") == 0            ? "slurm"
                       : strcmp(env, "srun-torchrun") == 0 ? "torchrun"
                                                           : "openmpi";
    const char *how =
        strcmp(env, "mpirun-in-slurm") == 0
            ? "it was started by mpirun inside a Slurm allocation: OMPI_COMM_WORLD_* describe the "
              "ranks, the SLURM_* it inherited describe mpirun's daemons (one per node) — read "
              "Open MPI's variables before Slurm's"
        : strcmp(env, "srun-torchrun") == 0
            ? "it was started by torchrun, itself started by srun: RANK, WORLD_SIZE and "
              "LOCAL_RANK describe the ranks, the SLURM_* describe the torchrun agents (one per "
              "node) — read torchrun's variables before Slurm's"
        : strcmp(env, "srun") == 0
            ? "it was started by srun: read SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, "
              "SLURM_NODEID"
            : "it was started by mpirun (Open MPI): read OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK";
    for (int rank = 0; rank < run->nranks; rank++) {
        const struct record *r = find_record(run, "env", "launch", rank, NULL, 0);
        if (!r) {
            check_fail(res, run, "rank %d printed no launch record", rank);
            continue;
        }
        long long er = rec_field(r, "env_rank"), en = rec_field(r, "env_nranks");
        const char *launcher = rec_str(r, "launcher");
        if (!launcher || strcmp(launcher, want) != 0)
            check_fail(res, run, "rank %d says the launcher is `%s`, expected `%s`: %s", rank,
                       launcher ? launcher : "missing", want, how);
        else if (er != rank)
            check_fail(res, run,
                       "rank %d read rank %lld from the environment: %s (order: Open MPI, then "
                       "torchrun, then Slurm)",
                       rank, er, how);
        else if (en != run->nranks)
            check_fail(res, run,
                       "rank %d read %lld ranks from the environment, but %d were "
                       "launched: read OMPI_COMM_WORLD_SIZE / WORLD_SIZE / SLURM_NTASKS",
                       rank, en, run->nranks);
        else if (strcmp(want, "openmpi") != 0 && rec_field(r, "env_node") != rec_field(r, "node"))
            check_fail(res, run, "rank %d read node %lld, but it runs on node %d: read %s", rank,
                       rec_field(r, "env_node"), (int)rec_field(r, "node"),
                       strcmp(want, "slurm") == 0 ? "SLURM_NODEID" : "GROUP_RANK");
    }
}

/* Ranks per node of the nodes the grader made and a simulated launcher
 * (srun, srun torchrun) describes to the rank; 0 where the rank sees the
 * real launch (mpirun's own variables describe the one real host). */
static int described_rpn(const struct run *run)
{
    return strcmp(launch_of(run->var), "real") != 0 ? run->var->ranks_per_node : 0;
}

/* Whether ranks a and b share a node: the nodes the grader made, where the
 * launcher describes some, else the host each rank reported. */
static int same_node(const struct run *run, int a, const struct record *ra, int b,
                     const struct record *rb)
{
    int rpn = described_rpn(run);
    if (rpn > 0) return a / rpn == b / rpn;
    const char *ha = rec_str(ra, "host"), *hb = rb ? rec_str(rb, "host") : NULL;
    return ha && hb && strcmp(ha, hb) == 0;
}

/* The rank's node, as a diagnosis names it. */
static void node_name(const struct run *run, int rank, const struct record *r, char *buf,
                      size_t len)
{
    const char *host = rec_str(r, "host");
    int rpn = described_rpn(run);
    if (rpn > 0)
        snprintf(buf, len, "node %d", rank / rpn);
    else
        snprintf(buf, len, "host %s", host ? host : "?");
}

/* Local ranks: distinct on each machine, 0 .. ranks-on-it - 1. */
static void check_local_rank(const struct run *run, struct check_result *res)
{
    int n = run->nranks;
    for (int a = 0; a < n; a++) {
        const struct record *ra = find_record(run, "env", "launch", a, NULL, 0);
        if (!ra) {
            check_fail(res, run, "rank %d: no launch record (it stopped before reporting)", a);
            continue;
        }
        char where[160];
        node_name(run, a, ra, where, sizeof where);
        long long la = rec_field(ra, "env_local_rank");
        int on_host = 0;
        for (int b = 0; b < n; b++) {
            const struct record *rb = find_record(run, "env", "launch", b, NULL, 0);
            if (!rb || !same_node(run, a, ra, b, rb)) continue;
            on_host++;
            if (b > a && rec_field(rb, "env_local_rank") == la) {
                check_fail(res, run,
                           "ranks %d and %d on %s both read local rank %lld: "
                           "read OMPI_COMM_WORLD_LOCAL_RANK (SLURM_LOCALID, LOCAL_RANK), not "
                           "the global rank or a constant",
                           a, b, where, la);
                return;
            }
        }
        if (la < 0 || la >= on_host) {
            check_fail(res, run,
                       "rank %d read local rank %lld, but its node (%s) runs %d ranks "
                       "(valid: 0..%d): read the local rank's own variable, not the global rank",
                       a, la, where, on_host, on_host - 1);
            return;
        }
    }
}

/* Each rank of a machine on its own device, the one its local rank names. */
static void check_gpu_mapping(const struct run *run, struct check_result *res)
{
    int n = run->nranks;
    for (int a = 0; a < n; a++) {
        const struct record *ra = find_record(run, "env", "launch", a, NULL, 0);
        if (!ra) {
            check_fail(res, run, "rank %d: no launch record (it stopped before reporting)", a);
            continue;
        }
        long long dev = rec_field(ra, "device"), chosen = rec_field(ra, "chosen_device");
        long long local = rec_field(ra, "env_local_rank");
        /* srun --gpus-per-task=1: every task sees only its own GPU, as device 0. */
        int own_gpu = rec_field(ra, "gpus_visible") == 1;
        if (own_gpu) local = 0;
        for (int b = a + 1; b < n && !own_gpu; b++) {
            const struct record *rb = find_record(run, "env", "launch", b, NULL, 0);
            if (rb && same_node(run, a, ra, b, rb) && rec_field(rb, "device") == dev) {
                char where[160];
                node_name(run, a, ra, where, sizeof where);
                check_fail(res, run,
                           "wrong GPU mapping: ranks %d and %d both use device %lld "
                           "on %s — call cudaSetDevice(local_rank) so every rank of a node "
                           "drives its own GPU",
                           a, b, dev, where);
                return;
            }
        }
        if (dev != local)
            check_fail(res, run,
                       "wrong GPU mapping: rank %d (local rank %lld) uses device "
                       "%lld — the device index must be the local rank",
                       a, local, dev);
        else if (chosen != dev)
            check_fail(res, run,
                       "rank %d: lab1_choose_gpu returned %lld but the rank is on "
                       "device %lld — return the device you set",
                       a, chosen, dev);
    }
}

static void check_comm(const struct run *run, struct check_result *res)
{
    for (int rank = 0; rank < run->nranks; rank++) {
        const struct record *r = find_record(run, "info", "comm", rank, NULL, 0);
        if (!r) {
            check_fail(res, run, "rank %d printed no communicator record", rank);
            continue;
        }
        long long cr = rec_field(r, "comm_rank"), cn = rec_field(r, "comm_nranks");
        if (cr != rank || cn != run->nranks)
            check_fail(res, run,
                       "rank %d's communicator says rank %lld of %lld, expected %d "
                       "of %d: pass the rank and world size to ncclCommInitRank",
                       rank, cr, cn, rank, run->nranks);
    }
}

static void check_rank_sum(const struct run *run, struct check_result *res)
{
    int n = run->nranks;
    static const size_t one = 1;
    expect_buffer_checks(run, res, "rank_sum", n * (n - 1) / 2.0, &one, 1);
    /* The sum must come from one all-reduce of the one float. */
    for (int rank = 0; rank < n; rank++) {
        const struct record *r = find_record(run, "info", "allreduce", rank, NULL, 0);
        if (!r) {
            check_fail(res, run, "rank %d: no record of lab1_allreduce_rank's NCCL calls", rank);
            continue;
        }
        long long calls = rec_field(r, "calls"), bytes = rec_field(r, "traced_bytes");
        long long zero = rec_field(r, "zero_calls"), other = rec_field(r, "other_calls");
        if (other > 0)
            check_fail(res, run,
                       "rank %d: lab1_allreduce_rank made %lld call(s) of other NCCL "
                       "collectives or send/recv: the sum must come from one ncclAllReduce",
                       rank, other);
        else if (calls != 1 || bytes != 4)
            check_fail(res, run,
                       "rank %d: lab1_allreduce_rank made %lld ncclAllReduce call(s) moving %lld "
                       "bytes%s, expected one call of 1 float (4 bytes): the sum must be computed "
                       "by NCCL, not written by hand",
                       rank, calls, bytes,
                       zero > 0 ? " (and some with a count of 0, which move nothing)" : "");
    }
}

static int full(const struct variation *v) { return runs_task(v, NULL); }
static int launch_runs(const struct variation *v) { return runs_task(v, "launch"); }
static int gpu_runs(const struct variation *v) { return runs_task(v, "gpu"); }
static int comm_mpi_runs(const struct variation *v)
{
    return runs_task(v, "comm") && !(v->flags & VAR_TCP);
}
static int comm_tcp_runs(const struct variation *v)
{
    return runs_task(v, "comm") && (v->flags & VAR_TCP);
}
static int allreduce_runs(const struct variation *v) { return runs_task(v, "allreduce"); }

static const struct lab_check checks[] = {
    {"runs", "runs to the end on 1-5 ranks, MPI and TCP bootstrap", "Common mistakes",
     check_runs_cleanly, NULL, CHECK_RUNS, full},
    {"launch_env", "rank and world size read from the launcher", "Task 1", check_launch_env, NULL,
     0, launch_runs},
    {"local_rank", "local rank distinct on each node", "Task 1", check_local_rank, NULL, 0,
     launch_runs},
    {"gpu_mapping", "one GPU per rank, chosen by local rank", "Task 2", check_gpu_mapping, NULL, 0,
     gpu_runs},
    {"comm_mpi", "communicator created (MPI bootstrap)", "Task 3", check_comm, NULL, 0,
     comm_mpi_runs},
    {"comm_tcp", "communicator created (TCP bootstrap)", "Task 3", check_comm, NULL, 0,
     comm_tcp_runs},
    {"rank_sum", "all-reduce of the ranks gives n(n-1)/2", "Task 4", check_rank_sum, NULL, 0,
     allreduce_runs},
};

static const struct output_hint hints[] = {
    {"MASTER_ADDR",
     "the TCP bootstrap could not reach rank 0: every rank must call "
     "ncclab_tcp_share_unique_id, rank 0 after creating the id",
     "Task 3"},
    {"no launcher variables", "lab1_read_launch found no launcher variables (Task 1 not done)",
     "Task 1"},
    {"returned no communicator", "a lab1_comm_init_* function returned NULL (Task 3 not done)",
     "Task 3"},
    HINTS_END,
};

/* clang-format off */
const struct lab_module lab1_module = {
    LAB_MODULE(1, "Rank bootstrap", "bootstrap.c"), .hints = hints,
    .hang_cause = "the ranks did not all get the same ncclUniqueId (rank 0 creates it and "
                  "everyone else must receive it before ncclCommInitRank), or a rank skipped "
                  "the all-reduce",
    .forbidden_calls =
        "!MPI_Bcast,!MPI_Comm_rank,!MPI_Comm_size,!MPI_Abort,!MPI_Barrier,!MPI_Wtime,MPI_*,"
        "PMPI_*,ncclab_use_gpu,ncclab_check_gpu_count,ncclab_world_comm,ncclab_env_world,"
        "ncclab_env_rank_hint",
    .forbidden_reason = "lab 1 teaches these steps: do them with the calls the handout shows (MPI "
                        "only to broadcast the unique id)",
};
/* clang-format on */
