/* Lab 7 driver — provided, do not edit. Your code goes in sweep.c.
 *
 * The sweep: every size from -b to -e (factor -f), each timed with your
 * lab7_time_allreduce in three patterns in turn — the whole world, the
 * node-local groups and the cross-node groups your lab7_split_groups made.
 * The driver
 *   1. checks each group communicator's size and this rank's place in it,
 *      from every rank's (node, local rank) gathered over MPI;
 *   2. works out, before allocating, which sizes fit in memory (two buffers
 *      per rank plus headroom; see memory_budget) — the others are skipped
 *      with a line saying so, and recorded as skipped in the CSV;
 *   3. times and checks every (size, pattern): perf records with group= and
 *      the group's size, and <pattern>_sum checks from the data;
 *   4. writes the CSV through your lab7_write_csv_row, reads every row back
 *      and checks it against what was measured (csv_rows), and rank 0 saves
 *      it to --csv (default results/lab7-<backend>.csv), ending with one
 *      comment line that says which sweep.c made it, where and how
 *      (sweep_provenance below; the grader holds it against your hand-in).
 * One progress line per size goes to stderr, so a long sweep never looks
 * dead. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "groups.h"
#include "lab.h"
#include "lab7.h"
#ifdef NCCLAB_HOST_BACKEND
#include <ncclab_host_net.h>
#endif

/* The patterns this lab measures: the first 3 of enum ncclab_pattern. */
enum { NPATTERNS = 3 };

/* ---- the measurements ---- */

/* clang-format off */
static const struct ncclab_case sweep_case = {
    .name = "allreduce", .coll = NCCLAB_ALLREDUCE, .redop = "sum",
    .traced = NCCLAB_TRACED(ALLREDUCE), .time_call = lab7_time_allreduce,
    .hint = "a rank skipped the all-reduce, or used a communicator from another split or another "
            "count"};
/* clang-format on */

/* ---- the CSV ---- */

static int split_csv(char *line, char **f, int max)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < max; p++) {
        f[n++] = p;
        p = strchr(p, ',');
        if (!p) break;
        *p = '\0';
    }
    return n;
}

static int num_close(const char *text, double want, double rel, double abs_tol)
{
    char *end = NULL;
    double v = strtod(text, &end);
    if (end == text || *end) return 0;
    if (isnan(want)) return isnan(v);
    return fabs(v - want) <= rel * fabs(want) + abs_tol;
}

/* The first column of a row that differs from what was measured: its name,
 * what the row holds and what it should hold (for the grader's record). */
struct row_fault {
    char column[24], got[48], want[48];
};

static const char *fault(struct row_fault *rf, const char *column, const char *got,
                         const char *want, const char *why)
{
    snprintf(rf->column, sizeof rf->column, "%s", column);
    snprintf(rf->got, sizeof rf->got, "%s", got);
    snprintf(rf->want, sizeof rf->want, "%s", want);
    return why;
}

/* Why one CSV line does not say what `row` holds, or NULL if it does. */
static const char *row_problem(char *line, const struct lab7_row *row, struct row_fault *rf)
{
    static char why[160];
    char *f[20], num[6][32];
    int nf = split_csv(line, f, 20);
    if (nf != 14) {
        snprintf(num[0], sizeof num[0], "%d", nf);
        return fault(rf, "columns", num[0], "14", "it does not have the 14 columns of the header");
    }
    snprintf(num[0], sizeof num[0], "%zu", row->bytes);
    snprintf(num[1], sizeof num[1], "%zu", row->elements);
    const int ints[] = {row->ranks, row->world_ranks, row->nodes, row->hosts};
    for (int i = 0; i < 4; i++) snprintf(num[2 + i], sizeof num[2 + i], "%d", ints[i]);
    /* Columns compared as text; the four counts are quoted less in the message. */
    const struct {
        int col;
        const char *name, *want;
    } cols[] = {{0, "pattern", row->pattern},
                {1, "bytes", num[0]},
                {2, "elements", num[1]},
                {10, "backend", row->backend},
                {11, "gpu", row->gpu},
                {12, "nccl_version", row->nccl_version},
                {13, "status", row->skipped ? "skipped_memory" : "ok"},
                {6, "ranks", num[2]},
                {7, "world_ranks", num[3]},
                {8, "nodes", num[4]},
                {9, "hosts", num[5]}};
    for (int i = 0; i < 11; i++) {
        const char *got = f[cols[i].col];
        if (strcmp(got, cols[i].want) == 0) continue;
        if (i < 7)
            snprintf(why, sizeof why, "column %s is '%.40s', expected '%.40s'", cols[i].name, got,
                     cols[i].want);
        else
            snprintf(why, sizeof why, "column %s is '%.20s', expected %s", cols[i].name, got,
                     cols[i].want);
        return fault(rf, cols[i].name, got, cols[i].want, why);
    }
    if (row->skipped)
        return f[3][0] || f[4][0] || f[5][0]
                   ? fault(rf,
                           f[3][0]   ? "time_us"
                           : f[4][0] ? "algbw_gbps"
                                     : "busbw_gbps",
                           f[3][0]   ? f[3]
                           : f[4][0] ? f[4]
                                     : f[5],
                           "", "a skipped row must leave time_us, algbw_gbps and busbw_gbps empty")
                   : NULL;
    double bytes = (double)row->bytes;
    const double want[3] = {row->time_us, ncclab_algbw_gbps(bytes, row->time_us),
                            ncclab_busbw_gbps(NCCLAB_ALLREDUCE, row->ranks, bytes, row->time_us)};
    static const char *const bw_names[] = {"time_us", "algbw_gbps", "busbw_gbps"};
    for (int i = 0; i < 3; i++)
        if (!num_close(f[3 + i], want[i], 1e-3, i == 0 ? 6e-4 : 6e-3)) {
            snprintf(why, sizeof why, "column %s is '%.24s', expected %.6g", bw_names[i], f[3 + i],
                     want[i]);
            snprintf(num[0], sizeof num[0], "%.6g", want[i]);
            return fault(rf, bw_names[i], f[3 + i], num[0], why);
        }
    return NULL;
}

/* The SHA-256 of the sweep.c this binary was built from: make computes it
 * (mk/lab7.mk); a build without make has none. */
#ifndef NCCLAB_SWEEP_SHA256
#define NCCLAB_SWEEP_SHA256 "unknown"
#endif

/* `in` with every character but letters, digits, '.' and '-' made '-'. */
static void plain_word(const char *in, char *out, size_t len)
{
    size_t n = 0;
    for (; in[n] && n + 1 < len; n++) {
        char c = in[n];
        int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                   c == '.' || c == '-';
        out[n] = keep ? c : '-';
    }
    out[n] = '\0';
}

/* The CSV's last line, a comment: which sweep.c made the sweep (its hash),
 * a name for this run, where and when it ran, and the parameters that
 * decide its rows. A hand-in CSV is graded only with the sweep.c that made
 * it and only as these parameters shape it (handouts/lab7.md, "Hand-in");
 * plots carry the run's name. */
static void sweep_provenance(FILE *f, const struct ncclab_lab *lab)
{
    char host[256] = "unknown", word[64], started[32] = "unknown";
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    plain_word(host, word, sizeof word);
    /* The network between the nodes: on the host backend the link model
     * (0: none), on GPUs NCCL's own transport (0 here too: no model). */
    double link_gbps = 0, link_latency_us = 0;
#ifdef NCCLAB_HOST_BACKEND
    const char *why = NULL;
    if (lab->world.net_between &&
        ncclabHostLinkModel(&link_gbps, &link_latency_us, &why) != ncclSuccess)
        link_gbps = link_latency_us = 0;
#endif
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", &tm);
    fprintf(f,
            "# lab7-sweep sweep_sha256=%s run=%s-%lld-%ld host=%s started=%s backend=%s np=%d "
            "ranks_per_node=%d nodes=%d hosts=%d begin=%zu end=%zu factor=%.17g iters=%d "
            "warmup=%d net=%s link_gbps=%.6g link_latency_us=%.6g\n",
            NCCLAB_SWEEP_SHA256, word, (long long)now, (long)getpid(), word, started,
            ncclab_backend_name(), lab->world.nranks, lab->opts.ranks_per_node, lab->world.nnodes,
            lab->hosts, lab->opts.min_bytes, lab->opts.max_bytes, lab->opts.step_factor,
            lab->opts.iters, lab->opts.warmup, lab->world.net_between ? "on" : "off", link_gbps,
            link_latency_us);
}

/* Write every row through lab7_write_csv_row, read the file back and check
 * it (every rank, so the check comes from all of them): rank 0 writes to
 * `path` unless it is "none", the others (and rank 0 then) to a scratch file. */
static void write_csv(struct ncclab_lab *lab, const struct lab7_row *rows, int nrows,
                      const char *path)
{
    FILE *tmp =
        lab->world.rank == 0 && strcmp(path, "none") != 0 ? ncclab_lab_create_file(path) : NULL;
    const int saved = tmp != NULL;
    if (!tmp) tmp = tmpfile();
    if (!tmp) ncclab_die(1, "cannot create a scratch file for the CSV: %s", strerror(errno));
    fprintf(tmp, "%s\n", LAB7_CSV_HEADER);
    for (int i = 0; i < nrows; i++) lab7_write_csv_row(tmp, &rows[i]);
    fflush(tmp);
    rewind(tmp);

    char line[1024], first_why[200] = "";
    struct row_fault first_fault = {"", "", ""};
    int read_rows = 0, bad = 0, first_bad = -1;
    if (!fgets(line, sizeof line, tmp)) line[0] = '\0';
    while (fgets(line, sizeof line, tmp)) {
        if (read_rows < nrows) {
            struct row_fault rf = {"", "", ""};
            const char *why = row_problem(line, &rows[read_rows], &rf);
            if (why) {
                if (first_bad < 0) {
                    first_bad = read_rows;
                    snprintf(first_why, sizeof first_why, "%s", why);
                    first_fault = rf;
                }
                bad++;
            }
        }
        read_rows++;
    }
    if (read_rows != nrows && first_bad < 0) {
        first_bad = read_rows < nrows ? read_rows : nrows;
        snprintf(first_why, sizeof first_why,
                 "%d line(s) after the header, expected one per row: %d", read_rows, nrows);
        snprintf(first_fault.column, sizeof first_fault.column, "rows");
        snprintf(first_fault.got, sizeof first_fault.got, "%d", read_rows);
        snprintf(first_fault.want, sizeof first_fault.want, "%d", nrows);
    }
    int missing = read_rows < nrows ? nrows - read_rows : 0;
    struct ncclab_summary s = {.count = (size_t)nrows,
                               .mismatches = (size_t)(bad + missing + (read_rows > nrows)),
                               .first_bad = first_bad,
                               .min = nrows - bad - missing,
                               .max = nrows - bad - missing,
                               .expected = nrows};
    ncclab_report_check(&lab->report, "csv_rows", &s);
    if (first_bad >= 0) {
        struct ncclab_record *rec = &lab->report.recs[lab->report.nrecs - 1];
        ncclab_record_str(rec, "why", first_why);
        /* The same, field by field: a record value cannot hold spaces. */
        if (first_fault.column[0]) {
            ncclab_record_str(rec, "bad_column", first_fault.column);
            ncclab_record_str(rec, "bad_value", first_fault.got[0] ? first_fault.got : "(empty)");
            ncclab_record_str(rec, "want_value",
                              first_fault.want[0] ? first_fault.want : "(empty)");
        }
        if (lab->world.rank == 0)
            printf("# csv: row %d (after the header) is not what was measured: %s\n", first_bad + 1,
                   first_why);
    }

    if (saved) {
        fseek(tmp, 0, SEEK_END);
        sweep_provenance(tmp, lab);
    }
    if (fclose(tmp) != 0 && saved) ncclab_die(1, "cannot write %s: %s", path, strerror(errno));
    if (saved)
        printf("# wrote %s: %d row(s)%s — plot them: make plot CSV=%s\n", path, read_rows,
               first_bad >= 0 ? ", NOT what was measured (see the csv line above)" : "", path);
}

/* clang-format off */
static const struct ncclab_lab_config config = {
    .number = 7, .name = "lab7",
    .defaults = NCCLAB_SWEEP(4UL << 10, 16UL << 30, 4, 20, 5),
    /* Host memory and CPU cores: a small top size keeps a laptop run short. */
    .host_defaults = NCCLAB_SWEEP(4UL << 10, 4UL << 20, 2, 10, 3),
    .summary = "Lab 7: sweep all-reduce sizes (default 4 KiB..16 GiB, 2^10..2^32 floats) in "
               "three patterns (global, node-local, cross-node groups), print the table and "
               "write the CSV for the plot. --ranks-per-node K makes virtual nodes."};
/* clang-format on */

int main(int argc, char **argv)
{
    char default_csv[64];
    snprintf(default_csv, sizeof default_csv, "results/lab7-%s.csv", ncclab_backend_name());
    const char *csv_path = default_csv;
    const struct ncclab_opt extra[] = {
        {"csv", 0, NCCLAB_OPT_STRING, &csv_path, "file where rank 0 writes the CSV (none: no file)",
         0, 0, "a file name (or none)"},
        NCCLAB_OPT_END,
    };
    struct ncclab_lab lab;
    ncclab_lab_start(&lab, &config, extra, argc, argv);
    const int n = lab.world.nranks, me = lab.world.rank;

    struct ncclab_placement pl;
    ncclab_placement_gather(&lab.world, &pl);
    struct ncclab_expected_group e[NPATTERNS], e0[NPATTERNS];
    for (int p = 0; p < NPATTERNS; p++) {
        e[p] = ncclab_expect_group(&pl, (enum ncclab_pattern)p, me);
        e0[p] = ncclab_expect_group(&pl, (enum ncclab_pattern)p, 0);
    }
    const char *vnodes = lab.opts.ranks_per_node > 0 ? "virtual " : "";
    if (me == 0) {
        printf("# %d rank(s) on %d %snode(s), %d host(s); rank 0's groups: node_local %d rank(s), "
               "cross_node %d rank(s)\n",
               n, lab.world.nnodes, vnodes, lab.hosts, e0[NCCLAB_NODE_LOCAL].size,
               e0[NCCLAB_CROSS_NODE].size);
        if (lab.world.nnodes == 1 && n > 1)
            printf("# one node: node_local is the whole job and every cross_node group is one "
                   "rank (busbw 0). On one machine, --ranks-per-node K plays several nodes\n");
    }

    /* Task 1: every rank takes part in both splits. */
    ncclComm_t comm[NPATTERNS] = {lab.comm, NULL, NULL};
    ncclab_watchdog_arm(lab.opts.timeout_s, "running lab7_split_groups",
                        "every rank must call ncclCommSplit twice, in the same order");
    lab7_split_groups(lab.comm, me, lab.world.node, lab.world.local_rank, &comm[NCCLAB_NODE_LOCAL],
                      &comm[NCCLAB_CROSS_NODE]);
    ncclab_watchdog_disarm();
    ncclab_report_split(&lab.report, "split_node_local", comm[NCCLAB_NODE_LOCAL],
                        &e[NCCLAB_NODE_LOCAL]);
    ncclab_report_split(&lab.report, "split_cross_node", comm[NCCLAB_CROSS_NODE],
                        &e[NCCLAB_CROSS_NODE]);

    /* Which sizes fit in memory: the others are skipped (each rank the same ones). */
    const size_t *sizes = lab.sizes;
    const int nsizes = lab.nsizes, nfit = ncclab_lab_sizes_that_fit(&lab, 2);
    char sz[32];
    struct ncclab_bufs buf = ncclab_lab_bufs(&lab, 0);

    /* Task 2 at every size, the three patterns in turn; Task 3's CSV rows
     * go pattern by pattern (one line each on the plot). */
    char gpu[128];
    ncclab_csv_clean(lab.gpu_name, gpu, sizeof gpu);
    static struct lab7_row rows[NPATTERNS * NCCLAB_MAX_STEPS];
    for (int i = 0; i < nsizes; i++) {
        size_t count = sizes[i] / sizeof(float);
        double busbw[NPATTERNS];
        for (int p = 0; p < NPATTERNS; p++) {
            struct lab7_row *row = &rows[p * nsizes + i];
            *row = (struct lab7_row){.pattern = ncclab_pattern_name(p),
                                     .bytes = sizes[i],
                                     .elements = count,
                                     .time_us = NAN,
                                     .ranks = e0[p].size,
                                     .world_ranks = n,
                                     .nodes = lab.world.nnodes,
                                     .hosts = lab.hosts,
                                     .backend = ncclab_backend_name(),
                                     .gpu = gpu,
                                     .nccl_version = lab.nccl_version,
                                     .skipped = i >= nfit};
            if (i >= nfit) continue;
            char what[80];
            snprintf(what, sizeof what, "running lab7_time_allreduce (%s, %zu floats)",
                     ncclab_pattern_name(p), count);
            double t = ncclab_group_case(&lab, &sweep_case, (enum ncclab_pattern)p, comm[p], &e[p],
                                         what, &buf, count);
            /* The CSV row: the slowest rank of the pattern sets the pace (its
             * groups run at once), as in the table the run prints and in
             * nccl-tests; the bandwidths are those of rank 0's group size. */
            double mine = !isnan(t) ? t : -1.0;
            double slowest = -1.0;
            MPI_CHECK(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
            row->time_us = slowest > 0 ? slowest : NAN;
            busbw[p] =
                ncclab_busbw_gbps(NCCLAB_ALLREDUCE, e0[p].size, (double)sizes[i], row->time_us);
        }
        if (i < nfit)
            ncclab_lab_progress(
                &lab, i, "busbw GB/s: global %8.2f  node_local %8.2f  cross_node %8.2f",
                busbw[NCCLAB_GLOBAL], busbw[NCCLAB_NODE_LOCAL], busbw[NCCLAB_CROSS_NODE]);
        else
            ncclab_lab_progress(&lab, i, "skipped: does not fit in memory (%s is the top)",
                                ncclab_format_size(sizes[nfit - 1], sz, sizeof sz));
    }
    write_csv(&lab, rows, NPATTERNS * nsizes, csv_path);

    CUDA_CHECK(cudaStreamSynchronize(lab.stream));
    ncclab_destroy_groups(comm, NPATTERNS, lab.comm);
    ncclab_lab_free_bufs(&buf);
    ncclab_placement_free(&pl);
    if (me == 0) {
        printf("# sweep: %d size(s) x %d patterns in %.1f s\n", nfit, NPATTERNS,
               (ncclab_now_us() - lab.t_start) / 1e6);
        fflush(stdout);
    }
    return ncclab_lab_finish(&lab);
}
