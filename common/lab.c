#include "lab.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef NCCLAB_HOST_BACKEND
#include <ncclab_host_net.h>
#endif

/* ---- the nodes and the transports between them ---- */

#ifndef NCCLAB_HOST_BACKEND
/* Which network transport NCCL will most likely pick between hosts: what
 * NCCL_NET names, sockets where InfiniBand is disabled or absent, else IB.
 * Only NCCL's INFO log (NCCL_DEBUG=INFO, "via NET/...") says for sure. */
static const char *nccl_net_expected(void)
{
    const char *net = getenv("NCCL_NET");
    if (net && *net) return net;
    const char *off = getenv("NCCL_IB_DISABLE");
    if (off && atoi(off) == 1) return "Socket";
    DIR *d = opendir("/sys/class/infiniband");
    int devices = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d))
        if (e->d_name[0] != '.') devices++;
    if (d) closedir(d);
    return devices ? "IB" : "Socket";
}
#endif

void ncclab_lab_network(struct ncclab_report *report, const struct ncclab_world *w,
                        int ranks_per_node, ncclComm_t comm, int print)
{
    struct ncclab_record *rec = ncclab_record_begin(report, "info", "nodes");
    ncclab_record_int(rec, "nnodes", w->nnodes);
    ncclab_record_int(rec, "ranks_per_node", ranks_per_node);
    ncclab_record_int(rec, "virtual", ranks_per_node > 0);
    ncclab_record_int(rec, "net", w->net_between);
    ncclab_record_str(rec, "hostid", w->host_id[0] ? w->host_id : "default");
    char nodes[96];
    if (ranks_per_node > 0)
        snprintf(nodes, sizeof nodes, "%d virtual x %d ranks", w->nnodes, ranks_per_node);
    else
        snprintf(nodes, sizeof nodes, "%d", w->nnodes);
    const char *given = getenv("NCCL_HOSTID");
    const char *ids = w->net_between    ? (ranks_per_node > 0 ? "NCCL_HOSTID per virtual node"
                                                              : "NCCL_HOSTID per Slurm node")
                      : given && *given ? "NCCL_HOSTID as the environment set it"
                                        : "NCCL's own (host name and boot id)";
#ifdef NCCLAB_HOST_BACKEND
    /* What the transport chose, counted over every rank's peers. */
    int peers[2] = {0, 0}, all[2] = {0, 0};
    NCCL_CHECK(ncclabHostCommPeers(comm, &peers[0], &peers[1]));
    int mpi_up = 0, mpi_down = 0;
    MPI_Initialized(&mpi_up);
    MPI_Finalized(&mpi_down);
    if (mpi_up && !mpi_down)
        MPI_CHECK(MPI_Allreduce(peers, all, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    else
        memcpy(all, peers, sizeof all); /* no MPI (lab 1 over TCP): this rank's view */
    double gbps = 0, lat = 0;
    const char *why = NULL;
    if (ncclabHostLinkModel(&gbps, &lat, &why) != ncclSuccess && all[1] > 0)
        ncclab_die(2, "%s", why);
    ncclab_record_str(rec, "inside", all[0] > 0 ? "shm" : "none");
    ncclab_record_str(rec, "between", all[1] > 0 ? "tcp" : "none");
    ncclab_record_int(rec, "shm_peers", peers[0]);
    ncclab_record_int(rec, "tcp_peers", peers[1]);
    const int model = all[1] > 0 && gbps > 0;
    ncclab_record_int(rec, "link_model", model);
    ncclab_record_num(rec, "link_gbps", model ? gbps : 0);
    ncclab_record_num(rec, "link_latency_us", model ? lat : 0);
    if (!print) return;
    char between[192];
    if (all[1] > 0 && !model)
        snprintf(between, sizeof between, "TCP, no link model (NCCLAB_NET_GBPS=0)");
    else if (all[1] > 0)
        snprintf(between, sizeof between,
                 "TCP, link model %.3g GB/s %.3g us (a model of a network, set by "
                 "NCCLAB_NET_GBPS and NCCLAB_NET_LATENCY_US)",
                 gbps, lat);
    else if (ranks_per_node <= 0)
        snprintf(between, sizeof between, "none (every rank is one host)");
    else if (!w->net_between) /* --net off, or NCCLAB_NET=off without --net on */
        snprintf(between, sizeof between,
                 "none (network off: --net off or NCCLAB_NET=off; the virtual nodes are one "
                 "host)");
    else /* the network is on, but every rank is on the one virtual node */
        snprintf(between, sizeof between, "none (one virtual node: no traffic between nodes)");
    printf("# nodes: %s; inside: %s; between: %s; host identity: %s\n", nodes,
           all[0] > 0 ? "SHM" : "none", between, ids);
#else
    (void)comm;
    const char *net = nccl_net_expected();
    /* Virtual nodes cross NCCL's network only with their own identities. */
    const int between = w->nnodes > 1 && (ranks_per_node <= 0 || w->net_between);
    ncclab_record_str(rec, "inside", "nccl");
    ncclab_record_str(rec, "between", between ? "nccl_net" : "none");
    ncclab_record_str(rec, "net_expected", net);
    ncclab_record_int(rec, "link_model", 0);
    if (!print) return;
    if (between)
        printf("# nodes: %s; inside: P2P/NVLink or SHM (NCCL's choice); between: NET (NCCL's "
               "choice: IB if a NIC, else Socket; here %s expected; NCCL_DEBUG=INFO shows "
               "\"via NET/...\"); host identity: %s\n",
               nodes, net, ids);
    else
        printf("# nodes: %s; inside: P2P/NVLink or SHM (NCCL's choice); between: none; host "
               "identity: %s\n",
               nodes, ids);
#endif
}

static void print_banner(const struct ncclab_lab *lab)
{
    const struct ncclab_world *w = &lab->world;
    printf("# ncclab %s | backend %s | NCCL %s | %d rank(s) on %d node(s)%s | %s\n",
           lab->config->name, ncclab_backend_name(), lab->nccl_version, w->nranks, w->nnodes,
           lab->opts.ranks_per_node > 0 ? " (virtual)" : "", lab->gpu_name);
    fflush(stdout);
}

/* Lab 1's GPU choice (Task 2) picked no device, so the lab cannot start:
 * stop, naming every task of lab 1 the lab still needs at once, so that a
 * student who skipped lab 1 does not finish Task 2 only to hear of Task 3.
 * On the host backend Task 3 is tried on a device the kit picks (pretend
 * devices: any distinct ones do); on GPUs it needs Task 2's choice (NCCL
 * refuses two ranks on one GPU), so it is only named. Every rank arrives
 * here alike (the same lab 1 file); collective. */
__attribute__((noreturn)) static void lab1_unfinished(const struct ncclab_world *w, int chosen,
                                                      int current)
{
    char task3[256] = "";
    int task3_missing = 0;
#ifdef NCCLAB_HOST_BACKEND
    if (w->gpu_local_rank < ncclab_visible_gpus()) {
        CUDA_CHECK(cudaSetDevice(w->gpu_local_rank));
        ncclComm_t comm = ncclab_taught_lab1_comm_init_mpi(w->rank, w->nranks);
        int rank = -1, nranks = -1;
        if (comm) {
            NCCL_CHECK(ncclCommUserRank(comm, &rank));
            NCCL_CHECK(ncclCommCount(comm, &nranks));
            NCCL_CHECK(ncclCommDestroy(comm));
        }
        task3_missing = rank != w->rank || nranks != w->nranks;
        if (!comm)
            snprintf(task3, sizeof task3, "; lab1_comm_init_mpi (Task 3) returned no communicator");
        else if (task3_missing)
            snprintf(task3, sizeof task3,
                     "; lab1_comm_init_mpi (Task 3) made a communicator in which this process is "
                     "rank %d of %d, expected rank %d of %d",
                     rank, nranks, w->rank, w->nranks);
    }
#endif
    if (!task3[0] && !task3_missing)
        snprintf(task3, sizeof task3,
#ifdef NCCLAB_HOST_BACKEND
                 "; lab1_comm_init_mpi (Task 3) made the communicator, so Task 2 is all that is "
                 "left"
#else
                 "; lab1_comm_init_mpi (Task 3) makes every lab's communicator too, and can only "
                 "be tried once Task 2 has chosen a GPU"
#endif
        );
    ncclab_die(1,
               "lab 1 is not finished, and every lab starts with its functions (common/taught.h): "
               "finish lab 1's Task 2 first (handouts/lab1.md, \"Choosing the GPU\")%s. What "
               "this run saw: lab1_choose_gpu (Task 2) returned %d while the device in use is "
               "%d%s",
               task3_missing ? ", then its Task 3 (handouts/lab1.md, \"Task 3\")" : "", chosen,
               current, task3);
}

void ncclab_lab_start(struct ncclab_lab *lab, const struct ncclab_lab_config *config,
                      const struct ncclab_opt *lab_extra, int argc, char **argv)
{
    memset(lab, 0, sizeof *lab);
    lab->config = config;
#ifdef NCCLAB_HOST_BACKEND
    lab->defaults = config->host_defaults;
#else
    lab->defaults = config->defaults;
#endif
    /* The lab's own options, then --task when the lab has tasks. */
    struct ncclab_opt extra[32];
    int nextra = 0, task = 0;
    char choices[256];
    for (int i = 0; lab_extra && lab_extra[i].long_name && nextra < 30; i++)
        extra[nextra++] = lab_extra[i];
    if (config->tasks) {
        snprintf(choices, sizeof choices, "all|%s", config->tasks);
        extra[nextra++] = ncclab_task_option(&task, choices);
    }
    extra[nextra] = (struct ncclab_opt)NCCLAB_OPT_END;
    ncclab_parse_options(argc, argv, config->name, config->summary, &lab->defaults, extra,
                         &lab->opts);
    lab->nsizes = ncclab_size_steps(&lab->opts, sizeof(float), lab->sizes, NCCLAB_MAX_STEPS);
    if (lab->sizes[0] < sizeof(float))
        ncclab_die(2, "%s: -b must be at least %zu bytes (one float); the smallest run is -b %zu",
                   config->name, sizeof(float), sizeof(float));
    lab->max_count = lab->sizes[lab->nsizes - 1] / sizeof(float);
    if (config->tasks) {
        static char task_name[64]; /* lab->task points here for the whole run */
        lab->task = ncclab_task_name(task, choices, task_name, sizeof task_name);
    }

    ncclab_mpi_bootstrap(&argc, &argv, lab->opts.ranks_per_node, lab->opts.net, &lab->world);
    const struct ncclab_world *w = &lab->world;
    if (lab->opts.root >= w->nranks)
        ncclab_die(2, "--root %d is not a rank of this job (ranks 0..%d)", lab->opts.root,
                   w->nranks - 1);

    ncclab_watchdog_arm(lab->opts.timeout_s, "setting up (GPU, communicator)",
                        "a rank did not start or could not reach the others");
    /* Lab 1's GPU choice and communicator (common/taught.h). */
    int chosen = -1, current = -1;
    if (!ncclab_try_gpu(w->gpu_local_rank, w->gpu_local_size, &chosen, &current))
        lab1_unfinished(w, chosen, current);
    lab->device = chosen;
    ncclab_gpu_name(lab->gpu_name, sizeof lab->gpu_name);
    CUDA_CHECK(cudaStreamCreateWithFlags(&lab->stream, cudaStreamNonBlocking));
    lab->comm = ncclab_world_comm(w, 0);
    ncclab_watchdog_disarm();

    ncclab_nccl_version(lab->nccl_version, sizeof lab->nccl_version);
    lab->hosts = ncclab_lab_count_ranks(w->gpu_local_rank == 0);
    ncclab_report_init(&lab->report, config->number, &lab->world, lab->device);
    lab->t_start = ncclab_now_us();
    if (w->rank == 0) print_banner(lab);
    ncclab_lab_network(&lab->report, w, lab->opts.ranks_per_node, lab->comm, w->rank == 0);
    if (w->rank == 0) {
        if (lab->task)
            printf("# --task %s: only this task runs (your code); the kit does what it needs "
                   "around it\n",
                   lab->task);
        fflush(stdout);
    }
}

int ncclab_lab_runs(const struct ncclab_lab *lab, const char *task)
{
    return !lab->task || strcmp(lab->task, task) == 0;
}

struct ncclab_opt ncclab_task_option(int *target, const char *choices)
{
    return (struct ncclab_opt){"task",
                               0,
                               NCCLAB_OPT_CHOICE,
                               target,
                               "run one task alone, the kit doing the rest (all: every task)",
                               0,
                               0,
                               choices};
}

const char *ncclab_task_name(int index, const char *choices, char *buf, size_t len)
{
    if (index <= 0) return NULL;
    const char *p = choices;
    for (int i = 0; p && i < index; i++) {
        p = strchr(p, '|');
        if (p) p++;
    }
    if (!p) return NULL;
    snprintf(buf, len, "%.*s", (int)strcspn(p, "|"), p);
    return buf;
}

int ncclab_lab_finish(struct ncclab_lab *lab)
{
    ncclab_watchdog_arm(lab->opts.timeout_s, "gathering results", "a rank stopped early");
    int failed = ncclab_report_flush(&lab->report, lab->comm, lab->stream);
    ncclab_report_free(&lab->report);
    if (lab->world.rank == 0) {
        printf("# %s: %s\n", lab->config->name,
               failed ? "FAILED — some checks did not pass (see the lines above)"
                      : "all checks passed");
        fflush(stdout);
    }
    failed = ncclab_report_agree(failed, lab->comm, lab->stream);
    if (lab->comm) {
        CUDA_CHECK(cudaStreamSynchronize(lab->stream));
        NCCL_CHECK(ncclCommFinalize(lab->comm)); /* NCCL's order: finish the work, then free */
        NCCL_CHECK(ncclCommDestroy(lab->comm));
        lab->comm = NULL;
    }
    CUDA_CHECK(cudaStreamDestroy(lab->stream));
    ncclab_watchdog_disarm();
    free(lab->offsets);
    lab->offsets = NULL;
    ncclab_finalize();
    return failed ? 1 : 0;
}

void ncclab_lab_time(struct ncclab_lab *lab, ncclab_enqueue_fn fn, void *ctx, const char *what,
                     const char *hint, struct ncclab_timing *t)
{
    ncclab_watchdog_arm(lab->opts.timeout_s, what, hint);
    ncclab_trace_reset();
    ncclab_time_op(fn, ctx, lab->stream, lab->opts.warmup, lab->opts.iters, t);
    CUDA_CHECK(cudaStreamSynchronize(lab->stream));
    ncclab_watchdog_disarm();
}

float *ncclab_device_alloc(size_t count, const char *what)
{
    float *p = NULL;
    if (count == 0) count = 1; /* keep a valid pointer for empty buffers */
    cudaError_t e = cudaMalloc((void **)&p, count * sizeof(float));
    if (e != cudaSuccess) {
        size_t free_b = 0, total_b = 0;
        (void)cudaGetLastError();
        cudaMemGetInfo(&free_b, &total_b);
        ncclab_die(2,
                   "cannot allocate %s: %zu bytes requested, %zu of %zu free on the device (%s). "
                   "Use a smaller size (-b/-e)",
                   what, count * sizeof(float), free_b, total_b, cudaGetErrorString(e));
    }
    return p;
}

float *ncclab_registered_alloc(ncclComm_t comm, size_t count, const char *what, void **handle)
{
    float *p = NULL;
    if (count == 0) count = 1; /* keep a valid pointer for empty buffers */
    ncclResult_t r = ncclMemAlloc((void **)&p, count * sizeof(float));
    if (r != ncclSuccess)
        ncclab_die(2,
                   "cannot allocate %s with ncclMemAlloc: %zu bytes (%s: %s). Use a smaller size "
                   "(-b/-e)",
                   what, count * sizeof(float), ncclGetErrorString(r), ncclGetLastError(comm));
    NCCL_CHECK(ncclCommRegister(comm, p, count * sizeof(float), handle));
    return p;
}

void ncclab_registered_free(ncclComm_t comm, float *p, void *handle)
{
    NCCL_CHECK(ncclCommDeregister(comm, handle));
    NCCL_CHECK(ncclMemFree(p));
}

struct ncclab_record *ncclab_lab_perf(struct ncclab_lab *lab, const struct ncclab_case *c,
                                      size_t count, const struct ncclab_timing *t, long calls,
                                      long long wrong, const struct ncclab_perf *moved)
{
    const size_t elems = c->whole ? count * (size_t)lab->world.nranks : count;
    struct ncclab_perf p = {.name = c->name,
                            .coll = c->coll,
                            .bytes = elems * sizeof(float),
                            .count = elems,
                            .type = "float",
                            .redop = c->redop,
                            .root = c->rooted ? lab->opts.root : -1,
                            .nranks = c->nranks,
                            .time_us = t->avg_us,
                            .iters = t->iters,
                            .warmup = t->warmup,
                            .wall_us = t->wall_us,
                            .calls = calls,
                            .wrong = wrong,
                            .group = c->group,
                            .traced = 1,
                            .traced_bytes = moved->traced_bytes,
                            .zero_calls = moved->zero_calls,
                            .other_calls = moved->other_calls,
                            .args = moved->args,
                            .op_other_calls = moved->op_other_calls,
                            .buffer_other_calls = moved->buffer_other_calls,
                            .buffer_send = moved->buffer_send,
                            .buffer_recv = moved->buffer_recv};
    snprintf(p.op_other, sizeof p.op_other, "%s", moved->op_other);
    return ncclab_report_perf(&lab->report, &p);
}

struct case_call {
    const struct ncclab_case *c;
    struct ncclab_bufs *b;
};
static void enqueue_call(void *ctx, cudaStream_t s)
{
    struct case_call *k = ctx;
    if (k->c->call)
        k->c->call(k->b->comm, s, k->b->send, k->b->recv, k->b->count);
    else
        k->c->enqueue(k->b, s);
}

double ncclab_lab_case(struct ncclab_lab *lab, const struct ncclab_case *c, struct ncclab_bufs *b,
                       size_t count)
{
    struct ncclab_timing t = {NAN, NAN, lab->opts.iters, lab->opts.warmup};
    struct ncclab_perf moved = {.traced = 1}; /* nothing moved without a communicator */
    struct ncclab_summary s = {.count = count,
                               .mismatches = count,
                               .first_bad = 0,
                               .min = NAN,
                               .max = NAN,
                               .expected = b->expected};
    long calls = 0;
    int busy_at_return = -1; /* -1: the kit timed it, not a student's function */
    long elapsed_reads = 0;  /* cudaEventElapsedTime results the student's function read */
    double elapsed_ms = 0, elapsed_ms_sum = 0;
    b->count = count;
    if (c->random) ncclab_lab_draw(lab);
    if (c->fill)
        c->fill(lab, b);
    else
        ncclab_fill(b->recv, count, -1.0f, lab->stream); /* stale results must not pass */
    CUDA_CHECK(cudaStreamSynchronize(lab->stream)); /* the fills are done before the clock starts */
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));         /* one case at a time on the links */
    if (!c->absent && c->time_call) {
        /* The student's timing loop: the kit only watches and counts. */
        ncclab_watchdog_arm(lab->opts.timeout_s, c->what, c->hint);
        ncclab_trace_reset();
        double t0 = ncclab_now_us();
        t.avg_us = c->time_call(b->comm, lab->stream, b->send, b->recv, count, lab->opts.warmup,
                                lab->opts.iters);
        elapsed_reads = ncclab_trace_elapsed(&elapsed_ms, &elapsed_ms_sum);
        /* Work still on the stream when the timing function returned: its
         * clock stopped before the device finished (seen directly, where
         * the times alone are ambiguous on a loaded machine). */
        const cudaError_t q = cudaStreamQuery(lab->stream);
        if (q != cudaErrorNotReady) CUDA_CHECK(q);
        busy_at_return = q == cudaErrorNotReady;
        calls = ncclab_trace_count_mask(c->traced);
        ncclab_perf_trace(&moved, c->traced);
        CUDA_CHECK(cudaStreamSynchronize(lab->stream));
        t.wall_us = ncclab_now_us() - t0;
        ncclab_watchdog_disarm();
    } else if (!c->absent) {
        struct case_call k = {c, b};
        ncclab_lab_time(lab, enqueue_call, &k, c->what, c->hint, &t);
        calls = ncclab_trace_count_mask(c->traced);
        ncclab_perf_trace(&moved, c->traced);
    }
    if (!c->absent && c->args) {
        const int sum = c->redop && strcmp(c->redop, "sum") == 0;
        const int bufs = (c->args & NCCLAB_ARGS_BUFFERS) != 0;
        /* A row that counts sends (lab 4) checks its receives too. */
        const unsigned kinds =
            c->traced & NCCLAB_TRACED(SEND) ? c->traced | NCCLAB_TRACED(RECV) : c->traced;
        ncclab_perf_args(
            &moved, kinds, (c->args & NCCLAB_ARGS_OP) && sum ? (int)ncclSum : NCCLAB_TRACE_ANY_OP,
            bufs ? b->send : NCCLAB_TRACE_ANY_BUF, bufs ? b->recv : NCCLAB_TRACE_ANY_BUF);
    }
    if (!c->absent && c->after) c->after(lab, c, b, &calls, &moved);
    if (c->random) ncclab_lab_reveal(lab); /* the code under test is done: every rank, absent too */
    /* A rank that could not run (no communicator) counts as wrong even with -c 0. */
    const int checked = (c->check || c->verify) && (lab->opts.check || c->absent);
    if (checked && !c->absent) {
        if (c->verify)
            c->verify(lab, b, &s);
        else
            ncclab_lab_expect(lab, b->recv, count, b->expected, &s);
    }
    if (!c->check_only) {
        long long wrong = checked ? (long long)s.mismatches : -1;
        struct ncclab_record *rec = ncclab_lab_perf(lab, c, count, &t, calls, wrong, &moved);
        if (busy_at_return >= 0) ncclab_record_int(rec, "busy_at_return", busy_at_return);
        /* What the events said, so that a time returned in their unit is
         * recognised from the numbers themselves, whatever the load. */
        if (elapsed_reads > 0) {
            ncclab_record_int(rec, "elapsed_reads", elapsed_reads);
            ncclab_record_num(rec, "elapsed_ms", elapsed_ms);
            ncclab_record_num(rec, "elapsed_ms_sum", elapsed_ms_sum);
        }
        if (c->fields) c->fields(lab, b, rec, 1);
    }
    if (checked && c->check) {
        ncclab_report_check(&lab->report, c->check, &s);
        if (c->random) ncclab_lab_note_offsets(lab, c->absent ? 0 : lab->checked_offsets);
        if (c->fields) c->fields(lab, b, &lab->report.recs[lab->report.nrecs - 1], 0);
    }
    return t.avg_us;
}

void ncclab_lab_sweep(struct ncclab_lab *lab, const struct ncclab_case *cases, int ncases,
                      struct ncclab_bufs *b)
{
    for (int i = 0; i < lab->nsizes; i++)
        for (int k = 0; k < ncases; k++)
            if (!cases[k].task || ncclab_lab_runs(lab, cases[k].task))
                ncclab_lab_case(lab, &cases[k], b, lab->sizes[i] / sizeof(float));
}

void ncclab_lab_expect(struct ncclab_lab *lab, const float *buf, size_t count, double expected,
                       struct ncclab_summary *s)
{
    ncclab_summarise(buf, count, (float)expected, 1e-6, lab->stream, s);
}

void ncclab_lab_expect_rows(struct ncclab_lab *lab, const float *buf, size_t count, int rows,
                            double base, double step, const double *offsets,
                            struct ncclab_summary *all, int *bad_rows, int *first_bad_row)
{
    *all = (struct ncclab_summary){.count = count * (size_t)rows,
                                   .first_bad = -1,
                                   .min = INFINITY,
                                   .max = -INFINITY,
                                   .expected = base + (rows - 1) * step};
    *bad_rows = 0;
    *first_bad_row = -1;
    for (int i = 0; i < rows; i++) {
        struct ncclab_summary row;
        const double want = base + i * step;
        if (offsets)
            ncclab_lab_expect_input(lab, buf + (size_t)i * count, count, want, offsets[i], 1e-6,
                                    &row);
        else
            ncclab_lab_expect(lab, buf + (size_t)i * count, count, want, &row);
        all->mismatches += row.mismatches;
        if (row.mismatches == 0) {
            if (*first_bad_row < 0) {
                all->min = fmin(all->min, row.min);
                all->max = fmax(all->max, row.max);
            }
            continue;
        }
        if (*first_bad_row < 0) {
            *first_bad_row = i;
            all->first_bad = (long long)((size_t)i * count) + row.first_bad;
            all->expected = want;
            all->min = row.min;
            all->max = row.max;
        }
        (*bad_rows)++;
    }
}

void ncclab_lab_once(struct ncclab_lab *lab, ncclab_enqueue_fn fn, void *ctx, const char *what,
                     const char *hint)
{
    CUDA_CHECK(cudaStreamSynchronize(lab->stream));
    ncclab_watchdog_arm(lab->opts.timeout_s, what, hint);
    fn(ctx, lab->stream);
    CUDA_CHECK(cudaStreamSynchronize(lab->stream));
    ncclab_watchdog_disarm();
}

int ncclab_lab_count_ranks(int mine)
{
    int all = 0;
    MPI_CHECK(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    return all;
}

const char *ncclab_nccl_version(char *buf, size_t len)
{
    int version = 0;
    NCCL_CHECK(ncclGetVersion(&version));
    snprintf(buf, len, "%d.%d.%d", version / 10000, (version / 100) % 100, version % 100);
    return buf;
}

void ncclab_csv_clean(const char *in, char *out, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; in[i] && k + 1 < len; i++) {
        if (in[i] == ',') continue; /* "Host backend (Open MPI, no GPU)" loses its comma */
        out[k++] = strchr("\"\r\n", in[i]) ? ' ' : in[i];
    }
    out[k] = '\0';
}

FILE *ncclab_lab_create_file(const char *path)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++) /* mkdir -p of the parent */
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0755); /* one that fails makes fopen fail, with the reason */
            *p = '/';
        }
    FILE *f = fopen(path, "w+");
    if (!f)
        printf("# csv: cannot write %s: %s (the table above still holds every number)\n", path,
               strerror(errno));
    return f;
}

struct ncclab_bufs ncclab_lab_bufs(struct ncclab_lab *lab, double expected)
{
    struct ncclab_bufs b = {lab->comm, ncclab_device_alloc(lab->max_count, "the send buffer"),
                            ncclab_device_alloc(lab->max_count, "the receive buffer"), 0, expected};
    ncclab_fill(b.send, lab->max_count, (float)lab->world.rank, lab->stream);
    return b;
}

void ncclab_lab_free_bufs(struct ncclab_bufs *b)
{
    CUDA_CHECK(cudaFree(b->send));
    CUDA_CHECK(cudaFree(b->recv));
    b->send = b->recv = NULL;
}

void ncclab_lab_progress(const struct ncclab_lab *lab, int i, const char *fmt, ...)
{
    if (lab->world.rank != 0) return;
    char sz[32], text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: [%2d/%d] %-8s %s  (%.1f s)\n", lab->config->name, i + 1, lab->nsizes,
            ncclab_format_size(lab->sizes[i], sz, sizeof sz), text,
            (ncclab_now_us() - lab->t_start) / 1e6);
    fflush(stderr);
}

void ncclab_require_closed_groups(const char *fn)
{
    long starts = ncclab_trace_count(NCCLAB_TRACE_GROUP_START);
    long ends = ncclab_trace_count(NCCLAB_TRACE_GROUP_END);
    if (starts != ends)
        ncclab_die(1,
                   "%s called ncclGroupStart %ld times but ncclGroupEnd %ld times: every "
                   "ncclGroupStart needs its ncclGroupEnd, or nothing in the group is launched",
                   fn, starts, ends);
}

#define GiB (1024.0 * 1024.0 * 1024.0)

/* This rank's share of the memory free now (communicators made), the
 * smallest over the ranks so that they all skip the same sizes. On the host
 * backend cudaMemGetInfo reports the machine's MemAvailable, which the ranks
 * of the machine share, and the backend's MPI needs a message-sized scratch
 * buffer of its own; a process memory limit (ulimit -v) caps it too. */
int ncclab_lab_sizes_that_fit(struct ncclab_lab *lab, int buffers)
{
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    double free_bytes = (double)free_b, headroom; /* kept for NCCL's buffers and the runtime */
    const char *where = "on the device";
    char host_where[96];
#ifdef NCCLAB_HOST_BACKEND
    int share = lab->world.gpu_local_size > 0 ? lab->world.gpu_local_size : 1;
    free_bytes /= share;
    buffers++;
    snprintf(host_where, sizeof host_where,
             "of host memory (MemAvailable / %d rank%s on this machine)", share,
             share == 1 ? "" : "s");
    where = host_where;
    headroom = 256.0 * 1024 * 1024;
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (double)rl.rlim_cur / 2 < free_bytes) {
        free_bytes = (double)rl.rlim_cur / 2; /* MPI and the libraries map much of the rest */
        where = "under this process's memory limit (ulimit -v)";
    }
#else
    (void)host_where;
    headroom = fmax(2.0 * GiB, 0.05 * (double)total_b);
#endif
    double mine = free_bytes;
    MPI_CHECK(MPI_Allreduce(&mine, &free_bytes, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD));
    const size_t *sizes = lab->sizes;
    int nfit = 0;
    while (nfit < lab->nsizes && (double)sizes[nfit] * buffers + headroom <= free_bytes) nfit++;
    if (nfit == 0 || sizes[0] < sizeof(float))
        ncclab_die(2,
                   "%s: not even the smallest size (%zu bytes) fits: %.2f GiB free %s, "
                   "%.2f GiB kept as headroom",
                   lab->config->name, sizes[0], free_bytes / GiB, where, headroom / GiB);
    char sz[32];
    if (lab->world.rank == 0) {
        printf("# memory: %.1f GiB free per rank %s; a size needs %d buffers of its size + %.1f "
               "GiB headroom\n",
               free_bytes / GiB, where, buffers, headroom / GiB);
        for (int i = nfit; i < lab->nsizes; i++)
            printf("# skipping %s (%zu floats): needs %.1f GiB per rank, only %.1f GiB free %s; "
                   "its CSV rows say skipped_memory\n",
                   ncclab_format_size(sizes[i], sz, sizeof sz), sizes[i] / sizeof(float),
                   ((double)sizes[i] * buffers + headroom) / GiB, free_bytes / GiB, where);
        if (nfit < lab->nsizes)
            printf("# top size capped by memory at %s\n",
                   ncclab_format_size(sizes[nfit - 1], sz, sizeof sz));
        fflush(stdout);
    }
    for (int i = nfit; i < lab->nsizes; i++) {
        struct ncclab_record *rec = ncclab_record_begin(&lab->report, "info", "skipped");
        ncclab_record_int(rec, "bytes", (long long)sizes[i]);
        ncclab_record_str(rec, "reason", "memory");
        ncclab_record_num(rec, "need_bytes", (double)sizes[i] * buffers + headroom);
        ncclab_record_num(rec, "free_bytes", free_bytes);
    }
    lab->max_count = sizes[nfit - 1] / sizeof(float);
    return nfit;
}

int ncclab_random_multiple(int step, int below)
{
    unsigned v = 0;
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
        v = (unsigned)time(NULL) * 2654435761u ^ (unsigned)getpid() * 40503u ^ (unsigned)clock();
    return step * (int)(v % (unsigned)(below / step));
}

void ncclab_lab_draw(struct ncclab_lab *lab)
{
    lab->offset = NCCLAB_INPUT_STRIDE * (1 + ncclab_random_multiple(1, NCCLAB_INPUT_STEPS));
    free(lab->offsets);
    lab->offsets = NULL;
}

void ncclab_lab_fill_input(struct ncclab_lab *lab, float *buf, size_t count, double value)
{
    ncclab_fill(buf, count, (float)(value + lab->offset), lab->stream);
}

void ncclab_lab_reveal(struct ncclab_lab *lab)
{
    const int n = lab->world.nranks;
    if (!lab->offsets) lab->offsets = calloc((size_t)n, sizeof(int));
    if (!lab->offsets) ncclab_die(1, "out of memory");
    MPI_CHECK(MPI_Allgather(&lab->offset, 1, MPI_INT, lab->offsets, 1, MPI_INT, MPI_COMM_WORLD));
}

double ncclab_lab_offsets_of(const struct ncclab_lab *lab, int (*in)(int rank, const void *ctx),
                             const void *ctx)
{
    if (!lab->offsets) ncclab_die(1, "internal: the random inputs' offsets were not revealed");
    double sum = 0;
    for (int r = 0; r < lab->world.nranks; r++)
        if (!in || in(r, ctx)) sum += lab->offsets[r];
    return sum;
}

void ncclab_lab_expect_input(struct ncclab_lab *lab, const float *buf, size_t count,
                             double expected, double offset, double tol, struct ncclab_summary *s)
{
    ncclab_summarise(buf, count, (float)(expected + offset), tol, lab->stream, s);
    s->expected = expected;
    if (s->mismatches == 0 && s->count > 0) {
        s->min = s->max = expected; /* right up to float rounding: exactly the plain value */
    } else if (fmod(offset, NCCLAB_INPUT_STRIDE) == 0) {
        /* Whatever the value came from, its plain part (NaN stays NaN);
         * one beyond any sum of offsets came from elsewhere: as it is. */
        const double beyond =
            (double)NCCLAB_INPUT_STRIDE * (NCCLAB_INPUT_STEPS * lab->world.nranks + 1);
        if (fabs(s->min) < beyond)
            s->min -= NCCLAB_INPUT_STRIDE * nearbyint(s->min / NCCLAB_INPUT_STRIDE);
        if (fabs(s->max) < beyond)
            s->max -= NCCLAB_INPUT_STRIDE * nearbyint(s->max / NCCLAB_INPUT_STRIDE);
    } else {
        s->min -= offset;
        s->max -= offset;
    }
    lab->checked_offsets = offset;
}

void ncclab_lab_note_offsets(struct ncclab_lab *lab, double offsets)
{
    struct ncclab_record *rec = &lab->report.recs[lab->report.nrecs - 1];
    ncclab_record_int(rec, "offset", lab->offset);
    ncclab_record_num(rec, "offsets", offsets);
}

void ncclab_lab_sit_out(struct ncclab_lab *lab, const struct ncclab_case *c)
{
    MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD)); /* ncclab_lab_case's, before the clock starts */
    if (c->random) {
        ncclab_lab_draw(lab);
        ncclab_lab_reveal(lab);
    }
}
