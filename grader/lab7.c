/* Lab 7 — the plotting hand-in: the sweep code (groups, timing, CSV rows)
 * from the grader's own runs, then the student's hand-in: the CSV of their
 * sweep, the plot rendered from it and the report they wrote.
 *
 * The hand-in lives next to the code, in <submission>/lab7_sweep/handin/
 * (sweep.csv, sweep.png, sweep.svg, report.md; `make report` puts it there).
 * The engine hands every run the submission's directory. */
#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/bandwidth.h"
#include "../common/perflimits.h"
#include "grader.h"
#include "handin.h"
#include "profile.h"

#define K 1024
#define M (1024 * 1024)

static const struct variation variations[] = {
    /* id        ranks min      max      step iters warmup root rpn extra flags */
    {"default", 4, 4 * K, 1 * M, 4, 3, 2, -1, 2, "--csv none", 0},
    {"uneven", 5, 4000, 64000, 4, 2, 1, -1, 2, "--csv none", 0},
    {"np1", 1, 4 * K, 64 * K, 4, 2, 1, -1, 0, "--csv none", 0},
    /* Between nodes, as lab 6's: the link is the ceiling, and a timer
     * stopped early stands out at 1 MiB already. */
    {"timing", 2, 1 * M, 4 * M, 4, 5, 2, -1, 1, "--csv none", VAR_TIMING | VAR_HOST},
    {"timing-gpu", 8, 64 * M, 1024 * M, 4, 10, 3, -1, 4, "--csv none", VAR_TIMING | VAR_CUDA},
};

/* The sweep's checks run on every run (hidden variations included); the
 * hand-in checks on one. */
#define SWEEP_RUNS NULL

/* ---- the grader's own runs ---- */

static const char *const patterns[] = {"global", "node_local", "cross_node"};

static void check_groups(const struct run *run, struct check_result *res)
{
    static const char *const splits[][2] = {{"split_node_local", "node_local"},
                                            {"split_cross_node", "cross_node"}};
    size_t sizes[64];
    int k = variation_sizes(run->var, sizeof(float), sizes, 64);
    for (int rank = 0; rank < run->nranks; rank++) {
        for (int s = 0; s < 2; s++) {
            int want =
                expected_group(run, s == 0 ? NCCLAB_NODE_LOCAL : NCCLAB_CROSS_NODE, rank).size;
            const struct record *r = find_record(run, "check", splits[s][0], rank, NULL, 0);
            long long ok = 0, null_comm = 0;
            double got = -1;
            if (r) {
                rec_int(r, "ok", &ok);
                rec_int(r, "null_comm", &null_comm);
                rec_num(r, "min", &got);
            }
            if (!r)
                check_fail(res, run, "rank %d: no `%s` record", rank, splits[s][0]);
            else if (null_comm)
                check_fail(res, run,
                           "rank %d: lab7_split_groups left its %s communicator NULL: "
                           "both ncclCommSplit calls must fill their output",
                           rank, splits[s][1]);
            else if (!ok)
                check_fail(res, run,
                           "rank %d: its %s group has %.0f ranks (or a wrong order), "
                           "expected %d: the color of a %s group is the %s, the key the world "
                           "rank",
                           rank, splits[s][1], got, want, splits[s][1],
                           s == 0 ? "node index" : "local rank");
        }
        for (int p = 0; p < 3; p++) {
            char name[32];
            snprintf(name, sizeof name, "%s_sum", patterns[p]);
            double expected = expected_group(run, (enum ncclab_pattern)p, rank).rank_sum;
            for (int i = 0; i < k; i++) {
                long long count = (long long)(sizes[i] / sizeof(float)), mism = -1;
                const struct record *r = find_record(run, "check", name, rank, "count", count);
                double mn = NAN, mx = NAN;
                if (!r) {
                    check_fail(res, run,
                               "rank %d: no `%s` check for %lld elements: the sweep "
                               "skipped a size the grader asked for",
                               rank, name, count);
                    continue;
                }
                rec_num(r, "min", &mn);
                rec_num(r, "max", &mx);
                rec_int(r, "mismatches", &mism);
                if (mism != 0 || fabs(mn - expected) > 1e-3 || fabs(mx - expected) > 1e-3)
                    check_fail(res, run,
                               "rank %d, %lld elements, %s: expected %g (the sum of "
                               "the group's world ranks) everywhere, found %g..%g — the "
                               "all-reduce ran on the wrong communicator, or not at all",
                               rank, count, patterns[p], expected, mn, mx);
            }
        }
    }
}

static void check_timing(const struct run *run, struct check_result *res)
{
    expect_perf_calls(run, res, "allreduce", 1);
    expect_perf_traffic(run, res, "allreduce", "ncclAllReduce", 1.0);
    expect_perf_sane(run, res, "allreduce");
}

/* What the driver found wrong in a CSV row, in words: the column, what the
 * row holds and what it should (fields bad_column, bad_value, want_value of
 * the csv_rows record), and what a factor between the two usually means. */
static void csv_row_fault(const struct record *r, char *buf, size_t len)
{
    const char *col = rec_str(r, "bad_column"), *got = rec_str(r, "bad_value"),
               *want = rec_str(r, "want_value");
    if (!col || !got || !want) {
        text_cut(buf, len, "rows missing or unreadable");
        return;
    }
    if (strcmp(col, "rows") == 0) {
        text_cut(buf, len, "the file has %s line(s) after the header, one per row is %s", got,
                 want);
        return;
    }
    if (strcmp(col, "columns") == 0) {
        text_cut(buf, len, "it has %s columns, the header has %s", got, want);
        return;
    }
    char *end1 = NULL, *end2 = NULL;
    double g = strtod(got, &end1), w = strtod(want, &end2);
    const char *hint = "";
    if (end1 != got && !*end1 && end2 != want && !*end2 && g != 0 && w != 0) {
        double ratio = g / w;
        int is_time = strcmp(col, "time_us") == 0;
        if (fabs(ratio - 1e3) < 5 || fabs(ratio - 1e-3) < 5e-6)
            hint = is_time ? " — a factor of 1000: the time must be in microseconds"
                           : " — a factor of 1000: GB/s is bytes / (time_us x 1000), 10^9 bytes "
                             "per second";
        else if (fabs(ratio - 1e6) < 5e3 || fabs(ratio - 1e-6) < 5e-9)
            hint = is_time ? " — a factor of 10^6: the time must be in microseconds"
                           : " — a factor of 10^6: GB/s is bytes / (time_us x 1000)";
        else if (fabs(ratio - 1.073741824) < 1e-3 || fabs(ratio - 1 / 1.073741824) < 1e-3)
            hint = " — GiB/s instead of GB/s: the kit's GB are 10^9 bytes";
        else if (strcmp(col, "busbw_gbps") == 0)
            hint = " — busbw is algbw x 2(n-1)/n for an all-reduce, n the ranks of the row's group";
    }
    text_cut(buf, len, "column %s is %s, expected %s%s", col, got, want, hint);
}

static void check_csv_rows(const struct run *run, struct check_result *res)
{
    for (int rank = 0; rank < run->nranks; rank++) {
        const struct record *r = find_record(run, "check", "csv_rows", rank, NULL, 0);
        long long ok = 0, first = -1;
        if (!r) {
            check_fail(res, run, "rank %d: no `csv_rows` record", rank);
            continue;
        }
        rec_int(r, "ok", &ok);
        rec_int(r, "first_bad", &first);
        if (ok) continue;
        char why[400];
        csv_row_fault(r, why, sizeof why);
        check_fail(res, run,
                   "lab7_write_csv_row: row %lld (after the header) does not say what was "
                   "measured: %s",
                   first + 1, why);
    }
}

/* ---- the hand-in ---- */

#define MIN_ELEMENTS (1ULL << 10)
#define TOP_ELEMENTS_CUDA (1ULL << 32)
#define TOP_ELEMENTS_HOST (1ULL << 20) /* the host backend's documented cap (handout) */
#define MIN_SIZES 8
#define MIN_WORDS 40

/* The hand-in directory: <submission>/handin/ if there is one, else the
 * submission's lab directory itself. 0 when known. */
static int handin_dir(const struct run *run, struct check_result *res, char *buf, size_t len)
{
    if (!run->submission) {
        check_fail(res, run,
                   "the grader cannot tell where the hand-in is: it was given a built binary "
                   "(--binary); grade the submission directory with --submission DIR");
        return -1;
    }
    char with_sub[1024];
    struct stat st;
    snprintf(with_sub, sizeof with_sub, "%s/handin", run->submission);
    snprintf(buf, len, "%s",
             stat(with_sub, &st) == 0 && S_ISDIR(st.st_mode) ? with_sub : run->submission);
    return 0;
}

/* ---- where the hand-in CSV came from ----
 * The driver ends every CSV it saves with one comment line (labs/lab7_sweep/
 * main.c, sweep_provenance): the SHA-256 of the sweep.c it was built from
 * (make computes it), a name for the run, and the parameters that decide
 * the rows. A hand-in CSV counts as the student's sweep only when
 *   - that hash is the one of the sweep.c handed in beside it,
 *   - its rows are exactly those that sweep's parameters give (patterns,
 *     sizes, group sizes, ranks, nodes, hosts, backend), in the driver's
 *     order, and
 *   - (the score rules, checks.c) the same sweep.c passes its correctness
 *     checks in the grader's own runs: code that cannot make a sweep made
 *     none, whatever its CSV's last line says.
 * The line alone proves nothing (anyone can write it); the last rule is
 * what a CSV edit cannot forge. The plot and the report are graded only
 * with a CSV that passed, so a plot of a sweep the code did not make earns
 * nothing. */

#define PROVENANCE_TAG "# lab7-sweep "

struct provenance {
    char sha256[72], run[72], backend[16], net[8];
    long long np, rpn, nodes, hosts;
    size_t begin, end;
    double factor;
    double link_gbps; /* the host backend's link model between nodes; 0: none */
};

/* The provenance line of a CSV's text: 0 and *pv, -1 when there is none or
 * it is malformed, -2 when there is more than one. */
static int parse_provenance(const char *text, struct provenance *pv)
{
    const char *line = NULL;
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, PROVENANCE_TAG, strlen(PROVENANCE_TAG)) == 0) {
            if (line) return -2;
            line = p;
        }
    if (!line) return -1;
    memset(pv, 0, sizeof *pv);
    pv->np = pv->rpn = pv->nodes = pv->hosts = -1;
    unsigned seen = 0;
    const char *p = line + strlen(PROVENANCE_TAG);
    while (*p && *p != '\n' && *p != '\r') {
        char word[160];
        size_t n = strcspn(p, " \r\n");
        if (n >= sizeof word) return -1;
        memcpy(word, p, n);
        word[n] = '\0';
        p += n;
        while (*p == ' ') p++;
        char *eq = strchr(word, '=');
        if (!eq) return -1;
        *eq = '\0';
        const char *v = eq + 1;
        char *end = NULL;
        static const char *const keys[] = {
            "sweep_sha256", "run", "backend", "np",  "ranks_per_node", "nodes", "hosts",
            "begin",        "end", "factor",  "net", "link_gbps"};
        int k = 0;
        while (k < 12 && strcmp(word, keys[k]) != 0) k++;
        if (k == 12) continue; /* host, started, iters, warmup, link_latency_us: for people */
        seen |= 1u << k;
        if (k == 0 || k == 1 || k == 2) {
            char *dst = k == 0 ? pv->sha256 : k == 1 ? pv->run : pv->backend;
            size_t cap = k == 0 ? sizeof pv->sha256 : k == 1 ? sizeof pv->run : sizeof pv->backend;
            if (strlen(v) >= cap || !v[0]) return -1;
            for (const char *c = v; *c; c++)
                if (!isalnum((unsigned char)*c) && *c != '.' && *c != '-') return -1;
            snprintf(dst, cap, "%s", v);
        } else if (k <= 6) {
            long long x = strtoll(v, &end, 10);
            if (end == v || *end || x < 0 || x > 1 << 20) return -1;
            long long *dst[] = {&pv->np, &pv->rpn, &pv->nodes, &pv->hosts};
            *dst[k - 3] = x;
        } else if (k <= 8) {
            unsigned long long x = strtoull(v, &end, 10);
            if (end == v || *end || v[0] == '-') return -1;
            *(k == 7 ? &pv->begin : &pv->end) = (size_t)x;
        } else if (k == 9) {
            pv->factor = strtod(v, &end);
            if (end == v || *end || !(pv->factor > 1.0) || pv->factor > 1024) return -1;
        } else if (k == 10) {
            if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0) return -1;
            snprintf(pv->net, sizeof pv->net, "%s", v);
        } else {
            pv->link_gbps = strtod(v, &end);
            if (end == v || *end || !(pv->link_gbps >= 0) || pv->link_gbps > 1e6) return -1;
        }
    }
    return seen == (1u << 12) - 1 && pv->np >= 1 && pv->begin >= 4 && pv->end >= pv->begin ? 0 : -1;
}

/* SHA-256 (FIPS 180-4) of a buffer, as sha256sum prints it. */
static void sha256_hex(const unsigned char *data, size_t len, char out[65])
{
    static const unsigned int k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2};
    unsigned int h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))
    const unsigned long long bits = (unsigned long long)len * 8;
    size_t total = (len + 9 + 63) / 64 * 64; /* data, 0x80, zeros, 8-byte length */
    for (size_t off = 0; off < total; off += 64) {
        unsigned char block[64];
        for (size_t i = 0; i < 64; i++) {
            size_t at = off + i;
            block[i] = at < len ? data[at] : at == len ? 0x80 : 0;
            if (at >= total - 8) block[i] = (unsigned char)(bits >> (8 * (total - 1 - at)));
        }
        unsigned int w[64];
        for (int i = 0; i < 16; i++)
            w[i] = (unsigned)block[4 * i] << 24 | (unsigned)block[4 * i + 1] << 16 |
                   (unsigned)block[4 * i + 2] << 8 | block[4 * i + 3];
        for (int i = 16; i < 64; i++) {
            unsigned s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
            unsigned s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        unsigned a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
        for (int i = 0; i < 64; i++) {
            unsigned t1 =
                hh + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
            unsigned t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            hh = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += hh;
    }
#undef ROR
    for (int i = 0; i < 8; i++) snprintf(out + 8 * i, 9, "%08x", h[i]);
}

/* The copy of the student's sweep.c the grader built: the hand-in copy is
 * <scratch>/handin, the sources <scratch>/src (grade.c, build.c). */
static int submitted_sweep_sha256(const struct run *run, char out[65])
{
    char path[1200];
    const char *slash = strrchr(run->submission, '/');
    if (!slash) return -1;
    snprintf(path, sizeof path, "%.*s/src/sweep.c", (int)(slash - run->submission),
             run->submission);
    size_t n = 0;
    char *text = handin_read(path, 4 << 20, &n);
    if (!text) return -1;
    sha256_hex((const unsigned char *)text, n, out);
    free(text);
    return 0;
}

/* Whether `dir`/sweep.csv is the sweep of the sweep.c handed in: 0 and the
 * provenance in *pv; else -1 and why, in words, in `why`. With rows == 0,
 * only its last line and the hash are judged (the rows are judged apart,
 * after the checks that say more about a honest sweep's mistakes). */
static int csv_is_own_sweep(const struct run *run, const char *dir, int rows, struct provenance *pv,
                            char *why, size_t len)
{
    char path[1200], mine[65];
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    char *text = handin_read(path, 4 << 20, NULL);
    if (!text) {
        text_cut(why, len, "there is no readable sweep.csv");
        return -1;
    }
    int got = parse_provenance(text, pv);
    if (got != 0) {
        text_cut(why, len,
                 got == -2
                     ? "sweep.csv has more than one '" PROVENANCE_TAG "...' line: hand in "
                       "the CSV of one sweep, as the sweep wrote it"
                     : "sweep.csv does not end with the line the sweep writes ('" PROVENANCE_TAG
                       "sweep_sha256=... run=... np=...'): hand in the CSV your own sweep "
                       "wrote, unedited (make report copies it)");
        free(text);
        return -1;
    }
    if (submitted_sweep_sha256(run, mine) != 0) {
        text_cut(why, len, "the grader cannot read the sweep.c handed in with sweep.csv");
        free(text);
        return -1;
    }
    if (strcmp(pv->sha256, mine) != 0) {
        if (strcmp(pv->sha256, "unknown") == 0)
            text_cut(why, len,
                     "sweep.csv was written by a lab7 binary built without make, which records "
                     "no sweep.c: build with make, run the sweep again");
        else
            text_cut(why, len,
                     "sweep.csv was written by a lab7 built from another sweep.c (SHA-256 "
                     "%.12s..., the one handed in is %.12s...): hand in the CSV that your "
                     "sweep.c made; after any change to sweep.c, run the sweep again",
                     pv->sha256, mine);
        free(text);
        return -1;
    }
    if (!rows) {
        free(text);
        return 0;
    }

    /* The rows that sweep writes, in its order: every size of -b/-e/-f for
     * each pattern in turn, rank 0's group sizes, the job's counts. */
    size_t sizes[64];
    int nsizes = ncclab_size_walk(pv->begin, pv->end, pv->factor, sizeof(float), sizes, 64);
    int ranks[3] = {(int)pv->np, -1, -1};
    if (pv->rpn > 0) {
        ranks[1] = (int)(pv->rpn < pv->np ? pv->rpn : pv->np);
        ranks[2] = (int)((pv->np + pv->rpn - 1) / pv->rpn);
    }
    int row = 0, bad = 0;
    char *save = NULL, *line = strtok_r(text, "\n", &save); /* the header */
    while (!bad && line && (line = strtok_r(NULL, "\n", &save))) {
        if (!line[0] || line[0] == '\r' || line[0] == '#') continue;
        struct handin_csv_row r;
        if (handin_csv_row(line, &r) != 0 || row >= 3 * nsizes) {
            bad = 1;
            break;
        }
        int p = row / nsizes, i = row % nsizes;
        const size_t elements = sizes[i] / sizeof(float);
        int want_ranks = ranks[p] > 0 ? ranks[p] : r.ranks;
        if (strcmp(r.pattern, patterns[p]) != 0 || r.bytes != (double)sizes[i] ||
            r.elements != (double)elements || r.ranks != want_ranks || r.ranks < 1 ||
            r.ranks > pv->np || r.world_ranks != pv->np || r.nodes != pv->nodes ||
            r.hosts != pv->hosts || strcmp(r.backend, pv->backend) != 0 ||
            (pv->rpn > 0 && pv->nodes != ranks[2]))
            bad = 1;
        else
            row++;
    }
    free(text);
    if (!bad && row == 3 * nsizes) return 0;
    char ask[160];
    text_cut(ask, sizeof ask, "-b %zu -e %zu -f %g on %lld ranks%s", pv->begin, pv->end, pv->factor,
             pv->np, pv->rpn > 0 ? " as virtual nodes" : "");
    if (row < 3 * nsizes && row < 3 * 64)
        text_cut(why, len,
                 "sweep.csv's rows are not the ones its sweep wrote (%s: %d rows, %s at %zu "
                 "bytes on %d ranks is row %d): rows edited, added or removed by hand?",
                 ask, 3 * nsizes, patterns[row / nsizes], sizes[row % nsizes],
                 ranks[row / nsizes] > 0 ? ranks[row / nsizes] : (int)pv->np, row + 1);
    else
        text_cut(why, len,
                 "sweep.csv has more rows than its sweep wrote (%s: %d rows): rows added by "
                 "hand?",
                 ask, 3 * nsizes);
    return -1;
}

/* ---- the examples the kit ships ----
 * handouts/ holds example sweeps and plots (lab7-reference/): a hand-in
 * that is one of them is not the student's measurement. Found at grading
 * time under the kit's root, so every example the kit carries counts. */

#define EXAMPLE_DIR "handouts"
#define EXAMPLE_MAX_FILES 256

/* Every file under the kit's handouts/ whose name ends in `ext`: `fn` is
 * called with its path and its path from the kit's root, until it returns
 * non-zero (that value is returned; 0: none did). */
static int for_each_example(const struct run *run, const char *ext,
                            int (*fn)(const char *path, const char *rel, void *ctx), void *ctx)
{
    if (!run->env || !run->env->root) return 0;
    char dirs[8][1024];
    int ndirs = 0, seen = 0, found = 0;
    if (path_fmt(dirs[ndirs], sizeof dirs[0], "%s/%s", run->env->root, EXAMPLE_DIR) == 0) ndirs++;
    const size_t root_len = strlen(run->env->root) + 1;
    while (ndirs > 0 && !found && seen < EXAMPLE_MAX_FILES) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", dirs[--ndirs]);
        DIR *d = opendir(dir);
        if (!d) continue;
        struct dirent *e;
        while (!found && (e = readdir(d)) && seen++ < EXAMPLE_MAX_FILES) {
            if (e->d_name[0] == '.') continue;
            char path[1300];
            if (path_fmt(path, sizeof path, "%s/%s", dir, e->d_name) != 0) continue;
            struct stat st;
            if (lstat(path, &st) != 0) continue;
            size_t n = strlen(e->d_name), k = strlen(ext);
            if (S_ISDIR(st.st_mode) && ndirs < 8 && strlen(path) < sizeof dirs[0])
                snprintf(dirs[ndirs++], sizeof dirs[0], "%s", path);
            else if (S_ISREG(st.st_mode) && n > k && strcmp(e->d_name + n - k, ext) == 0)
                found = fn(path, path + root_len, ctx);
        }
        closedir(d);
    }
    return found;
}

/* The ok rows of a sweep CSV (the lab 7 header first): how many, into rows. */
static int read_csv_rows(const char *path, struct handin_csv_row *rows, int max)
{
    char *text = handin_read(path, 4 << 20, NULL);
    int n = 0;
    char *save = NULL, *line = text ? strtok_r(text, "\n", &save) : NULL;
    if (line && strncmp(line, HANDIN_CSV_HEADER, strlen(HANDIN_CSV_HEADER)) == 0)
        while ((line = strtok_r(NULL, "\n", &save)) && n < max)
            if (line[0] && line[0] != '\r' && line[0] != '#' &&
                handin_csv_row(line, &rows[n]) == 0 && strcmp(rows[n].status, "ok") == 0)
                n++;
    free(text);
    return n;
}

struct csv_match {
    const struct handin_csv_row *mine; /* the hand-in's ok rows */
    int nmine;
    char example[300]; /* the example it matched */
    int same;          /* rows it shares with it */
};

/* Does one example CSV hold the hand-in's measurements? A time printed to
 * three decimals that recurs at the same pattern and size in another sweep
 * is no coincidence: at least 3 rows, and half the hand-in's, make a copy. */
static int csv_matches(const char *path, const char *rel, void *ctx)
{
    struct csv_match *m = ctx;
    struct handin_csv_row *ex = calloc(512, sizeof *ex);
    if (!ex) return 0;
    int nex = read_csv_rows(path, ex, 512), same = 0;
    for (int i = 0; i < m->nmine; i++)
        for (int j = 0; j < nex; j++)
            if (!strcmp(m->mine[i].pattern, ex[j].pattern) &&
                m->mine[i].elements == ex[j].elements &&
                fabs(m->mine[i].time_us - ex[j].time_us) <= 5e-4 + 1e-9 * ex[j].time_us) {
                same++;
                break;
            }
    free(ex);
    if (same < 3 || 2 * same < m->nmine) return 0;
    snprintf(m->example, sizeof m->example, "%s", rel);
    m->same = same;
    return 1;
}

/* The example sweep whose measurements `dir`/sweep.csv holds, into `which`
 * (with how many of its rows): 1; 0 when it is none of them. */
static int handin_csv_is_example(const struct run *run, const char *dir, char *which, size_t len)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    struct handin_csv_row *rows = calloc(512, sizeof *rows);
    if (!rows) return 0;
    struct csv_match m = {.mine = rows, .nmine = read_csv_rows(path, rows, 512)};
    int found = m.nmine > 0 && for_each_example(run, ".csv", csv_matches, &m);
    if (found)
        text_cut(which, len, "%s (%d of its %d measured rows are that example's)", m.example,
                 m.same, m.nmine);
    free(rows);
    return found;
}

struct file_match {
    const unsigned char *data;
    size_t len;
    char example[300];
};

static int file_matches(const char *path, const char *rel, void *ctx)
{
    struct file_match *m = ctx;
    struct stat st;
    if (stat(path, &st) != 0 || (size_t)st.st_size != m->len) return 0;
    size_t n = 0;
    char *other = handin_read(path, m->len + 1, &n);
    int same = other && n == m->len && memcmp(other, m->data, n) == 0;
    free(other);
    if (same) snprintf(m->example, sizeof m->example, "%s", rel);
    return same;
}

/* Is the hand-in file `dir`/`name` byte for byte a file the kit ships under
 * handouts/ (same extension)? Its path from the kit's root into `which`. */
static int handin_file_is_example(const struct run *run, const char *dir, const char *name,
                                  char *which, size_t len)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t n = 0;
    char *data = handin_read(path, 8 << 20, &n);
    const char *ext = strrchr(name, '.');
    struct file_match m = {(const unsigned char *)data, n, ""};
    int found = data && n > 0 && ext && for_each_example(run, ext, file_matches, &m);
    if (found) snprintf(which, len, "%s", m.example);
    free(data);
    return found;
}

/* The profile for the system the CSV says it ran on. */
static int csv_profile(const struct run *run, const char *backend, const char *gpu,
                       struct profile *p, int *loaded)
{
    const struct profile *mine = run->env->profile;
    char dir[512], name[128], err[256];
    snprintf(dir, sizeof dir, "%s", mine->path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    const char *want = strcmp(backend, "host") == 0                 ? "host"
                       : profile_match(dir, gpu, name, sizeof name) ? name
                                                                    : "pcie";
    *loaded = 0;
    if (strcmp(want, mine->name) == 0) {
        *p = *mine;
        return 0;
    }
    if (profile_load(dir, want, p, err, sizeof err) != 0) return -1;
    *loaded = 1;
    return 0;
}

static void check_handin_csv(const struct run *run, struct check_result *res)
{
    char dir[1024], path[1200];
    if (handin_dir(run, res, dir, sizeof dir) != 0) return;
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    size_t len = 0;
    char *text = handin_read(path, 4 << 20, &len);
    if (!text) {
        check_fail(res, run,
                   "no %s: run the sweep, then `make report CSV=results/lab7-BACKEND.csv` "
                   "copies its CSV there",
                   path);
        return;
    }
    char example[400];
    if (handin_csv_is_example(run, dir, example, sizeof example)) {
        check_fail(res, run,
                   "sweep.csv holds the measurements of %s, an example the kit ships: hand in "
                   "the CSV of your own sweep",
                   example);
        free(text);
        return;
    }
    struct provenance pv;
    char why[600];
    if (csv_is_own_sweep(run, dir, 0, &pv, why, sizeof why) != 0) {
        check_fail(res, run, "%s", why);
        free(text);
        return;
    }
    struct handin_csv_row rows[512];
    int nrows = 0;
    char *save = NULL, *line = strtok_r(text, "\n", &save);
    if (!line || strncmp(line, HANDIN_CSV_HEADER, strlen(HANDIN_CSV_HEADER)) != 0) {
        check_fail(res, run,
                   "sweep.csv does not start with the lab 7 header (%s): hand in the "
                   "file the sweep wrote",
                   HANDIN_CSV_HEADER);
        free(text);
        return;
    }
    int line_no = 1;
    while ((line = strtok_r(NULL, "\n", &save)) && nrows < 512) {
        line_no++;
        if (!line[0] || line[0] == '\r' || line[0] == '#') continue;
        if (handin_csv_row(line, &rows[nrows]) != 0) {
            check_fail(res, run,
                       "sweep.csv line %d is not a row of 14 columns with numbers where "
                       "the header says",
                       line_no);
            free(text);
            return;
        }
        nrows++;
    }
    free(text);
    if (nrows == 0) {
        check_fail(res, run, "sweep.csv has a header but no rows");
        return;
    }
    const struct handin_csv_row *first = &rows[0];
    int is_host = strcmp(first->backend, "host") == 0;
    if (!is_host && strcmp(first->backend, "cuda") != 0) {
        check_fail(res, run, "sweep.csv says backend %s: expected cuda or host", first->backend);
        return;
    }
    struct profile prof;
    int loaded = 0;
    if (csv_profile(run, first->backend, first->gpu, &prof, &loaded) != 0) {
        check_fail(res, run, "no grader profile for the system in sweep.csv (%s, %s)",
                   first->backend, first->gpu);
        return;
    }
    const double top = (double)(is_host ? TOP_ELEMENTS_HOST : TOP_ELEMENTS_CUDA);

    /* Every row: known pattern, consistent system, numbers that add up. */
    for (int i = 0; i < nrows; i++) {
        const struct handin_csv_row *r = &rows[i];
        int p = 0;
        while (p < 3 && strcmp(r->pattern, patterns[p]) != 0) p++;
        if (p == 3) {
            check_fail(res, run,
                       "sweep.csv row %d: pattern '%s' is none of global, node_local, "
                       "cross_node",
                       i + 1, r->pattern);
            continue;
        }
        if (strcmp(r->backend, first->backend) != 0 || strcmp(r->gpu, first->gpu) != 0 ||
            r->world_ranks != first->world_ranks) {
            check_fail(res, run,
                       "sweep.csv mixes runs: row %d says %s/%s/%d ranks, row 1 %s/%s/%d "
                       "— hand in the CSV of one sweep",
                       i + 1, r->backend, r->gpu, r->world_ranks, first->backend, first->gpu,
                       first->world_ranks);
            continue;
        }
        if (r->bytes != 4 * r->elements || r->ranks < 1) {
            check_fail(res, run, "sweep.csv row %d: %.0f bytes for %.0f floats, %d ranks", i + 1,
                       r->bytes, r->elements, r->ranks);
            continue;
        }
        if (strcmp(r->status, "ok") != 0) continue;
        if (!(r->time_us > 0) || !isfinite(r->algbw) || !isfinite(r->busbw)) {
            check_fail(res, run,
                       "sweep.csv row %d (%s, %.0f bytes): time_us %g, busbw %g: a "
                       "broken measurement",
                       i + 1, r->pattern, r->bytes, r->time_us, r->busbw);
            continue;
        }
        double algbw = ncclab_algbw_gbps(r->bytes, r->time_us);
        double busbw = ncclab_busbw_gbps(NCCLAB_ALLREDUCE, r->ranks, r->bytes, r->time_us);
        if (fabs(r->algbw - algbw) > 0.01 * algbw + 0.01 ||
            fabs(r->busbw - busbw) > 0.01 * busbw + 0.01) {
            check_fail(res, run,
                       "sweep.csv row %d (%s, %.0f bytes): algbw %g and busbw %g GB/s "
                       "do not follow from %.0f bytes in %g us on %d ranks (%g and %g): numbers "
                       "edited by hand?",
                       i + 1, r->pattern, r->bytes, r->algbw, r->busbw, r->bytes, r->time_us,
                       r->ranks, algbw, busbw);
            continue;
        }
        if (prof.ceiling_gbps > 0 && r->ranks > 1 && r->bytes >= prof.ceiling_min_bytes &&
            r->busbw > prof.ceiling_gbps)
            check_fail(res, run,
                       "sweep.csv row %d (%s, %.0f bytes): busbw %.1f GB/s is above "
                       "what %s can do (%.0f GB/s, profile %s): a timing bug — the timer stopped "
                       "before the all-reduce finished",
                       i + 1, r->pattern, r->bytes, r->busbw, first->gpu, prof.ceiling_gbps,
                       prof.name);
        /* A cross-node group of one rank per node sends every byte over its
         * ranks' links: an all-reduce sends at least 2(k-1)/k of the data
         * per rank, so its busbw cannot pass the link (a quarter's margin
         * for the pacing's granularity; small sizes are latency-bound). */
        else if (strcmp(pv.net, "on") == 0 && pv.link_gbps > 0 && p == 2 && r->ranks > 1 &&
                 r->bytes >= 64 * K && r->busbw > 1.25 * pv.link_gbps)
            check_fail(res, run,
                       "sweep.csv row %d (cross_node, %.0f bytes): busbw %.3g GB/s is above the "
                       "link model the sweep ran with (%.3g GB/s per rank's link between the "
                       "nodes): a timing bug — the timer stopped before the all-reduce finished",
                       i + 1, r->bytes, r->busbw, pv.link_gbps);
    }
    if (loaded) profile_free(&prof);

    /* Every pattern: >= 8 measured sizes, evenly spaced in log2, from 2^10
     * floats up to the top (or to where memory stopped the sweep). */
    for (int p = 0; p < 3; p++) {
        double ok[512], skipped_max = 0, skipped_min = INFINITY;
        int nok = 0;
        for (int i = 0; i < nrows; i++) {
            if (strcmp(rows[i].pattern, patterns[p]) != 0) continue;
            if (strcmp(rows[i].status, "ok") == 0)
                ok[nok++] = rows[i].elements;
            else if (strcmp(rows[i].status, "skipped_memory") == 0) {
                skipped_max = fmax(skipped_max, rows[i].elements);
                skipped_min = fmin(skipped_min, rows[i].elements);
            }
        }
        for (int i = 1; i < nok; i++) /* sizes in order */
            for (int j = i; j > 0 && ok[j] < ok[j - 1]; j--) {
                double t = ok[j];
                ok[j] = ok[j - 1];
                ok[j - 1] = t;
            }
        if (nok < MIN_SIZES) {
            check_fail(res, run,
                       "sweep.csv: pattern %s has only %d measured size%s, at least %d "
                       "are needed (the default -b 4K -e 16G -f 4 gives 12)",
                       patterns[p], nok, nok == 1 ? "" : "s", MIN_SIZES);
            continue;
        }
        if (ok[0] > MIN_ELEMENTS) {
            check_fail(res, run,
                       "sweep.csv: pattern %s starts at %.0f floats; the sweep must "
                       "start at 2^10 = 1024 floats (-b 4K)",
                       patterns[p], ok[0]);
            continue;
        }
        double ratio = ok[1] / ok[0];
        int even = ratio > 1.01;
        for (int i = 2; i < nok && even; i++)
            even = fabs(log2(ok[i] / ok[i - 1]) - log2(ratio)) < 0.02;
        if (!even) {
            check_fail(res, run,
                       "sweep.csv: the sizes of pattern %s are not evenly spaced in "
                       "log2 (one factor -f between consecutive sizes)",
                       patterns[p]);
            continue;
        }
        double largest = ok[nok - 1];
        if (skipped_min < largest)
            check_fail(res, run,
                       "sweep.csv: pattern %s skips %.0f floats for memory but "
                       "measured the larger %.0f",
                       patterns[p], skipped_min, largest);
        else if (largest < top && skipped_max < top)
            check_fail(res, run,
                       "sweep.csv: pattern %s stops at %.0f floats; the sweep must reach "
                       "2^%d = %.0f floats (%s backend), or record the sizes memory did not allow "
                       "(status skipped_memory) — was -e set lower?",
                       patterns[p], largest, (int)log2(top), top, first->backend);
    }
    /* Last, the rows against the sweep the last line describes. */
    if (res->verdict != VERDICT_FAIL && csv_is_own_sweep(run, dir, 1, &pv, why, sizeof why) != 0)
        check_fail(res, run, "%s", why);
}

static void check_handin_plot(const struct run *run, struct check_result *res)
{
    char dir[1024], path[1200], example[300];
    if (handin_dir(run, res, dir, sizeof dir) != 0) return;
    static const char *const plots[] = {"sweep.png", "sweep.svg"};
    for (int i = 0; i < 2; i++)
        if (handin_file_is_example(run, dir, plots[i], example, sizeof example)) {
            check_fail(res, run,
                       "%s is %s, an example the kit ships: render the plot of your own sweep "
                       "(make plot CSV=...)",
                       plots[i], example);
            return;
        }
    struct provenance pv;
    char why[600];
    if (csv_is_own_sweep(run, dir, 1, &pv, why, sizeof why) != 0) {
        check_fail(res, run,
                   "not graded: a plot counts only as the plot of your own sweep, and sweep.csv "
                   "is not (see the hand-in CSV check)");
        return;
    }
    size_t n = 0;
    snprintf(path, sizeof path, "%s/sweep.png", dir);
    unsigned char *png = (unsigned char *)handin_read(path, 64, &n);
    unsigned w = 0, h = 0;
    if (!png)
        check_fail(res, run, "no %s: render it with `make plot CSV=...` (or `make report`)", path);
    else if (handin_png_size(png, n, &w, &h) != 0)
        check_fail(res, run, "sweep.png is not a PNG image (no PNG signature and IHDR header)");
    else if (w < 300 || h < 200 || w > 20000 || h > 20000)
        check_fail(res, run, "sweep.png is %ux%u pixels: a readable plot is at least 300x200", w,
                   h);
    free(png);

    snprintf(path, sizeof path, "%s/sweep.svg", dir);
    char *svg = handin_read(path, 8 << 20, &n);
    if (!svg) {
        check_fail(res, run, "no %s: `make plot` writes it next to the PNG", path);
        return;
    }
    /* make plot names the sweep's run in the title (tools/lab7-plot). */
    if (!strstr(svg, pv.run))
        check_fail(res, run,
                   "sweep.svg is not the plot of this sweep.csv: its title does not name the "
                   "run %s (render it again: make plot, or make report)",
                   pv.run);
    const char *p = svg;
    while (isspace((unsigned char)*p)) p++;
    const char *open = strstr(svg, "<svg");
    if ((strncmp(p, "<?xml", 5) != 0 && strncmp(p, "<svg", 4) != 0 && strncmp(p, "<!--", 4) != 0) ||
        !open || open - svg > 4096 || !strstr(open, "</svg>"))
        check_fail(res, run,
                   "sweep.svg is not an SVG document (expected XML with an <svg> "
                   "element, closed by </svg>)");
    free(svg);
}

/* ---- the report's figures: quoted from the student's own CSV ---- */

#define FIGURE_TOLERANCE 0.05 /* a quoted figure matches a CSV value within 5 % */

struct figure {
    double value;
    int is_time; /* microseconds; else GB/s */
    char text[40];
};

/* Spaces a figure may have before its unit: ASCII, no-break, thin, and
 * one line break (a paragraph wrapped between the number and its unit). */
static const char *skip_gap(const char *p)
{
    int breaks = 0;
    for (;;) {
        if (*p == ' ' || *p == '\t')
            p++;
        else if ((*p == '\n' || (*p == '\r' && p[1] == '\n')) && !breaks++)
            p += *p == '\r' ? 2 : 1;
        else if (!strncmp(p, "\xc2\xa0", 2))
            p += 2;
        else if (!strncmp(p, "\xe2\x80\x89", 3) || !strncmp(p, "\xe2\x80\xaf", 3))
            p += 3;
        else
            return p;
    }
}

/* A unit of time (scale to us, *is_time = 1) or bandwidth (to GB/s) at p:
 * its length, 0 if none. */
static size_t figure_unit(const char *p, double *scale, int *is_time)
{
    static const struct {
        const char *word;
        double scale;
        int is_time;
    } units[] = {
        {"\xc2\xb5s", 1, 1}, {"\xce\xbcs", 1, 1}, {"microseconds", 1, 1},    {"microsecond", 1, 1},
        {"usec", 1, 1},      {"us", 1, 1},        {"milliseconds", 1e3, 1},  {"ms", 1e3, 1},
        {"ns", 1e-3, 1},     {"GB/s", 1, 0},      {"GiB/s", 1.073741824, 0}, {"MB/s", 1e-3, 0},
        {"TB/s", 1e3, 0},    {"Gb/s", 0.125, 0},  {"Gbit/s", 0.125, 0},
    };
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        size_t n = strlen(units[i].word);
        if (strncmp(p, units[i].word, n) == 0 && !isalnum((unsigned char)p[n])) {
            *scale = units[i].scale;
            *is_time = units[i].is_time;
            return n;
        }
    }
    return 0;
}

/* The figures quoted in [s, end): numbers followed by a unit of time or
 * bandwidth; in a range ("30-50 us", "30 to 50 us") both ends count. */
static int find_figures(const char *s, const char *end, struct figure *out, int max)
{
    int n = 0;
    double pending[4];
    int npending = 0;
    for (const char *p = s; p < end && n < max;) {
        if (!isdigit((unsigned char)*p) ||
            (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '.'))) {
            p++;
            continue;
        }
        char num[40];
        size_t k = 0;
        const char *q = p;
        while (q < end && k + 1 < sizeof num &&
               (isdigit((unsigned char)*q) ||
                (*q == ',' && isdigit((unsigned char)q[1]) && isdigit((unsigned char)q[2]) &&
                 isdigit((unsigned char)q[3]) && !isdigit((unsigned char)q[4])) ||
                (*q == '.' && isdigit((unsigned char)q[1])))) {
            if (*q != ',') num[k++] = *q;
            q++;
        }
        num[k] = '\0';
        double v = strtod(num, NULL), scale;
        int is_time;
        const char *u = skip_gap(q);
        size_t ulen = figure_unit(u, &scale, &is_time);
        if (ulen) {
            for (int i = 0; i < npending && n < max; i++) {
                out[n] = (struct figure){pending[i] * scale, is_time, ""};
                text_cut(out[n].text, sizeof out[n].text, "%g %.*s", pending[i], (int)ulen, u);
                n++;
            }
            if (n < max) {
                out[n] = (struct figure){v * scale, is_time, ""};
                text_cut(out[n].text, sizeof out[n].text, "%s %.*s", num, (int)ulen, u);
                n++;
            }
            npending = 0;
            p = u + ulen;
            continue;
        }
        /* "30-50 us", "30 – 50 us", "30 to 50 us": keep 30 for the unit after 50. */
        const char *d = skip_gap(q);
        const char *after = !strncmp(d, "\xe2\x80\x93", 3) ? d + 3
                            : *d == '-'                    ? d + 1
                            : !strncmp(d, "to ", 3)        ? d + 3
                                                           : NULL;
        if (after && isdigit((unsigned char)*skip_gap(after))) {
            if (npending < 4) pending[npending++] = v;
            p = skip_gap(after);
            continue;
        }
        npending = 0;
        p = q;
    }
    return n;
}

/* Does figure f match a value of a CSV row in the smaller (half 0) or the
 * larger (half 1) half of its pattern's sizes? */
static int figure_in_csv(const struct figure *f, const struct handin_csv_row *rows, int nrows,
                         int half)
{
    for (int i = 0; i < nrows; i++) {
        if (strcmp(rows[i].status, "ok") != 0) continue;
        int below = 0, total = 0; /* this row's place among its pattern's sizes */
        for (int j = 0; j < nrows; j++)
            if (!strcmp(rows[j].pattern, rows[i].pattern) && !strcmp(rows[j].status, "ok")) {
                total++;
                below += rows[j].elements < rows[i].elements;
            }
        int in_half = half == 0 ? 2 * below < total + 1 : 2 * below >= total - 1;
        if (!in_half) continue;
        double values[3] = {rows[i].time_us, rows[i].algbw, rows[i].busbw};
        for (int v = f->is_time ? 0 : 1; v < (f->is_time ? 1 : 3); v++)
            if (values[v] > 0 && fabs(f->value - values[v]) <= FIGURE_TOLERANCE * values[v])
                return 1;
    }
    return 0;
}

/* Sections 1 (small messages) and 2 (large messages) of report.md must each
 * quote at least one figure of the sweep it reports: a time or a bandwidth
 * that sweep.csv holds (within 5 %) for the smaller, resp. the larger, half
 * of the sizes. Figures from elsewhere (a link's speed) may stand beside it.
 * `text` is report.md with its HTML comments blanked. */
static void check_report_figures(const struct run *run, struct check_result *res, const char *dir,
                                 const char *text)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/sweep.csv", dir);
    char *csv = handin_read(path, 4 << 20, NULL);
    /* Per call, not static: a class's students are graded in threads. */
    struct handin_csv_row *rows = calloc(512, sizeof *rows);
    int nrows = 0;
    char *save = NULL, *line = csv ? strtok_r(csv, "\n", &save) : NULL;
    if (rows && line && strncmp(line, HANDIN_CSV_HEADER, strlen(HANDIN_CSV_HEADER)) == 0)
        while ((line = strtok_r(NULL, "\n", &save)) && nrows < 512)
            if (line[0] && line[0] != '\r' && line[0] != '#' &&
                handin_csv_row(line, &rows[nrows]) == 0)
                nrows++;
    free(csv);
    if (nrows == 0) {
        check_fail(res, run,
                   "report.md: its figures cannot be checked without a readable sweep.csv next "
                   "to it");
        free(rows);
        return;
    }
    char example[400];
    if (handin_csv_is_example(run, dir, example, sizeof example)) {
        check_fail(res, run,
                   "report.md reports the sweep of %s, an example the kit ships: report your "
                   "own sweep",
                   example);
        free(rows);
        return;
    }
    struct provenance pv;
    char why[600];
    if (csv_is_own_sweep(run, dir, 1, &pv, why, sizeof why) != 0) {
        check_fail(res, run,
                   "not graded: a report counts only as the report of your own sweep, and "
                   "sweep.csv is not (see the hand-in CSV check)");
        free(rows);
        return;
    }
    static const char *const heads[2] = {"## 1.", "## 2."};
    static const char *const what[2] = {"small messages (the smaller half of your sizes)",
                                        "large messages (the larger half of your sizes)"};
    for (int s = 0; s < 2; s++) {
        const char *h = strstr(text, heads[s]);
        while (h && h != text && h[-1] != '\n') h = strstr(h + 1, heads[s]);
        if (!h) continue; /* a missing section is reported by the caller */
        const char *body = strchr(h, '\n');
        body = body ? body + 1 : h + strlen(h);
        const char *end = strstr(body, "\n## ");
        end = end ? end : body + strlen(body);
        struct figure figs[64];
        int nfigs = find_figures(body, end, figs, 64), found = 0;
        char unmatched[256] = "";
        for (int i = 0; i < nfigs && !found; i++) {
            found = figure_in_csv(&figs[i], rows, nrows, s);
            if (!found && strlen(unmatched) + strlen(figs[i].text) + 3 < sizeof unmatched)
                snprintf(unmatched + strlen(unmatched), sizeof unmatched - strlen(unmatched),
                         "%s%s", unmatched[0] ? ", " : "", figs[i].text);
        }
        if (!found)
            check_fail(res, run,
                       "report.md section %d quotes no figure of your sweep: write at least one "
                       "time (us) or bandwidth (GB/s) that sweep.csv holds for %s, as it is in "
                       "the CSV (within %.0f %%)%s%s",
                       s + 1, what[s], FIGURE_TOLERANCE * 100,
                       unmatched[0] ? "; figures quoted that match none of them: " : "", unmatched);
    }
    free(rows);
}

static void check_handin_report(const struct run *run, struct check_result *res)
{
    static const char *const sections[] = {"## 1.", "## 2.", "## 3."};
    char dir[1024], path[1200];
    if (handin_dir(run, res, dir, sizeof dir) != 0) return;
    snprintf(path, sizeof path, "%s/report.md", dir);
    char *text = handin_read(path, 1 << 20, NULL);
    if (!text) {
        check_fail(res, run,
                   "no %s: `make report CSV=...` writes it from the template; then "
                   "write its sections 1-3",
                   path);
        return;
    }
    /* HTML comments are notes, not answers. */
    for (char *c = strstr(text, "<!--"); c; c = strstr(c, "<!--")) {
        char *e = strstr(c, "-->");
        char *stop = e ? e + 3 : c + strlen(c);
        memset(c, ' ', (size_t)(stop - c));
    }
    char templated[64] = "", short_ones[256] = "", missing[64] = "";
    for (int s = 0; s < 3; s++) {
        char *h = strstr(text, sections[s]);
        while (h && h != text && h[-1] != '\n') h = strstr(h + 1, sections[s]);
        char num[4];
        snprintf(num, sizeof num, "%d", s + 1);
        if (!h) {
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s",
                     missing[0] ? ", " : "", num);
            continue;
        }
        char *body = strchr(h, '\n');
        body = body ? body + 1 : h + strlen(h);
        char *end = strstr(body, "\n## ");
        end = end ? end : body + strlen(body);
        char saved = *end;
        *end = '\0';
        int is_template = strstr(body, "Replace this paragraph") != NULL;
        int words = handin_count_words(body, end);
        *end = saved;
        if (is_template)
            snprintf(templated + strlen(templated), sizeof templated - strlen(templated), "%s%s",
                     templated[0] ? ", " : "", num);
        else if (words < MIN_WORDS)
            snprintf(short_ones + strlen(short_ones), sizeof short_ones - strlen(short_ones),
                     "%s%s (%d words)", short_ones[0] ? ", " : "", num, words);
    }
    if (templated[0])
        check_fail(res, run,
                   "report.md: section%s %s still hold%s the template text (\"_Replace "
                   "this paragraph...\"): replace it with your own explanation, at least %d "
                   "words per section",
                   strchr(templated, ',') ? "s" : "", templated, strchr(templated, ',') ? "" : "s",
                   MIN_WORDS);
    if (short_ones[0])
        check_fail(res, run, "report.md: too short, at least %d words per section: section %s",
                   MIN_WORDS, short_ones);
    if (missing[0])
        check_fail(res, run,
                   "report.md: no section %s (headings \"## 1.\", \"## 2.\", \"## 3.\" "
                   "as in the template)",
                   missing);
    if (!strstr(text, "sweep.png") && !strstr(text, "sweep.svg"))
        check_fail(res, run,
                   "report.md does not show the plot: keep the template's "
                   "![...](sweep.png) line");
    if (!templated[0] && !short_ones[0]) check_report_figures(run, res, dir, text);
    free(text);
}

static const struct lab_check checks[] = {
    {"runs", "the sweep runs to the end, 1-5 ranks, virtual nodes", "Common mistakes",
     check_runs_cleanly, NULL, CHECK_RUNS},
    {"groups", "node-local, cross-node groups and sums right", "Task 1", check_groups, SWEEP_RUNS},
    {"timing", "warm-up, then timed calls; timing honest", "Task 2", check_timing, SWEEP_RUNS,
     CHECK_TIMED},
    {"csv_rows", "CSV rows say what was measured", "Task 3", check_csv_rows, SWEEP_RUNS},
    {"handin_csv", "hand-in CSV: 3 patterns, >= 8 sizes, full range", "Hand-in", check_handin_csv,
     NULL, CHECK_HANDIN},
    {"handin_plot", "hand-in plot: PNG and SVG images", "Hand-in", check_handin_plot, NULL,
     CHECK_HANDIN},
    {"handin_report", "hand-in report: sections 1-3, figures from the CSV", "Hand-in",
     check_handin_report, NULL, CHECK_HANDIN},
};

/* clang-format off */
const struct lab_module lab7_module = {
    LAB_MODULE(7, "Plotting hand-in", "sweep.c"),
    .hang_cause = "a rank skipped an ncclCommSplit or an all-reduce the others made (every rank "
                  "must split twice in the same order and time every size), or a stream was "
                  "never waited for",
    .handin_files = "handin_csv=sweep.csv,handin_plot=sweep.png,handin_plot=sweep.svg,"
                    "handin_report=report.md",
};
/* clang-format on */
