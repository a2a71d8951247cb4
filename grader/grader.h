/* The grader's lab-module interface.
 *
 * A lab module (grader/labN.c) is data: the runs to make (variations: rank
 * counts, sizes, roots, options) and a table of checks, each a small
 * function that reads one run's records and says pass, warn or fail with a
 * diagnosis. The engine (engine.h lists its stages, one file each) builds
 * the submission, runs every variation under limits, turns crashes, hangs
 * and unreadable output into diagnoses, and calls the checks on the runs
 * that produced records.
 * Adding a lab = one new labN.c + one line in labs.c + points in points.conf. */
#ifndef GRADER_GRADER_H
#define GRADER_GRADER_H

#include <stddef.h>

#include "../common/perflimits.h"
#include "../common/placement.h"
#include "config.h"
#include "records.h"
#include "runner.h"

/* ---- what the grader knows about the machine ---- */

struct profile {
    char name[64];
    char path[512];
    struct kv_file kv;
    double ceiling_gbps;         /* busbw above this is physically impossible */
    double ceiling_min_bytes;    /* ...for messages of at least this size */
    double min_timed_fraction;   /* reported time / time the driver saw, below: timer bug */
    double min_wall_us;          /* ignore the fraction rule when the driver saw less */
    double floor_min_bytes;      /* floors apply from this message size up */
    double memcpy_gbps;          /* measured at start (host profile), 0 if not */
    struct ncclab_limits limits; /* the whole profile, as the lab drivers read it */
};

/* Floor for a collective ("allreduce"), 0 when the profile sets none. */
double profile_floor(const struct profile *p, const char *coll);

struct grade_env {
    const char *backend; /* "host" or "cuda" */
    struct profile *profile;
    int max_ranks;      /* variations needing more ranks are skipped */
    double timeout_s;   /* per run */
    int lab_watchdog_s; /* passed to the lab as -T */
    int verbose;
    /* Variation parameters (sizes, iterations, warm-up, -T) are drawn from
     * this seed (params.c), so recorded output of another run does not fit;
     * the same seed gives the same runs. */
    unsigned long long seed;
    /* The instructor's answer key (answers.h), NULL in the student kit. */
    const struct kv_file *answer_key;
    /* The kit being graded against (absolute), for what it ships (lab 7's
     * examples); NULL: not known. */
    const char *root;
};

/* ---- a lab module ---- */

enum var_flags {
    VAR_TIMING = 1 << 0, /* measures throughput: run alone, nothing in parallel */
    VAR_TCP = 1 << 1,    /* TCP bootstrap: MASTER_ADDR/MASTER_PORT set by the grader */
    VAR_HOST = 1 << 2,   /* only on the host backend */
    VAR_CUDA = 1 << 3,   /* only on the CUDA backend (real GPU sizes) */
    VAR_FIXED = 1 << 4,  /* run exactly as written: no randomized sizes, iterations or warm-up */
};

/* One run of the lab. Every size and count the checks rely on is chosen
 * here, so expected values are recomputed from it, never read back. */
struct variation {
    const char *id; /* short name shown in diagnoses */
    int nranks;
    size_t min_bytes, max_bytes; /* -b/-e; 0: not passed */
    double step;                 /* -f; 0: not passed */
    int iters, warmup;           /* -n/-w; -1: not passed */
    int root;                    /* -r; -1: not passed */
    int ranks_per_node;          /* --ranks-per-node; 0: not passed */
    const char *extra;           /* further options, space separated, or NULL */
    unsigned flags;
};

/* One executed variation. */
struct run {
    /* The parameters this run was made with: &params, the module's
     * variation with its sizes, iterations and warm-up drawn from the seed.
     * Checks recompute every expected value from it. */
    const struct variation *var;
    struct variation params;
    const struct variation *declared; /* the module's table entry */
    int watchdog_s;                   /* -T given to this run, 0: none */
    const struct grade_env *env;
    const char *submission; /* the student's lab directory; NULL when grading --binary */
    int nranks;             /* ranks launched: var->nranks, or fewer (see engine) */
    struct run_output out;
    struct record_set recs;
    int skipped;      /* not run (too many ranks, or an earlier run hung) */
    int skipped_hang; /* ...because an earlier run hung the way this one would */
    int excluded;     /* not meant for this backend */
    int usable;       /* ended with status 0 or 1 and complete records */
    int hung;
    int finalize_crash; /* a rank died in Open MPI's MPI_Finalize, after the lab's work */
    int launch_failed;  /* Open MPI could not start the job: no rank printed a record */
    char problem[2048]; /* why it is not usable: the diagnosis */
    char label[600];    /* "np3-odd (3 ranks, -b 4000012 ...)" */
    int hidden;         /* one of the instructor's hidden runs (grader/hidden/labN.c) */
    /* A task replay (grade.c): one task of a whole-lab run that stopped,
     * made alone with that run's parameters; `declared` and `var` are then
     * this variation and its copy, with "--task T" added to extra. */
    struct variation replay;
    const struct run *replay_of; /* the whole-lab run it stands in for */
    char replay_id[48];
    char replay_extra[256];
};

enum verdict { VERDICT_PASS, VERDICT_WARN, VERDICT_FAIL };

struct check_result {
    enum verdict verdict;
    char message[2048]; /* first diagnosis (fail) or warning */
    int problems;       /* how many were found in total */
    int not_graded;     /* failed for want of data (a run crashed or hung): the
                           diagnosis is under the check that carries the run's failure */
    int not_made;       /* runs it reads that were not made (after a hang) */
};

typedef void (*check_fn)(const struct run *run, struct check_result *res);

struct lab_check {
    const char *key;     /* points.conf key is "lab<N>.<key>" */
    const char *title;   /* one line for the score table */
    const char *section; /* handout section to read when it fails */
    check_fn fn;
    const char *only; /* comma-separated variation ids, NULL: every run */
    unsigned flags;   /* enum check_flags */
    /* Which runs the check reads, when set (then `only` is ignored): a
     * predicate on the variation, so that hidden variations join the checks
     * they feed without being named (see runs_task). */
    int (*reads)(const struct variation *v);
};

enum check_flags {
    /* The "runs to the end" check: it carries each crash, hang or unreadable
     * output; the other checks then say "not graded" and point here. */
    CHECK_RUNS = 1 << 0,
    /* Judges the hand-in files (module's handin_files), not a run: called
     * once, with a run whose label is "hand-in" and whose `submission` is the
     * grader's private copy of the hand-in. `only` is ignored. */
    CHECK_HANDIN = 1 << 1,
    /* Judges a measured time (timing honest, the overlap, the race against
     * NCCL): on a busy machine two gradings of one submission can differ
     * here, so the grader's own tests compare these apart. In results.json
     * as "timed": true. */
    CHECK_TIMED = 1 << 2,
};

/* Text in a failed run's output and what it means. */
struct output_hint {
    const char *pattern;
    const char *diagnosis;
    const char *section;
};

struct lab_module {
    int number;
    const char *title;
    const char *hang_cause; /* the likely cause of a hang in this lab */
    const struct variation *variations;
    int nvariations;
    const struct lab_check *checks;
    int nchecks;
    const struct output_hint *hints; /* ended by {NULL}, may be NULL */
    /* Comma-separated record names that only some ranks print (lab 6's
     * leaders_sum, on the node leaders): exempt from the engine's "every
     * rank" rule; the lab's checks say which ranks must have them. NULL: none. */
    const char *some_ranks_only;
    /* The files the grader takes from a submission (comma-separated, e.g.
     * "allreduce.c"): copied as regular files into a private directory; the
     * driver and headers always come from the kit. */
    const char *student_files;
    /* Hand-in files (lab 7), relative to the hand-in directory, copied the
     * same way when present, for the CHECK_HANDIN checks: comma-separated
     * "check=file" (a file refused as not a regular file fails that check)
     * or "file" (fails every hand-in check). NULL: none. */
    const char *handin_files;
    /* Calls the student's object may not make in this lab, on top of the
     * grader's own list (objcheck.c): comma-separated names, `PREFIX*`
     * patterns, and `!NAME` exceptions (the first entry that matches wins),
     * e.g. "!MPI_Bcast,MPI_*". NULL: FORBIDDEN_MPI_BUT_SYNC, the NCCL
     * labs' rule. */
    const char *forbidden_calls;
    const char *forbidden_reason; /* why, for the diagnosis; NULL: the rule's own */
    /* For runs of one task alone (--task): the likely cause of a hang there,
     * more precise than hang_cause ({task name, cause, handout section},
     * ended by {NULL}; NULL: none). An entry named by a variation's id
     * serves that variation's runs before its task's entry. */
    const struct output_hint *task_hangs;
    /* For crashes: the kit prints "[rank R] crashed while running FN" when
     * a rank dies in a phase it watches, and a task run's crash is charged
     * to the check of the function that was running ({FN, check key}, ended
     * by {NULL}), not to the first check that reads the run. NULL: none. */
    const struct crash_owner *crash_owners;
};

struct crash_owner {
    const char *function; /* as the driver names it: "lab2_time_allreduce" */
    const char *check;    /* the key of the check that grades it */
};

/* ---- one root cause per bug (checks.c) ----
 *
 * A driver can run one task of a lab alone (`--task NAME`: the kit's own
 * code does the other steps), so that a bug in one task cannot take the
 * others' data with it. A variation with "--task NAME" in its extra options
 * is a task run; one without is a run of the whole lab. Checks read the
 * whole-lab runs and their own task's runs (check_reads). A task run that
 * ends without usable records is charged to the checks that read it; a
 * whole-lab run that does is charged to the lab's "runs" check alone, and
 * not even there when a task's own check already failed: that failure is the
 * root cause, reported once. */

/* The task a variation runs alone (the word after "--task " in its extra
 * options, copied into buf), or NULL for a run of the whole lab. */
const char *variation_task(const struct variation *v, char *buf, size_t len);

/* 1 when v runs the whole lab, or runs task `task` alone. */
int runs_task(const struct variation *v, const char *task);
/* 1 for the throughput runs (VAR_TIMING), made alone on the machine. */
int runs_timing(const struct variation *v);
/* The check row "timing honest: below the ceiling", judged by the lab's
 * check_timing on its throughput runs: the driver holds the clock (student
 * code only enqueues), and a run made alone cannot be stalled by an
 * oversubscribed neighbour. */
#define CHECK_TIMING_HONEST(fn)                                                                    \
    {                                                                                              \
        "timing", "timing honest: below the ceiling", "Common mistakes", (fn), NULL, CHECK_TIMED,  \
            runs_timing                                                                            \
    }

/* Whether check c reads runs of variation v: c->reads(v) when set, else v's
 * id in c->only (NULL: every run). */
int check_reads(const struct lab_check *c, const struct variation *v);

/* The index of the module's "runs to the end" check (the one whose function
 * is check_runs_cleanly; 0 if none is). */
int runs_check_index(const struct lab_module *mod);

struct lab_grade;

/* Check c of g reads run `run`, which left no usable records (`made`: it
 * ran; else it was not made, after a hang). Whose failure is it? */
enum run_charge {
    RUN_CARRIED, /* c carries the run's diagnosis (carry_run_failure) */
    RUN_LOST,    /* c is not graded on it: *carrier carries the diagnosis */
    RUN_IGNORED, /* c does not count it (graded from its own task's runs) */
};
enum run_charge charge_of_run(const struct lab_grade *g, int c, const struct run *run, int made,
                              int *carrier);
/* Fail res with run's diagnosis (for a task run that hung, that task's
 * likely cause from the module's task_hangs). */
void carry_run_failure(const struct lab_grade *g, const struct run *run, struct check_result *res);

/* After every check ran: when a task's own check failed and another task
 * passed, the failures of the checks that read only whole-lab runs (which
 * stop at that task's bug) are not graded: the message points at the root
 * cause, and they score 0 (what they test is not shown to work). */
void attribute_root_causes(struct lab_grade *g);

/* After the answers.md questions too: points that need more than their own
 * check. "Runs to the end" scores only once some task of the lab passed
 * (an untouched skeleton runs to the end); every question scores only when
 * the lab built and its "runs" and correctness checks (not the timed ones)
 * passed. Withheld points: verdict FAIL, not_graded, the reason first. */
void apply_score_rules(struct lab_grade *g);

/* Whether a hang in `hung` makes running `next` pointless (it would hang
 * the same way): runs of the same task, and whole-lab runs after any hang. */
int hang_covers(const struct variation *hung, const struct variation *next);

/* ---- helpers for checks (checks.c) ---- */

/* Record a failure or a warning; the first message is kept, later ones
 * only counted. Messages start with the run's label. */
__attribute__((format(printf, 3, 4))) void check_fail(struct check_result *res,
                                                      const struct run *run, const char *fmt, ...);
__attribute__((format(printf, 3, 4))) void check_warn(struct check_result *res,
                                                      const struct run *run, const char *fmt, ...);

/* Text into buf, cut to fit: for messages, where a cut is harmless (the
 * compiler's truncation warning stays on for every other snprintf). */
__attribute__((format(printf, 3, 4))) void text_cut(char *buf, size_t len, const char *fmt, ...);
/* A path into buf: 0, or -1 (buf emptied) when it does not fit: a cut path
 * would name another file. */
__attribute__((format(printf, 3, 4))) int path_fmt(char *buf, size_t len, const char *fmt, ...);

/* Message sizes the lab visits for this variation (as ncclab_size_steps). */
int variation_sizes(const struct variation *v, size_t elem_size, size_t *sizes, int max);

/* The records of (kind, name) from rank `rank` (for per-size records, the one
 * whose `key` equals `value`; key NULL: the first). NULL if absent. */
const struct record *find_record(const struct run *run, const char *kind, const char *name,
                                 int rank, const char *key, long long value);

/* A kind=check record from every rank for every count given (count 0: any
 * count), matching `expected` from the data (min, max, mismatches). */
void expect_buffer_checks(const struct run *run, struct check_result *res, const char *name,
                          double expected, const size_t *counts, int ncounts);

/* Throughput sanity of every kind=perf record named `name`: finite,
 * positive time; busbw under the profile's ceiling; reported time not far
 * below what the driver saw; floor warnings. */
void expect_perf_sane(const struct run *run, struct check_result *res, const char *name);

/* Whether the run's ranks sit on virtual nodes with a network between them
 * (--ranks-per-node and not --net off): the grader's parameters, never the
 * run's own claim. expect_perf_sane then holds every record whose group
 * spans nodes to the profile's network (net_gbps: the busbw the links can
 * carry, ncclab_net_busbw_bound, and net_floor_gbps). */
int run_net_on(const struct run *run);

/* Every perf record has calls == iters + warmup * calls_per_iter. */
void expect_perf_calls(const struct run *run, struct check_result *res, const char *name,
                       int calls_per_iter);

/* What every perf record named `name` says moved through NCCL while it was
 * measured (fields traced_bytes, zero_calls, other_calls from the kit's
 * link-time trace): `calls` calls of `function` (for messages, e.g.
 * "ncclAllReduce"), each given bytes x per_call_factor bytes (1 for an
 * all-reduce, 1/n for lab 5's per-rank share), and no other data-moving
 * NCCL call. Calls with a count of 0 are never counted as calls. */
/* For a wrong check record of random inputs (field offsets): when its
 * values are all the plain right one (the driver reports values without
 * the inputs' offsets), the words saying that the result was written rather
 * than computed from the inputs; "" otherwise. */
const char *random_inputs_note(const struct record *r, double mn, double mx, double expected);

/* What the calls measured by perf records `name` were given (fields
 * op_other_calls, op_other, buffer_other_calls, buffer_send, buffer_recv
 * from the kit's trace, common/results.h): every reduction the sum, every
 * call the driver's buffers. `function` names the call for messages
 * ("ncclAllReduce"), `contract` what it must be given ("sendbuf in,
 * recvbuf out"). A record without those fields is not judged here. */
void expect_perf_args(const struct run *run, struct check_result *res, const char *name,
                      const char *function, const char *contract);

void expect_perf_traffic(const struct run *run, struct check_result *res, const char *name,
                         const char *function, double per_call_factor);

/* Ends every run's problems in the run: nothing to check beyond the engine. */
void check_runs_cleanly(const struct run *run, struct check_result *res);

/* A check record's min, max and mismatches: 0, or -1 after a failure (naming
 * the rank and the record) when one is missing, NaN or inf. */
int check_record_values(const struct run *run, struct check_result *res, const struct record *r,
                        int rank, const char *name, double *min, double *max, long long *mism);

/* ---- process groups (labs 6 and 7): what each rank's group must be ----
 * The same patterns as common/groups.h (the drivers' side), computed from
 * where the grader placed each rank: --ranks-per-node K puts rank r on
 * node r / K with local rank r % K; without it every rank is on node 0. */
/* Where rank `rank` of a run sits: virtual nodes of the variation's
 * --ranks-per-node, or one node. */
void run_placement(const struct run *run, int rank, int *node, int *local_rank);
/* Rank `me`'s group in pattern p (common/placement.c, the drivers' rule):
 * its size (0: in no group), me's place in it (members in world-rank
 * order) and the sum of the members' ranks. */
struct ncclab_expected_group expected_group(const struct run *run, enum ncclab_pattern p, int me);

/* ---- hidden variations (grader/hidden/labN.c, instructor's kit only) ---- */
struct hidden_variations {
    const struct variation *variations;
    int n;
};
/* How many hidden variations lab N has in this build (0 in the student
 * kit, or with NCCLAB_GRADER_VARIATIONS=public). */
int hidden_variation_count(int number);
int hidden_variations_enabled(void);

/* A lab_module's variation and check tables, from the module's arrays. */
#define LAB_TABLES(vars, chks)                                                                     \
    .variations = (vars), .nvariations = sizeof(vars) / sizeof *(vars), .checks = (chks),          \
    .nchecks = sizeof(chks) / sizeof *(chks)
/* The fields every module sets, its tables being the file's `variations`
 * and `checks` arrays. */
#define LAB_MODULE(num, ttl, files)                                                                \
    .number = (num), .title = (ttl), .student_files = (files), LAB_TABLES(variations, checks)
/* The end of an output_hint table. */
#define HINTS_END                                                                                  \
    {                                                                                              \
        NULL, NULL, NULL                                                                           \
    }
/* The rule of the NCCL labs, a module's forbidden_calls when it names none:
 * MPI only to synchronise or ask the rank. */
#define FORBIDDEN_MPI_BUT_SYNC                                                                     \
    "!MPI_Barrier,!MPI_Comm_rank,!MPI_Comm_size,!MPI_Wtime,!MPI_Abort,MPI_*,PMPI_*"
#define MPI_ONLY_TO_SYNC " (MPI only to synchronise or ask the rank)"
#define FORBIDDEN_MPI_BUT_SYNC_WHY "this lab is done with NCCL" MPI_ONLY_TO_SYNC
/* What labs 4 and 8 (collectives built from ncclSend/ncclRecv) may not call:
 * that, and NCCL's collectives. */
#define FORBIDDEN_BUT_P2P                                                                          \
    FORBIDDEN_MPI_BUT_SYNC ",ncclAllReduce,ncclReduce,ncclBroadcast,ncclAllGather,"                \
                           "ncclReduceScatter"
/* A module's rule for labs 4 and 8: `what` says what the lab builds from
 * which calls. */
#define P2P_ONLY_RULE(what)                                                                        \
    .forbidden_calls = FORBIDDEN_BUT_P2P, .forbidden_reason = what MPI_ONLY_TO_SYNC

/* ---- the registry (labs.c) ---- */
const struct lab_module *lab_module_find(int number);
extern const struct lab_module *const grader_labs[];

#endif
