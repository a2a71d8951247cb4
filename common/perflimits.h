/* What a measurement can physically be: the rules both the lab drivers and
 * the grader apply to every timing, read from the same system profiles
 * (grader/profiles/NAME.profile, `key = value` lines).
 *
 * Plain C with no CUDA, NCCL or MPI, so that the grader compiles this file
 * too: one reader and one set of rules, not two copies that drift apart. */
#ifndef NCCLAB_PERFLIMITS_H
#define NCCLAB_PERFLIMITS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Collectives with a floor key (floor_<name>_gbps). */
#define NCCLAB_LIMIT_NCOLLS 6
extern const char *const ncclab_limit_coll_names[NCCLAB_LIMIT_NCOLLS];

struct ncclab_limits {
    char name[64];
    char match[64];               /* text of the GPU name that selects this profile */
    double ceiling_gbps;          /* busbw above this is impossible (0: none yet) */
    double ceiling_min_bytes;     /* ...for messages of at least this size */
    double ceiling_memcpy_factor; /* no fixed ceiling: factor x this machine's memcpy */
    double ceiling_min_gbps;      /* ...but never below this */
    double min_timed_fraction;    /* time*iters below this x wall: timer stopped early */
    double min_wall_us;           /* ...only when the driver saw at least this */
    double max_timed_fraction;    /* time*iters above this x wall + slack: impossible */
    double max_timed_slack_us;
    double overlap_min_fraction;   /* overlapped time below this x compute alone: not waited for */
    double overlap_min_compute_us; /* ...when the compute alone takes at least this */
    double floor_min_bytes;
    double floor_gbps[NCCLAB_LIMIT_NCOLLS]; /* 0: no floor */
    double memcpy_gbps;                     /* measured when the ceiling comes from memcpy */
    /* Read for the grader only (its lab 8 race: the share of ncclAllReduce's
     * busbw the own all-reduce must reach; 0: the grader's default). A lab
     * loads the same file, so every key the grader reads is known here. */
    double lab8_min_nccl_fraction;
    /* The network between nodes, for measurements that span nodes (the
     * grader's runs on virtual nodes with the network on): each rank's link
     * to other nodes in GB/s per direction (0: no network rule); on the
     * host, the link model the grader sets for its runs (net_model = 1:
     * NCCLAB_NET_GBPS = net_gbps, NCCLAB_NET_LATENCY_US = net_latency_us).
     * Read by the grader only. */
    double net_gbps;
    double net_model;          /* 1: the grader sets the host backend's link model */
    double net_latency_us;     /* the model's latency per message */
    double net_ceiling_factor; /* slack on top of what the links can carry (default 1.5) */
    double net_floor_gbps;     /* a warning below this busbw across nodes (0: none) */
};

/* The highest busbw (GB/s) a collective `coll` ("allreduce", ...) of a
 * group of `g` ranks can reach when its ranks sit on several nodes, the
 * smallest holding k_min of them and the largest k_max, each rank with one
 * link of `link_gbps` per direction to the other nodes; whatever the
 * algorithm, what must leave a node goes through its ranks' links. 0: no
 * bound known (a single node, or a collective without one). */
double ncclab_net_busbw_bound(const char *coll, int g, int k_min, int k_max, double link_gbps);

/* Read a profile file. Unknown keys are errors (a typo must not silently
 * disable a rule). For a memcpy-derived ceiling, `measure` says whether to
 * measure memcpy now (else ceiling_gbps stays 0 until
 * ncclab_limits_measure). Returns 0, or -1 with a message in err. */
/* The sizes of a sweep from min to max bytes, each step `step` times the
 * last (step <= 1: min only), rounded down to whole elements, repeats
 * dropped: at most max_steps of them into sizes; returns how many. The
 * drivers' -b/-e/-f and the grader's expected sizes are both this walk. */
int ncclab_size_walk(size_t min_bytes, size_t max_bytes, double step, size_t elem_size,
                     size_t *sizes, int max_steps);

int ncclab_limits_load(const char *path, struct ncclab_limits *l, int measure, char *err,
                       size_t errlen);

/* Fill the memcpy-derived ceiling (no-op for a fixed one): from
 * NCCLAB_MEMCPY_GBPS where set (a figure measured once for many runs: the
 * grader gives every run its own), else measured now. Returns 0, or -1
 * with a message in err for a malformed NCCLAB_MEMCPY_GBPS. */
int ncclab_limits_measure(struct ncclab_limits *l, char *err, size_t errlen);

/* Best-of-several memcpy bandwidth of this machine in GB/s (10^9 B/s). */
double ncclab_memcpy_gbps(void);

/* The floor for a collective name ("allreduce"), 0 when none. */
double ncclab_limits_floor(const struct ncclab_limits *l, const char *coll);

/* What one kind=perf record says, as numbers. */
struct ncclab_perf_facts {
    const char *coll; /* "allreduce", ... (for the floor) */
    int nranks;       /* ranks taking part: the group's size in labs 6-7 */
    double bytes, time_us, busbw_gbps, wall_us, iters, warmup;
    int first_on_comm; /* the first measurement on its communicator (set-up in its wall time) */
    int made_alone;    /* nothing else ran on the machine (lower time rule applies) */
};

enum ncclab_perf_verdict {
    NCCLAB_PERF_OK,
    NCCLAB_PERF_BROKEN,      /* time missing, NaN, zero or negative */
    NCCLAB_PERF_CEILING,     /* busbw above what the system can do */
    NCCLAB_PERF_TOO_SHORT,   /* timed part far shorter than the driver's clock saw */
    NCCLAB_PERF_TOO_LONG,    /* timed part longer than the whole call took */
    NCCLAB_PERF_BELOW_FLOOR, /* a warning: far slower than this system should be */
};

/* Judge one measurement; `why` gets one sentence for a verdict other than
 * OK (what was seen and the likely cause). */
enum ncclab_perf_verdict ncclab_perf_judge(const struct ncclab_limits *l,
                                           const struct ncclab_perf_facts *f, char *why,
                                           size_t len);

/* 1 when the time a student's timing function returned (time_us, over
 * `iters` iterations) is what its cudaEventElapsedTime gave, in
 * milliseconds: the last result `last_ms` or the sum of them all `sum_ms`,
 * divided by the iterations or not (the driver's trace keeps both; records
 * print six digits, so a match is one to a part in 10^3). Such a time is in
 * milliseconds, returned as microseconds. */
int ncclab_time_is_event_ms(double time_us, double iters, double last_ms, double sum_ms);

/* Lab 2 Task 3: the overlapped call returned after `overlapped_us`, the
 * work alone takes `compute_us`. 1 when impossible (with `why`), else 0. */
int ncclab_overlap_impossible(const struct ncclab_limits *l, double compute_us,
                              double overlapped_us, char *why, size_t len);

/* The profile in `dir` whose `match` text occurs in `gpu_name`
 * (case-insensitive; the longest match wins): its file name without
 * .profile goes into buf. NULL when none matches. */
const char *ncclab_limits_match(const char *dir, const char *gpu_name, char *buf, size_t len);

/* For the drivers: the profile for this machine, found in the kit's
 * grader/profiles next to the running binary (build/B/bin/labN), or named
 * by $NCCLAB_PROFILE (a name or a file). `gpu_name` picks a GPU profile by
 * its `match`, else "pcie"; on the host backend it is "host". Returns 0 and
 * fills `l` (the memcpy ceiling measured or given), or -1: none found (err
 * empty) or one that cannot be used (why in err). */
int ncclab_limits_for_this_machine(int host_backend, const char *gpu_name, struct ncclab_limits *l,
                                   char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
