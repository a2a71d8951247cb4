/*
 * stream.c -- streams, events and host functions of the host backend.
 *
 * Every stream, the default one included, owns a worker thread and a FIFO
 * of operations. API calls only append to the FIFO; the worker runs the
 * operations later, so code that forgets to synchronise sees unfinished
 * work exactly as it would on a GPU. Each operation carries a sequence
 * number; "stream s has finished operation n" is simply s->completed >= n,
 * which is what events, cudaStreamWaitEvent and synchronisation rely on.
 */
#include "host_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STREAM_MAGIC 0x5374726dU /* "Strm" */
#define EVENT_MAGIC 0x45766e74U  /* "Evnt" */

struct host_op {
    host_op_run_fn run;
    void *arg;
    struct host_dep *deps;
    size_t ndeps;
    uint64_t seq;
    struct host_op *next;
};

struct CUstream_st {
    uint32_t magic;
    unsigned int flags;
    bool is_default;
    int device;    /* current device of the creating thread */
    bool dying;    /* cudaStreamDestroy in progress: handle no longer valid */
    bool stopping; /* worker should exit once the queue is empty */
    int refs;      /* handle + dependencies/waiters that point here */
    pthread_t worker;
    pthread_cond_t work_cv;
    struct host_op *head, *tail;
    uint64_t enqueued;  /* sequence number of the last operation added */
    uint64_t completed; /* sequence number of the last operation finished */
    struct CUstream_st *next_live;
};

struct CUevent_st {
    uint32_t magic;
    unsigned int flags;
    int refs; /* handle + pending record markers */
    bool destroyed;
    uint64_t generation;  /* bumped by every cudaEventRecord */
    struct host_dep last; /* the latest record; stream NULL if never recorded */
    uint64_t stamp_ns;    /* CLOCK_MONOTONIC when the worker reached it */
    uint64_t stamp_generation;
    struct CUevent_st *next_live;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_done_cv = PTHREAD_COND_INITIALIZER;
static struct CUstream_st *g_streams;                          /* live streams, default included */
static struct CUevent_st *g_events;                            /* live events */
static struct CUstream_st *g_default_stream[HOST_MAX_DEVICES]; /* one per device */

void host_lock(void) { pthread_mutex_lock(&g_lock); }
void host_unlock(void) { pthread_mutex_unlock(&g_lock); }
void host_wait_locked(void) { pthread_cond_wait(&g_done_cv, &g_lock); }

uint64_t host_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* Worker threads                                                      */
/* ------------------------------------------------------------------ */

bool host_dep_done_locked(const struct host_dep *dep)
{
    return dep->stream == NULL || dep->stream->completed >= dep->seq;
}

void host_stream_ref_locked(struct CUstream_st *s) { s->refs++; }

void host_stream_unref_locked(struct CUstream_st *s)
{
    if (--s->refs > 0) return;
    /* Only reached after the worker was joined (the handle ref goes last). */
    pthread_cond_destroy(&s->work_cv);
    s->magic = 0;
    free(s);
}

static void *stream_worker(void *arg)
{
    struct CUstream_st *s = arg;
    pthread_mutex_lock(&g_lock);
    for (;;) {
        while (!s->head && !s->stopping) pthread_cond_wait(&s->work_cv, &g_lock);
        struct host_op *op = s->head;
        if (!op) break; /* stopping, and everything is drained */
        s->head = op->next;
        if (!s->head) s->tail = NULL;
        for (size_t i = 0; i < op->ndeps; i++)
            while (!host_dep_done_locked(&op->deps[i])) pthread_cond_wait(&g_done_cv, &g_lock);
        pthread_mutex_unlock(&g_lock);

        op->run(op->arg);

        pthread_mutex_lock(&g_lock);
        s->completed = op->seq;
        for (size_t i = 0; i < op->ndeps; i++) host_stream_unref_locked(op->deps[i].stream);
        free(op->deps);
        free(op);
        pthread_cond_broadcast(&g_done_cv);
    }
    pthread_mutex_unlock(&g_lock);
    return NULL;
}

/* Creates a stream of `device` and its worker. Lock held. */
static cudaError_t stream_create_locked(unsigned int flags, bool is_default, int device,
                                        struct CUstream_st **out)
{
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (!s) return cudaErrorMemoryAllocation;
    s->magic = STREAM_MAGIC;
    s->device = device;
    s->flags = flags;
    s->is_default = is_default;
    s->refs = 1;
    if (pthread_cond_init(&s->work_cv, NULL) != 0) {
        free(s);
        return cudaErrorMemoryAllocation;
    }
    if (pthread_create(&s->worker, NULL, stream_worker, s) != 0) {
        fprintf(stderr, "ncclab host backend: cannot start a stream worker thread\n");
        pthread_cond_destroy(&s->work_cv);
        free(s);
        return cudaErrorMemoryAllocation;
    }
    s->next_live = g_streams;
    g_streams = s;
    *out = s;
    return cudaSuccess;
}

struct CUstream_st *host_stream_for_device_locked(cudaStream_t handle, int device)
{
    if (handle == NULL || handle == cudaStreamLegacy || handle == cudaStreamPerThread) {
        if (device < 0 || device >= HOST_MAX_DEVICES) return NULL;
        struct CUstream_st **def = &g_default_stream[device];
        if (!*def && stream_create_locked(cudaStreamDefault, true, device, def) != cudaSuccess)
            return NULL;
        return *def;
    }
    /* Compare against the live list rather than dereferencing: the handle
     * may be garbage or already destroyed. */
    for (struct CUstream_st *s = g_streams; s; s = s->next_live)
        if (s == handle) return s->dying ? NULL : s;
    return NULL;
}

struct CUstream_st *host_stream_lookup_locked(cudaStream_t handle)
{
    return host_stream_for_device_locked(handle, host_rt_current_device());
}

int host_stream_device(const struct CUstream_st *s) { return s->device; }

static bool stream_idle_locked(const struct CUstream_st *s) { return s->completed == s->enqueued; }

cudaError_t host_stream_enqueue_locked(struct CUstream_st *s, host_op_run_fn run, void *arg,
                                       const struct host_dep *deps, size_t ndeps, uint64_t *seq_out)
{
    /* Legacy default stream rules: work on it waits for all blocking
     * streams, and work on a blocking stream waits for it. */
    size_t nimplicit = 0;
    struct CUstream_st *def = g_default_stream[s->device];
    if (s->is_default) {
        for (struct CUstream_st *o = g_streams; o; o = o->next_live)
            if (o != s && o->device == s->device && !(o->flags & cudaStreamNonBlocking) &&
                !stream_idle_locked(o))
                nimplicit++;
    } else if (!(s->flags & cudaStreamNonBlocking) && def && !stream_idle_locked(def)) {
        nimplicit = 1;
    }

    struct host_op *op = calloc(1, sizeof *op);
    struct host_dep *all = NULL;
    if (ndeps + nimplicit > 0) all = calloc(ndeps + nimplicit, sizeof *all);
    if (!op || (ndeps + nimplicit > 0 && !all)) {
        free(op);
        free(all);
        return cudaErrorMemoryAllocation;
    }
    size_t n = 0;
    for (size_t i = 0; i < ndeps; i++)
        if (deps[i].stream && deps[i].stream != s && !host_dep_done_locked(&deps[i]))
            all[n++] = deps[i];
    if (s->is_default) {
        for (struct CUstream_st *o = g_streams; o; o = o->next_live)
            if (o != s && o->device == s->device && !(o->flags & cudaStreamNonBlocking) &&
                !stream_idle_locked(o))
                all[n++] = (struct host_dep){o, o->enqueued};
    } else if (nimplicit) {
        all[n++] = (struct host_dep){def, def->enqueued};
    }
    for (size_t i = 0; i < n; i++) host_stream_ref_locked(all[i].stream);

    op->run = run;
    op->arg = arg;
    op->deps = all;
    op->ndeps = n;
    op->seq = ++s->enqueued;
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    pthread_cond_signal(&s->work_cv);
    if (seq_out) *seq_out = op->seq;
    return cudaSuccess;
}

/* Waits until stream s has finished operation seq. Lock held; s stays
 * referenced meanwhile so a concurrent destroy cannot free it. */
static void wait_dep_locked(struct CUstream_st *s, uint64_t seq)
{
    struct host_dep d = {s, seq};
    host_stream_ref_locked(s);
    while (!host_dep_done_locked(&d)) pthread_cond_wait(&g_done_cv, &g_lock);
    host_stream_unref_locked(s);
}

void host_sync_device(void)
{
    int dev = host_rt_current_device();
    pthread_mutex_lock(&g_lock);
    /* Snapshot first: work enqueued after this call is not waited for. */
    size_t n = 0;
    for (struct CUstream_st *s = g_streams; s; s = s->next_live) n += s->device == dev;
    struct host_dep *snap = n ? calloc(n, sizeof *snap) : NULL;
    if (n && !snap) {
        /* Out of memory: fall back to waiting until everything is idle. */
        for (;;) {
            bool idle = true;
            for (struct CUstream_st *s = g_streams; s; s = s->next_live)
                idle = idle && (s->device != dev || stream_idle_locked(s));
            if (idle) break;
            pthread_cond_wait(&g_done_cv, &g_lock);
        }
        pthread_mutex_unlock(&g_lock);
        return;
    }
    size_t i = 0;
    for (struct CUstream_st *s = g_streams; s; s = s->next_live) {
        if (s->device != dev) continue;
        snap[i++] = (struct host_dep){s, s->enqueued};
        host_stream_ref_locked(s);
    }
    for (i = 0; i < n; i++) {
        while (!host_dep_done_locked(&snap[i])) pthread_cond_wait(&g_done_cv, &g_lock);
        host_stream_unref_locked(snap[i].stream);
    }
    pthread_mutex_unlock(&g_lock);
    free(snap);
}

/* ------------------------------------------------------------------ */
/* Stream API                                                          */
/* ------------------------------------------------------------------ */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    if (!pStream || (flags & ~(unsigned int)cudaStreamNonBlocking))
        return host_rt_error(cudaErrorInvalidValue);
    cudaError_t st = host_rt_init_status();
    if (st != cudaSuccess) return host_rt_error(st);
    struct CUstream_st *s = NULL;
    pthread_mutex_lock(&g_lock);
    st = stream_create_locked(flags, false, host_rt_current_device(), &s);
    pthread_mutex_unlock(&g_lock);
    if (st == cudaSuccess) *pStream = s;
    return host_rt_error(st);
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

/* Drains, stops and joins a user stream, then drops its handle. Lock held
 * on entry and exit (released while joining). */
static void stream_destroy_locked(struct CUstream_st *s)
{
    s->dying = true;
    /* No extra reference needed while waiting: the handle's is still held. */
    while (!stream_idle_locked(s)) pthread_cond_wait(&g_done_cv, &g_lock);
    s->stopping = true;
    pthread_cond_signal(&s->work_cv);
    pthread_mutex_unlock(&g_lock);
    pthread_join(s->worker, NULL);
    pthread_mutex_lock(&g_lock);
    for (struct CUstream_st **pp = &g_streams; *pp; pp = &(*pp)->next_live)
        if (*pp == s) {
            *pp = s->next_live;
            break;
        }
    host_stream_unref_locked(s);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    pthread_mutex_lock(&g_lock);
    struct CUstream_st *s = NULL;
    for (struct CUstream_st *it = g_streams; it; it = it->next_live)
        if (it == stream && !it->dying && !it->is_default) s = it;
    if (!s) {
        pthread_mutex_unlock(&g_lock);
        return host_rt_error(cudaErrorInvalidResourceHandle);
    }
    stream_destroy_locked(s);
    pthread_mutex_unlock(&g_lock);
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    pthread_mutex_lock(&g_lock);
    struct CUstream_st *s = host_stream_lookup_locked(stream);
    if (!s) {
        pthread_mutex_unlock(&g_lock);
        return host_rt_error(cudaErrorInvalidResourceHandle);
    }
    wait_dep_locked(s, s->enqueued);
    pthread_mutex_unlock(&g_lock);
    return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    pthread_mutex_lock(&g_lock);
    struct CUstream_st *s = host_stream_lookup_locked(stream);
    cudaError_t st = !s                      ? cudaErrorInvalidResourceHandle
                     : stream_idle_locked(s) ? cudaSuccess
                                             : cudaErrorNotReady;
    pthread_mutex_unlock(&g_lock);
    return host_rt_error(st);
}

static void run_nothing(void *arg) { (void)arg; }

static struct CUevent_st *event_lookup_locked(cudaEvent_t handle)
{
    for (struct CUevent_st *e = g_events; e; e = e->next_live)
        if (e == handle) return e;
    return NULL;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    if (flags != 0) return host_rt_error(cudaErrorInvalidValue);
    pthread_mutex_lock(&g_lock);
    struct CUstream_st *s = host_stream_lookup_locked(stream);
    struct CUevent_st *e = event_lookup_locked(event);
    cudaError_t st = cudaSuccess;
    if (!s || !e)
        st = cudaErrorInvalidResourceHandle;
    else if (e->last.stream) /* waiting on a never-recorded event is a no-op */
        st = host_stream_enqueue_locked(s, run_nothing, NULL, &e->last, 1, NULL);
    pthread_mutex_unlock(&g_lock);
    return host_rt_error(st);
}

struct host_fn_op {
    cudaHostFn_t fn;
    void *user;
};

static void run_host_fn(void *arg)
{
    struct host_fn_op *op = arg;
    op->fn(op->user);
    free(op);
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    if (!fn) return host_rt_error(cudaErrorInvalidValue);
    struct host_fn_op *op = malloc(sizeof *op);
    if (!op) return host_rt_error(cudaErrorMemoryAllocation);
    op->fn = fn;
    op->user = userData;
    pthread_mutex_lock(&g_lock);
    struct CUstream_st *s = host_stream_lookup_locked(stream);
    cudaError_t st = s ? host_stream_enqueue_locked(s, run_host_fn, op, NULL, 0, NULL)
                       : cudaErrorInvalidResourceHandle;
    pthread_mutex_unlock(&g_lock);
    if (st != cudaSuccess) free(op);
    return host_rt_error(st);
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

static void event_unref_locked(struct CUevent_st *e)
{
    if (--e->refs > 0) return;
    if (e->last.stream) host_stream_unref_locked(e->last.stream);
    e->magic = 0;
    free(e);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    const unsigned int known =
        cudaEventBlockingSync | cudaEventDisableTiming | cudaEventInterprocess;
    if (!event || (flags & ~known)) return host_rt_error(cudaErrorInvalidValue);
    /* CUDA requires interprocess events to be created without timing. */
    if ((flags & cudaEventInterprocess) && !(flags & cudaEventDisableTiming))
        return host_rt_error(cudaErrorInvalidValue);
    cudaError_t st = host_rt_init_status();
    if (st != cudaSuccess) return host_rt_error(st);
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (!e) return host_rt_error(cudaErrorMemoryAllocation);
    e->magic = EVENT_MAGIC;
    e->flags = flags;
    e->refs = 1;
    pthread_mutex_lock(&g_lock);
    e->next_live = g_events;
    g_events = e;
    pthread_mutex_unlock(&g_lock);
    *event = e;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

struct event_mark {
    struct CUevent_st *event;
    uint64_t generation;
};

/* Runs on the worker when it reaches the recorded position. */
static void run_event_mark(void *arg)
{
    struct event_mark *m = arg;
    uint64_t now = host_now_ns();
    pthread_mutex_lock(&g_lock);
    /* An older record that a newer one superseded must not stamp. */
    if (m->generation == m->event->generation) {
        m->event->stamp_ns = now;
        m->event->stamp_generation = m->generation;
    }
    event_unref_locked(m->event);
    pthread_mutex_unlock(&g_lock);
    free(m);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    struct event_mark *m = malloc(sizeof *m);
    if (!m) return host_rt_error(cudaErrorMemoryAllocation);
    pthread_mutex_lock(&g_lock);
    struct CUevent_st *e = event_lookup_locked(event);
    struct CUstream_st *s = host_stream_lookup_locked(stream);
    cudaError_t st = cudaErrorInvalidResourceHandle;
    if (e && s) {
        m->event = e;
        m->generation = e->generation + 1;
        uint64_t seq = 0;
        st = host_stream_enqueue_locked(s, run_event_mark, m, NULL, 0, &seq);
        if (st == cudaSuccess) {
            e->generation++;
            e->refs++; /* held by the pending marker */
            host_stream_ref_locked(s);
            if (e->last.stream) host_stream_unref_locked(e->last.stream);
            e->last = (struct host_dep){s, seq};
        }
    }
    pthread_mutex_unlock(&g_lock);
    if (st != cudaSuccess) free(m);
    return host_rt_error(st);
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    pthread_mutex_lock(&g_lock);
    struct CUevent_st *e = event_lookup_locked(event);
    if (!e) {
        pthread_mutex_unlock(&g_lock);
        return host_rt_error(cudaErrorInvalidResourceHandle);
    }
    if (e->last.stream) wait_dep_locked(e->last.stream, e->last.seq);
    pthread_mutex_unlock(&g_lock);
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
    /* Done when the work before its latest record has run; an event never
     * recorded counts as done, as in CUDA. */
    pthread_mutex_lock(&g_lock);
    struct CUevent_st *e = event_lookup_locked(event);
    cudaError_t st = !e ? cudaErrorInvalidResourceHandle
                     : !e->last.stream || host_dep_done_locked(&e->last) ? cudaSuccess
                                                                         : cudaErrorNotReady;
    pthread_mutex_unlock(&g_lock);
    return host_rt_error(st);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    if (!ms) return host_rt_error(cudaErrorInvalidValue);
    pthread_mutex_lock(&g_lock);
    struct CUevent_st *a = event_lookup_locked(start);
    struct CUevent_st *b = event_lookup_locked(end);
    cudaError_t st = cudaSuccess;
    if (!a || !b || !a->last.stream || !b->last.stream || (a->flags & cudaEventDisableTiming) ||
        (b->flags & cudaEventDisableTiming))
        st = cudaErrorInvalidResourceHandle; /* CUDA's answer for all of these */
    else if (!host_dep_done_locked(&a->last) || !host_dep_done_locked(&b->last))
        st = cudaErrorNotReady;
    else
        *ms = (float)(((double)b->stamp_ns - (double)a->stamp_ns) / 1e6);
    pthread_mutex_unlock(&g_lock);
    return host_rt_error(st);
}

static void event_destroy_locked(struct CUevent_st *e)
{
    for (struct CUevent_st **pp = &g_events; *pp; pp = &(*pp)->next_live)
        if (*pp == e) {
            *pp = e->next_live;
            break;
        }
    e->destroyed = true;
    /* A pending marker keeps the memory alive until it has run. */
    event_unref_locked(e);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    pthread_mutex_lock(&g_lock);
    struct CUevent_st *e = event_lookup_locked(event);
    if (e) event_destroy_locked(e);
    pthread_mutex_unlock(&g_lock);
    return host_rt_error(e ? cudaSuccess : cudaErrorInvalidResourceHandle);
}
