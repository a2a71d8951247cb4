#include "profile.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

double profile_floor(const struct profile *p, const char *coll)
{
    char key[64];
    snprintf(key, sizeof key, "floor_%s_gbps", coll);
    return kv_get_num(&p->kv, key, 0);
}

double measure_memcpy_gbps(void)
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
        double t0 = now_seconds();
        memcpy(dst, src, bytes);
        double t = now_seconds() - t0;
        if (t < best) best = t;
        src[i] = dst[bytes - 1 - i]; /* keep the copies observable */
    }
    free(src);
    free(dst);
    return best > 0 ? bytes / best / 1e9 : 0;
}

int profile_load(const char *dir, const char *name, struct profile *p, char *err, int errlen)
{
    memset(p, 0, sizeof *p);
    if (strchr(name, '/'))
        snprintf(p->path, sizeof p->path, "%s", name);
    else
        snprintf(p->path, sizeof p->path, "%s/%s.profile", dir, name);
    if (kv_load(p->path, &p->kv, err, errlen) != 0) return -1;
    const char *n = kv_get(&p->kv, "name");
    snprintf(p->name, sizeof p->name, "%s", n ? n : name);
    p->ceiling_gbps = kv_get_num(&p->kv, "ceiling_gbps", 0);
    p->ceiling_min_bytes = kv_get_num(&p->kv, "ceiling_min_bytes", 0);
    p->min_timed_fraction = kv_get_num(&p->kv, "min_timed_fraction", 0.2);
    p->min_wall_us = kv_get_num(&p->kv, "min_wall_us", 200);
    p->floor_min_bytes = kv_get_num(&p->kv, "floor_min_bytes", 64e6);
    double factor = kv_get_num(&p->kv, "ceiling_memcpy_factor", 0);
    if (p->ceiling_gbps <= 0 && factor > 0) {
        p->memcpy_gbps = measure_memcpy_gbps();
        p->ceiling_gbps = factor * p->memcpy_gbps;
        double at_least = kv_get_num(&p->kv, "ceiling_min_gbps", 0);
        if (p->ceiling_gbps < at_least) p->ceiling_gbps = at_least;
    }
    return 0;
}

void profile_free(struct profile *p) { kv_free(&p->kv); }

const char *profile_match(const char *dir, const char *gpu_name, char *buf, size_t len)
{
    DIR *d = opendir(dir);
    if (!d || !gpu_name[0]) {
        if (d) closedir(d);
        return NULL;
    }
    const char *found = NULL;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 9 || strcmp(e->d_name + n - 8, ".profile") != 0) continue;
        char path[PATH_MAX], err[256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct kv_file kv;
        if (kv_load(path, &kv, err, sizeof err) != 0) continue;
        const char *m = kv_get(&kv, "match");
        if (m && *m && strcasestr(gpu_name, m)) {
            snprintf(buf, len, "%.*s", (int)(n - 8), e->d_name);
            found = buf;
        }
        kv_free(&kv);
    }
    closedir(d);
    return found;
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
