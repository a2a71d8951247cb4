/* Unit tests of the grader's own parts (Check): the record parser on hostile
 * input, the config reader, the runner's limits, size steps. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyse.h"
#include "cgroup.h"
#include "config.h"
#include "gradebook.h"
#include "grader.h"
#include "records.h"
#include "report.h"
#include "runner.h"
#include "schedule.h"
#include "text.h"

static const char good[] =
    "#ncclab v=1 lab=2 kind=perf name=allreduce rank=0 nranks=2 local_rank=0 node=0 host=vm "
    "device=0 backend=host coll=allreduce bytes=4096 count=1024 time_us=12.5 busbw_gbps=0.3";

START_TEST(parses_a_record)
{
    struct record r;
    ck_assert_int_eq(record_parse_line(good, strlen(good), &r, NULL), 0);
    ck_assert_str_eq(r.kind, "perf");
    ck_assert_str_eq(r.name, "allreduce");
    ck_assert_int_eq(r.rank, 0);
    ck_assert_int_eq(r.nranks, 2);
    double t;
    long long b;
    ck_assert_int_eq(rec_num(&r, "time_us", &t), REC_OK);
    ck_assert(fabs(t - 12.5) < 1e-12);
    ck_assert_int_eq(rec_int(&r, "bytes", &b), REC_OK);
    ck_assert_int_eq(b, 4096);
    ck_assert_int_eq(rec_num(&r, "missing", &t), REC_MISSING);
    ck_assert_int_eq(rec_int(&r, "host", &b), REC_MALFORMED);
    record_free(&r);
}
END_TEST

START_TEST(rejects_malformed_lines)
{
    static const char *bad[] = {
        "#ncclab v=1 lab=1 kind=env name=x rank=0",                 /* no nranks */
        "#ncclab v=1 lab=1 kind=env name=x rank=3 nranks=2",        /* rank out of range */
        "#ncclab v=1 lab=1 kind=env name=x rank=0 nranks=1  x=1",   /* double space */
        "#ncclab v=1 lab=1 kind=env name=x rank=0 nranks=1 x=",     /* empty value */
        "#ncclab v=1 lab=1 kind=env name=x rank=0 nranks=1 x=a\"b", /* bad character */
        "#ncclab v=1 lab=1 kind=env name=x rank=0 nranks=1 =1",     /* empty key */
        "#ncclab v=1 lab=1 kind=env name=x rank=0 nranks=1 X=1",    /* upper-case key */
        "#ncclab v=1 lab=1 kind=env name=x rank=0 nranks=1 ",       /* trailing space */
        "#ncclab v=1 lab=1 kind=env name=x rank=zero nranks=1",     /* not a number */
        "ncclab v=1 lab=1 kind=env name=x rank=0 nranks=1",         /* no prefix */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct record r;
        const char *why = NULL;
        ck_assert_msg(record_parse_line(bad[i], strlen(bad[i]), &r, &why) != 0, "accepted: %s",
                      bad[i]);
        ck_assert_ptr_nonnull(why);
    }
    char longline[2000];
    snprintf(longline, sizeof longline, "%s pad=%01100d", good, 0);
    struct record r;
    ck_assert_int_ne(record_parse_line(longline, strlen(longline), &r, NULL), 0);
}
END_TEST

START_TEST(nan_and_inf_are_reported)
{
    const char *line =
        "#ncclab v=1 lab=2 kind=perf name=a rank=0 nranks=1 time_us=nan busbw_gbps=inf";
    struct record r;
    ck_assert_int_eq(record_parse_line(line, strlen(line), &r, NULL), 0);
    double v;
    long long i;
    ck_assert_int_eq(rec_num(&r, "time_us", &v), REC_NONFINITE);
    ck_assert_int_eq(rec_num(&r, "busbw_gbps", &v), REC_NONFINITE);
    ck_assert_int_eq(rec_int(&r, "time_us", &i), REC_NONFINITE);
    record_free(&r);
}
END_TEST

START_TEST(output_with_garbage_truncation_and_binary)
{
    /* table lines, a good record, one run into by other output, binary
     * bytes, a NUL, and a last record cut off without its newline */
    const char out[] = "# banner\n"
                       "       4096  1024  float\n"
                       "#ncclab v=1 lab=1 kind=check name=s rank=0 nranks=2 count=1\n"
                       "junk#ncclab v=1 lab=1 kind=check name=s rank=1 nranks=2 count=1\n"
                       "\x01\x02\xff\n"
                       "a\0b\n"
                       "#ncclab v=1 lab=1 kind=check name=s rank=1 nranks=2 cou";
    struct record_set s;
    records_parse(out, sizeof out - 1, &s);
    ck_assert_int_eq(s.n, 1);
    ck_assert_int_eq(s.bad_lines, 2);
    ck_assert_int_eq(s.first_bad_line, 4);
    ck_assert_int_eq(s.truncated, 1);
    ck_assert(s.binary_bytes >= 3);
    ck_assert_int_eq(records_count(&s, "check", "s"), 1);
    records_free(&s);
    records_parse("", 0, &s);
    ck_assert_int_eq(s.n, 0);
    records_free(&s);
}
END_TEST

START_TEST(random_bytes_never_crash)
{
    srand(42);
    char buf[8192];
    for (int round = 0; round < 200; round++) {
        size_t n = (size_t)(rand() % (int)sizeof buf);
        for (size_t i = 0; i < n; i++) {
            int k = rand() % 10;
            buf[i] = k == 0 ? '\n' : k == 1 ? ' ' : k == 2 ? '=' : (char)(rand() % 256);
        }
        /* splice prefixes in so the record path is exercised */
        for (size_t i = 0; i + 8 < n; i += 97) memcpy(buf + i, "\n#ncclab", 8);
        struct record_set s;
        records_parse(buf, n, &s);
        records_free(&s);
    }
}
END_TEST

/* A new temporary file (path: a mkstemp template) holding text. */
static void write_temp(char *path, const char *text)
{
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    size_t n = strlen(text);
    ck_assert_int_eq(write(fd, text, n), (ssize_t)n);
    close(fd);
}

START_TEST(config_reads_key_values)
{
    char path[] = "/tmp/grader-test-XXXXXX";
    write_temp(path, "# comment\nlab1.a = 3\n  lab1.b=2.5 # trailing\n\nlab1.a = 4\n");
    struct kv_file kv;
    char err[256];
    ck_assert_int_eq(kv_load(path, &kv, err, sizeof err), 0);
    ck_assert(kv_get_num(&kv, "lab1.a", -1) == 4); /* the last one wins */
    ck_assert(kv_get_num(&kv, "lab1.b", -1) == 2.5);
    ck_assert(kv_get_num(&kv, "lab1.c", -1) == -1);
    kv_free(&kv);
    FILE *f = fopen(path, "w");
    fputs("no equals sign\n", f);
    fclose(f);
    ck_assert_int_ne(kv_load(path, &kv, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(err, ":1:"));
    unlink(path);
}
END_TEST

START_TEST(runner_limits)
{
    struct run_output o;
    struct run_limits lim = {.timeout_s = 1, .output_bytes = 1 << 16};
    char *hang[] = {"sh", "-c", "sleep 30 & sleep 30; echo never", NULL};
    double t0 = now_seconds();
    run_process(hang, NULL, NULL, &lim, &o);
    ck_assert_int_eq(o.end, RUN_TIMEOUT);
    ck_assert(now_seconds() - t0 < 5);
    run_output_free(&o);

    char *flood[] = {"sh", "-c", "yes flood", NULL};
    run_process(flood, NULL, NULL, &lim, &o);
    ck_assert_int_eq(o.end, RUN_FLOOD);
    ck_assert_uint_le(o.out_len, 1 << 16);
    run_output_free(&o);

    char *crash[] = {"sh", "-c", "echo out; echo err >&2; kill -SEGV $$", NULL};
    run_process(crash, NULL, NULL, &lim, &o);
    ck_assert_int_eq(o.end, RUN_SIGNALED);
    ck_assert_int_eq(o.term_signal, 11);
    ck_assert_str_eq(o.out, "out\n");
    ck_assert_str_eq(o.err, "err\n");
    run_output_free(&o);

    char *env[] = {"GRADER_TEST_VAR=42", NULL};
    char *status[] = {"sh", "-c", "echo $GRADER_TEST_VAR; exit 3", NULL};
    run_process(status, env, NULL, &lim, &o);
    ck_assert_int_eq(o.end, RUN_EXITED);
    ck_assert_int_eq(o.exit_status, 3);
    ck_assert_str_eq(o.out, "42\n");
    run_output_free(&o);

    char *missing[] = {"/nonexistent/program", NULL};
    run_process(missing, NULL, NULL, &lim, &o);
    ck_assert_int_eq(o.end, RUN_EXITED);
    ck_assert_int_eq(o.exit_status, 127);
    run_output_free(&o);

    /* Twelve spinning processes against a limit of 4 busy threads: a CPU
     * hog, stopped long before its time limit; two sleepers are not. */
    struct run_limits hog_lim = {.timeout_s = 60, .output_bytes = 1 << 16, .busy_threads = 4};
    char *hog[] = {"sh", "-c",
                   "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do "
                   "(while :; do :; done) & done; wait",
                   NULL};
    run_process(hog, NULL, NULL, &hog_lim, &o);
    ck_assert_int_eq(o.end, RUN_HOG);
    ck_assert_int_gt(o.busy_seen, 4);
    run_output_free(&o);
    char *calm[] = {"sh", "-c", "sleep 1 & sleep 1; wait; echo calm", NULL};
    run_process(calm, NULL, NULL, &hog_lim, &o);
    ck_assert_int_eq(o.end, RUN_EXITED);
    ck_assert_str_eq(o.out, "calm\n");
    run_output_free(&o);
}
END_TEST

START_TEST(size_steps_match_the_kit)
{
    struct variation v = {.min_bytes = 4, .max_bytes = 64 * 1024, .step = 16};
    size_t s[16];
    int n = variation_sizes(&v, 4, s, 16);
    ck_assert_int_eq(n, 4);
    ck_assert_uint_eq(s[0], 4);
    ck_assert_uint_eq(s[3], 16384);
    struct variation odd = {.min_bytes = 4000013, .max_bytes = 4000013, .step = 2};
    n = variation_sizes(&odd, 4, s, 16);
    ck_assert_int_eq(n, 1);
    ck_assert_uint_eq(s[0], 4000012);
}
END_TEST

/* Gradebook cells from submissions (student names, diagnoses) must never
 * be read as formulas by a spreadsheet. */
START_TEST(gradebook_neutralises_formulas)
{
    static const char *const names[] = {"=HYPERLINK(\"http://evil.example\",\"grade\")",
                                        "+1+2",
                                        "-2+3",
                                        "@SUM(A1:A9)",
                                        "\tTAB",
                                        "\rCR",
                                        "plain",
                                        "a,b"};
    enum { N = sizeof names / sizeof *names };
    struct student st[N];
    struct submission_grade grades[N];
    memset(st, 0, sizeof st);
    memset(grades, 0, sizeof grades);
    for (int i = 0; i < N; i++) snprintf(st[i].id, sizeof st[i].id, "%s", names[i]);
    char dir[] = "/tmp/ncclab-gradebook-XXXXXX", err[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_int_eq(gradebook_write(dir, st, grades, N, NULL, 0, "", NULL, err, sizeof err), 0);
    char path[300];
    snprintf(path, sizeof path, "%s/gradebook.csv", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f)); /* header */
    ck_assert(strncmp(line, "student_id,", 11) == 0);
    static const char *const want[] = {
        "\"'=HYPERLINK(\"\"http://evil.example\"\",\"\"grade\"\")\",",
        "\"'+1+2\",",
        "\"'-2+3\",",
        "\"'@SUM(A1:A9)\",",
        " TAB,", /* the cleaner (text.h): a tab is a space, a carriage return '?' */
        "?CR,",
        "plain,",
        "\"a,b\","};
    for (int i = 0; i < N; i++) {
        ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
        ck_assert_msg(strncmp(line, want[i], strlen(want[i])) == 0, "row %d: %s", i, line);
        /* No cell of the row starts with a formula character outside quotes. */
        for (const char *c = strchr(line, ','); c; c = strchr(c + 1, ','))
            ck_assert_msg(!strchr("=+@", c[1]), "row %d: a cell starts with %c", i, c[1]);
    }
    fclose(f);
    unlink(path);
    snprintf(path, sizeof path, "%s/checks.csv", dir);
    unlink(path);
    /* Canvas's import: the Student column holds the names, neutralised too. */
    snprintf(path, sizeof path, "%s/canvas-gradebook.csv", dir);
    f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert(strncmp(line, "Student,ID,SIS User ID,SIS Login ID,Section", 43) == 0);
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert(strncmp(line, "    Points Possible,", 20) == 0);
    while (fgets(line, sizeof line, f)) ck_assert_msg(!strchr("=+@-", line[0]), "%s", line);
    fclose(f);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* The CSV reader a roster goes through: quotes, doubled quotes, commas and
 * line breaks inside quotes, CRLF, a last line without its newline. */
START_TEST(csv_rows_read_back)
{
    const char *text = "id,name\r\n\"a,1\",\"say \"\"hi\"\"\"\n\"multi\nline\",x\nlast,";
    size_t pos = 0, len = strlen(text);
    char *cells[8];
    int n = csv_next_row(text, len, &pos, cells, 8);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(cells[0], "id");
    ck_assert_str_eq(cells[1], "name");
    csv_row_free(cells, n);
    n = csv_next_row(text, len, &pos, cells, 8);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(cells[0], "a,1");
    ck_assert_str_eq(cells[1], "say \"hi\"");
    csv_row_free(cells, n);
    n = csv_next_row(text, len, &pos, cells, 8);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(cells[0], "multi\nline");
    csv_row_free(cells, n);
    n = csv_next_row(text, len, &pos, cells, 8);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(cells[0], "last");
    ck_assert_str_eq(cells[1], "");
    csv_row_free(cells, n);
    ck_assert_int_eq(csv_next_row(text, len, &pos, cells, 8), 0);
}
END_TEST

/* The rules every timing meets, shared with the lab drivers. */
START_TEST(timing_bounded_both_ways)
{
    struct ncclab_limits l;
    char err[256], why[1024];
    char path[] = "/tmp/ncclab-profile-XXXXXX";
    write_temp(path, "name = test\nceiling_gbps = 100\nceiling_min_bytes = 1048576\n"
                     "min_timed_fraction = 0.1\nmin_wall_us = 200\n");
    ck_assert_int_eq(ncclab_limits_load(path, &l, 1, err, sizeof err), 0);
    struct ncclab_perf_facts ok = {.coll = "allreduce",
                                   .nranks = 2,
                                   .bytes = 4 << 20,
                                   .time_us = 700,
                                   .busbw_gbps = 6,
                                   .wall_us = 7700,
                                   .iters = 10,
                                   .warmup = 1,
                                   .made_alone = 1};
    ck_assert_int_eq(ncclab_perf_judge(&l, &ok, why, sizeof why), NCCLAB_PERF_OK);
    /* 1e9 us reported while the driver's clock saw 7.7 ms: impossible. */
    struct ncclab_perf_facts made_up = ok;
    made_up.time_us = 1e9;
    made_up.busbw_gbps = 4e-9;
    ck_assert_int_eq(ncclab_perf_judge(&l, &made_up, why, sizeof why), NCCLAB_PERF_TOO_LONG);
    ck_assert_ptr_nonnull(strstr(why, "driver's clock"));
    struct ncclab_perf_facts early = ok;
    early.time_us = 1;
    early.busbw_gbps = 3;
    ck_assert_int_eq(ncclab_perf_judge(&l, &early, why, sizeof why), NCCLAB_PERF_TOO_SHORT);
    early.made_alone = 0; /* next to other runs only the physical bounds apply */
    ck_assert_int_eq(ncclab_perf_judge(&l, &early, why, sizeof why), NCCLAB_PERF_OK);
    struct ncclab_perf_facts fast = ok;
    fast.busbw_gbps = 500;
    ck_assert_int_eq(ncclab_perf_judge(&l, &fast, why, sizeof why), NCCLAB_PERF_CEILING);
    ck_assert_int_eq(ncclab_overlap_impossible(&l, 5000, 20, why, sizeof why), 1);
    ck_assert_int_eq(ncclab_overlap_impossible(&l, 5000, 6000, why, sizeof why), 0);
    /* A time in the events' milliseconds is told from the numbers the trace
     * kept, in both forms (divided by the iterations or not), whichever of
     * the last result and the sum it came from; a right conversion is not
     * (7 ms over 10 iterations: 700 us). */
    ck_assert_int_eq(ncclab_time_is_event_ms(0.7, 10, 7.0, 7.0), 1);
    ck_assert_int_eq(ncclab_time_is_event_ms(7.0, 10, 7.0, 7.0), 1);
    ck_assert_int_eq(ncclab_time_is_event_ms(0.7, 10, 0.7, 7.0), 1);
    ck_assert_int_eq(ncclab_time_is_event_ms(0.700001, 10, 7.0, 7.0), 1);
    ck_assert_int_eq(ncclab_time_is_event_ms(700, 10, 7.0, 7.0), 0);
    ck_assert_int_eq(ncclab_time_is_event_ms(0.75, 10, 7.0, 7.0), 0);
    ck_assert_int_eq(ncclab_time_is_event_ms(0.7, 10, NAN, NAN), 0);
    ck_assert_int_eq(ncclab_time_is_event_ms(0.7, 0, 7.0, 7.0), 0);
    /* A typo in a profile is an error, not a rule silently switched off. */
    unlink(path);
    strcpy(path, "/tmp/ncclab-profile-XXXXXX");
    write_temp(path, "ceilng_gbps = 100\n");
    ck_assert_int_eq(ncclab_limits_load(path, &l, 0, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "ceilng_gbps"));
    unlink(path);
}
END_TEST

/* A memcpy-derived ceiling takes the figure the grader measured when it
 * is given (NCCLAB_MEMCPY_GBPS: every run the grader makes), and refuses a
 * malformed one by name instead of measuring or judging with garbage. */
START_TEST(memcpy_ceiling_given_once)
{
    struct ncclab_limits l;
    char err[256];
    char path[] = "/tmp/ncclab-profile-XXXXXX";
    write_temp(path, "name = test\nceiling_memcpy_factor = 4\nceiling_min_gbps = 10\n");
    setenv("NCCLAB_MEMCPY_GBPS", "7.25", 1);
    ck_assert_int_eq(ncclab_limits_load(path, &l, 1, err, sizeof err), 0);
    ck_assert(l.memcpy_gbps == 7.25);
    ck_assert(l.ceiling_gbps == 29.0);
    setenv("NCCLAB_MEMCPY_GBPS", "1", 1); /* below the floor of the ceiling */
    ck_assert_int_eq(ncclab_limits_load(path, &l, 1, err, sizeof err), 0);
    ck_assert(l.ceiling_gbps == 10.0);
    const char *bad[] = {"fast", "-3", "0", "12GB", "nan", "inf"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv("NCCLAB_MEMCPY_GBPS", bad[i], 1);
        ck_assert_int_eq(ncclab_limits_load(path, &l, 1, err, sizeof err), -1);
        ck_assert_ptr_nonnull(strstr(err, "NCCLAB_MEMCPY_GBPS"));
    }
    /* Not measured at all where the profile has no memcpy-derived ceiling. */
    ck_assert_int_eq(ncclab_limits_load(path, &l, 0, err, sizeof err), 0);
    unsetenv("NCCLAB_MEMCPY_GBPS");
    unlink(path);
}
END_TEST

/* What links between nodes can carry (the network ceiling): the bound of
 * each collective, from the smallest (largest) node's share of the group;
 * nothing for a group on one node or a send/recv. Every shipped profile
 * states the link. */
START_TEST(network_bound_follows_the_links)
{
    /* 2 nodes of 2, 1 GB/s per rank: algbw <= 2 (a node's 2 links carry
     * the S bytes out), busbw = algbw * 2 * 3 / 4. */
    ck_assert_double_eq_tol(ncclab_net_busbw_bound("allreduce", 4, 2, 2, 1.0), 3.0, 1e-12);
    /* A cross-node group, one rank per node: one link, busbw = algbw. */
    ck_assert_double_eq_tol(ncclab_net_busbw_bound("allreduce", 2, 1, 1, 0.5), 0.5, 1e-12);
    /* Nodes {0,1} {2,3} {4}: the node of one rank sets the bound. */
    ck_assert_double_eq_tol(ncclab_net_busbw_bound("allreduce", 5, 1, 2, 1.0), 1.6, 1e-12);
    ck_assert_double_eq_tol(ncclab_net_busbw_bound("allgather", 4, 2, 2, 1.0), 3.0, 1e-12);
    ck_assert_double_eq_tol(ncclab_net_busbw_bound("broadcast", 4, 1, 3, 1.0), 3.0, 1e-12);
    ck_assert_double_eq_tol(ncclab_net_busbw_bound("allreduce", 4, 4, 4, 1.0), 0.0, 1e-12);
    ck_assert_double_eq_tol(ncclab_net_busbw_bound("sendrecv", 4, 2, 2, 1.0), 0.0, 1e-12);
    ck_assert_double_eq_tol(ncclab_net_busbw_bound("allreduce", 4, 2, 2, 0.0), 0.0, 1e-12);
    const char *const shipped[] = {"grader/profiles/host.profile",
                                   "grader/profiles/h100-nvlink.profile",
                                   "grader/profiles/h200-nvlink.profile"};
    for (size_t i = 0; i < sizeof shipped / sizeof *shipped; i++) {
        struct ncclab_limits l;
        char err[256] = "";
        ck_assert_msg(ncclab_limits_load(shipped[i], &l, 0, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(l.net_gbps > 0 && l.net_ceiling_factor >= 1, "%s: no network link",
                      shipped[i]);
        /* A 200 GB/s figure of 2 x 2 across nodes: above the bound. */
        ck_assert_msg(200 > ncclab_net_busbw_bound("allreduce", 4, 2, 2, l.net_gbps) *
                                l.net_ceiling_factor,
                      "%s lets a 200 GB/s cross-node all-reduce pass", shipped[i]);
    }
}
END_TEST

/* Every profile the kit ships loads with the labs' own (strict) reader, and a
 * GPU's name picks its profile: a key only the grader reads once made the
 * H100 and H200 profiles fail to load in the labs, which then judged those
 * GPUs by PCIe's ceiling and failed every timing. */
START_TEST(shipped_profiles_load_and_match)
{
    const char *dir = "grader/profiles";
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "run from the kit's root: %s not found", dir);
    int loaded = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 9 || strcmp(e->d_name + n - 8, ".profile") != 0) continue;
        char path[512], err[256] = "";
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct ncclab_limits l;
        ck_assert_msg(ncclab_limits_load(path, &l, 0, err, sizeof err) == 0, "%s", err);
        loaded++;
    }
    closedir(d);
    ck_assert_int_ge(loaded, 4);
    const struct {
        const char *gpu, *profile;
    } want[] = {{"NVIDIA H100 80GB HBM3", "h100-nvlink"},
                {"NVIDIA H200", "h200-nvlink"},
                {"NVIDIA A100-SXM4-80GB", "a100-nvlink3"}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        char name[64];
        const char *got = ncclab_limits_match(dir, want[i].gpu, name, sizeof name);
        ck_assert_msg(got && strcmp(got, want[i].profile) == 0, "%s: profile %s, want %s",
                      want[i].gpu, got ? got : "(none: pcie)", want[i].profile);
    }
}
END_TEST

START_TEST(task_of_a_variation)
{
    char buf[32];
    struct variation whole = {.id = "default", .extra = "--overlap-rounds 2"};
    struct variation task = {.id = "t", .extra = "--lr 0.5 --task broadcast --x 1"};
    struct variation tricky = {.id = "u", .extra = "--tasks broadcast"};
    ck_assert_ptr_null(variation_task(&whole, buf, sizeof buf));
    ck_assert_str_eq(variation_task(&task, buf, sizeof buf), "broadcast");
    ck_assert_ptr_null(variation_task(&tricky, buf, sizeof buf));
    ck_assert(runs_task(&whole, "broadcast"));
    ck_assert(runs_task(&task, "broadcast"));
    ck_assert(!runs_task(&task, "reduce"));
    ck_assert(!runs_task(&task, NULL));
    /* A hang in one task skips that task's runs and the whole-lab ones only. */
    struct variation other = {.id = "o", .extra = "--task reduce"};
    ck_assert(hang_covers(&task, &whole));
    ck_assert(hang_covers(&task, &task));
    ck_assert(!hang_covers(&task, &other));
    ck_assert(!hang_covers(&whole, &task));
}
END_TEST

/* A run made again (a hang beside others, a crash in MPI_Finalize) is
 * judged on its new output alone: nothing of the first verdict stays. */
START_TEST(a_run_made_again_is_judged_afresh)
{
    const struct lab_module *mod = lab_module_find(1);
    ck_assert_ptr_nonnull(mod);
    struct grade_env env = {.backend = "host", .timeout_s = 20};
    struct variation var = {.id = "t", .nranks = 2};
    struct run run = {.var = &var, .declared = &var, .env = &env, .nranks = 2};
    run.out.end = RUN_TIMEOUT;
    analyse_run(mod, &run);
    ck_assert_int_eq(run.hung, 1);
    ck_assert_int_eq(run.finalize_crash, 0);
    /* The remake: rank 0 died in MPI_Finalize, the kit's teardown says so. */
    char err[] = "[rank 0] crashed while finalizing MPI (MPI_Finalize, after the lab's work)\n"
                 "mpirun noticed that process rank 0 with PID 0 on node vm exited on signal 6 "
                 "(Aborted).\n";
    run.out.end = RUN_EXITED;
    run.out.exit_status = 134;
    run.out.err = err;
    run.out.err_len = strlen(err);
    analyse_run(mod, &run);
    ck_assert_int_eq(run.hung, 0);
    ck_assert_int_eq(run.finalize_crash, 1);
    ck_assert_int_eq(run.usable, 0);
    /* A crash anywhere else is the program's own. */
    char other[] = "mpirun noticed that process rank 0 with PID 0 on node vm exited on signal 11 "
                   "(Segmentation fault).\n";
    run.out.err = other;
    run.out.err_len = strlen(other);
    analyse_run(mod, &run);
    ck_assert_int_eq(run.finalize_crash, 0);
    ck_assert_int_eq(run.hung, 0);
    run.out.err = NULL;
    run.out.err_len = 0;
    records_free(&run.recs);
}
END_TEST

/* A check passes a run only on what it read there: on a run with no
 * records at all, every check that reads whole-lab runs and task runs of
 * its own fails (none passes for want of anything to look at). */
START_TEST(every_task_check_fails_on_a_run_that_printed_nothing)
{
    struct profile prof = {.name = "host"};
    struct grade_env env = {.backend = "host", .profile = &prof, .timeout_s = 20};
    char buf[64], passed[1024] = "";
    int judged = 0;
    for (int m = 0; grader_labs[m]; m++) {
        const struct lab_module *mod = grader_labs[m];
        for (int c = 0; c < mod->nchecks; c++) {
            const struct lab_check *check = &mod->checks[c];
            if (check->flags & (CHECK_RUNS | CHECK_HANDIN)) continue;
            int task_runs = 0;
            for (int v = 0; v < mod->nvariations; v++)
                task_runs |= variation_task(&mod->variations[v], buf, sizeof buf) != NULL &&
                             check_reads(check, &mod->variations[v]);
            for (int v = 0; task_runs && v < mod->nvariations; v++) {
                const struct variation *var = &mod->variations[v];
                if (variation_task(var, buf, sizeof buf) || !check_reads(check, var)) continue;
                struct run run = {.var = var, .declared = var, .env = &env, .nranks = var->nranks};
                struct check_result res = {0};
                check->fn(&run, &res);
                if (res.verdict != VERDICT_FAIL)
                    text_append(passed, sizeof passed, " lab%d.%s(%s)", mod->number, check->key,
                                var->id);
                judged++;
            }
        }
    }
    ck_assert_msg(passed[0] == '\0', "passed with no records:%s", passed);
    ck_assert_int_gt(judged, 5);
}
END_TEST

/* Text from a submission reaches reports only through text_clean: no
 * control character, escape sequence or character that hides or reorders
 * text survives; ordinary accents and the kit's dashes do. */
START_TEST(text_clean_keeps_no_hiding_characters)
{
    static const char *const hostile[] = {
        "\x1b[8m", /* ESC: SGR 8, conceal */
        "\xc2\x9b"
        "8m",           /* C1 CSI */
        "\xe2\x80\xae", /* U+202E right-to-left override */
        "\xe2\x80\x8b", /* U+200B zero width space */
        "\xd8\x9c",     /* U+061C Arabic letter mark */
        "\xe1\xa0\x8e", /* U+180E Mongolian vowel separator */
        "\xef\xbf\xb9", /* U+FFF9 interlinear annotation anchor */
        "\xef\xbf\xbb", /* U+FFFB interlinear annotation terminator */
        "\r\n",
    };
    char out[64];
    for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
        size_t n = text_clean(hostile[i], strlen(hostile[i]), out, sizeof out);
        for (size_t k = 0; k < n; k++)
            ck_assert_msg((unsigned char)out[k] >= 32 && (unsigned char)out[k] < 127,
                          "case %zu kept byte 0x%02x", i, (unsigned char)out[k]);
    }
    ck_assert_uint_eq(text_clean("caf\xc3\xa9", 5, out, sizeof out), 5); /* é stays */
    ck_assert_str_eq(out, "caf\xc3\xa9");
}
END_TEST

/* The machine gate admits steps while their memory limits fit in the pool
 * (issue 35: a 5-rank run's limit alone was more than the machine had). */
struct gate_step {
    struct machine_gate *g;
    size_t bytes;
    int in;
};

static void *enter_step(void *arg)
{
    struct gate_step *st = arg;
    machine_gate_enter(st->g, 0, st->bytes);
    __atomic_store_n(&st->in, 1, __ATOMIC_RELEASE);
    return NULL;
}

START_TEST(memory_limits_add_up_to_the_pool)
{
    /* cgroup_memory_pool is read once: the first call here sets it. */
    setenv("NCCLAB_GRADER_MEMORY_MB", "1024", 1);
    ck_assert_uint_eq(cgroup_memory_pool(), (size_t)1 << 30);
    ck_assert_uint_eq(cgroup_step_memory((size_t)28 << 30), (size_t)256 << 20);
    ck_assert_uint_eq(cgroup_step_memory((size_t)100 << 20), (size_t)100 << 20);
    ck_assert_uint_eq(cgroup_step_memory(0), 0);
    struct machine_gate g;
    machine_gate_init(&g, 8);
    size_t share = cgroup_step_memory((size_t)28 << 30);
    for (int i = 0; i < 4; i++) machine_gate_enter(&g, 0, share);
    ck_assert_uint_eq(g.mem_used, g.mem_pool);
    struct gate_step fifth = {&g, share, 0};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, enter_step, &fifth), 0);
    usleep(100000);
    ck_assert_int_eq(__atomic_load_n(&fifth.in, __ATOMIC_ACQUIRE), 0); /* waits for memory */
    machine_gate_leave(&g, 0, share, -1);
    pthread_join(th, NULL);
    ck_assert_int_eq(fifth.in, 1);
    ck_assert_uint_le(g.mem_used, g.mem_pool);
    for (int i = 0; i < 4; i++) machine_gate_leave(&g, 0, share, -1);
    ck_assert_uint_eq(g.mem_used, 0);
    ck_assert_int_eq(g.busy, 0);
}
END_TEST

/* A step's share: an eighth of a large pool, so that eight steps run at
 * once where every run asks for more than it uses; no less than 512 MiB
 * (a quarter of a pool under 2 GiB: memory_limits_add_up_to_the_pool). */
START_TEST(step_share_eighth_of_a_large_pool)
{
    setenv("NCCLAB_GRADER_MEMORY_MB", "16384", 1);
    ck_assert_uint_eq(cgroup_step_memory((size_t)28 << 30), (size_t)2 << 30);
    ck_assert_uint_eq(cgroup_step_memory((size_t)100 << 20), (size_t)100 << 20);
}
END_TEST

START_TEST(step_share_floor_in_a_middle_pool)
{
    setenv("NCCLAB_GRADER_MEMORY_MB", "3072", 1); /* an eighth: 384 MiB; a quarter: 768 */
    ck_assert_uint_eq(cgroup_step_memory((size_t)28 << 30), (size_t)512 << 20);
}
END_TEST

struct ledger_step {
    struct machine_gate *g;
    size_t bytes;
    int in, held;
};

static void *enter_ledger_step(void *arg)
{
    struct ledger_step *st = arg;
    st->held = machine_gate_enter(st->g, 0, st->bytes);
    __atomic_store_n(&st->in, 1, __ATOMIC_RELEASE);
    return NULL;
}

START_TEST(graders_side_by_side_share_the_machine_pool)
{
    /* Two graders on one machine (two gates, one ledger): the second's
     * step waits while the first's fill the pool. As root, where the pool
     * is the machine's memory. */
    unsetenv("NCCLAB_GRADER_MEMORY_MB");
    char dir[] = "/tmp/ncclab-ledger-test.XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char ledger[sizeof dir + 16];
    snprintf(ledger, sizeof ledger, "%s/ledger", dir);
    setenv("NCCLAB_GRADER_LEDGER_DIR", ledger, 1);
    if (geteuid() != 0 || !cgroup_memory_pool_is_machine()) {
        fprintf(stderr, "graders_side_by_side_share_the_machine_pool: skipped (not root, or "
                        "the pool is a group's limit)\n");
        rmdir(dir);
        return;
    }
    struct machine_gate a, b;
    machine_gate_init(&a, 8);
    machine_gate_init(&b, 8);
    size_t share = cgroup_step_memory((size_t)1 << 50);
    /* The steps of the first grader that fill the pool (eight shares, or
     * four where a quarter is the share). */
    int nfill = (int)(cgroup_memory_pool() / share), held[16];
    ck_assert_int_ge(nfill, 4);
    ck_assert_int_le(nfill, 16);
    for (int i = 0; i < nfill; i++) {
        held[i] = machine_gate_enter(&a, 0, share);
        ck_assert_int_ge(held[i], 0);
    }
    struct ledger_step other = {&b, share, 0, -1};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, enter_ledger_step, &other), 0);
    usleep(300000);
    ck_assert_int_eq(__atomic_load_n(&other.in, __ATOMIC_ACQUIRE), 0); /* the pool is full */
    /* A step in the middle ends: the other grader's finds its units past
     * the first ones still held. */
    const int mid = nfill / 2;
    machine_gate_leave(&a, 0, share, held[mid]);
    pthread_join(th, NULL);
    ck_assert_int_ge(other.held, 0);
    machine_gate_leave(&b, 0, share, other.held);
    for (int i = 0; i < nfill; i++)
        if (i != mid) machine_gate_leave(&a, 0, share, held[i]);
    char memory[sizeof ledger + 8];
    snprintf(memory, sizeof memory, "%s/memory", ledger);
    unlink(memory);
    rmdir(ledger);
    rmdir(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("grader");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, parses_a_record);
    tcase_add_test(tc, network_bound_follows_the_links);
    tcase_add_test(tc, rejects_malformed_lines);
    tcase_add_test(tc, nan_and_inf_are_reported);
    tcase_add_test(tc, output_with_garbage_truncation_and_binary);
    tcase_add_test(tc, random_bytes_never_crash);
    tcase_add_test(tc, config_reads_key_values);
    tcase_add_test(tc, runner_limits);
    tcase_add_test(tc, size_steps_match_the_kit);
    tcase_add_test(tc, gradebook_neutralises_formulas);
    tcase_add_test(tc, csv_rows_read_back);
    tcase_add_test(tc, timing_bounded_both_ways);
    tcase_add_test(tc, memcpy_ceiling_given_once);
    tcase_add_test(tc, shipped_profiles_load_and_match);
    tcase_add_test(tc, task_of_a_variation);
    tcase_add_test(tc, a_run_made_again_is_judged_afresh);
    tcase_add_test(tc, every_task_check_fails_on_a_run_that_printed_nothing);
    tcase_add_test(tc, text_clean_keeps_no_hiding_characters);
    tcase_add_test(tc, memory_limits_add_up_to_the_pool);
    tcase_add_test(tc, step_share_eighth_of_a_large_pool);
    tcase_add_test(tc, step_share_floor_in_a_middle_pool);
    tcase_add_test(tc, graders_side_by_side_share_the_machine_pool);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
