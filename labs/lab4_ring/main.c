/* Lab 4 driver — provided, do not edit. Your code goes in ring.c.
 *
 * Every rank's send buffer holds its rank; the receive buffer starts at -1
 * so that a receive that never happened cannot pass. For each size the
 * driver times the ordered ring (Part A) and the grouped ring (Part B), then
 * checks from the data that every element received is (rank - 1) mod n.
 * With --naive (or --task naive) it runs only the everyone-sends-first ring,
 * under a short watchdog, to show the deadlock; --task ordered and --task
 * grouped run one part alone. The records say what moved: bytes sent to the
 * right neighbour and received from the left one, and anything else. */
#include <stdio.h>
#include <string.h>

#include "lab.h"
#include "lab4.h"

#define MAX_STEPS 64
#define NAIVE_TIMEOUT_S 20.0 /* the --naive default; -T overrides it */

typedef void (*ring_fn)(ncclComm_t, cudaStream_t, const float *, float *, size_t);

struct ring {
    ncclComm_t comm;
    ring_fn fn;
    const float *send;
    float *recv;
    size_t count;
};

static void enqueue_ring(void *ctx, cudaStream_t s)
{
    struct ring *r = ctx;
    r->fn(r->comm, s, r->send, r->recv, r->count);
}

/* An unclosed group would swallow every later NCCL call of the driver, the
 * result gathering included; stop with the reason instead. */
static void require_closed_groups(const char *fn)
{
    long starts = ncclab_trace_count(NCCLAB_TRACE_GROUP_START);
    long ends = ncclab_trace_count(NCCLAB_TRACE_GROUP_END);
    if (starts != ends)
        ncclab_die(1,
                   "%s called ncclGroupStart %ld times but ncclGroupEnd %ld times: every "
                   "ncclGroupStart needs its ncclGroupEnd, or nothing in the group is launched",
                   fn, starts, ends);
}

static const char *const ordering_hint =
    "a send whose peer is itself waiting in a send: check the even/odd order, the wrap-around "
    "pair of an odd ring and n == 1; or the ranks disagree on count or peer";
static const char *const grouping_hint =
    "Part B must group the two calls: ncclGroupStart, the send and the receive, ncclGroupEnd. "
    "Outside a group each ncclSend waits for its peer's ncclRecv, and every peer is sending too; "
    "or the ranks disagree on count or peer";

/* Time one form of the ring, check what it received and add its records. */
static void run_ring(struct ncclab_lab *lab, struct ring *r, const char *name, const char *fn_name,
                     const char *what, const char *hint, float expected)
{
    ncclab_fill(r->recv, r->count, -1.0f, lab->stream);
    CUDA_CHECK(cudaStreamSynchronize(lab->stream));

    struct ncclab_timing t;
    ncclab_lab_time(lab, enqueue_ring, r, what, hint, &t);
    long sends = ncclab_trace_count(NCCLAB_TRACE_SEND);
    long recvs = ncclab_trace_count(NCCLAB_TRACE_RECV);
    long groups = ncclab_trace_count(NCCLAB_TRACE_GROUP_START);
    /* What moved, by peer: all of it to the right and from the left. */
    const int rank = lab->world.rank, n = lab->world.nranks;
    const int next = (rank + 1) % n, prev = (rank - 1 + n) % n;
    long long to_next = ncclab_trace_peer_bytes(NCCLAB_TRACE_SEND, next);
    long long from_prev = ncclab_trace_peer_bytes(NCCLAB_TRACE_RECV, prev);
    long long sent = ncclab_trace_bytes(NCCLAB_TRACE_SEND);
    long long received = ncclab_trace_bytes(NCCLAB_TRACE_RECV);
    long zero =
        ncclab_trace_zero_calls(NCCLAB_TRACE_SEND) + ncclab_trace_zero_calls(NCCLAB_TRACE_RECV);
    long other =
        ncclab_trace_data_calls_except((1u << NCCLAB_TRACE_SEND) | (1u << NCCLAB_TRACE_RECV));
    require_closed_groups(fn_name);

    struct ncclab_summary s = {0};
    long long wrong = -1;
    if (lab->opts.check) {
        ncclab_summarise(r->recv, r->count, expected, 0.0, lab->stream, &s);
        wrong = (long long)s.mismatches;
    }
    struct ncclab_perf p = {.name = name,
                            .coll = NCCLAB_SENDRECV,
                            .bytes = r->count * sizeof(float),
                            .count = r->count,
                            .type = "float",
                            .redop = "none",
                            .root = -1,
                            .time_us = t.avg_us,
                            .iters = t.iters,
                            .warmup = t.warmup,
                            .wall_us = t.wall_us,
                            .calls = sends,
                            .wrong = wrong,
                            .traced = 1,
                            .traced_bytes = sent,
                            .zero_calls = zero,
                            .other_calls = other};
    struct ncclab_record *rec = ncclab_report_perf(&lab->report, &p);
    /* For the grader: Part A must not group (except n == 1), Part B must. */
    ncclab_record_int(rec, "recv_calls", recvs);
    ncclab_record_int(rec, "group_calls", groups);
    ncclab_record_int(rec, "sent_right_bytes", to_next);
    ncclab_record_int(rec, "received_left_bytes", from_prev);
    ncclab_record_int(rec, "sent_bytes", sent);
    ncclab_record_int(rec, "received_bytes", received);
    if (lab->opts.check) ncclab_report_check(&lab->report, name, &s);
}

/* --naive: one unfused everyone-sends-first ring. For large messages this
 * never returns; the watchdog ends the process with status 3. */
static void run_naive(struct ncclab_lab *lab, struct ring *r, double timeout_s, float expected)
{
    char sz[32];
    if (lab->world.rank == 0) {
        printf("# --naive: every rank sends %s to its right neighbour before receiving; "
               "the watchdog stops the run after %.0f s without progress\n",
               ncclab_format_size(r->count * sizeof(float), sz, sizeof sz), timeout_s);
        fflush(stdout);
    }
    /* NCCL connects two peers lazily, on their first send/recv. One correct,
     * grouped exchange first sets the connections up, so that what follows
     * shows the deadlock itself: without it, NCCL 2.28 on H200 connected
     * inside the unfused sends and failed with an illegal memory access. */
    int rank = lab->world.rank, n = lab->world.nranks;
    ncclab_watchdog_arm(lab->opts.timeout_s, "connecting the ring neighbours", NULL);
    NCCL_CHECK(ncclGroupStart());
    NCCL_CHECK(ncclSend(r->send, r->count, ncclFloat, (rank + 1) % n, lab->comm, lab->stream));
    NCCL_CHECK(ncclRecv(r->recv, r->count, ncclFloat, (rank - 1 + n) % n, lab->comm, lab->stream));
    NCCL_CHECK(ncclGroupEnd());
    ncclab_fill(r->recv, r->count, -1.0f, lab->stream);
    CUDA_CHECK(cudaStreamSynchronize(lab->stream));
    ncclab_watchdog_disarm();
    ncclab_watchdog_arm(timeout_s, "running lab4_ring_naive (every rank sends first, no group)",
                        "each rank's ncclSend waits for its right neighbour's ncclRecv, which that "
                        "neighbour only reaches after its own ncclSend: a cycle of waits, so a "
                        "deadlock. Order the calls (Part A) or group them (Part B)");
    ncclab_trace_reset();
    double t0 = ncclab_now_us();
    enqueue_ring(r, lab->stream);
    require_closed_groups("lab4_ring_naive");
    CUDA_CHECK(cudaStreamSynchronize(lab->stream));
    double wall_us = ncclab_now_us() - t0;
    ncclab_watchdog_disarm();
    long sends = ncclab_trace_count(NCCLAB_TRACE_SEND);

    struct ncclab_record *rec = ncclab_record_begin(&lab->report, "info", "ring_naive");
    ncclab_record_int(rec, "count", (long long)r->count);
    ncclab_record_str(rec, "outcome", "completed");
    ncclab_record_num(rec, "wall_us", wall_us);
    ncclab_record_int(rec, "calls", sends);
    int ok = 1;
    if (lab->opts.check) {
        struct ncclab_summary s;
        ncclab_summarise(r->recv, r->count, expected, 0.0, lab->stream, &s);
        ok = ncclab_report_check(&lab->report, "ring_naive", &s);
    }
    if (lab->world.rank != 0) return;
    if (sends == 0) {
        printf("# --naive: lab4_ring_naive made no ncclSend call; write Task 1 first\n");
    } else if (ok) {
        printf("# --naive completed in %.0f us: messages of %s fit in the buffers the transport "
               "keeps for early sends (eager), so no send waited for a receive. Try a larger -b.\n",
               wall_us, sz);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int naive = 0;
    const struct ncclab_opt extra[] = {
        {"naive", 0, NCCLAB_OPT_FLAG, &naive,
         "run only the everyone-sends-first ring (Task 1) to see it deadlock; watchdog after "
         "-T seconds (default 20 in this mode)",
         0, 0, NULL},
        {NULL, 0, 0, NULL, NULL, 0, 0, NULL},
    };
    static const struct ncclab_lab_config config = {
        .number = 4,
        .name = "lab4",
        .summary = "Lab 4: a ring of ncclSend/ncclRecv, first ordered even/odd without a group, "
                   "then fused in ncclGroupStart/End; --naive shows the deadlock of sending first.",
        .defaults = {.min_bytes = 1UL << 32,
                     .max_bytes = 1UL << 32,
                     .step_factor = 2,
                     .iters = 20,
                     .warmup = 5,
                     .check = 1,
                     .timeout_s = 300},
        .host_default_bytes = 4UL << 20,
        .init_comm = 1,
        .tasks = "naive|ordered|grouped",
    };
    struct ncclab_lab_config cfg = config;
    cfg.extra = extra;
    struct ncclab_lab lab;
    ncclab_lab_start(&lab, &cfg, argc, argv);
    const int n = lab.world.nranks, rank = lab.world.rank;
    const float expected = (float)((rank - 1 + n) % n);

    size_t sizes[MAX_STEPS];
    int nsizes = ncclab_size_steps(&lab.opts, sizeof(float), sizes, MAX_STEPS);
    size_t max_count = sizes[nsizes - 1] / sizeof(float);
    float *send = ncclab_device_alloc(max_count, "the send buffer");
    float *recv = ncclab_device_alloc(max_count, "the receive buffer");
    ncclab_fill(send, max_count, (float)rank, lab.stream);
    struct ring r = {.comm = lab.comm, .send = send, .recv = recv};

    if (lab.task && strcmp(lab.task, "naive") == 0) naive = 1;
    if (naive) {
        /* The lab's -T default is for long healthy runs; a deadlock demo
         * should end sooner unless the user asked for another timeout. */
        double timeout_s =
            lab.opts.timeout_s == config.defaults.timeout_s ? NAIVE_TIMEOUT_S : lab.opts.timeout_s;
        r.fn = lab4_ring_naive;
        r.count = max_count;
        run_naive(&lab, &r, timeout_s, expected);
    } else {
        for (int i = 0; i < nsizes; i++) {
            r.count = sizes[i] / sizeof(float);
            if (ncclab_lab_runs(&lab, "ordered")) {
                r.fn = lab4_ring_ordered;
                run_ring(&lab, &r, "ring_ordered", "lab4_ring_ordered",
                         "running lab4_ring_ordered (Part A)", ordering_hint, expected);
            }
            if (ncclab_lab_runs(&lab, "grouped")) {
                r.fn = lab4_ring_grouped;
                run_ring(&lab, &r, "ring_grouped", "lab4_ring_grouped",
                         "running lab4_ring_grouped (Part B)", grouping_hint, expected);
            }
        }
    }

    CUDA_CHECK(cudaFree(send));
    CUDA_CHECK(cudaFree(recv));
    return ncclab_lab_finish(&lab);
}
