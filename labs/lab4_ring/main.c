/* Lab 4 driver — provided, do not edit. Your code goes in ring.c.
 *
 * Every rank's send buffer holds its rank plus a random offset k_r, which
 * the others learn only after the ring ran (common/lab.h); the receive buffer
 * starts at -1 so that a receive that never happened cannot pass. For each
 * size the driver times the ordered ring (Part A) and the grouped ring (Part
 * B), then checks from the data that every element received is
 * (rank - 1) mod n + the left neighbour's offset, and that every send read
 * sendbuf and every receive wrote recvbuf.
 * With --naive (or --task naive) it runs only the everyone-sends-first ring,
 * under a short watchdog, to show the deadlock; --task ordered and --task
 * grouped run one part alone. The records say what moved: bytes sent to the
 * right neighbour and received from the left one, and anything else. */
#include <stdio.h>
#include <string.h>

#include "lab.h"
#include "lab4.h"

#define NAIVE_TIMEOUT_S 20.0 /* the --naive default; -T overrides it */

/* Right after timing: an unclosed group stops the run; what moved, by peer,
 * goes into the perf record (all of it to the right and from the left). */
static void ring_traced(struct ncclab_lab *lab, const struct ncclab_case *c, struct ncclab_bufs *b,
                        long *calls, struct ncclab_perf *moved)
{
    (void)lab, (void)b, (void)calls;
    ncclab_require_closed_groups(c->fn);
    moved->zero_calls =
        ncclab_trace_zero_calls(NCCLAB_TRACE_SEND) + ncclab_trace_zero_calls(NCCLAB_TRACE_RECV);
    moved->other_calls = ncclab_trace_data_calls_except(NCCLAB_TRACED(SEND) | NCCLAB_TRACED(RECV));
}
/* For the grader: Part A must not group (except n == 1), Part B must. */
static void ring_fields(struct ncclab_lab *lab, struct ncclab_bufs *b, struct ncclab_record *rec,
                        int perf)
{
    (void)b;
    if (!perf) return;
    const int rank = lab->world.rank, n = lab->world.nranks;
    ncclab_record_int(rec, "recv_calls", ncclab_trace_count(NCCLAB_TRACE_RECV));
    ncclab_record_int(rec, "group_calls", ncclab_trace_count(NCCLAB_TRACE_GROUP_START));
    ncclab_record_int(rec, "sent_right_bytes",
                      ncclab_trace_peer_bytes(NCCLAB_TRACE_SEND, (rank + 1) % n));
    ncclab_record_int(rec, "received_left_bytes",
                      ncclab_trace_peer_bytes(NCCLAB_TRACE_RECV, (rank - 1 + n) % n));
    ncclab_record_int(rec, "sent_bytes", ncclab_trace_bytes(NCCLAB_TRACE_SEND));
    ncclab_record_int(rec, "received_bytes", ncclab_trace_bytes(NCCLAB_TRACE_RECV));
}

/* The rank and its random offset in, -1 in the receive buffer. */
static void fill_input(struct ncclab_lab *lab, struct ncclab_bufs *b)
{
    ncclab_lab_fill_input(lab, b->send, b->count, lab->world.rank);
    ncclab_fill(b->recv, b->count, -1.0f, lab->stream);
}
/* The left neighbour's rank, and its offset. */
static void check_left(struct ncclab_lab *lab, struct ncclab_bufs *b, struct ncclab_summary *s)
{
    const int left = lab->world.rank > 0 ? lab->world.rank - 1 : lab->world.nranks - 1;
    ncclab_lab_expect_input(lab, b->recv, b->count, b->expected, lab->offsets[left], 1e-6, s);
}
#define RANDOM_RING                                                                                \
    .random = 1, .fill = fill_input, .verify = check_left, .args = NCCLAB_ARGS_BUFFERS

/* clang-format off */
static const struct ncclab_case cases[] = {
    {.task = "ordered", .name = "ring_ordered", .coll = NCCLAB_SENDRECV, .redop = "none",
     .traced = NCCLAB_TRACED(SEND), .fn = "lab4_ring_ordered",
     .what = "running lab4_ring_ordered (Part A)",
     .hint = "a send whose peer is itself waiting in a send: draw who waits for whom with "
             "your order, for odd n (the wrap-around pair) and n == 1 too; or the ranks "
             "disagree on count or peer",
     .call = lab4_ring_ordered, .after = ring_traced, .check = "ring_ordered",
     .fields = ring_fields, RANDOM_RING},
    {.task = "grouped", .name = "ring_grouped", .coll = NCCLAB_SENDRECV, .redop = "none",
     .traced = NCCLAB_TRACED(SEND), .fn = "lab4_ring_grouped",
     .what = "running lab4_ring_grouped (Part B)",
     .hint = "Part B must group the two calls: ncclGroupStart, the send and the receive, "
             "ncclGroupEnd. Outside a group each ncclSend waits for its peer's ncclRecv, and "
             "every peer is sending too; or the ranks disagree on count or peer",
     .call = lab4_ring_grouped, .after = ring_traced, .check = "ring_grouped",
     .fields = ring_fields, RANDOM_RING},
};
/* clang-format on */

/* --naive: one unfused everyone-sends-first ring. For large messages this
 * never returns; the watchdog ends the process with status 3. */
static void run_naive(struct ncclab_lab *lab, struct ncclab_bufs *r, double timeout_s)
{
    char sz[32];
    if (lab->world.rank == 0) {
        printf("# --naive: every rank sends %s to its right neighbour before receiving; "
               "the watchdog stops the run after %.0f s without progress\n",
               ncclab_format_size(r->count * sizeof(float), sz, sizeof sz), timeout_s);
        fflush(stdout);
    }
    /* NCCL connects two peers lazily, on their first send/recv. One correct
     * exchange with the same neighbours (the kit's Part B, common/taught.h)
     * first sets the connections up, so that what follows shows the deadlock
     * itself: without it, NCCL 2.28 on H200 connected inside the unfused
     * sends and failed with an illegal memory access. The host backend
     * connects at communicator creation and needs none: there Task 1 does
     * not depend on Part B (in a student kit, Part B is the student's own). */
    ncclab_watchdog_arm(lab->opts.timeout_s, "connecting the ring neighbours", NULL);
#ifndef NCCLAB_HOST_BACKEND
    ncclab_taught_lab4_ring_grouped(lab->comm, lab->stream, r->send, r->recv, r->count);
#endif
    ncclab_lab_draw(lab);
    fill_input(lab, r);
    CUDA_CHECK(cudaStreamSynchronize(lab->stream));
    ncclab_watchdog_disarm();
    ncclab_watchdog_arm(timeout_s, "running lab4_ring_naive (every rank sends first, no group)",
                        "each rank's ncclSend waits for its right neighbour's ncclRecv, which that "
                        "neighbour only reaches after its own ncclSend: a cycle of waits, so a "
                        "deadlock. Order the calls (Part A) or group them (Part B)");
    ncclab_trace_reset();
    double t0 = ncclab_now_us();
    lab4_ring_naive(r->comm, lab->stream, r->send, r->recv, r->count);
    ncclab_require_closed_groups("lab4_ring_naive");
    CUDA_CHECK(cudaStreamSynchronize(lab->stream));
    double wall_us = ncclab_now_us() - t0;
    ncclab_watchdog_disarm();
    long sends = ncclab_trace_count(NCCLAB_TRACE_SEND);
    ncclab_lab_reveal(lab);

    struct ncclab_record *rec = ncclab_record_begin(&lab->report, "info", "ring_naive");
    ncclab_record_int(rec, "count", (long long)r->count);
    ncclab_record_str(rec, "outcome", "completed");
    ncclab_record_num(rec, "wall_us", wall_us);
    ncclab_record_int(rec, "calls", sends);
    int ok = 1;
    if (lab->opts.check) {
        struct ncclab_summary s;
        check_left(lab, r, &s);
        ok = ncclab_report_check(&lab->report, "ring_naive", &s);
        ncclab_lab_note_offsets(lab, lab->checked_offsets);
    }
    if (lab->world.rank != 0) return;
    if (sends == 0) {
        printf("# --naive: lab4_ring_naive made no ncclSend call; write Task 1 first\n");
    } else if (ok) {
        printf("# --naive completed in %.0f us: at %s no send had to wait for its receive (why? "
               "answers.md). Try a larger -b to see the deadlock.\n",
               wall_us, sz);
    }
    fflush(stdout);
}

/* clang-format off */
static const struct ncclab_lab_config config = {
    .number = 4, .name = "lab4", .tasks = "naive|ordered|grouped",
    .defaults = NCCLAB_DEFAULTS(1UL << 32), .host_defaults = NCCLAB_DEFAULTS(4UL << 20),
    .summary = "Lab 4: a ring of ncclSend/ncclRecv, first ordered per rank without a group, "
               "then fused in ncclGroupStart/End; --naive shows the deadlock of sending first."};
/* clang-format on */

int main(int argc, char **argv)
{
    int naive = 0;
    const struct ncclab_opt extra[] = {
        {"naive", 0, NCCLAB_OPT_FLAG, &naive,
         "run only the everyone-sends-first ring (Task 1) to see it deadlock; watchdog after "
         "-T seconds (default 20 in this mode)",
         0, 0, NULL},
        NCCLAB_OPT_END,
    };
    struct ncclab_lab lab;
    ncclab_lab_start(&lab, &config, extra, argc, argv);
    const int n = lab.world.nranks, rank = lab.world.rank;
    struct ncclab_bufs r = ncclab_lab_bufs(&lab, (rank - 1 + n) % n);
    if (naive || (lab.task && strcmp(lab.task, "naive") == 0)) {
        /* The lab's -T default is for long healthy runs; a deadlock demo
         * should end sooner unless the user asked for another timeout. */
        r.count = lab.max_count;
        run_naive(&lab, &r,
                  lab.opts.timeout_s == lab.defaults.timeout_s ? NAIVE_TIMEOUT_S
                                                               : lab.opts.timeout_s);
    } else {
        ncclab_lab_sweep(&lab, cases, sizeof cases / sizeof *cases, &r);
    }
    ncclab_lab_free_bufs(&r);
    return ncclab_lab_finish(&lab);
}
