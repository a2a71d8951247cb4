/* Lab 8 driver — provided, do not edit. Your code goes in own_allreduce.c.
 *
 * The race: every size from -b to -e (factor -f), timed for NCCL's own
 * ncclAllReduce and for each of your all-reduces (--task picks one):
 *   nccl       NCCL's all-reduce (lab 2's Task 1, common/taught.h), the baseline
 *   ring       lab8_ring_allreduce (Task 1)
 *   pipelined  lab8_ring_allreduce_pipelined with --slices K (Task 2)
 *   rd         lab8_recursive_doubling, power-of-two rank counts only (Task 3)
 *   own        lab8_allreduce with --slices and the threshold (Task 3)
 * Each is a row of the case table below: sendbuf refilled (fill(): a
 * pattern with a random offset per rank), timed under the watchdog while
 * the trace counts your NCCL calls (common/trace.h), then recvbuf checked
 * (<algo>_sum) and sendbuf checked unchanged (<algo>_sendbuf). The driver
 * then fits a ring's alpha-beta model to each curve, prints the table, and
 * rank 0 writes the CSV (lab 7's columns; the model fitted to your ring as
 * pattern ring_model) to --csv (default results/lab8-<backend>.csv). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lab7_sweep/lab7.h" /* the CSV's row */
#include "lab.h"
#include "lab8.h"
#include "streamprobe.h"

#define PATTERN_PERIOD 1021u /* a prime: a misplaced piece almost never lines up */

enum algo { ALGO_NCCL, ALGO_RING, ALGO_PIPELINED, ALGO_RD, ALGO_OWN, NALGOS };

static const char *const algo_name[NALGOS] = {"nccl", "ring", "pipelined", "rd", "own"};

struct race {
    struct ncclab_bufs b;
    struct lab8_ctx ctx;
    enum algo algo;
    int slices;
    size_t threshold;
    int registered;              /* --register: the buffers are ncclMemAlloc'd and registered */
    struct ncclab_summary input; /* sendbuf after the last call */
    long forbidden, unjoined;    /* in the last run */
    int probe_unjoined[NALGOS];  /* the join probe (first_call) found work left on side */
    const char *forbidden_name;
};

static void enqueue(void *arg, cudaStream_t s)
{
    struct race *r = arg;
    struct lab8_ctx c = r->ctx;
    const float *send = r->b.send;
    float *recv = r->b.recv;
    const size_t count = r->b.count;
    c.stream = s;
    switch (r->algo) {
    case ALGO_NCCL: ncclab_taught_lab2_allreduce(c.comm, s, send, recv, count); break;
    case ALGO_RING: lab8_ring_allreduce(&c, send, recv, count); break;
    case ALGO_PIPELINED: lab8_ring_allreduce_pipelined(&c, send, recv, count, r->slices); break;
    case ALGO_RD: lab8_recursive_doubling(&c, send, recv, count); break;
    case ALGO_OWN: lab8_allreduce(&c, send, recv, count, r->slices, r->threshold); break;
    case NALGOS: break;
    }
}

/* Work still queued or running on s (cudaStreamQuery's "not ready"). */
static int stream_busy(cudaStream_t s)
{
    cudaError_t e = cudaStreamQuery(s);
    if (e == cudaErrorNotReady) {
        (void)cudaGetLastError(); /* an answer, not an error to keep */
        return 1;
    }
    CUDA_CHECK(e);
    return 0;
}

#define JOIN_PROBE_US 25000.0 /* each reduction on the held side stream starts this late */

/* Untimed, before the sweep; the side stream's work done too. It is also
 * the join probe: with every reduction on ctx->side held back, a stream
 * that finishes without waiting for the side's last work leaves the side
 * busy every time (common/streamprobe.h), where without the hold the side
 * usually wins the race and the mistake shows only as wrong sums. */
static void first_call(void *arg, cudaStream_t s)
{
    struct race *r = arg;
    ncclab_stream_hold(r->ctx.side, JOIN_PROBE_US);
    enqueue(arg, s);
    ncclab_stream_hold(r->ctx.side, 0);
    CUDA_CHECK(cudaStreamSynchronize(s));
    r->probe_unjoined[r->algo] = stream_busy(r->ctx.side);
    CUDA_CHECK(cudaStreamSynchronize(r->ctx.side));
}

/* Rank r holds r + 1 + k_r + (i % 1021) in element i: data in the wrong
 * place shows, and k_r (a multiple of 8 below 1024, so a rank's input taken
 * for another's still moves the sum, by little enough for the tolerance)
 * keeps the sum unknown until the ranks' data is added up. k_sum is -1
 * until then; both live here, away from the context the student can reach. */
static int k_mine, k_sum = -1;

static void fill(struct ncclab_lab *lab, struct ncclab_bufs *b)
{
    k_mine = ncclab_random_multiple(8, 1024);
    k_sum = -1;
    ncclab_fill_pattern(b->send, b->count, (float)(lab->world.rank + 1 + k_mine), 1.0f,
                        PATTERN_PERIOD, lab->stream);
    ncclab_fill(b->recv, b->count, -1.0f, lab->stream); /* stale results must not pass */
}

/* Right after timing: the stream is idle now; work still running on the
 * side stream was never joined back into it (the contract in lab8.h). */
static void after(struct ncclab_lab *lab, const struct ncclab_case *c, struct ncclab_bufs *b,
                  long *calls, struct ncclab_perf *moved)
{
    struct race *r = (struct race *)b;
    (void)lab, (void)moved;
    /* Only now, the student's code done, does a rank learn the others' k. */
    MPI_CHECK(MPI_Allreduce(&k_mine, &k_sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    r->forbidden_name = "none";
    r->forbidden = r->algo == ALGO_NCCL ? 0 : ncclab_trace_collective_calls(&r->forbidden_name);
    r->unjoined = stream_busy(r->ctx.side) || r->probe_unjoined[r->algo];
    CUDA_CHECK(cudaStreamSynchronize(r->ctx.side));
    if (r->algo == ALGO_NCCL) return;
    ncclab_require_closed_groups(c->fn);
    /* The trace counts a send or receive with a count of 0 apart: it moves
     * nothing, but it is still the call of an (empty) step. */
    *calls = ncclab_trace_count(NCCLAB_TRACE_SEND);
}

static void verify(struct ncclab_lab *lab, struct ncclab_bufs *b, struct ncclab_summary *s)
{
    struct race *r = (struct race *)b;
    const int n = lab->world.nranks;
    ncclab_summarise_pattern(b->recv, b->count, (float)n * (n + 1) / 2.0f + (float)k_sum, (float)n,
                             PATTERN_PERIOD, 1e-6, lab->stream, s);
    if (r->algo != ALGO_NCCL)
        ncclab_summarise_pattern(b->send, b->count, (float)(lab->world.rank + 1 + k_mine), 1.0f,
                                 PATTERN_PERIOD, 0.0, lab->stream, &r->input);
}

static void fields(struct ncclab_lab *lab, struct ncclab_bufs *b, struct ncclab_record *rec,
                   int perf)
{
    struct race *r = (struct race *)b;
    if (!perf) {
        ncclab_record_int(rec, "period", PATTERN_PERIOD);
        ncclab_record_num(rec, "step", lab->world.nranks);
        ncclab_record_int(rec, "offsets", k_sum);
        if (r->algo == ALGO_NCCL) return;
        char name[32];
        snprintf(name, sizeof name, "%s_sendbuf", algo_name[r->algo]);
        ncclab_report_check(&lab->report, name, &r->input);
        return;
    }
    ncclab_record_int(rec, "recv_calls", ncclab_trace_count(NCCLAB_TRACE_RECV));
    ncclab_record_int(rec, "zero_send_calls", ncclab_trace_zero_calls(NCCLAB_TRACE_SEND));
    ncclab_record_int(rec, "zero_recv_calls", ncclab_trace_zero_calls(NCCLAB_TRACE_RECV));
    ncclab_record_int(rec, "sent_bytes", ncclab_trace_bytes(NCCLAB_TRACE_SEND));
    ncclab_record_int(rec, "received_bytes", ncclab_trace_bytes(NCCLAB_TRACE_RECV));
    ncclab_record_int(rec, "group_calls", ncclab_trace_count(NCCLAB_TRACE_GROUP_START));
    ncclab_record_int(rec, "group_end_calls", ncclab_trace_count(NCCLAB_TRACE_GROUP_END));
    ncclab_record_int(rec, "forbidden_calls", r->forbidden);
    ncclab_record_str(rec, "forbidden", r->forbidden_name);
    ncclab_record_int(rec, "unjoined", r->unjoined);
    ncclab_record_int(rec, "slices", r->slices);
    ncclab_record_int(rec, "threshold_bytes", (long long)r->threshold);
    ncclab_record_int(rec, "registered", r->registered);
}
/* What every row shares; the five differ in name, function and hint. */
#define RACE                                                                                       \
    .coll = NCCLAB_ALLREDUCE, .redop = "sum", .fill = fill, .enqueue = enqueue, .after = after,    \
    .verify = verify, .fields = fields
#define SENDRECV NCCLAB_TRACED(SEND) | NCCLAB_TRACED(RECV)
/* clang-format off */
static const struct ncclab_case cases[NALGOS] = {
    {RACE, .name = "nccl", .fn = "ncclAllReduce (driver baseline)", .check = "nccl_sum",
     .traced = NCCLAB_TRACED(ALLREDUCE), .hint = "a rank stopped early"},
    {RACE, .traced = SENDRECV, .task = "ring", .name = "ring", .fn = "lab8_ring_allreduce (Task 1)", .check = "ring_sum",
     .hint = "a ncclSend outside a group waits for its peer's ncclRecv: when every rank sends "
             "first the waits form a cycle, so each step's send and receive go in one group; or "
             "the ranks disagree on a chunk's length or on the number of steps"},
    {RACE, .traced = SENDRECV, .task = "pipelined", .name = "pipelined", .check = "pipelined_sum",
     .fn = "lab8_ring_allreduce_pipelined (Task 2)",
     .hint = "the ranks disagree on the number of pieces or steps or on a piece's length, or a "
             "step's send and receive are not in one group"},
    {RACE, .traced = SENDRECV, .task = "rd", .name = "rd", .fn = "lab8_recursive_doubling (Task 3)", .check = "rd_sum",
     .hint = "partners disagree on the count, a send is outside a group, or a rank skipped a step"},
    {RACE, .traced = SENDRECV, .task = "own", .name = "own", .fn = "lab8_allreduce (Task 3)", .check = "own_sum",
     .hint = "the ranks chose different algorithms (every rank must decide alike), or a hang in "
             "one of your algorithms (see its own run)"},
};
/* clang-format on */

/* Time one algorithm at one size, check it and add its records. Returns
 * this rank's time (us). */
static double run_algo(struct ncclab_lab *lab, struct race *r, enum algo a, size_t count)
{
    struct ncclab_case c = cases[a];
    char what[160];
    snprintf(what, sizeof what, "running %s on %zu floats", c.fn, count);
    c.what = what;
    r->algo = a;
    double t = ncclab_lab_case(lab, &c, &r->b, count);

    /* Notes for people; the grader reads the records. */
    long flags[2] = {r->forbidden, r->unjoined}, any[2];
    MPI_CHECK(MPI_Allreduce(flags, any, 2, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
    if (lab->world.rank == 0 && any[0] > 0)
        printf("# note: %s called %s (%ld collective calls on rank 0): lab 8 builds the "
               "all-reduce from ncclSend/ncclRecv only\n",
               c.fn, r->forbidden_name, r->forbidden);
    if (lab->world.rank == 0 && any[1] > 0)
        printf("# note: %s, %zu floats: work on ctx->side was still running when ctx->stream had "
               "finished: join the side stream back into ctx->stream before returning (an event "
               "recorded on side, waited for on stream)\n",
               c.fn, count);
    return t;
}

/* ---- the CSV: lab 7's, rows written by lab 7's own writer (common/taught.h) ---- */

static void csv_row(FILE *f, const struct ncclab_lab *lab, const char *gpu, const char *pattern,
                    size_t bytes, double time_us, int model)
{
    const int n = lab->world.nranks;
    const struct lab7_row row = {.pattern = pattern,
                                 .bytes = bytes,
                                 .elements = bytes / sizeof(float),
                                 .time_us = time_us,
                                 .ranks = n,
                                 .world_ranks = n,
                                 .nodes = lab->world.nnodes,
                                 .hosts = lab->hosts,
                                 .backend = ncclab_backend_name(),
                                 .gpu = gpu,
                                 .nccl_version = lab->nccl_version};
    char *line = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&line, &len);
    if (!mem) ncclab_die(1, "cannot write the CSV row in memory: %s", strerror(errno));
    ncclab_taught_lab7_write_csv_row(mem, &row);
    fclose(mem);
    /* The model's rows say so in their status column (tools/lab8-plot reads it). */
    if (model && len >= 3 && strcmp(line + len - 3, "ok\n") == 0)
        fprintf(f, "%.*smodel\n", (int)(len - 3), line);
    else
        fputs(line, f);
    free(line);
}

/* Rank 0: every measured curve, then the ring model fitted to your ring. */
static void write_csv(const char *path, const struct ncclab_lab *lab, const int *measured,
                      double (*times)[NCCLAB_MAX_STEPS], const struct ncclab_ring_fit *ring_fit)
{
    FILE *f = ncclab_lab_create_file(path);
    if (!f) return;
    char gpu[128];
    ncclab_csv_clean(lab->gpu_name, gpu, sizeof gpu);
    fprintf(f, "%s\n", LAB7_CSV_HEADER);
    int rows = 0;
    for (int a = 0; a < NALGOS; a++)
        for (int i = 0; measured[a] && i < lab->nsizes; i++, rows++)
            csv_row(f, lab, gpu, algo_name[a], lab->sizes[i], times[a][i], 0);
    for (int i = 0; ring_fit->ok && i < lab->nsizes; i++, rows++)
        csv_row(f, lab, gpu, "ring_model", lab->sizes[i],
                ncclab_ring_model_us(ring_fit, lab->world.nranks, (double)lab->sizes[i]), 1);
    fclose(f);
    printf("# wrote %s: %d row(s) — plot them: make plot-race CSV=%s\n", path, rows, path);
}

/* clang-format off */
static const struct ncclab_lab_config config = {
    /* --task NAME: only this one of your all-reduces (NCCL's always runs). */
    .number = 8, .name = "lab8", .tasks = "ring|pipelined|rd|own",
    .defaults = NCCLAB_SWEEP(4UL << 10, 1UL << 30, 4, 20, 5),
    .host_defaults = NCCLAB_SWEEP(4UL << 10, 4UL << 20, 4, 10, 3),
    .summary = "Lab 8 (bonus): your all-reduce from ncclSend/ncclRecv (ring, pipelined ring, "
               "recursive doubling) raced against ncclAllReduce over a size sweep; fits the "
               "alpha-beta model and writes a CSV for make plot-race."};
/* clang-format on */

int main(int argc, char **argv)
{
    char default_csv[64];
    snprintf(default_csv, sizeof default_csv, "results/lab8-%s.csv", ncclab_backend_name());
    const char *csv_path = default_csv;
    int slices = 2, registered = 1;
    size_t threshold = lab8_threshold_bytes;
    const struct ncclab_opt extra[] = {
        {"slices", 0, NCCLAB_OPT_INT, &slices,
         "pieces per reduce-scatter step of the pipelined ring (Task 2)", 1, LAB8_MAX_SLICES, NULL},
        {"threshold", 0, NCCLAB_OPT_SIZE, &threshold,
         "largest message for recursive doubling in lab8_allreduce (Task 3; the default is "
         "your lab8_threshold_bytes)",
         0, 0, NULL},
        {"register", 0, NCCLAB_OPT_INT, &registered,
         "1: buffers from ncclMemAlloc, registered with the communicator (zero-copy transfers "
         "on GPUs); 0: plain cudaMalloc (handout, \"Channels\")",
         0, 1, NULL},
        {"csv", 0, NCCLAB_OPT_STRING, &csv_path, "file where rank 0 writes the CSV (none: no file)",
         0, 0, "a file name (or none)"},
        NCCLAB_OPT_END,
    };
    /* NCCL gives a point-to-point transfer a share of its channels sized
     * for talking to every rank at once: 8 of 32 on 4 GPUs for a ring's
     * 64 MiB pieces. A higher floor gives your rings the channels NCCL's
     * own all-reduce uses (handout, "Channels"); set the variable yourself
     * (1 is NCCL's default) to see the difference. */
    const char *p2p =
        setenv("NCCL_MIN_P2P_NCHANNELS", "64", 0) == 0 ? getenv("NCCL_MIN_P2P_NCHANNELS") : NULL;
    const int p2p_default = p2p && strcmp(p2p, "64") == 0;
    struct ncclab_lab lab;
    ncclab_lab_start(&lab, &config, extra, argc, argv);
    const int n = lab.world.nranks, me = lab.world.rank;
    const int power_of_two = __builtin_popcount((unsigned)n) == 1;

    const size_t *sizes = lab.sizes;
    const int nsizes = lab.nsizes;

    int run[NALGOS] = {1, 1, 1, power_of_two, 1};
    for (int a = ALGO_RING; a < NALGOS; a++) run[a] = run[a] && ncclab_lab_runs(&lab, algo_name[a]);
    char sz[32];
    if (me == 0) {
        printf("# own all-reduce: recursive doubling up to %s (%s), else the pipelined ring, %d "
               "slice(s) per step%s\n# NCCL_MIN_P2P_NCHANNELS=%s%s\n# buffers: %s\n",
               ncclab_format_size(threshold, sz, sizeof sz),
               threshold == lab8_threshold_bytes ? "lab8_threshold_bytes" : "--threshold", slices,
               power_of_two ? "" : "; the ranks are not a power of two: always the ring",
               getenv("NCCL_MIN_P2P_NCHANNELS"),
               p2p_default ? " (the driver's default; yours if you set it)" : " (yours)",
               !registered ? "cudaMalloc, not registered (--register 0)"
               : strcmp(ncclab_backend_name(), "host") == 0
                   ? "ncclMemAlloc, registered with the communicator (zero-copy on GPUs; the "
                     "host backend copies either way)"
                   : "ncclMemAlloc, registered with the communicator (zero-copy; --register 0 "
                     "for cudaMalloc)");
        if (lab.task && strcmp(lab.task, "rd") == 0 && !power_of_two)
            printf("# --task rd: recursive doubling needs a power-of-two number of ranks; only "
                   "NCCL runs\n");
        fflush(stdout);
    }

    struct race race = {.slices = slices, .threshold = threshold, .registered = registered};
    struct lab8_ctx *ctx = &race.ctx;
    /* Registered buffers let NCCL copy straight into the receiver's buffer
     * instead of through its staging buffer: the same ncclSend/ncclRecv
     * calls, less memory traffic beside your additions (handout, "Channels"). */
    void *handles[3] = {NULL, NULL, NULL};
    if (registered) {
        race.b = (struct ncclab_bufs){
            lab.comm,
            ncclab_registered_alloc(lab.comm, lab.max_count, "the send buffer", &handles[0]),
            ncclab_registered_alloc(lab.comm, lab.max_count, "the receive buffer", &handles[1]), 0,
            0};
        ncclab_fill(race.b.send, lab.max_count, (float)lab.world.rank, lab.stream);
        ctx->scratch =
            ncclab_registered_alloc(lab.comm, lab.max_count, "the scratch buffer", &handles[2]);
    } else {
        race.b = ncclab_lab_bufs(&lab, 0);
        ctx->scratch = ncclab_device_alloc(lab.max_count, "the scratch buffer");
    }
    ctx->comm = lab.comm;
    NCCL_CHECK(ncclCommUserRank(lab.comm, &ctx->rank));
    NCCL_CHECK(ncclCommCount(lab.comm, &ctx->nranks));
    ctx->stream = lab.stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&ctx->side, cudaStreamNonBlocking));
    for (int i = 0; i < LAB8_NUM_EVENTS; i++)
        CUDA_CHECK(cudaEventCreateWithFlags(&ctx->events[i], cudaEventDisableTiming));

    /* NCCL connects peers on their first transfer: do that untimed. */
    for (int a = 0; a < NALGOS; a++) {
        if (!run[a]) continue;
        char what[160];
        snprintf(what, sizeof what, "running %s (first call, untimed)", cases[a].fn);
        race.algo = (enum algo)a;
        race.b.count = sizes[0] / sizeof(float);
        ncclab_fill(race.b.recv, race.b.count, 0.0f, lab.stream);
        ncclab_lab_once(&lab, first_call, &race, what, cases[a].hint);
    }

    static double slowest[NALGOS][NCCLAB_MAX_STEPS];
    for (int i = 0; i < nsizes; i++) {
        const size_t count = sizes[i] / sizeof(float);
        char line[256] = "";
        for (int a = 0; a < NALGOS; a++) {
            slowest[a][i] = NAN;
            if (!run[a]) continue;
            double mine = run_algo(&lab, &race, (enum algo)a, count);
            MPI_CHECK(MPI_Allreduce(&mine, &slowest[a][i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
            size_t used = strlen(line);
            snprintf(line + used, sizeof line - used, "  %s %.2f", algo_name[a],
                     ncclab_busbw_gbps(NCCLAB_ALLREDUCE, n, (double)sizes[i], slowest[a][i]));
        }
        ncclab_lab_progress(&lab, i, "busbw GB/s:%s", line);
    }
    /* The buffers go now, while every rank is here to deregister its own. */
    CUDA_CHECK(cudaStreamSynchronize(lab.stream));
    CUDA_CHECK(cudaStreamSynchronize(ctx->side));
    if (registered) {
        ncclab_registered_free(lab.comm, race.b.send, handles[0]);
        ncclab_registered_free(lab.comm, race.b.recv, handles[1]);
        ncclab_registered_free(lab.comm, ctx->scratch, handles[2]);
    } else {
        ncclab_lab_free_bufs(&race.b);
        CUDA_CHECK(cudaFree(ctx->scratch));
    }

    /* The model, fitted to each curve with the slowest rank's times. */
    const int fitted = n >= 2 && nsizes >= 2, top = nsizes - 1;
    if (me == 0 && !fitted)
        printf("# alpha-beta model: needs 2 or more %s\n",
               n < 2 ? "ranks (one rank moves nothing)" : "sizes (-b < -e)");
    else if (me == 0)
        printf("# alpha-beta model of a ring all-reduce, t = 2(n-1)*alpha + 2(n-1)/n * S/beta, "
               "fitted to each curve\n# (least squares on the relative error, %d sizes, "
               "slowest rank's times):\n",
               nsizes);
    struct ncclab_ring_fit fits[NALGOS];
    for (int a = 0; a < NALGOS; a++) {
        fits[a] = (struct ncclab_ring_fit){NAN, NAN, NAN, 0, 0};
        if (!run[a]) continue;
        fits[a] = ncclab_fit_ring_model(sizes, slowest[a], nsizes, n);
        char fit_name[32];
        snprintf(fit_name, sizeof fit_name, "fit_%s", algo_name[a]);
        struct ncclab_record *rec = ncclab_record_begin(&lab.report, "info", fit_name);
        ncclab_record_num(rec, "alpha_us", fits[a].alpha_us);
        ncclab_record_num(rec, "beta_gbps", fits[a].beta_gbps);
        ncclab_record_num(rec, "rms_rel", fits[a].rms_rel);
        ncclab_record_int(rec, "points", fits[a].points);
        ncclab_record_int(rec, "ok", fits[a].ok);
        if (me == 0 && fitted)
            printf("#   %-10s alpha %10.2f us/step   beta %10.3f GB/s   rms error %5.1f %%%s\n",
                   algo_name[a], fits[a].alpha_us, fits[a].beta_gbps, 100 * fits[a].rms_rel,
                   fits[a].ok ? "" : "   (no physical fit: a term came out negative)");
    }
    const double nccl_bw =
        ncclab_busbw_gbps(NCCLAB_ALLREDUCE, n, (double)sizes[top], slowest[ALGO_NCCL][top]);
    for (int a = ALGO_RING; me == 0 && a < NALGOS && n > 1; a++)
        if (run[a])
            printf("# at %s: %-9s reaches %5.1f %% of NCCL's busbw\n",
                   ncclab_format_size(sizes[top], sz, sizeof sz), algo_name[a],
                   100 *
                       ncclab_busbw_gbps(NCCLAB_ALLREDUCE, n, (double)sizes[top], slowest[a][top]) /
                       nccl_bw);
    fflush(stdout);

    if (me == 0 && strcmp(csv_path, "none") != 0) {
        write_csv(csv_path, &lab, run, slowest, &fits[ALGO_RING]);
        fflush(stdout);
    }

    CUDA_CHECK(cudaStreamSynchronize(lab.stream));
    for (int i = 0; i < LAB8_NUM_EVENTS; i++) CUDA_CHECK(cudaEventDestroy(ctx->events[i]));
    CUDA_CHECK(cudaStreamDestroy(ctx->side));
    if (me == 0) {
        printf("# race: %d size(s) in %.1f s\n", nsizes, (ncclab_now_us() - lab.t_start) / 1e6);
        fflush(stdout);
    }
    return ncclab_lab_finish(&lab);
}
