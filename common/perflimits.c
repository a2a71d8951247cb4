#include "perflimits.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

const char *const ncclab_limit_coll_names[NCCLAB_LIMIT_NCOLLS] = {
    "allreduce", "allgather", "reducescatter", "broadcast", "reduce", "sendrecv"};

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double ncclab_memcpy_gbps(void)
{
    const size_t bytes = 64u << 20;
    char *src = malloc(bytes), *dst = malloc(bytes);
    if (!src || !dst) {
        free(src);
        free(dst);
        return 0;
    }
    memset(src, 1, bytes);
    memset(dst, 2, bytes); /* touch every page before timing */
    double best = 1e30;
    for (int i = 0; i < 5; i++) {
        double t0 = seconds_now();
        memcpy(dst, src, bytes);
        double t = seconds_now() - t0;
        if (t < best) best = t;
        src[i] = dst[bytes - 1 - i]; /* keep the copies observable */
    }
    free(src);
    free(dst);
    return best > 0 && best < 1e30 ? bytes / best / 1e9 : 0;
}

int ncclab_limits_measure(struct ncclab_limits *l, char *err, size_t errlen)
{
    if (l->ceiling_gbps > 0 || l->ceiling_memcpy_factor <= 0) return 0;
    /* A figure measured once for many runs (the grader passes its own to
     * every run it makes): the probe copies 448 MB, which was a third of
     * the CPU of a short lab run, and the lab and the grader then judge
     * with one ceiling instead of two measurements of the same machine. */
    const char *given = getenv("NCCLAB_MEMCPY_GBPS");
    if (given && *given) {
        char *end = NULL;
        errno = 0;
        double v = strtod(given, &end);
        if (errno || end == given || *end || !(v > 0) || !isfinite(v)) {
            snprintf(err, errlen,
                     "NCCLAB_MEMCPY_GBPS='%.40s' is not a memcpy bandwidth in GB/s above 0: "
                     "unset it to measure this machine, or give a figure such as 9.5",
                     given);
            return -1;
        }
        l->memcpy_gbps = v;
    } else {
        l->memcpy_gbps = ncclab_memcpy_gbps();
    }
    l->ceiling_gbps = l->ceiling_memcpy_factor * l->memcpy_gbps;
    if (l->ceiling_gbps < l->ceiling_min_gbps) l->ceiling_gbps = l->ceiling_min_gbps;
    return 0;
}

static void defaults(struct ncclab_limits *l)
{
    memset(l, 0, sizeof *l);
    l->min_timed_fraction = 0.2;
    l->min_wall_us = 200;
    l->max_timed_fraction = 1.1;
    l->max_timed_slack_us = 100;
    l->overlap_min_fraction = 0.2;
    l->overlap_min_compute_us = 200;
    l->floor_min_bytes = 64e6;
    l->net_ceiling_factor = 1.5;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

static int set_number(double *target, const char *value, double *out_unused)
{
    (void)out_unused;
    char *end = NULL;
    errno = 0;
    double v = strtod(value, &end);
    if (errno || end == value || *trim(end) || !isfinite(v) || v < 0) return -1;
    *target = v;
    return 0;
}

int ncclab_limits_load(const char *path, struct ncclab_limits *l, int measure, char *err,
                       size_t errlen)
{
    defaults(l);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read the profile %s: %s", path, strerror(errno));
        return -1;
    }
    /* The file name without .profile, until a `name` line says otherwise. */
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(l->name, sizeof l->name, "%.*s", (int)strcspn(base, "."), base);
    struct {
        const char *key;
        double *target;
    } nums[] = {
        {"ceiling_gbps", &l->ceiling_gbps},
        {"ceiling_min_bytes", &l->ceiling_min_bytes},
        {"ceiling_memcpy_factor", &l->ceiling_memcpy_factor},
        {"ceiling_min_gbps", &l->ceiling_min_gbps},
        {"min_timed_fraction", &l->min_timed_fraction},
        {"min_wall_us", &l->min_wall_us},
        {"max_timed_fraction", &l->max_timed_fraction},
        {"max_timed_slack_us", &l->max_timed_slack_us},
        {"overlap_min_fraction", &l->overlap_min_fraction},
        {"overlap_min_compute_us", &l->overlap_min_compute_us},
        {"floor_min_bytes", &l->floor_min_bytes},
        {"lab8_min_nccl_fraction", &l->lab8_min_nccl_fraction},
        {"net_gbps", &l->net_gbps},
        {"net_model", &l->net_model},
        {"net_latency_us", &l->net_latency_us},
        {"net_ceiling_factor", &l->net_ceiling_factor},
        {"net_floor_gbps", &l->net_floor_gbps},
    };
    char line[512];
    int line_no = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        line_no++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *s = trim(line);
        if (!*s) continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: expected `key = value`, got \"%.80s\"", path, line_no, s);
            rc = -1;
            break;
        }
        *eq = '\0';
        char *key = trim(s), *value = trim(eq + 1);
        int known = 0;
        if (strcmp(key, "name") == 0) {
            snprintf(l->name, sizeof l->name, "%s", value);
            known = 1;
        } else if (strcmp(key, "match") == 0) {
            snprintf(l->match, sizeof l->match, "%s", value);
            known = 1;
        }
        for (size_t i = 0; !known && i < sizeof nums / sizeof *nums; i++)
            if (strcmp(key, nums[i].key) == 0) {
                known = 1;
                if (set_number(nums[i].target, value, NULL) != 0) rc = -1;
            }
        for (int c = 0; !known && c < NCCLAB_LIMIT_NCOLLS; c++) {
            char fk[64];
            snprintf(fk, sizeof fk, "floor_%s_gbps", ncclab_limit_coll_names[c]);
            if (strcmp(key, fk) == 0) {
                known = 1;
                if (set_number(&l->floor_gbps[c], value, NULL) != 0) rc = -1;
            }
        }
        if (!known) {
            snprintf(err, errlen, "%s:%d: unknown key `%s`", path, line_no, key);
            rc = -1;
        } else if (rc != 0) {
            snprintf(err, errlen, "%s:%d: `%s` needs a non-negative number, got \"%s\"", path,
                     line_no, key, value);
        }
    }
    fclose(f);
    if (rc == 0 && measure && ncclab_limits_measure(l, err, errlen) != 0) rc = -1;
    return rc;
}

double ncclab_net_busbw_bound(const char *coll, int g, int k_min, int k_max, double link_gbps)
{
    if (!coll || g < 2 || k_min < 1 || k_max < k_min || k_max >= g || !(link_gbps > 0)) return 0;
    /* All-reduce: every node must send at least the S bytes its ranks'
     * data reduce to (the other nodes' results depend on all of it), over
     * its k links: t >= S / (k B) for the smallest node, so algbw <= k_min B
     * and busbw = algbw * 2(g-1)/g. */
    if (strcmp(coll, "allreduce") == 0) return k_min * link_gbps * 2.0 * (g - 1) / g;
    /* All-gather and reduce-scatter: a node's own pieces (or the partial
     * sums the others need) leave through its links, one piece of S/g per
     * link at least: t >= (S/g) / B, busbw = (g-1)/g * S / t <= (g-1) B. */
    if (strcmp(coll, "allgather") == 0 || strcmp(coll, "reducescatter") == 0)
        return (g - 1) * link_gbps;
    /* Broadcast (the root's node sends S out) and reduce (every other node
     * does): busbw = algbw <= k B for that node, at most k_max B. */
    if (strcmp(coll, "broadcast") == 0 || strcmp(coll, "reduce") == 0) return k_max * link_gbps;
    return 0; /* send/recv: a rank's figure depends on where its own peer sits */
}

double ncclab_limits_floor(const struct ncclab_limits *l, const char *coll)
{
    for (int c = 0; coll && c < NCCLAB_LIMIT_NCOLLS; c++)
        if (strcmp(coll, ncclab_limit_coll_names[c]) == 0) return l->floor_gbps[c];
    return 0;
}

static const char *const sync_advice =
    "the timer stopped before the GPU finished — synchronise the stream/event before reading the "
    "clock";

int ncclab_time_is_event_ms(double time_us, double iters, double last_ms, double sum_ms)
{
    const double ms[2] = {last_ms, sum_ms};
    if (!(time_us > 0) || !(iters > 0)) return 0;
    for (int k = 0; k < 2; k++)
        if (ms[k] > 0 && (fabs(time_us * iters - ms[k]) <= 1e-3 * ms[k] ||
                          fabs(time_us - ms[k]) <= 1e-3 * ms[k]))
            return 1;
    return 0;
}

enum ncclab_perf_verdict ncclab_perf_judge(const struct ncclab_limits *l,
                                           const struct ncclab_perf_facts *f, char *why, size_t len)
{
    if (len) why[0] = '\0';
    if (!isfinite(f->time_us) || !(f->time_us > 0) || !isfinite(f->busbw_gbps)) {
        snprintf(why, len,
                 "the measured time is broken (time_us %g, busbw %g GB/s): nothing was measured, "
                 "or the time was read before the timed work had ended (handout: \"Timing on "
                 "the GPU\")",
                 f->time_us, f->busbw_gbps);
        return NCCLAB_PERF_BROKEN;
    }
    /* One rank moves nothing over a link, and small messages can be served
     * from caches faster than memory: no ceiling for those. */
    if (l->ceiling_gbps > 0 && f->busbw_gbps > l->ceiling_gbps && f->nranks > 1 &&
        f->bytes >= l->ceiling_min_bytes) {
        snprintf(why, len,
                 "busbw %.1f GB/s is above what this system can do (%.0f GB/s, profile %s): %s",
                 f->busbw_gbps, l->ceiling_gbps, l->name, sync_advice);
        return NCCLAB_PERF_CEILING;
    }
    double timed = f->time_us * f->iters;
    /* The driver's clock ran around the whole call, warm-up included: the
     * timed iterations cannot have taken longer than that. */
    if (isfinite(f->wall_us) && f->wall_us > 0 && f->iters > 0 &&
        timed > l->max_timed_fraction * f->wall_us + l->max_timed_slack_us) {
        snprintf(why, len,
                 "reported %.6g us per operation (%.6g us for %.0f timed iterations), but the "
                 "whole timing call, %.0f warm-up iteration(s) included, took %.0f us by the "
                 "driver's clock: the timed part cannot be longer than that — the reported time "
                 "does not come from the events around the timed calls (cudaEventElapsedTime "
                 "gives milliseconds: x 1000 for microseconds, divided by the iterations)",
                 f->time_us, timed, f->iters, f->warmup, f->wall_us);
        return NCCLAB_PERF_TOO_LONG;
    }
    /* The whole wall time includes the warm-up, and a first call can be far
     * slower than the rest: only a gross shortfall counts, and only where
     * nothing else ran (one scheduling stall next to other runs can exceed
     * the whole timed part). */
    if (f->made_alone && !f->first_on_comm && f->iters > 0 && f->wall_us >= l->min_wall_us &&
        f->bytes >= l->ceiling_min_bytes && timed < l->min_timed_fraction * f->wall_us) {
        snprintf(why, len,
                 "reported %.1f us per operation (%.0f us for %.0f timed iterations), but the "
                 "timing call took %.0f us from outside (%.0f warm-up included): %s",
                 f->time_us, timed, f->iters, f->wall_us, f->warmup, sync_advice);
        return NCCLAB_PERF_TOO_SHORT;
    }
    double floor = ncclab_limits_floor(l, f->coll);
    /* A group of one rank moves nothing between GPUs: busbw is 0 by definition. */
    if (floor > 0 && f->nranks > 1 && f->bytes >= l->floor_min_bytes && f->busbw_gbps < floor) {
        snprintf(why, len,
                 "busbw %.2f GB/s is far below the %.0f GB/s expected on %s: a debug build, "
                 "ranks sharing one GPU (wrong device mapping), or traffic not on NVLink — run "
                 "with NCCL_DEBUG=INFO and look at the transports chosen",
                 f->busbw_gbps, floor, l->name);
        return NCCLAB_PERF_BELOW_FLOOR;
    }
    return NCCLAB_PERF_OK;
}

int ncclab_overlap_impossible(const struct ncclab_limits *l, double compute_us,
                              double overlapped_us, char *why, size_t len)
{
    if (!(compute_us >= l->overlap_min_compute_us) || !isfinite(overlapped_us)) return 0;
    if (overlapped_us >= l->overlap_min_fraction * compute_us) return 0;
    snprintf(why, len,
             "lab2_allreduce_overlapped returned after %.0f us, but the work alone takes %.0f us: "
             "it did not wait for both streams before returning (handout: \"Overlap on two "
             "streams\")",
             overlapped_us, compute_us);
    return 1;
}

/* The kit's grader/profiles, from the binary's place (build/B/bin/labN). */
static int profile_dir(char *buf, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = '\0';
    for (int up = 0; up < 4; up++) {
        char *slash = strrchr(exe, '/');
        if (!slash) return -1;
        *slash = '\0';
        char probe[PATH_MAX + 32];
        snprintf(probe, sizeof probe, "%s/grader/profiles/host.profile", exe);
        if (access(probe, R_OK) == 0) {
            size_t dl = strlen(probe) - strlen("/host.profile");
            if (dl + 1 > len) return -1;
            memcpy(buf, probe, dl);
            buf[dl] = '\0';
            return 0;
        }
    }
    return -1;
}

int ncclab_limits_for_this_machine(int host_backend, const char *gpu_name, struct ncclab_limits *l,
                                   char *err, size_t errlen)
{
    char path[PATH_MAX + 80], dir[PATH_MAX];
    if (errlen) err[0] = 0; /* no profile directory: nothing to say */
    const char *named = getenv("NCCLAB_PROFILE");
    if (named && *named) {
        if (strchr(named, '/')) {
            snprintf(path, sizeof path, "%s", named);
        } else {
            if (profile_dir(dir, sizeof dir) != 0) return -1;
            snprintf(path, sizeof path, "%s/%s.profile", dir, named);
        }
        return ncclab_limits_load(path, l, 1, err, errlen);
    }
    if (profile_dir(dir, sizeof dir) != 0) return -1;
    if (host_backend) {
        snprintf(path, sizeof path, "%s/host.profile", dir);
        return ncclab_limits_load(path, l, 1, err, errlen);
    }
    /* A GPU: the profile whose `match` is in its name, else PCIe. */
    char name[64];
    if (!ncclab_limits_match(dir, gpu_name, name, sizeof name)) snprintf(name, sizeof name, "pcie");
    snprintf(path, sizeof path, "%s/%s.profile", dir, name);
    return ncclab_limits_load(path, l, 0, err, errlen);
}

const char *ncclab_limits_match(const char *dir, const char *gpu_name, char *buf, size_t len)
{
    if (!gpu_name || !gpu_name[0]) return NULL;
    DIR *d = opendir(dir);
    if (!d) return NULL;
    /* The longest match wins, and among equals the first name in order, so
     * the choice does not depend on the directory's order. */
    size_t best = 0;
    char best_name[256] = "";
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 9 || strcmp(e->d_name + n - 8, ".profile") != 0) continue;
        char path[PATH_MAX + 300], err[256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct ncclab_limits l;
        if (ncclab_limits_load(path, &l, 0, err, sizeof err) != 0) {
            /* Said, not skipped in silence: a broken profile would otherwise
             * leave its GPU judged by PCIe's ceiling. */
            fprintf(stderr, "ncclab: ignoring a profile that does not load: %s\n", err);
            continue;
        }
        size_t m = strlen(l.match);
        if (m == 0 || !strcasestr(gpu_name, l.match)) continue;
        char stem[256];
        snprintf(stem, sizeof stem, "%.*s", (int)(n - 8), e->d_name);
        if (m > best || (m == best && strcmp(stem, best_name) < 0)) {
            best = m;
            snprintf(best_name, sizeof best_name, "%s", stem);
        }
    }
    closedir(d);
    if (!best) return NULL;
    snprintf(buf, len, "%s", best_name);
    return buf;
}

int ncclab_size_walk(size_t min_bytes, size_t max_bytes, double step, size_t elem_size,
                     size_t *sizes, int max_steps)
{
    int n = 0;
    double s = (double)min_bytes;
    while (n < max_steps && s <= (double)max_bytes * (1.0 + 1e-12)) {
        size_t b = (size_t)s;
        b -= b % elem_size;
        if (n == 0 || b != sizes[n - 1]) sizes[n++] = b;
        if (step <= 1.0 || s <= 0) break; /* no growth (or a start of 0): one size */
        s *= step;
    }
    return n;
}
