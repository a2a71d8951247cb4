/* Making a lab's runs: the machine gate, each run's command, the order
 * (schedule.h). */
#include "schedule.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyse.h"
#include "cgroup.h"
#include "engine.h"
#include "params.h"
#include "records.h"
#include "runner.h"
#include "sandbox.h"
#include "slots.h"
#include "text.h"

/* More runnable work than twice the CPUs over the last minute: a run that
 * hung then may only have been starved (seen once in CI, the reference's
 * lab 2 beside the suite's other sections at a load of about 110 on 2
 * CPUs). */
static int machine_overloaded(double *load)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return getloadavg(load, 1) == 1 && cpus > 0 && *load > 2.0 * (double)cpus;
}

/* ---- the machine's memory, shared with other graders ---- */

/* Every grader whose pool is the machine's memory (cgroup.h) admits steps
 * while its own steps' limits fit in the pool, blind to the others: two
 * graders at once (a test suite's sections side by side, Gradescope
 * attacks graded two at a time, two courses on one server) gave their runs
 * up to twice what the machine has, and hostile runs filling both would
 * have woken the machine's OOM killer. So those graders also keep one
 * ledger: a root-only file whose first bytes stand for the pool in 64 MiB
 * units. A step holds a lock on a run of bytes, one per unit of its limit
 * (rounded down, at least one: a lone grader's steps, which its own gate
 * keeps within the pool, never wait here; graders side by side go past
 * the pool by less than a unit per step, well inside the reserve), on a
 * descriptor of its own: closing it, or the grader's death, gives them
 * back. The run is found first fit, one lock call per step holding units
 * on the way (F_OFD_GETLK names the one in the way; the search goes on
 * past its end): byte by byte, a waiting step made a lock call per unit
 * (336 on a 24 GiB machine) on every try, tens of thousands a second of
 * kernel time across a test suite's waiting steps. Steps' limits are
 * mostly one share (cgroup_step_memory), so the runs rarely fragment. */
#define LEDGER_UNIT ((size_t)64 << 20)
/* Threads a run may keep runnable at once before it counts as a CPU hog:
 * this many per rank, and the launcher's and some to spare. */
#define RUN_BUSY_PER_RANK 8
#define RUN_BUSY_SPARE 16

static int ledger_open(void)
{
    /* Root only: only root makes memory groups (cgroup.c), and a file a
     * student's uid could open would let a run hold the whole pool. */
    if (geteuid() != 0 || !cgroup_memory_pool_is_machine()) return -1;
    const char *dir = getenv("NCCLAB_GRADER_LEDGER_DIR");
    if (!dir || !*dir) dir = "/run/ncclab-grader";
    (void)mkdir(dir, 0700);
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
        (st.st_mode & 077) != 0)
        return -1;
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/memory", dir) >= (int)sizeof path) return -1;
    return open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
}

/* Hold `bytes` of the machine's pool in the ledger, waiting while the
 * steps of every grader hold too much of it: the descriptor that holds
 * them, or -1 (no ledger here, or nothing to hold). */
static int machine_memory_take(size_t bytes)
{
    size_t units = cgroup_memory_pool() / LEDGER_UNIT, want = bytes / LEDGER_UNIT;
    if (bytes == 0 || units == 0) return -1;
    if (want < 1) want = 1;
    if (want > units) want = units;
    for (useconds_t nap = 2000;; nap = nap < 64000 ? nap * 2 : nap) {
        int fd = ledger_open();
        if (fd < 0) return -1;
        size_t start = 0;
        /* Each call either takes the run or moves past a holder (or finds
         * the holder gone and tries again): a bound, for a ledger that
         * changes under the search without end; then a nap, as when full. */
        for (size_t tries = 0; start + want <= units && tries < 4 * units + 8; tries++) {
            const struct flock run = {.l_type = F_WRLCK,
                                      .l_whence = SEEK_SET,
                                      .l_start = (off_t)start,
                                      .l_len = (off_t)want};
            struct flock fl = run, in_way = run;
            if (fcntl(fd, F_OFD_SETLK, &fl) == 0) return fd;
            if ((errno != EAGAIN && errno != EACCES) || fcntl(fd, F_OFD_GETLK, &in_way) != 0) {
                close(fd); /* no such locks here: do without */
                return -1;
            }
            if (in_way.l_type == F_UNLCK) continue; /* given back meanwhile */
            size_t end = in_way.l_len == 0 ? units : (size_t)(in_way.l_start + in_way.l_len);
            start = end > start ? end : start + 1;
        }
        close(fd); /* never hold part of it while waiting */
        usleep(nap);
    }
}

/* ---- the machine, shared by the submissions graded at once ---- */

void machine_gate_init(struct machine_gate *g, int slots)
{
    memset(g, 0, sizeof *g);
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->changed, NULL);
    g->slots = slots > 0 ? slots : 1;
    g->mem_pool = cgroup_memory_pool();
}

int machine_gate_enter(struct machine_gate *g, int alone, size_t mem_bytes)
{
    if (!g) return -1;
    pthread_mutex_lock(&g->lock);
    if (alone) {
        g->waiting_alone++;
        while (g->busy > 0 || g->alone) pthread_cond_wait(&g->changed, &g->lock);
        g->waiting_alone--;
        g->alone = 1;
    } else {
        /* Slot and memory taken together, under one lock: a step never
         * holds one while it waits for the other. */
        while (g->busy >= g->slots || g->alone || g->waiting_alone > 0 ||
               (g->busy > 0 && g->mem_used + mem_bytes > g->mem_pool))
            pthread_cond_wait(&g->changed, &g->lock);
        g->busy++;
    }
    g->mem_used += mem_bytes;
    pthread_mutex_unlock(&g->lock);
    return machine_memory_take(mem_bytes);
}

void machine_gate_leave(struct machine_gate *g, int alone, size_t mem_bytes, int held)
{
    if (!g) return;
    if (held >= 0) close(held); /* the ledger's units go with it */
    pthread_mutex_lock(&g->lock);
    g->mem_used -= mem_bytes;
    if (alone)
        g->alone = 0;
    else
        g->busy--;
    pthread_cond_broadcast(&g->changed);
    pthread_mutex_unlock(&g->lock);
}

/* ---- making one run ---- */

/* Processes and threads one run may have at once (its group's pids.max
 * and, where each run has a uid of its own, that uid's RLIMIT_NPROC). On
 * the host backend a rank of a lab uses six or seven threads (its own, its
 * streams' workers, the watchdog, Open MPI's), the launcher and the sandbox
 * a dozen: 10 a rank is enough for any correct run, and a student's
 * spinning threads or processes beyond it are refused, so one run cannot
 * put hundreds of runnable tasks on the machine (the load every other run
 * and job there shares). Real NCCL starts threads of its own for each
 * communicator (proxy and service threads, and socket helpers for every
 * network connection): lab 6's five communicators across virtual nodes
 * needed more than 64 for 4 ranks (pthread_create failed on 4 x H200), so
 * the CUDA backend gets 128 a rank. */
static long run_task_limit(int nranks, const char *backend)
{
    const long per_rank = strcmp(backend, "cuda") == 0 ? 128 : 10;
    return per_rank * (nranks > 0 ? nranks : 8) + 24;
}

/* A run that only waits (a hang until its watchdog ends it) gives the
 * machine's run slots back: others may compute meanwhile. */
static void slots_idle(void *arg) { run_slots_give(arg); }

/* Make the run once, under the machine gate (alone: no other build or run
 * beside it), in its sandbox and its group when there are. */
static void make_run(struct job *job, char **argv, char **env, const struct run_limits *lim,
                     int alone)
{
    struct run *run = job->run;
    const struct engine_options *opt = job->opt;
    const struct sandbox *sb = opt->sandbox;
    struct run_cgroup group;
    /* Memory for every rank (each also has its own address-space limit),
     * the launcher and the sandbox, within the run's share of the machine
     * (cgroup.h: the limits of the runs at once add up to what it has);
     * threads count as pids. */
    size_t mem = cgroup_step_memory(lim->mem_bytes * (size_t)(run->nranks + 2));
    long tasks = run_task_limit(run->nranks, run->env->backend);
    int grouped = cgroup_make(opt->cgroups, mem, tasks, &group) == 0;
    int held = machine_gate_enter(opt->gate, alone, mem);
    /* The machine's other graders and tests (NCCLAB_RUN_SLOTS): a slot per rank. */
    struct run_slots slots;
    run_slots_take(run->nranks, &slots);
    if (sb) {
        char inside_bin[64];
        snprintf(inside_bin, sizeof inside_bin, SANDBOX_DIR "/lab%d", job->mod->number);
        struct sandbox_mount m = {job->binary, inside_bin, 0};
        char **pre = sandbox_argv(sb, &m, 1, "/tmp");                /* NULL: uid only */
        struct sandbox_view *view = sandbox_view_new(sb, job->work); /* uid only, where it may */
        int uid = sandbox_uid_acquire(sb);
        struct run_confine c = {.prefix = pre,
                                .uid = uid,
                                .nproc = sb->as_root && sb->nproc > tasks ? tasks : sb->nproc,
                                .env = sb->env,
                                .cgroup = grouped ? &group : NULL,
                                .enter = view ? sandbox_view_enter : NULL,
                                .enter_arg = view,
                                .idle = slots_idle,
                                .idle_arg = &slots};
        run_confined(argv, env, pre ? NULL : job->work, lim, &c, &run->out);
        sandbox_uid_release(sb, uid);
        sandbox_view_free(view);
        sandbox_argv_free(pre);
    } else {
        struct run_confine c = {.uid = -1,
                                .nproc = sandbox_unconfined_nproc(),
                                .cgroup = grouped ? &group : NULL,
                                .idle = slots_idle,
                                .idle_arg = &slots};
        run_confined(argv, env, job->work, lim, &c, &run->out);
    }
    run_slots_give(&slots);
    /* The memory goes back to the pool once the group is empty and gone:
     * killed processes (a hog's ranks, several GiB each) still hold theirs
     * for a while, and a step let in beside them could go past the pool. */
    if (grouped) cgroup_remove(&group);
    machine_gate_leave(opt->gate, alone, mem, held);
}

/* Make the run (`alone`: with the machine to itself), then read and judge
 * its output, replacing whatever an earlier attempt left. */
static void make_and_judge(struct job *job, char **argv, char **env, const struct run_limits *lim,
                           int alone)
{
    struct run *run = job->run;
    run_output_free(&run->out);
    records_free(&run->recs);
    make_run(job, argv, env, lim, alone);
    records_parse(run->out.out, run->out.out_len, &run->recs);
    analyse_run(job->mod, run);
}

/* When *flag (a field of job->run that analyse_run sets) says the run
 * failed in a way that is not the student's, and fewer than `most` runs of
 * the lab were made again for it (*count, the lab's counter), makes it
 * again alone; if the flag holds again, the problem says so (again_too). */
static void remake_alone(struct job *job, char **argv, char **env, const struct run_limits *lim,
                         const int *flag, int *count, int most, const char *what,
                         const char *again_too)
{
    struct run *run = job->run;
    if (!*flag || !count || __atomic_fetch_add(count, 1, __ATOMIC_RELAXED) >= most) return;
    if (run->env->verbose)
        fprintf(stderr, "grader: lab %d run %s%s: made again alone\n", job->mod->number,
                run->var->id, what);
    make_and_judge(job, argv, env, lim, 1);
    if (*flag) text_append(run->problem, sizeof run->problem, "%s", again_too);
}

static void execute_run(struct job *job)
{
    struct run *run = job->run;
    const struct engine_options *opt = job->opt;
    const struct sandbox *sb = opt->sandbox;
    int ns = sandbox_has_namespaces(sb); /* bwrap: paths and network of its own */
    char args[512], np[16], inside_bin[64];
    variation_args(run, args, sizeof args);
    snprintf(np, sizeof np, "%d", run->nranks);
    snprintf(inside_bin, sizeof inside_bin, SANDBOX_DIR "/lab%d", job->mod->number);
    struct strv av = {0};
    char **launcher = split_words(opt->launcher);
    sv_addv(&av, launcher);
    sv_add(&av, "-np");
    sv_add(&av, np);
    /* The run's options travel in the environment (common/options.c reads
     * NCCLAB_ARGS), not on the command line: without a process namespace
     * of its own (uid-only mode) a rank could read every other run's
     * command line in /proc, the hidden runs' among them. */
    sv_add(&av, "-x");
    sv_add(&av, "NCCLAB_ARGS");
    sv_add(&av, ns ? inside_bin : job->binary);
    free_words(launcher);

    char port_env[64];
    /* NCCLAB_CONFINE: the lab's system-call filter, from its first
     * instruction on (common/confine.h), in every mode. UCX_MEM_EVENTS=no:
     * where Open MPI picks UCX (its pml on a GPU box with a network card),
     * UCX's memory hooks rewrite the C library's code in place ("bistro"),
     * which needs executable pages made writable: the filter would end the
     * rank inside MPI_Init. The labs' MPI only bootstraps; NCCL moves the
     * data. */
    char args_env[600];
    snprintf(args_env, sizeof args_env, "NCCLAB_ARGS=%s", args);
    /* The fixed part, then at most 3 for the network, 7 for the host
     * backend and 2 for TCP runs; the rest stays NULL. */
    char *env[24] = {"OMPI_ALLOW_RUN_AS_ROOT=1",
                     "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                     "OMPI_MCA_rmaps_base_oversubscribe=1",
                     "NCCLAB_CONFINE=1",
                     "UCX_MEM_EVENTS=no",
                     args_env};
    int k = 6;
    char net_env[2][64], memcpy_env[64];
    if (run_net_on(run)) {
        /* Virtual nodes with a network between them: a link the grader
         * knows, since its ceiling judges the run (profile net_*). The host
         * backend's link model is set to the profile's; NCCL's virtual nodes
         * on one GPU box talk through its sockets, whatever network cards
         * the box has. */
        const struct ncclab_limits *l = &run->env->profile->limits;
        if (l->net_model > 0 && l->net_gbps > 0) {
            snprintf(net_env[0], sizeof net_env[0], "NCCLAB_NET_GBPS=%g", l->net_gbps);
            snprintf(net_env[1], sizeof net_env[1], "NCCLAB_NET_LATENCY_US=%g", l->net_latency_us);
            env[k++] = net_env[0];
            env[k++] = net_env[1];
        }
        if (strcmp(run->env->backend, "cuda") == 0) env[k++] = "NCCL_IB_DISABLE=1";
    }
    if (strcmp(run->env->backend, "host") == 0) {
        /* One node, data over shared memory: Open MPI's ob1 and vader,
         * without probing UCX and the network transports first, which took
         * half of a short run's start (0.46 -> 0.21 s for lab 1 on 2 ranks). */
        env[k++] = "OMPI_MCA_pml=ob1";
        env[k++] = "OMPI_MCA_btl=self,vader";
        /* PMIx's plain hash store of the job's data, not the shared-memory
         * one (ds12/ds21), made for thousands of ranks a node: a segment
         * made, sized and mapped by mpirun and every rank at each start
         * was a sixth of an empty MPI program's start and end (2 ranks:
         * 65 -> 54 CPU ms on the 2-core VM; the grader starts thousands). */
        env[k++] = "PMIX_MCA_gds=hash";
        /* A rank waiting in MPI (a peer late to MPI_Bcast, a student's
         * loop before it) yields its core instead of polling: a hung run
         * then leaves the CPU to the runs beside it while its watchdog
         * counts. hwloc's plugins for PCI, OpenCL, X displays and libxml
         * find nothing a host run uses, and loading them was a fifth of
         * every rank's MPI_Init (0.33 -> 0.26 CPU s for 4 ranks). Its
         * built-in linuxio component still walked /sys for PCI devices and
         * read their configuration space, in mpirun and in every rank:
         * slow in a virtual machine, and 0.09 of the 0.23 CPU s a 4-rank
         * run of an empty MPI program takes to start and end. */
        env[k++] = "OMPI_MCA_mpi_yield_when_idle=1";
        env[k++] = "HWLOC_PLUGINS_BLACKLIST=hwloc_pci,hwloc_opencl,hwloc_gl,hwloc_xml_libxml";
        env[k++] = "HWLOC_COMPONENTS=-linuxio";
        /* The ceiling's memcpy figure, measured once by the grader: rank 0
         * of every run would otherwise measure it again (448 MB copied,
         * 0.15 of the 0.40 CPU s of a short 4-rank run), and its own
         * timing verdicts use the same ceiling as the grader's. */
        if (run->env->profile->memcpy_gbps > 0) {
            snprintf(memcpy_env, sizeof memcpy_env, "NCCLAB_MEMCPY_GBPS=%.17g",
                     run->env->profile->memcpy_gbps);
            env[k++] = memcpy_env;
        }
    }
    if (run->var->flags & VAR_TCP) {
        int port = run_master_port(run->env->seed, job->index, ns);
        snprintf(port_env, sizeof port_env, "MASTER_PORT=%d", port);
        env[k++] = "MASTER_ADDR=127.0.0.1";
        env[k++] = port_env;
    }
    struct run_limits lim = {
        .timeout_s = run->env->timeout_s,
        /* The CPU a run may use before its processes are stopped, above
         * what a 2-CPU machine gives in its time limit, grace included. */
        .cpu_s = run->env->timeout_s * 3 + 10,
        .mem_bytes = opt->mem_bytes,
        .file_bytes = 64u << 20,
        .output_bytes = opt->output_bytes,
        .max_files = ns || (sb && sb->view) ? RUN_MAX_FILES : 0,
        .starved_grace = 1,
        /* A lab's rank keeps its main thread and at most a couple of the
         * backend's busy; a run past this spins (RUN_HOG). */
        .busy_threads = RUN_BUSY_PER_RANK * (long)run->nranks + RUN_BUSY_SPARE,
    };
    int alone = (run->var->flags & VAR_TIMING) != 0;
    make_and_judge(job, av.v, env, &lim, alone);
    double load = 0;
    int neighbours = !alone && !opt->cgroups && opt->gate && opt->gate->slots > 1;
    /* On a busy machine, once per lab: a submission that really hangs
     * costs one more timeout, not one per run. */
    /* A CPU hog spins alone as it does beside others: never made again. */
    int hung = run->hung && run->out.end != RUN_HOG;
    int busy = !neighbours && hung && job->busy_remakes && machine_overloaded(&load) &&
               __atomic_fetch_add(job->busy_remakes, 1, __ATOMIC_RELAXED) == 0;
    if (hung && (neighbours || busy)) {
        /* No group per run here, so runs beside it could have taken its
         * CPU (a neighbour's hundred spinning threads); or the machine was
         * busy with more than this grader (other jobs, a CI's other tests)
         * whatever its groups: a hang is charged only if the run also
         * hangs when made again alone. */
        if (run->env->verbose)
            fprintf(stderr, "grader: lab %d run %s hung %s: made again alone\n", job->mod->number,
                    run->var->id, neighbours ? "beside other runs" : "on a busy machine");
        make_and_judge(job, av.v, env, &lim, 1);
    }
    /* A rank died inside Open MPI's MPI_Finalize, after the lab's work
     * (common/bootstrap.c names that phase): a race in Open MPI and PMIx
     * seen under load, not the student's code. Made once more, alone; a
     * second crash there counts, and says it was the second. Once per lab:
     * output that only claims such a crash costs the class one extra run,
     * not one per run. */
    remake_alone(job, av.v, env, &lim, &run->finalize_crash, job->finalize_remakes, 1,
                 " crashed in MPI_Finalize",
                 " (it crashed in MPI_Finalize, after the lab's work, when made again alone too)");
    /* Open MPI's launcher failed before any rank's output (analyse.c): made
     * once more, alone; three runs of a lab at most (in CI two runs of one
     * lab met it within seconds of each other). */
    remake_alone(job, av.v, env, &lim, &run->launch_failed, job->launch_remakes, 3,
                 ": Open MPI did not start it",
                 " (Open MPI failed to start it when made again alone too)");
    sv_free(&av);
    /* Only now may a hang stop later runs (blocked_by): a run that hung
     * beside others and not when made again alone stops none. */
    __atomic_store_n(&job->decided, 1, __ATOMIC_RELEASE);
    if (run->env->verbose)
        fprintf(stderr, "grader: lab %d run %s: %.1f s, %d records%s%s\n", job->mod->number,
                run->var->id, run->out.wall_s, run->recs.n, run->usable ? "" : ": ",
                run->usable ? "" : run->problem);
}

/* ---- the order of a lab's runs ---- */

/* Runs in the order they are made: every run but the throughput ones in
 * the module's order, in parallel; then the throughput runs, alone. When
 * a run hangs, no later run in this order that would hang the same way
 * (hang_covers: the same task, or a run of the whole lab) is made or
 * counted, whichever finished first: what is graded depends on the
 * module's table only, not on --jobs or timing. */
struct schedule {
    struct job **order;
    int n;
    int next;
    int phase; /* 0: public runs only; 1: hidden runs only */
    pthread_mutex_t lock;
};

/* The position of a counted, hung run before p whose hang covers run p,
 * or -1. While runs are being made (`making`), only runs whose outcome is
 * final count: while a run that hung is made again alone, the runs after
 * it are made too, and the last pass below drops them if the hang stands. */
static int blocked_by(const struct schedule *s, int p, int making)
{
    for (int q = 0; q < p; q++) {
        const struct job *j = s->order[q];
        if (making && !__atomic_load_n(&j->decided, __ATOMIC_ACQUIRE)) continue;
        /* A hidden run's hang stops no public run: what the public runs
         * show must not depend on the hidden ones. */
        const struct run *next = s->order[p]->run;
        if (!j->after_hang && j->run->hung && (!j->run->hidden || next->hidden) &&
            hang_covers(j->run->declared, next->declared))
            return q;
    }
    return -1;
}

static void *worker(void *arg)
{
    struct schedule *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        int pos = -1;
        while (s->next < s->n) {
            int p = s->next++;
            struct job *j = s->order[p];
            if (j->taken || (j->run->var->flags & VAR_TIMING) ||
                (s->phase >= 0 && j->run->hidden != s->phase))
                continue;
            j->taken = 1;
            if (blocked_by(s, p, 1) >= 0) {
                j->after_hang = 1;
                continue;
            }
            pos = p;
            break;
        }
        pthread_mutex_unlock(&s->lock);
        if (pos < 0) return NULL;
        execute_run(s->order[pos]);
    }
}

void schedule_runs(struct job *jobs, int n, const struct engine_options *opt, int max_ranks)
{
    struct schedule s = {.order = calloc((size_t)n + 1, sizeof(struct job *)),
                         .n = n,
                         .lock = PTHREAD_MUTEX_INITIALIZER};
    if (!s.order) abort();
    /* Runs made by an earlier call (taken) keep their places, first; the
     * new ones (a lab's task replays) come after all of them. */
    int k = 0;
    char *fresh = calloc((size_t)n + 1, 1);
    if (!fresh) abort();
    for (int i = 0; i < n; i++) fresh[i] = !jobs[i].taken;
    for (int round = 0; round < 2; round++)
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < n; i++)
                if (fresh[i] == round && !!(jobs[i].run->var->flags & VAR_TIMING) == pass)
                    s.order[k++] = &jobs[i];
    int nthreads = opt->jobs > 0 ? opt->jobs : 1;
    pthread_t th[16];
    if (nthreads > 16) nthreads = 16;
    /* Uid only without a view per run: each would see the others'
     * processes and share their folders, sockets and loopback (sandbox.h). */
    if (!sandbox_runs_at_once(opt->sandbox)) nthreads = 1;
    /* Runs made at once can signal each other in every mode (the CPU, the
     * load average, locks on the binary all of them read): the public runs
     * are all made and ended before the first hidden one starts, so none
     * can hear of a hidden run while its output is one a student sees
     * before the due date (issue 35). */
    for (int phase = 0; phase <= 1; phase++) {
        s.phase = phase;
        s.next = 0;
        for (int t = 0; t < nthreads; t++) pthread_create(&th[t], NULL, worker, &s);
        for (int t = 0; t < nthreads; t++) pthread_join(th[t], NULL);
    }
    /* Throughput runs last, one at a time, on an otherwise idle machine. */
    for (int p = 0; p < s.n; p++) {
        struct job *j = s.order[p];
        if (j->taken) continue;
        j->taken = 1;
        if (blocked_by(&s, p, 1) >= 0) {
            j->after_hang = 1;
            continue;
        }
        execute_run(j);
    }
    /* Whatever came after a hang in the order and would hang the same
     * way does not count, made or not. */
    for (int p = 0; p < s.n; p++) {
        struct job *j = s.order[p];
        int q = blocked_by(&s, p, 0);
        if (q < 0 || !fresh[j - jobs] || j->run->excluded || j->run->nranks > max_ranks) continue;
        j->after_hang = 1;
        j->hang_blocker = (int)(s.order[q] - jobs);
        j->run->skipped = 1;
        j->run->usable = 0;
    }
    free(fresh);
    free(s.order);
}
