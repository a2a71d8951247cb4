/* Lab 4 — ring send/recv: Part A ordered without a group, Part B grouped,
 * and Task 1's naive ring at a size small enough to complete. Every rank
 * must receive (rank - 1) mod n; the perf rows' send/recv/group counts show
 * how each part was written. */
#include <math.h>
#include <string.h>

#include "grader.h"

#define K 1024
#define M (1024 * 1024)

/* The naive ring only at 1 KiB, where it completes (why is the handout's
 * question), so Task 1 can be checked. Its deadlock at large sizes is not
 * graded: a run the watchdog stops counts as a hang here. */
static const struct variation variations[] = {
    /* id       ranks  min      max      step iters warmup root rpn extra flags */
    {"default", 4, 1 * M, 4 * M, 4, 4, 2, -1, 0, NULL, 0},
    {"odd", 3, 4000012, 4000012, 2, 3, 1, -1, 0, NULL, 0},
    {"np1", 1, 64 * K, 64 * K, 2, 3, 1, -1, 0, NULL, 0},
    {"np5", 5, 4, 64 * K, 128, 3, 1, -1, 0, NULL, 0},
    /* Each part alone: a hang in one cannot take the other's data with it. */
    {"naive", 3, 1 * K, 1 * K, 2, -1, -1, -1, 0, "--task naive", 0},
    /* Part A at Task 1's size, where a send does not wait for its receive:
     * a hang there is not the order of the calls (unless every rank
     * receives first) but peers or counts that do not match. */
    {"ordered-small", 4, 1 * K, 1 * K, 2, 3, 1, -1, 0, "--task ordered", 0},
    {"ordered", 5, 1000004, 1000004, 2, 3, 1, -1, 0, "--task ordered", 0},
    /* Part A's contract includes n = 1 (a rank is its own neighbour). */
    {"ordered-np1", 1, 64 * K, 64 * K, 2, 3, 1, -1, 0, "--task ordered", 0},
    /* Part B the same way: at 1 KiB even calls outside a group complete,
     * so a hang there is peers or counts, not a missing group. */
    {"grouped-small", 4, 1 * K, 1 * K, 2, 3, 1, -1, 0, "--task grouped", 0},
    {"grouped", 3, 1000004, 1000004, 2, 3, 1, -1, 0, "--task grouped", 0},
    /* 1-4 MiB: a timer stopped early stands out there already (lab 2 says
     * what 16 MiB cost). */
    {"timing", 2, 1 * M, 4 * M, 4, 10, 3, -1, 0, NULL, VAR_TIMING | VAR_HOST},
    {"timing-gpu", 8, 64 * M, 1024 * M, 4, 20, 5, -1, 0, NULL, VAR_TIMING | VAR_CUDA},
};

/* Rank `rank`'s `name` check at `count` elements (0: any) against (rank-1) mod n. */
static void expect_from_left(const struct run *run, struct check_result *res, const char *name,
                             int rank, long long count)
{
    int n = run->nranks;
    double want = (rank - 1 + n) % n;
    const struct record *r = count ? find_record(run, "check", name, rank, "count", count)
                                   : find_record(run, "check", name, rank, NULL, 0);
    if (!r) {
        check_fail(res, run,
                   "rank %d: no `%s` check record for %lld elements: the ring did not "
                   "run at the size the grader asked for",
                   rank, name, count);
        return;
    }
    double mn, mx;
    long long mism, first_bad = rec_field(r, "first_bad");
    if (check_record_values(run, res, r, rank, name, &mn, &mx, &mism) != 0) return;
    if (mism == 0 && mn == want && mx == want) return;
    const char *why = "";
    if (mn == -1 && mx == -1)
        why = ": nothing was received (the buffer still holds the -1 it started with)";
    else if (n > 2 && mn == mx && mn == (rank + 1) % n)
        why = ": it holds its right neighbour's rank (rank + 1) mod n — the ring runs the wrong "
              "way: send to (rank + 1) % n, receive from (rank - 1 + n) % n";
    else if (mn == mx && mn == rank)
        why = ": it holds its own rank — it received from itself";
    else if (mism > 0 && mism < count && first_bad > 0)
        why = ": part of the buffer is right — a count other than `count` in the send or receive?";
    else if (*random_inputs_note(r, mn, mx, want))
        why = random_inputs_note(r, mn, mx, want);
    check_fail(res, run,
               "rank %d: wrong result in `%s`: every element should be (rank - 1) "
               "mod n = %g, found values from %g to %g (%lld wrong, first at index %lld)%s",
               rank, name, want, mn, mx, mism, first_bad, why);
}

/* What moved while the ring was timed: every ring sends `bytes` to the right
 * neighbour and receives `bytes` from the left one, nothing else. */
static void expect_ring_traffic(const struct run *run, struct check_result *res, const char *name)
{
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (strcmp(r->kind, "perf") != 0 || strcmp(r->name, name) != 0) continue;
        long long rings = rec_field(r, "iters") + rec_field(r, "warmup"),
                  bytes = rec_field(r, "bytes");
        long long want = rings * bytes, right = rec_field(r, "sent_right_bytes");
        long long left = rec_field(r, "received_left_bytes"), sent = rec_field(r, "sent_bytes");
        long long received = rec_field(r, "received_bytes"), other = rec_field(r, "other_calls");
        long long zero = rec_field(r, "zero_calls");
        int n = run->nranks;
        if (other > 0)
            check_fail(res, run,
                       "rank %d, %lld bytes: the ring also made %lld call(s) of NCCL collectives "
                       "(an all-gather?): the ring is ncclSend to the right and ncclRecv from the "
                       "left, nothing else",
                       r->rank, bytes, other);
        else if (right != want || left != want)
            check_fail(
                res, run,
                "rank %d, %lld bytes: over %lld rings it sent %lld bytes to its right "
                "neighbour %d and received %lld bytes from its left neighbour %d, expected "
                "%lld each (`count` floats per ring)%s",
                r->rank, bytes, rings, right, (r->rank + 1) % n, left, (r->rank - 1 + n) % n, want,
                zero > 0 ? ": some sends or receives had a count of 0 and moved nothing" : "");
        else if (sent != right || received != left)
            check_fail(res, run,
                       "rank %d, %lld bytes: it sent %lld and received %lld bytes in all, but "
                       "only %lld and %lld to and from its ring neighbours: no other peers",
                       r->rank, bytes, sent, received, right, left);
    }
}

static void expect_ring(const struct run *run, struct check_result *res, const char *name)
{
    expect_perf_args(run, res, name, "ncclSend/ncclRecv",
                     "every send reads sendbuf, every receive writes recvbuf");
    size_t sizes[64];
    int k = variation_sizes(run->var, sizeof(float), sizes, 64);
    for (int rank = 0; rank < run->nranks; rank++)
        for (int i = 0; i < k; i++) {
            expect_from_left(run, res, name, rank, (long long)(sizes[i] / sizeof(float)));
            if (!find_record(run, "perf", name, rank, "bytes", (long long)sizes[i]))
                check_fail(res, run, "rank %d: no `%s` measurement for %zu bytes", rank, name,
                           sizes[i]);
        }
    /* The data first (it says more), then what moved. */
    expect_ring_traffic(run, res, name);
}

static void check_ordered(const struct run *run, struct check_result *res)
{
    expect_ring(run, res, "ring_ordered");
}

static void check_grouped(const struct run *run, struct check_result *res)
{
    expect_ring(run, res, "ring_grouped");
}

/* One send and one receive per ring, warm-up included; `grouped`: Part B
 * (at least one group per ring), else Part A (no group, except n == 1). */
static void expect_calls(const struct run *run, struct check_result *res, const char *name,
                         int grouped)
{
    int seen = 0;
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (strcmp(r->kind, "perf") != 0 || strcmp(r->name, name) != 0) continue;
        seen++;
        long long rings = rec_field(r, "iters") + rec_field(r, "warmup"),
                  bytes = rec_field(r, "bytes");
        long long sends = rec_field(r, "calls"), recvs = rec_field(r, "recv_calls");
        long long groups = rec_field(r, "group_calls");
        long long zero = rec_field(r, "zero_calls");
        if (sends != rings || recvs != rings)
            check_fail(res, run,
                       "rank %d, %lld bytes: %lld ncclSend and %lld ncclRecv calls for "
                       "%lld rings (timed + warm-up): each ring is exactly one send to the right "
                       "and one receive from the left%s",
                       r->rank, bytes, sends, recvs, rings,
                       zero > 0 ? " (calls with a count of 0 move nothing and are not counted)"
                                : "");
        else if (grouped && groups < rings)
            check_fail(res, run,
                       "rank %d, %lld bytes: %lld ncclGroupStart calls for %lld rings: "
                       "Part B's send and receive must be between ncclGroupStart and "
                       "ncclGroupEnd in every call",
                       r->rank, bytes, groups, rings);
        else if (!grouped && groups != 0 && run->nranks > 1)
            check_fail(res, run,
                       "rank %d, %lld bytes: Part A called ncclGroupStart %lld times: "
                       "with more than one rank its calls stay outside any group, in an order "
                       "that lets no cycle of waits form — grouping is Part B",
                       r->rank, bytes, groups);
    }
    if (seen == 0) check_fail(res, run, "no `%s` perf records: the ring did not run", name);
}

static void check_calls_ordered(const struct run *run, struct check_result *res)
{
    expect_calls(run, res, "ring_ordered", 0);
}

static void check_calls_grouped(const struct run *run, struct check_result *res)
{
    expect_calls(run, res, "ring_grouped", 1);
}

/* Task 1 at 1 KiB: one unfused send per rank, and the right data. */
static void check_naive(const struct run *run, struct check_result *res)
{
    for (int rank = 0; rank < run->nranks; rank++) {
        const struct record *r = find_record(run, "info", "ring_naive", rank, NULL, 0);
        if (!r) {
            check_fail(res, run,
                       "rank %d: no `ring_naive` record: lab4_ring_naive did not "
                       "complete",
                       rank);
            continue;
        }
        long long sends = rec_field(r, "calls");
        if (sends != 1)
            check_fail(res, run,
                       "rank %d: lab4_ring_naive made %lld ncclSend calls, expected "
                       "one (then one ncclRecv, no group)%s",
                       rank, sends, sends == 0 ? ": Task 1 is not written yet" : "");
        expect_from_left(run, res, "ring_naive", rank, 0);
    }
}

static void check_timing(const struct run *run, struct check_result *res)
{
    expect_perf_sane(run, res, "ring_ordered");
    expect_perf_sane(run, res, "ring_grouped");
}

static int full(const struct variation *v) { return runs_task(v, NULL); }
static int naive_runs(const struct variation *v)
{
    char buf[16];
    const char *t = variation_task(v, buf, sizeof buf);
    return t && strcmp(t, "naive") == 0;
}
static int ordered_runs(const struct variation *v) { return runs_task(v, "ordered"); }
static int grouped_runs(const struct variation *v) { return runs_task(v, "grouped"); }

static const struct lab_check checks[] = {
    {"runs", "runs to the end on 1-5 ranks and odd sizes", "Common mistakes", check_runs_cleanly,
     NULL, CHECK_RUNS, full},
    {"naive", "Task 1: naive ring correct at a small size (1 KiB)", "Task 1", check_naive, NULL, 0,
     naive_runs},
    {"ring_ordered", "Part A: every rank receives (rank-1) mod n", "Task 2", check_ordered, NULL, 0,
     ordered_runs},
    {"calls_ordered", "Part A: one send+recv per ring, no group", "Task 2", check_calls_ordered,
     NULL, 0, ordered_runs},
    {"ring_grouped", "Part B: every rank receives (rank-1) mod n", "Task 3", check_grouped, NULL, 0,
     grouped_runs},
    {"calls_grouped", "Part B: one send+recv per ring, grouped", "Task 3", check_calls_grouped,
     NULL, 0, grouped_runs},
    CHECK_TIMING_HONEST(check_timing),
};

static const struct output_hint hints[] = {
    {"outside a group",
     "a rank sent to itself without a group: with one rank Part A needs its "
     "n == 1 case (the send and receive to self inside one group)",
     "Task 2"},
    {"send to self",
     "a rank sent to itself without a group: with one rank Part A needs its "
     "n == 1 case (the send and receive to self inside one group)",
     "Task 2"},
    {"but ncclGroupEnd",
     "a ncclGroupStart without its ncclGroupEnd: nothing in the group is "
     "launched — close every group you open",
     "Task 3"},
    {"is out of range",
     "a peer outside 0..n-1: in C (rank - 1) % n is -1 on rank 0, use "
     "(rank - 1 + n) % n",
     "Common mistakes"},
    HINTS_END,
};

static const struct output_hint task_hangs[] = {
    {"naive",
     "every rank's ncclSend waits for its neighbour's ncclRecv, yet at 1 KiB the naive ring "
     "completes — are the ranks sending to the right peer and count?",
     "Task 1"},
    {"ordered-small",
     "the ranks disagree on peer or count: at 1 KiB a send does not wait for its receive (the "
     "naive ring completes there), so no order of the calls can deadlock unless every rank "
     "receives first — rank r must send to (r + 1) % n and receive from (r - 1 + n) % n, "
     "the same count on both sides, whatever the order",
     "Task 2"},
    {"ordered",
     "send/recv ordering — outside a group a ncclSend waits for its peer's ncclRecv, so "
     "the order each rank picks must leave no cycle of waits round the ring, for odd n "
     "too (and n == 1 needs the send and receive to itself in one group); or the ranks "
     "disagree on count or peer",
     "Task 2"},
    {"grouped-small",
     "the ranks disagree on peer or count: at 1 KiB a send does not wait for its receive, so "
     "Part B completes there even with its calls outside a group — rank r must send to "
     "(r + 1) % n and receive from (r - 1 + n) % n, the same count on both sides",
     "Task 3"},
    {"grouped",
     "the two calls of Part B are not grouped: put the ncclSend and the ncclRecv "
     "between ncclGroupStart and ncclGroupEnd, so that NCCL runs them together — "
     "outside a group every rank waits in its send for a peer that is sending too; or "
     "the ranks disagree on count or peer",
     "Task 3"},
    HINTS_END,
};

/* clang-format off */
const struct lab_module lab4_module = {
    LAB_MODULE(4, "Ring send/recv", "ring.c"), .hints = hints, .task_hangs = task_hangs,
    .hang_cause = "send/recv ordering — a ncclSend outside a group waits for its peer's "
                  "ncclRecv, so if every rank (or both ranks of a pair) sends first the waits "
                  "form a cycle: Part A must order the calls so that none forms, Part B puts "
                  "both calls between ncclGroupStart and ncclGroupEnd; or the ranks disagree "
                  "on count or peer",
    P2P_ONLY_RULE("lab 4 builds the ring from ncclSend/ncclRecv"),
};
/* clang-format on */
