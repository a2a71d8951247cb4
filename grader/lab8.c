/* Lab 8 (bonus) — the student's own all-reduce from ncclSend/ncclRecv: a
 * ring (Task 1), the ring pipelined in slices (Task 2), recursive doubling
 * and the switch between them (Task 3), raced against ncclAllReduce.
 *
 * Per algorithm and size the driver records (labs/lab8_own_allreduce/main.c):
 *   perf  <algo>          time, busbw, and the NCCL calls the timed code made
 *                         (calls = ncclSend moving data, recv_calls,
 *                         zero_send_calls/zero_recv_calls (a count of 0),
 *                         group_calls, sent_bytes/received_bytes,
 *                         forbidden_calls/forbidden, unjoined, slices,
 *                         threshold_bytes)
 *   check <algo>_sum      every element i against n(n+1)/2 + K + n * (i % 1021),
 *                         K (offsets) the sum of the random whole numbers k_r
 *                         the ranks added to their input at this size
 *   check <algo>_sendbuf  the input still r + 1 + k_r + (i % 1021) on rank r
 * Each task is graded from its own records, Tasks 1-3's algorithms also from
 * runs of each alone (--task), so one bug (a hang included) costs one task. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "grader.h"

#define K 1024
#define M (1024 * 1024)

/* Counts not divisible by the rank count (x311 from an odd start), counts
 * smaller than it, powers of two for recursive doubling, and thresholds
 * that send the first sizes of `default` and `np2` down the
 * recursive-doubling path of lab8_allreduce and the last ones to the ring.
 * The grader's random draw (params.c) moves sizes by up to 25 %: the first
 * sizes of np5, np7 and the task runs stay below the rank count (12 bytes
 * stays 3 floats, 20 at most 6), and the thresholds still split the sweeps
 * where the comments say; only `odd`, whose one count must stay a
 * non-multiple of 3, is pinned (an even step can land on a multiple). */
static const struct variation variations[] = {
    /* id       ranks  min      max      step iters warmup root rpn extra flags */
    {"default", 4, 4 * K, 4 * M, 32, 3, 1, -1, 0, "--slices 4 --threshold 256K --csv none", 0},
    {"odd", 3, 4000012, 4000012, 2, 2, 1, -1, 0, "--slices 3 --csv none", VAR_FIXED},
    {"np1", 1, 4, 64 * K, 128, 2, 1, -1, 0, "--slices 2 --csv none", 0},
    {"np2", 2, 4, 400000, 311, 2, 1, -1, 0, "--slices 8 --threshold 2K --csv none", 0},
    {"np7", 7, 20, 2000000, 311, 2, 1, -1, 0, "--slices 5 --csv none", 0},
    /* Tasks 1-3's algorithms alone: a hang in one cannot take the others'
     * data with it. lab8_allreduce is graded from the whole-lab runs, where
     * the result of the algorithm it hands a size to is known too: a wrong
     * sum there is charged to that algorithm's task alone. */
    {"ring", 5, 12, 1200000, 311, 2, 1, -1, 0, "--task ring --csv none", 0},
    {"pipelined", 5, 12, 1200000, 311, 2, 1, -1, 0, "--task pipelined --slices 7 --csv none", 0},
    {"rd", 4, 4, 400000, 311, 2, 1, -1, 0, "--task rd --csv none", 0},
    /* 1-4 MiB: a timer stopped early stands out there already; 16 MiB
     * more, raced by five all-reduces, made this run 2.6 CPU s instead of
     * 0.8 on the 2-core VM. */
    {"timing", 2, 1 * M, 4 * M, 4, 5, 2, -1, 0, "--slices 4 --csv none", VAR_TIMING | VAR_HOST},
    {"timing-gpu", 8, 64 * M, 1024 * M, 4, 20, 5, -1, 0, "--slices 2 --csv none",
     VAR_TIMING | VAR_CUDA},
};

/* As the driver fills and checks the buffers. */
#define PATTERN_PERIOD 1021

/* The share of NCCL's busbw the student's all-reduce must reach on GPUs at
 * the largest sizes; a profile may set its own (lab8_min_nccl_fraction). */
#define DEFAULT_NCCL_FRACTION 0.5
#define VS_NCCL_MIN_BYTES (256.0 * M)

enum algo { RING, PIPELINED, RD, OWN };
static const char *const algo_name[] = {"ring", "pipelined", "rd", "own"};
static const char *const algo_fn[] = {"lab8_ring_allreduce", "lab8_ring_allreduce_pipelined",
                                      "lab8_recursive_doubling", "lab8_allreduce"};

static int is_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

static int log2_int(int n)
{
    int d = 0;
    while ((1 << d) < n) d++;
    return d;
}

/* The algorithm lab8_allreduce must pick, by lab8.h. */
static enum algo own_path(int n, long long bytes, long long threshold)
{
    return is_power_of_two(n) && bytes <= threshold ? RD : PIPELINED;
}

/* Steps (groups, each with one ncclSend and one ncclRecv, empty or not) of
 * one all-reduce, by lab8.h's contract. */
static long long steps_per_allreduce(enum algo a, int n, long long bytes, long long slices,
                                     long long threshold, const char **path)
{
    *path = a == RD ? "recursive doubling" : "the ring";
    if (a == OWN) {
        a = own_path(n, bytes, threshold);
        *path = a == RD ? "recursive doubling" : "the pipelined ring";
    }
    if (n == 1) return 0;
    switch (a) {
    case RING: return 2LL * (n - 1);
    case PIPELINED: return (long long)n * slices + (n - 2); /* all-gather's first step sliced */
    case RD: return log2_int(n);
    case OWN: break;
    }
    return -1;
}

/* The calls of one perf record against the contract; 0 if they agree.
 * The trace counts a send or receive with a count of 0 apart from those
 * that move data (common/trace.h): a step's empty piece is one of those,
 * so a step's send is either kind, and the two together make the steps. */
static int expect_calls(const struct run *run, struct check_result *res, enum algo a,
                        const struct record *p)
{
    const int n = run->nranks;
    const long long bytes = rec_field(p, "bytes"),
                    runs = rec_field(p, "iters") + rec_field(p, "warmup");
    const long long slices = rec_field(p, "slices"), threshold = rec_field(p, "threshold_bytes");
    const long long sends = rec_field(p, "calls") + rec_field(p, "zero_send_calls");
    const long long recvs = rec_field(p, "recv_calls") + rec_field(p, "zero_recv_calls");
    const long long groups = rec_field(p, "group_calls"),
                    forbidden = rec_field(p, "forbidden_calls");
    const char *path;
    const long long per = steps_per_allreduce(a, n, bytes, slices, threshold, &path);
    const char *fname = rec_str(p, "forbidden");
    if (forbidden != 0) {
        check_fail(res, run,
                   "rank %d, %lld bytes: %s called %s (%lld NCCL collective call(s) in %lld "
                   "all-reduces): lab 8 builds the all-reduce from ncclSend/ncclRecv and "
                   "ncclab_reduce_add only",
                   p->rank, bytes, algo_fn[a], fname ? fname : "an NCCL collective", forbidden,
                   runs);
        return -1;
    }
    if (sends == per * runs && recvs == sends && groups == sends) return 0;
    /* Task 2 may run two rings at once: each step's group then holds one
     * send and one receive per ring, so the steps are the groups. */
    const int sliced = a == PIPELINED || (a == OWN && own_path(n, bytes, threshold) == PIPELINED);
    const int two_rings = sliced && n > 1 && groups > 0 && sends == 2 * groups && recvs == sends;
    const long long steps = two_rings ? groups : sends;
    if (two_rings && steps == per * runs) return 0;
    char why[320] = "";
    if (steps != per * runs) {
        double got = runs > 0 ? (double)steps / (double)runs : 0;
        /* Chunks shorter than --slices have empty pieces: skipping their
         * calls can make the count come out at Task 1's by chance. */
        const int empty_pieces =
            n > 1 && slices > 1 && bytes >= 0 && (bytes / (long long)sizeof(float)) / n < slices;
        if (a == PIPELINED && empty_pieces && steps < per * runs)
            snprintf(why, sizeof why,
                     ": at %lld floats on %d ranks some pieces hold 0 floats — such a step "
                     "still makes its group, send and receive, with a count of 0 (lab8.h)",
                     bytes / (long long)sizeof(float), n);
        else if (a == RING && n > 1 && steps == (per - 1) * runs)
            snprintf(why, sizeof why,
                     ": one step short — each phase (reduce-scatter, then all-gather) takes "
                     "n-1 = %d steps",
                     n - 1);
        else if (a == PIPELINED && n > 1 && slices > 1 && steps == 2LL * (n - 1) * runs)
            snprintf(why, sizeof why,
                     ": that is Task 1's ring — the reduce-scatter steps are not cut into "
                     "--slices %lld pieces",
                     slices);
        else if (a == PIPELINED && n > 2 && slices > 1 && steps == 2LL * (n - 1) * slices * runs)
            snprintf(why, sizeof why,
                     ": every all-gather step was cut into pieces; lab8.h cuts only its first "
                     "(the later ones go whole)");
        else if (a == PIPELINED && n > 1 && slices > 1 &&
                 steps == (long long)(n - 1) * (slices + 1) * runs)
            snprintf(why, sizeof why,
                     ": the all-gather's first step went whole — lab8.h cuts it into --slices "
                     "pieces too, each sent once the last reduce-scatter step has added it up "
                     "(handout, Task 2)");
        else if (steps == 0 && n > 1)
            snprintf(why, sizeof why, ": no ncclSend at all — is the task written yet?");
        else if (a == PIPELINED && n > 1 && steps < per * runs)
            snprintf(why, sizeof why,
                     ": a piece of an empty or short chunk skipped? every step sends its "
                     "piece, with a count of 0 if need be");
        check_fail(res, run,
                   "rank %d, %lld bytes: %s made %.4g %s per all-reduce (those with a count "
                   "of 0 included), the contract in lab8.h says %lld for %s on %d rank%s%s%s",
                   p->rank, bytes, algo_fn[a], got,
                   two_rings ? "steps (groups, two rings each)" : "ncclSend calls", per, path, n,
                   n == 1 ? "" : "s", a == PIPELINED || a == OWN ? " with these --slices" : "",
                   why);
    } else if (recvs != sends) {
        check_fail(res, run,
                   "rank %d, %lld bytes: %s made %lld ncclSend but %lld ncclRecv calls (those "
                   "with a count of 0 included): every step sends one piece and receives one",
                   p->rank, bytes, algo_fn[a], sends, recvs);
    } else {
        check_fail(res, run,
                   "rank %d, %lld bytes: %s put %lld send/receive pairs in %lld groups: each "
                   "step's ncclSend and ncclRecv go in one group of their own%s",
                   p->rank, bytes, algo_fn[a], sends, groups,
                   groups == 0 ? " (without a group every rank sends first: a deadlock for "
                                 "large messages)"
                               : "");
    }
    return -1;
}

/* Whether `a` got every element right on `rank` at another count of the
 * run that n does not divide either: then the chunking copes with a
 * remainder, and a wrong result elsewhere has another cause. */
static int right_at_another_uneven_count(const struct run *run, enum algo a, int rank,
                                         long long count)
{
    char name[40];
    snprintf(name, sizeof name, "%s_sum", algo_name[a]);
    const struct record *sums[512]; /* every rank's, at every size of the run */
    int k = records_select(&run->recs, "check", name, sums, 512);
    for (int i = 0; i < k; i++) {
        const long long c = rec_field(sums[i], "count");
        if (sums[i]->rank == rank && c != count && c > 0 && c % run->nranks != 0 &&
            rec_field(sums[i], "mismatches") == 0)
            return 1;
    }
    return 0;
}

/* The checks of `a`'s result and of its input at `count` on `rank`
 * (NULL where the run printed none). */
static void algo_checks(const struct run *run, enum algo a, int rank, long long count,
                        const struct record **out, const struct record **in)
{
    char name[40];
    snprintf(name, sizeof name, "%s_sum", algo_name[a]);
    *out = find_record(run, "check", name, rank, "count", count);
    snprintf(name, sizeof name, "%s_sendbuf", algo_name[a]);
    *in = find_record(run, "check", name, rank, "count", count);
}

/* Whether `a` ran at `count` on `rank` and got both its input and its sum
 * right there. */
static int ran_right(const struct run *run, enum algo a, int rank, long long count)
{
    const struct record *out, *in;
    algo_checks(run, a, rank, count, &out, &in);
    return out && in && rec_field(out, "mismatches") == 0 && rec_field(in, "mismatches") == 0;
}

/* sendbuf must still hold the input; recvbuf every element of the sum. */
static void expect_data(const struct run *run, struct check_result *res, enum algo a, int rank,
                        long long count)
{
    const int n = run->nranks;
    char name[40];
    snprintf(name, sizeof name, "%s_sendbuf", algo_name[a]);
    const struct record *in = find_record(run, "check", name, rank, "count", count);
    snprintf(name, sizeof name, "%s_sum", algo_name[a]);
    const struct record *out = find_record(run, "check", name, rank, "count", count);
    if (!in || !out) {
        check_fail(res, run, "rank %d: no `%s` check for %lld floats: the sweep skipped a size",
                   rank, name, count);
        return;
    }
    if (rec_field(in, "mismatches") != 0) {
        check_fail(res, run,
                   "rank %d, %lld floats: %s changed sendbuf (%lld element(s), first at index "
                   "%lld): the input must stay as it was — receive into recvbuf or ctx->scratch, "
                   "never into sendbuf",
                   rank, count, algo_fn[a], rec_field(in, "mismatches"),
                   rec_field(in, "first_bad"));
        return;
    }
    double mn = NAN, mx = NAN, least = n * (n + 1) / 2.0;
    long long mism = -1;
    rec_num(out, "expected", &least); /* element 0: n(n+1)/2 + the ranks' offsets */
    if (rec_num(out, "min", &mn) != REC_OK || rec_num(out, "max", &mx) != REC_OK ||
        rec_int(out, "mismatches", &mism) != REC_OK) {
        check_fail(res, run,
                   "rank %d, %lld floats: recvbuf of %s holds NaN or inf: uninitialised "
                   "memory added in (scratch read before anything arrived?)",
                   rank, count, algo_fn[a]);
        return;
    }
    if (mism == 0) return;
    const long long first = rec_field(out, "first_bad");
    char why[600] = "";
    if (mn == -1 && mx == -1)
        snprintf(why, sizeof why,
                 ": it still holds the -1 the driver put there — nothing was written");
    else if (n > 1 && a == PIPELINED && ran_right(run, RING, rank, count))
        /* The same steps over the same chunks, without the second stream,
         * came out right in this run: what the pipelined form adds is the
         * ordering between the streams. Judged from that alone, never from
         * which wrong values a race happened to leave (below or above the
         * right ones, it varies from run to run). */
        snprintf(why, sizeof why,
                 ": wrong while Task 1's ring got this size right — a race between the streams, "
                 "most likely a missed event wait: ctx->side added a piece before it arrived (it "
                 "must wait for the piece's \"arrived\" event before ncclab_reduce_add), or the "
                 "next step sent a piece before its addition was done (ctx->stream waits for its "
                 "\"added\" event); a race gives different wrong values from run to run. Else "
                 "the slices: does every piece of a chunk get sent, received and added once?");
    else if (n > 1 && count % n != 0 && a != RD && a != RING &&
             right_at_another_uneven_count(run, a, rank, count))
        snprintf(why, sizeof why,
                 ": right at another count that %d ranks do not divide, so the chunks are "
                 "not the cause — a race between the streams: a piece added before it "
                 "arrived, sent on before it was added, or scratch received into while still "
                 "read (Task 2's orderings)",
                 n);
    else if (n > 1 && count % n != 0 && a != RD)
        snprintf(why, sizeof why,
                 ": %lld floats is not a multiple of %d ranks — do your chunks cover every "
                 "element once, the %lld left over by count / n included?",
                 count, n, count % n);
    else if (n > 1 && mx < least)
        snprintf(why, sizeof why,
                 ": values below the smallest right one — some ranks' contributions never "
                 "arrived (a step missing, or a sum added to the wrong place)");
    check_fail(res, run,
               "rank %d, %lld floats: wrong result from %s: element i must be the sum of the "
               "ranks' inputs, n(n+1)/2 + K + n * (i %% %d) = %g + %d * (i %% %d) (K: the ranks' "
               "random offsets); %lld element(s) wrong, the first at index %lld, values from %g "
               "to %g%s",
               rank, count, algo_fn[a], PATTERN_PERIOD, least, n, PATTERN_PERIOD, mism, first, mn,
               mx, why);
}

/* Whether `a` ran at `count` on `rank` and got its result or input wrong
 * (0 when it did not run there). */
static int data_wrong(const struct run *run, enum algo a, int rank, long long count)
{
    const struct record *out, *in;
    algo_checks(run, a, rank, count, &out, &in);
    if (!out && !in) return 0;
    return !out || !in || rec_field(out, "mismatches") != 0 || rec_field(in, "mismatches") != 0;
}

/* What moved at one size, from the bytes the trace saw given to ncclSend
 * and ncclRecv (empty pieces move none, however the chunks and pieces are
 * cut): recursive doubling swaps the whole buffer log2(n) times on every
 * rank; a ring passes every element n-1 times in each phase, so the ranks
 * together send and receive 2(n-1) x the buffer, whichever rank sends which
 * chunk. */
static void expect_bytes(const struct run *run, struct check_result *res, enum algo a, size_t size)
{
    const int n = run->nranks;
    long long sent = 0, received = 0, runs = -1, threshold = -1;
    for (int rank = 0; rank < n; rank++) {
        const struct record *p =
            find_record(run, "perf", algo_name[a], rank, "bytes", (long long)size);
        if (!p) return; /* already a failure */
        long long s = rec_field(p, "sent_bytes"), r = rec_field(p, "received_bytes");
        runs = rec_field(p, "iters") + rec_field(p, "warmup");
        threshold = rec_field(p, "threshold_bytes");
        enum algo path = a == OWN ? own_path(n, (long long)size, threshold) : a;
        if (path == RD && n > 1 && (s != runs * log2_int(n) * (long long)size || r != s)) {
            check_fail(res, run,
                       "rank %d, %zu bytes: %s sent %lld and received %lld bytes in %lld "
                       "all-reduces, recursive doubling swaps the whole buffer in each of its "
                       "log2(n) = %d steps: %lld each",
                       rank, size, algo_fn[a], s, r, runs, log2_int(n),
                       runs * log2_int(n) * (long long)size);
            return;
        }
        sent += s;
        received += r;
    }
    enum algo path = a == OWN ? own_path(n, (long long)size, threshold) : a;
    const long long want = n > 1 ? runs * 2LL * (n - 1) * (long long)size : 0;
    if (path != RD && (sent != want || received != want))
        check_fail(res, run,
                   "%zu bytes: the %d ranks' %s sent %lld and received %lld bytes in all over "
                   "%lld all-reduces; a ring moves every element n-1 times in each phase, "
                   "2(n-1) x %zu = %lld bytes per all-reduce, %lld in all%s",
                   size, n, algo_fn[a], sent, received, runs, size, 2LL * (n - 1) * (long long)size,
                   want,
                   sent < want ? ": part of a chunk never travelled (a count too short, or a step "
                                 "missing)"
                               : ": more than the ring needs (a count too long, or a piece sent "
                                 "twice)");
}

static void expect_algo(const struct run *run, struct check_result *res, enum algo a)
{
    if (a == RD && !is_power_of_two(run->nranks)) return; /* never called there */
    size_t sizes[64];
    int k = variation_sizes(run->var, sizeof(float), sizes, 64);
    for (int rank = 0; rank < run->nranks; rank++)
        for (int i = 0; i < k; i++) {
            const struct record *p =
                find_record(run, "perf", algo_name[a], rank, "bytes", (long long)sizes[i]);
            if (!p) {
                check_fail(res, run, "rank %d: no `%s` measurement for %zu bytes", rank,
                           algo_name[a], sizes[i]);
                continue;
            }
            if (expect_calls(run, res, a, p) != 0) continue;
            if ((a == PIPELINED || a == OWN) && rec_field(p, "unjoined") == 1) {
                check_fail(res, run,
                           "rank %d, %zu bytes: %s left work running on ctx->side after "
                           "ctx->stream had finished: the caller cannot know when the result "
                           "is ready — make ctx->stream wait for the side stream's last work "
                           "before returning",
                           rank, sizes[i], algo_fn[a]);
                continue;
            }
            const long long count = (long long)(sizes[i] / sizeof(float));
            /* lab8_allreduce hands the work to Task 2's or Task 3's function:
             * a wrong result there is charged to that task, not twice. */
            if (a == OWN && data_wrong(run,
                                       own_path(run->nranks, rec_field(p, "bytes"),
                                                rec_field(p, "threshold_bytes")),
                                       rank, count))
                continue;
            expect_data(run, res, a, rank, count);
        }
    /* The data first (it says more), then what moved. */
    for (int i = 0; i < k && res->verdict != VERDICT_FAIL; i++) expect_bytes(run, res, a, sizes[i]);
}

static void check_ring(const struct run *run, struct check_result *res)
{
    expect_algo(run, res, RING);
}
static void check_pipelined(const struct run *run, struct check_result *res)
{
    expect_algo(run, res, PIPELINED);
}
static void check_rd(const struct run *run, struct check_result *res) { expect_algo(run, res, RD); }
static void check_own(const struct run *run, struct check_result *res)
{
    expect_algo(run, res, OWN);
}

/* The driver holds the clock here, so an impossible time means work left
 * running past the end of the call (an unjoined side stream). An algorithm
 * that did nothing, or got the sums wrong, has already lost its task's
 * points: its times are not judged again. */
static int did_the_work(const struct run *run, const char *name)
{
    for (int i = 0; i < run->recs.n; i++) {
        const struct record *r = &run->recs.recs[i];
        if (strcmp(r->kind, "perf") != 0 || strcmp(r->name, name) != 0) continue;
        if (rec_field(r, "wrong") != 0 || (run->nranks > 1 && rec_field(r, "calls") <= 0)) return 0;
    }
    return 1;
}

/* The race's baseline is the student's own lab 2 all-reduce (the kit takes
 * it from labs/lab2_allreduce, common/taught.h). Unfinished, it returns
 * without summing: its "times" are no measurement, and nothing raced
 * against it is judged by them. */
static int baseline_broken(const struct run *run, struct check_result *res)
{
    if (did_the_work(run, "nccl")) return 0;
    check_fail(res, run,
               "the race's baseline is your lab 2 all-reduce (lab2_allreduce, which should call "
               "ncclAllReduce), and here it did not sum (no call, or wrong sums), so its times "
               "measure nothing: "
               "finish lab 2's Task 1 first (handouts/lab2.md, \"Task 1\")");
    return 1;
}

static void check_timing(const struct run *run, struct check_result *res)
{
    if (!baseline_broken(run, res)) expect_perf_sane(run, res, "nccl");
    int judged = 0;
    for (int a = RING; a <= OWN; a++)
        if ((a != RD || is_power_of_two(run->nranks)) && did_the_work(run, algo_name[a])) {
            expect_perf_sane(run, res, algo_name[a]);
            judged++;
        }
    if (!judged)
        check_fail(res, run,
                   "none of your all-reduces produced the right sums here, so there is no "
                   "timing of yours to judge");
}

/* GPU runs only: at the largest sizes the student's all-reduce reaches a
 * share of ncclAllReduce's busbw, measured in the same run on the same rank.
 * On the host backend (CPU timings mean nothing here) a working
 * lab8_allreduce earns the points. */
static void check_vs_nccl(const struct run *run, struct check_result *res)
{
    if (!did_the_work(run, "own")) {
        check_fail(res, run,
                   "lab8_allreduce did not produce the right sums here: nothing to race yet");
        return;
    }
    const double want =
        kv_get_num(&run->env->profile->kv, "lab8_min_nccl_fraction", DEFAULT_NCCL_FRACTION);
    if (strcmp(run->env->backend, "cuda") != 0) {
        /* CPU timings say nothing about a GPU race: the points are kept, and
         * the report says so instead of a PASS that was never judged. */
        check_warn(res, run,
                   "not graded on the %s backend (points kept): on GPUs the grader races "
                   "64 MiB to 1 GiB, and lab8_allreduce must reach a share of ncclAllReduce's "
                   "busbw at 256 MiB and above that the GPU's profile sets (%.0f %% in this "
                   "one, profile %s)",
                   run->env->backend, 100 * want, run->env->profile->name);
        return;
    }
    if (run->nranks < 2 || baseline_broken(run, res)) return;
    size_t sizes[64];
    int k = variation_sizes(run->var, sizeof(float), sizes, 64);
    for (int rank = 0; rank < run->nranks; rank++)
        for (int i = 0; i < k; i++) {
            if ((double)sizes[i] < VS_NCCL_MIN_BYTES && i != k - 1) continue;
            const struct record *mine =
                find_record(run, "perf", "own", rank, "bytes", (long long)sizes[i]);
            const struct record *nccl =
                find_record(run, "perf", "nccl", rank, "bytes", (long long)sizes[i]);
            double bw = 0, ref = 0;
            if (!mine || !nccl || rec_num(mine, "busbw_gbps", &bw) != REC_OK ||
                rec_num(nccl, "busbw_gbps", &ref) != REC_OK || !(ref > 0)) {
                check_fail(res, run, "rank %d: no `own` and `nccl` measurements at %zu bytes", rank,
                           sizes[i]);
                continue;
            }
            if (bw < want * ref)
                check_fail(res, run,
                           "rank %d, %zu bytes: lab8_allreduce reaches %.1f GB/s busbw, %.0f %% "
                           "of ncclAllReduce's %.1f GB/s in the same run; %.0f %% earns these "
                           "points — try both ring directions at once, no copy of sendbuf, the "
                           "best --slices (measure 1, 2, 4), and no wait that keeps a transfer "
                           "and an addition from overlapping (handout, \"Channels\")",
                           rank, sizes[i], bw, 100 * bw / ref, ref, 100 * want);
        }
}

static int full(const struct variation *v) { return runs_task(v, NULL); }
static int ring_runs(const struct variation *v) { return runs_task(v, "ring"); }
static int pipelined_runs(const struct variation *v) { return runs_task(v, "pipelined"); }
/* Recursive doubling is never called on other rank counts. */
static int rd_runs(const struct variation *v)
{
    return runs_task(v, "rd") && is_power_of_two(v->nranks);
}
static int own_runs(const struct variation *v) { return runs_task(v, "own"); } /* whole-lab */

static const struct lab_check checks[] = {
    {"runs", "runs to the end, 1-5 and 7 ranks, odd counts", "Common mistakes", check_runs_cleanly,
     NULL, CHECK_RUNS, full},
    {"ring", "Task 1: ring all-reduce: steps and sums right", "Task 1", check_ring, NULL, 0,
     ring_runs},
    {"pipelined", "Task 2: pipelined ring: sliced, joined, right", "Task 2", check_pipelined, NULL,
     0, pipelined_runs},
    {"recursive_doubling", "Task 3: recursive doubling, log2(n) steps", "Task 3", check_rd, NULL, 0,
     rd_runs},
    {"own", "Task 3: lab8_allreduce picks the algorithm", "Task 3", check_own, NULL, 0, own_runs},
    CHECK_TIMING_HONEST(check_timing),
    {"vs_nccl", "GPU only: own near NCCL's busbw, large sizes", "Task 2", check_vs_nccl, NULL,
     CHECK_TIMED, runs_timing},
};

static const struct output_hint hints[] = {
    {"but ncclGroupEnd",
     "a ncclGroupStart without its ncclGroupEnd: nothing in the group is launched — close every "
     "group you open",
     "Task 1"},
    {"is out of range",
     "a peer outside 0..n-1: in C (rank - 1) % n is -1 on rank 0, use (rank - 1 + n) % n; "
     "recursive doubling's partner rank ^ d is in range only while d < n (log2(n) steps)",
     "Common mistakes"},
    {"is too small",
     "a send or receive runs past the end of its buffer: a chunk's offset plus length beyond "
     "count, or a piece of scratch beyond count",
     "Task 1"},
    {"outside a group",
     "a rank sent to itself outside a group: put each step's send and receive in one group",
     "Task 1"},
    HINTS_END,
};

static const struct output_hint task_hangs[] = {
    {"ring",
     "lab8_ring_allreduce: a step's ncclSend and ncclRecv not in one group (every rank sends "
     "first and waits for a receive its neighbour has not reached), or the ranks disagree on a "
     "chunk's length or on the number of steps",
     "Task 1"},
    {"pipelined",
     "lab8_ring_allreduce_pipelined: the ranks disagree on the number of pieces or steps or on "
     "a piece's length, or a step's send and receive are not in one group",
     "Task 2"},
    {"rd",
     "lab8_recursive_doubling: partners disagree on the count or the number of steps, or a "
     "step's send and receive are not in one group",
     "Task 3"},
    {"own",
     "lab8_allreduce: the ranks chose different algorithms (every rank must decide alike), or "
     "the algorithm it called hangs (see that task's own run)",
     "Task 3"},
    HINTS_END,
};

/* clang-format off */
const struct lab_module lab8_module = {
    LAB_MODULE(8, "Own all-reduce (bonus)", "own_allreduce.c"),
    .hints = hints, .task_hangs = task_hangs,
    .hang_cause = "a step's ncclSend and ncclRecv not in one group (when every rank sends "
                  "first, each send waits for a receive its neighbour has not reached: a cycle "
                  "of waits), or the ranks disagree on a chunk's or piece's length, on the "
                  "number of steps or slices, or on which algorithm to run",
    P2P_ONLY_RULE("lab 8 builds the all-reduce from ncclSend/ncclRecv and ncclab_reduce_add"),
};
/* clang-format on */
