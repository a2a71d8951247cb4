/* A gate for the host-backend tests: a host function enqueued with
 * cudaLaunchHostFunc(stream, gate_wait_fn, &gate) keeps that stream's worker
 * busy until the test calls gate_open, so "not finished yet" can be observed
 * reliably instead of raced against. */
#ifndef NCCLAB_TEST_STREAM_GATE_H
#define NCCLAB_TEST_STREAM_GATE_H

#include <pthread.h>

struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open;
    int reached; /* the worker is inside gate_wait_fn */
};

#define GATE_INITIALIZER                                                                           \
    {                                                                                              \
        PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0                                  \
    }

static inline void gate_wait_fn(void *arg)
{
    struct gate *g = arg;
    pthread_mutex_lock(&g->mu);
    g->reached = 1;
    pthread_cond_broadcast(&g->cv);
    while (!g->open) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

/* Waits until the stream's worker has reached the gate, so everything
 * queued before it has run (on a loaded machine that can take a while). */
static inline void gate_wait_reached(struct gate *g)
{
    pthread_mutex_lock(&g->mu);
    while (!g->reached) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

static inline void gate_open(struct gate *g)
{
    pthread_mutex_lock(&g->mu);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

#endif
