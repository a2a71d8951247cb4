/* The grader's view of a system profile: the shared reader and rules of
 * common/perflimits.c (the lab drivers use the same ones), plus the fields
 * the rest of the grader reads. */
#include "profile.h"

#include <stdio.h>
#include <string.h>

double profile_floor(const struct profile *p, const char *coll)
{
    return ncclab_limits_floor(&p->limits, coll);
}

double measure_memcpy_gbps(void) { return ncclab_memcpy_gbps(); }

int profile_load(const char *dir, const char *name, struct profile *p, char *err, int errlen)
{
    memset(p, 0, sizeof *p);
    if (strchr(name, '/'))
        snprintf(p->path, sizeof p->path, "%s", name);
    else
        snprintf(p->path, sizeof p->path, "%s/%s.profile", dir, name);
    if (ncclab_limits_load(p->path, &p->limits, 1, err, (size_t)errlen) != 0) return -1;
    snprintf(p->name, sizeof p->name, "%s", p->limits.name);
    p->ceiling_gbps = p->limits.ceiling_gbps;
    p->ceiling_min_bytes = p->limits.ceiling_min_bytes;
    p->min_timed_fraction = p->limits.min_timed_fraction;
    p->min_wall_us = p->limits.min_wall_us;
    p->floor_min_bytes = p->limits.floor_min_bytes;
    p->memcpy_gbps = p->limits.memcpy_gbps;
    return 0;
}

void profile_free(struct profile *p) { memset(p, 0, sizeof *p); }

const char *profile_match(const char *dir, const char *gpu_name, char *buf, size_t len)
{
    return ncclab_limits_match(dir, gpu_name, buf, len);
}

void query_gpu_name(char *buf, size_t len)
{
    buf[0] = '\0';
    char *argv[] = {"nvidia-smi", "--query-gpu=name", "--format=csv,noheader", NULL};
    struct run_limits lim = {.timeout_s = 20, .output_bytes = 4096};
    struct run_output res;
    if (run_process(argv, NULL, NULL, &lim, &res) == 0 && res.end == RUN_EXITED &&
        res.exit_status == 0) {
        size_t n = strcspn(res.out, "\n");
        snprintf(buf, len, "%.*s", (int)n, res.out);
    }
    run_output_free(&res);
}
