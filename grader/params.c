/* The parameters of each run, drawn from the student's seed (params.h). */
#include "params.h"

#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "text.h"

/* ---- the seed ---- */

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static uint64_t hash_str(uint64_t h, const char *s)
{
    for (; s && *s; s++) h = mix64(h ^ (unsigned char)*s);
    return mix64(h ^ 0xff);
}

unsigned long long grade_seed(const char *secret, const char *student)
{
    return hash_str(hash_str(0x6e63636c6162ULL, secret ? secret : ""), student ? student : "");
}

/* ---- the parameters of each run, drawn from the seed ---- */

/* A TCP port nobody uses right now, for the TCP bootstrap when there is no
 * sandbox (the runs share the machine's network). It comes from below the
 * kernel's ephemeral range: a port the kernel handed out for port 0 could be
 * taken as the local port of any outgoing connection (the host backend's
 * own, a neighbour's) before the lab binds it. The ports given to runs still
 * going are skipped, so runs graded at once never share one. */
static int free_port(uint64_t seed)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static int given[64];
    static unsigned ngiven;
    unsigned lo = 32768, hi = 60999;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f) {
        if (fscanf(f, "%u %u", &lo, &hi) != 2) lo = 32768;
        fclose(f);
    }
    const unsigned base = 20000, span = lo > base + 1024 ? lo - base : 10000;
    pthread_mutex_lock(&lock);
    int port = 0;
    for (unsigned attempt = 0; attempt < 256 && !port; attempt++) {
        int want = (int)(base + mix64(seed + attempt) % span), taken = 0;
        for (unsigned i = 0; i < ngiven && i < 64; i++) taken |= given[i] == want;
        int fd = taken ? -1 : socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) continue;
        struct sockaddr_in a = {.sin_family = AF_INET,
                                .sin_addr.s_addr = htonl(INADDR_ANY),
                                .sin_port = htons((uint16_t)want)};
        if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0) port = want;
        close(fd);
    }
    if (!port) port = 29500; /* nothing free found: the lab names the problem */
    given[ngiven++ % 64] = port;
    pthread_mutex_unlock(&lock);
    return port;
}

/* Each run's own copy of its variation, with iterations, warm-up, sizes
 * and -T moved by amounts drawn from the seed: recorded output of another
 * run does not fit them, and every check recomputes from them. Sizes keep
 * their character: an odd element count stays odd, a single element stays
 * one, a range keeps its number of sizes and only grows (by up to 25 %),
 * so the profile's size thresholds still apply. */
void draw_params(struct run *r, const struct grade_env *env, int lab, int index)
{
    r->params = *r->declared;
    r->var = &r->params;
    uint64_t h = mix64(env->seed ^ mix64(((uint64_t)lab << 32) | (uint64_t)index));
    r->watchdog_s = env->lab_watchdog_s;
    if (r->watchdog_s > 6) r->watchdog_s -= (int)(h % 3);
    if (r->declared->flags & VAR_FIXED) return;
    struct variation *v = &r->params;
    h = mix64(h);
    if (v->iters > 0) v->iters += (int)(h % 3);
    h = mix64(h);
    if (v->warmup > 0) v->warmup += (int)(h % 3);
    h = mix64(h);
    if (v->min_bytes == 0 || v->min_bytes % 4 || v->max_bytes < v->min_bytes) return;
    size_t count = v->min_bytes / 4;
    if (v->min_bytes == v->max_bytes && count % 2 == 1 && count > 1) {
        count += 2 * (size_t)(h % 500);
        v->min_bytes = v->max_bytes = count * 4;
        return;
    }
    double f = 1.0 + (double)(h % 17) / 64.0;
    size_t min = (size_t)((double)v->min_bytes * f);
    min -= min % 4;
    if (min < v->min_bytes) min = v->min_bytes;
    size_t sizes[64];
    int k = variation_sizes(r->declared, 4, sizes, 64);
    if (v->min_bytes == v->max_bytes || k <= 1 || v->step <= 1.0) {
        v->min_bytes = min;
        if (v->max_bytes < min || k <= 1) v->max_bytes = min;
        return;
    }
    /* The same walk as the driver's, so the range ends on its last size. */
    double s = (double)min;
    for (int i = 1; i < k; i++) s *= v->step;
    v->min_bytes = min;
    v->max_bytes = (size_t)ceil(s);
}

/* ---- the lab's options ---- */

void variation_args(const struct run *run, char *buf, size_t len)
{
    const struct variation *v = run->var;
    buf[0] = '\0';
    if (v->min_bytes) text_append(buf, len, " -b %zu -e %zu", v->min_bytes, v->max_bytes);
    if (v->step > 0) text_append(buf, len, " -f %g", v->step);
    if (v->iters >= 0) text_append(buf, len, " -n %d", v->iters);
    if (v->warmup >= 0) text_append(buf, len, " -w %d", v->warmup);
    if (v->root >= 0) text_append(buf, len, " -r %d", v->root);
    if (v->ranks_per_node > 0) text_append(buf, len, " --ranks-per-node %d", v->ranks_per_node);
    if (v->extra) text_append(buf, len, " %s", v->extra);
    if (run->watchdog_s > 0) text_append(buf, len, " -T %d", run->watchdog_s);
}

int run_master_port(uint64_t seed, int index, int sandboxed)
{
    /* In a sandbox the network is the run's own: any port is free, and a
     * fixed one keeps the run the same on every repeat. */
    if (sandboxed) return 20000 + (int)(mix64(seed ^ (uint64_t)index) % 30000);
    return free_port(seed ^ (uint64_t)index);
}
