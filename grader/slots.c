/* Run slots shared by graders and tests on one machine (slots.h). */
#include "slots.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

/* After this long without its slots, a run closes the turnstile. */
#define TURNSTILE_AFTER_NS 1000000000LL

static long long now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void nap(useconds_t *us, useconds_t most)
{
    usleep(*us);
    if (*us < most) *us *= 2;
}

static void tell_once(const char *what, const char *path)
{
    static int told;
    if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
        fprintf(stderr, "grader: NCCLAB_RUN_SLOTS: cannot %s %s; runs not limited\n", what, path);
}

static void close_all(int *fd, int n)
{
    for (int i = 0; i < n; i++)
        if (fd[i] >= 0) close(fd[i]);
}

void run_slots_take(int ranks, struct run_slots *held)
{
    held->n = 0;
    const char *spec = getenv("NCCLAB_RUN_SLOTS");
    const char *colon = spec ? strrchr(spec, ':') : NULL;
    int n = colon ? atoi(colon + 1) : 0;
    if (!colon || colon == spec || n < 1) return;
    if (n > RUN_SLOTS_MAX) n = RUN_SLOTS_MAX;
    int want = ranks < 1 ? 1 : ranks > n ? n : ranks;
    const int dlen = (int)(colon - spec);
    char path[1200];
    int slot[RUN_SLOTS_MAX];
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%.*s/slot-%d", dlen, spec, i);
        slot[i] = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (slot[i] < 0) {
            tell_once("open", path);
            close_all(slot, i);
            return;
        }
    }
    snprintf(path, sizeof path, "%.*s/turnstile", dlen, spec);
    int gate = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (gate < 0) {
        tell_once("open", path);
        close_all(slot, n);
        return;
    }
    const long long start = now_ns();
    int closed_it = 0; /* this run holds the turnstile shut */
    useconds_t us = 2000;
    for (;;) {
        /* Through the turnstile (shared, only while trying): shut, someone
         * who waited longer goes first. */
        if (!closed_it && flock(gate, LOCK_SH | LOCK_NB) != 0) {
            nap(&us, 64000);
            continue;
        }
        int got = 0;
        for (int i = 0; i < n && got < want; i++)
            if (flock(slot[i], LOCK_EX | LOCK_NB) == 0) held->fd[got++] = slot[i];
        if (got == want) break;
        for (int i = 0; i < got; i++) flock(held->fd[i], LOCK_UN); /* all or none */
        if (!closed_it) flock(gate, LOCK_UN);
        if (!closed_it && now_ns() - start > TURNSTILE_AFTER_NS) {
            /* Waits for the runs trying now, and for one that shut it before. */
            flock(gate, LOCK_EX);
            closed_it = 1;
            us = 2000;
        }
        nap(&us, closed_it ? 16000 : 64000);
    }
    flock(gate, LOCK_UN);
    close(gate);
    /* Keep the descriptors that hold a lock, close the others. */
    held->n = want;
    for (int i = 0; i < n; i++) {
        int mine = 0;
        for (int k = 0; k < want; k++) mine |= held->fd[k] == slot[i];
        if (!mine) close(slot[i]);
    }
}

void run_slots_give(struct run_slots *held)
{
    close_all(held->fd, held->n); /* the locks go with them */
    held->n = 0;
}
