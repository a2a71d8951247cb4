#include "lab.h"

#include <stdio.h>
#include <string.h>

static void print_banner(const struct ncclab_lab *lab)
{
    const struct ncclab_world *w = &lab->world;
    int version = 0;
    NCCL_CHECK(ncclGetVersion(&version));
    printf("# ncclab %s | backend %s | NCCL %d.%d.%d | %d rank(s) on %d node(s)%s | %s\n",
           lab->config->name, ncclab_backend_name(), version / 10000, (version / 100) % 100,
           version % 100, w->nranks, w->nnodes, lab->opts.ranks_per_node > 0 ? " (virtual)" : "",
           lab->gpu_name);
    fflush(stdout);
}

void ncclab_lab_start(struct ncclab_lab *lab, const struct ncclab_lab_config *config, int argc,
                      char **argv)
{
    memset(lab, 0, sizeof *lab);
    lab->config = config;

    struct ncclab_opts defaults = config->defaults;
#ifdef NCCLAB_HOST_BACKEND
    /* Host memory and CPU cores are far slower than HBM and NVLink. */
    if (config->host_default_bytes)
        defaults.min_bytes = defaults.max_bytes = config->host_default_bytes;
#endif
    /* The lab's own options, then --task when the lab has tasks. */
    struct ncclab_opt extra[32];
    int nextra = 0, task = 0;
    char choices[256];
    for (int i = 0; config->extra && config->extra[i].long_name && nextra < 30; i++)
        extra[nextra++] = config->extra[i];
    if (config->tasks) {
        snprintf(choices, sizeof choices, "all|%s", config->tasks);
        extra[nextra++] = ncclab_task_option(&task, choices);
    }
    extra[nextra] = (struct ncclab_opt){NULL, 0, 0, NULL, NULL, 0, 0, NULL};
    ncclab_parse_options(argc, argv, config->name, config->summary, &defaults, extra, &lab->opts);
    if (config->tasks) {
        static char task_name[64]; /* lab->task points here for the whole run */
        lab->task = ncclab_task_name(task, choices, task_name, sizeof task_name);
    }

    ncclab_mpi_bootstrap(&argc, &argv, lab->opts.ranks_per_node, &lab->world);
    const struct ncclab_world *w = &lab->world;
    if (lab->opts.root >= w->nranks)
        ncclab_die(2, "--root %d is not a rank of this job (ranks 0..%d)", lab->opts.root,
                   w->nranks - 1);

    ncclab_watchdog_arm(lab->opts.timeout_s, "setting up (GPU, communicator)",
                        "a rank did not start or could not reach the others");
    lab->device = ncclab_select_gpu(w->gpu_local_rank, w->gpu_local_size);
    ncclab_gpu_name(lab->gpu_name, sizeof lab->gpu_name);
    CUDA_CHECK(cudaStreamCreateWithFlags(&lab->stream, cudaStreamNonBlocking));

    if (config->init_comm) {
        ncclUniqueId id;
        if (w->rank == 0) NCCL_CHECK(ncclGetUniqueId(&id));
        ncclab_mpi_share_unique_id(&id);
        NCCL_CHECK(ncclCommInitRank(&lab->comm, w->nranks, id, w->rank));
    }
    ncclab_watchdog_disarm();

    ncclab_report_init(&lab->report, config->number, &lab->world, lab->device);
    if (w->rank == 0) {
        print_banner(lab);
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
    if (lab->comm) {
        CUDA_CHECK(cudaStreamSynchronize(lab->stream));
        NCCL_CHECK(ncclCommDestroy(lab->comm));
        lab->comm = NULL;
    }
    CUDA_CHECK(cudaStreamDestroy(lab->stream));
    ncclab_watchdog_disarm();
    if (lab->world.rank == 0) {
        printf("# %s: %s\n", lab->config->name,
               failed ? "FAILED — some checks did not pass (see the lines above)"
                      : "all checks passed");
        fflush(stdout);
    }
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
