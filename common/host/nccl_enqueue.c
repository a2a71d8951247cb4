/*
 * nccl_enqueue.c -- how NCCL calls become stream operations, and groups.
 *
 * A validated call becomes a task. Outside a group the task is enqueued on
 * its stream at once as its own operation (so a lone ncclSend blocks its
 * stream until the receiver takes it, as NCCL's send does). Inside
 * ncclGroupStart/End the tasks are kept per thread and, at the outermost
 * ncclGroupEnd, each stream gets one fused operation: its collectives in
 * call order, then all its receives and sends posted together and waited
 * for together -- which is what lets a ring of sends and receives complete.
 *
 * Operations of one communicator run in the order they were enqueued even
 * across streams (NCCL serialises a communicator's work the same way): each
 * operation waits for the communicator's previous one ("tails").
 */
#include "nccl_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One stream operation: a list of tasks that all belong to one stream. */
struct nccl_batch {
    struct nccl_task *tasks;
    bool fused; /* from a group: p2p tasks are posted together */
};

/* Group state is per thread, as in NCCL. */
static _Thread_local int tl_group_depth;

bool nccl_in_group(void) { return tl_group_depth > 0; }
static _Thread_local struct nccl_task *tl_group_head, *tl_group_tail;
static _Thread_local ncclResult_t tl_group_error;
/* Communicator creations and splits called inside the group, in call order. */
static _Thread_local struct nccl_deferred *tl_deferred_head, *tl_deferred_tail;

ncclResult_t nccl_check_stream(const char *fn, cudaStream_t stream, const struct ncclComm *c)
{
    host_lock();
    struct CUstream_st *s = host_stream_for_device_locked(stream, c->device);
    int dev = s ? host_stream_device(s) : -1;
    host_unlock();
    if (!s)
        return nccl_warn(ncclInvalidArgument,
                         "%s: stream %p is not a valid stream (destroyed, or never created "
                         "with cudaStreamCreate)",
                         fn, (void *)stream);
    /* NCCL launches on the communicator's device; a stream of another
     * device makes the CUDA runtime refuse the launch. */
    if (dev != c->device)
        return nccl_warn(ncclUnhandledCudaError,
                         "%s: stream %p belongs to device %d but the communicator (rank %d) "
                         "drives device %d; create the stream after cudaSetDevice(%d) (CUDA "
                         "would report an invalid resource handle)",
                         fn, (void *)stream, dev, c->rank, c->device, c->device);
    return ncclSuccess;
}

ncclResult_t nccl_group_note_error(ncclResult_t err)
{
    if (err != ncclSuccess && tl_group_depth > 0 && tl_group_error == ncclSuccess)
        tl_group_error = err;
    return err;
}

static void free_task_list(struct nccl_task *t)
{
    while (t) {
        struct nccl_task *next = t->next;
        free(t);
        t = next;
    }
}

/* ------------------------------------------------------------------ */
/* Worker side                                                         */
/* ------------------------------------------------------------------ */

static void run_batch(void *arg)
{
    struct nccl_batch *b = arg;
    size_t np2p = 0;
    for (struct nccl_task *t = b->tasks; t; t = t->next) {
        if (nccl_task_is_p2p(t)) {
            np2p++;
            continue;
        }
        nccl_coll_execute(t);
    }
    if (np2p > 0 && b->fused) {
        /* Running a group's sends one by one instead would deadlock where
         * NCCL does not (every rank sending first): stop with the reason. */
        struct nccl_task **p2p = malloc(np2p * sizeof(struct nccl_task *));
        if (!p2p)
            nccl_fatal("out of memory fusing a group of %zu send/recv operations; run fewer "
                       "ranks per machine or free host memory",
                       np2p);
        size_t n = 0;
        for (struct nccl_task *t = b->tasks; t; t = t->next)
            if (nccl_task_is_p2p(t)) p2p[n++] = t;
        if (n > 0) nccl_p2p_execute_fused(p2p, n);
        free(p2p);
    } else if (np2p > 0) {
        for (struct nccl_task *t = b->tasks; t; t = t->next)
            if (nccl_task_is_p2p(t)) nccl_p2p_execute_blocking(t);
    }

    /* Account for the finished tasks. */
    host_lock();
    for (struct nccl_task *t = b->tasks; t; t = t->next) nccl_comm_op_done_locked(t->comm);
    host_unlock();
    free_task_list(b->tasks);
    free(b);
}

/* ------------------------------------------------------------------ */
/* Enqueueing                                                          */
/* ------------------------------------------------------------------ */

/* Replaces comm's tails with the given operations. Lock held. */
static ncclResult_t set_tails_locked(struct ncclComm *c, const struct host_dep *deps, size_t n)
{
    struct host_dep *copy = malloc(n * sizeof *copy);
    if (!copy) return ncclSystemError;
    memcpy(copy, deps, n * sizeof *copy);
    for (size_t i = 0; i < n; i++) host_stream_ref_locked(copy[i].stream);
    for (size_t i = 0; i < c->ntails; i++) host_stream_unref_locked(c->tails[i].stream);
    free(c->tails);
    c->tails = copy;
    c->ntails = n;
    return ncclSuccess;
}

/* A group of tasks sharing one stream, while ncclGroupEnd sorts them. */
struct bucket {
    struct CUstream_st *stream;
    struct nccl_task *head, *tail;
    uint64_t seq;
};

static struct bucket *bucket_for(struct bucket *bk, size_t *nb, struct CUstream_st *s)
{
    for (size_t i = 0; i < *nb; i++)
        if (bk[i].stream == s) return &bk[i];
    bk[*nb] = (struct bucket){.stream = s};
    return &bk[(*nb)++];
}

static bool bucket_has_comm(const struct bucket *b, const struct ncclComm *c)
{
    for (const struct nccl_task *t = b->head; t; t = t->next)
        if (t->comm == c) return true;
    return false;
}

/* Enqueues a list of tasks (takes ownership): one operation per stream.
 * fused says whether p2p tasks are posted together (group semantics). */
static ncclResult_t launch_tasks(struct nccl_task *tasks, bool fused)
{
    size_t ntasks = 0;
    for (struct nccl_task *t = tasks; t; t = t->next) ntasks++;
    if (ntasks == 0) return ncclSuccess;
    struct bucket *bk = calloc(ntasks, sizeof *bk);
    struct host_dep *deps = NULL;
    if (!bk) {
        free_task_list(tasks);
        return nccl_warn(ncclSystemError, "out of host memory launching NCCL operations");
    }
    size_t nb = 0;
    ncclResult_t res = ncclSuccess;

    host_lock();
    /* Sort tasks into per-stream buckets, keeping call order. */
    for (struct nccl_task *t = tasks, *next; t; t = next) {
        next = t->next;
        t->next = NULL;
        struct CUstream_st *s = nccl_comm_lookup_locked(t->comm)
                                    ? host_stream_for_device_locked(t->stream, t->comm->device)
                                    : NULL;
        if (!s) {
            if (res == ncclSuccess) res = ncclInvalidArgument;
            free(t);
            continue;
        }
        struct bucket *b = bucket_for(bk, &nb, s);
        if (b->tail)
            b->tail->next = t;
        else
            b->head = t;
        b->tail = t;
    }
    if (res != ncclSuccess) goto fail_locked;

    /* A communicator's collectives must not run on two workers at once:
     * the ranks would meet them in an unpredictable order. */
    for (size_t i = 0; i < nb && res == ncclSuccess; i++)
        for (struct nccl_task *t = bk[i].head; t && res == ncclSuccess; t = t->next) {
            if (nccl_task_is_p2p(t)) continue;
            for (size_t j = 0; j < nb; j++)
                if (j != i && bucket_has_comm(&bk[j], t->comm)) {
                    res = ncclInvalidUsage;
                    break;
                }
        }
    if (res != ncclSuccess) goto fail_locked;

    /* Each bucket waits for the previous operations of its communicators. */
    size_t maxdeps = 0;
    for (size_t i = 0; i < nb; i++)
        for (struct nccl_task *t = bk[i].head; t; t = t->next) maxdeps += t->comm->ntails;
    /* Room for the largest dependency list and for the new tails. */
    deps = malloc((maxdeps + nb) * sizeof *deps);
    if (!deps) {
        res = ncclSystemError;
        goto fail_locked;
    }
    struct nccl_batch **batches = calloc(nb ? nb : 1, sizeof(struct nccl_batch *));
    if (!batches) {
        res = ncclSystemError;
        goto fail_locked;
    }
    for (size_t i = 0; i < nb; i++) {
        batches[i] = calloc(1, sizeof **batches);
        if (!batches[i]) res = ncclSystemError;
    }
    if (res != ncclSuccess) {
        for (size_t i = 0; i < nb; i++) free(batches[i]);
        free(batches);
        goto fail_locked;
    }
    for (size_t i = 0; i < nb; i++) {
        size_t nd = 0;
        for (struct nccl_task *t = bk[i].head; t; t = t->next)
            for (size_t k = 0; k < t->comm->ntails; k++) deps[nd++] = t->comm->tails[k];
        batches[i]->tasks = bk[i].head;
        batches[i]->fused = fused;
        for (struct nccl_task *t = bk[i].head; t; t = t->next) t->comm->pending++;
        if (host_stream_enqueue_locked(bk[i].stream, run_batch, batches[i], deps, nd, &bk[i].seq) !=
            cudaSuccess) {
            /* Nothing sensible to roll back to; report and drop this bucket. */
            for (struct nccl_task *t = bk[i].head; t; t = t->next) t->comm->pending--;
            free_task_list(bk[i].head);
            free(batches[i]);
            bk[i].head = NULL;
            bk[i].stream = NULL;
            res = ncclSystemError;
        }
    }
    free(batches);

    /* The communicators' new tails are the operations just enqueued. */
    for (size_t i = 0; i < nb; i++) {
        if (!bk[i].stream) continue;
        for (struct nccl_task *t = bk[i].head; t; t = t->next) {
            struct ncclComm *c = t->comm;
            size_t nd = 0;
            for (size_t j = 0; j < nb; j++)
                if (bk[j].stream && bucket_has_comm(&bk[j], c))
                    deps[nd++] = (struct host_dep){bk[j].stream, bk[j].seq};
            if (set_tails_locked(c, deps, nd) != ncclSuccess) res = ncclSystemError;
        }
    }
    host_unlock();
    free(deps);
    free(bk);
    if (res != ncclSuccess) return nccl_warn(res, "out of host memory launching NCCL operations");
    return ncclSuccess;

fail_locked:
    host_unlock();
    for (size_t i = 0; i < nb; i++) free_task_list(bk[i].head);
    free(bk);
    free(deps);
    if (res == ncclInvalidArgument)
        return nccl_warn(res, "ncclGroupEnd: a stream or communicator used in the group was "
                              "destroyed before ncclGroupEnd");
    if (res == ncclInvalidUsage)
        return nccl_warn(res, "ncclGroupEnd: the group issues collectives on one communicator "
                              "from several streams; the host backend needs one stream per "
                              "communicator for collectives within a group");
    return nccl_warn(res, "out of host memory launching NCCL operations");
}

ncclResult_t nccl_submit(const struct nccl_task *task)
{
    struct nccl_task *t = malloc(sizeof *t);
    if (!t)
        return nccl_group_note_error(
            nccl_warn(ncclSystemError, "out of host memory queueing an NCCL operation"));
    *t = *task;
    t->next = NULL;
    if (tl_group_depth > 0) {
        if (tl_group_tail)
            tl_group_tail->next = t;
        else
            tl_group_head = t;
        tl_group_tail = t;
        return ncclSuccess;
    }
    return launch_tasks(t, false);
}

ncclResult_t ncclGroupStart(void)
{
    tl_group_depth++;
    return ncclSuccess;
}

/* ------------------------------------------------------------------ */
/* Host-side calls deferred to the end of a group                      */
/* ------------------------------------------------------------------ */

struct nccl_deferred {
    nccl_deferred_fn run;
    void *arg;
    int device; /* the calling thread's current device at the call */
    ncclResult_t res;
    struct nccl_deferred *next;
};

ncclResult_t nccl_group_defer(nccl_deferred_fn run, void *arg)
{
    struct nccl_deferred *d = calloc(1, sizeof *d);
    if (!d) {
        free(arg);
        return nccl_group_note_error(
            nccl_warn(ncclSystemError, "out of host memory queueing a call inside a group"));
    }
    *d = (struct nccl_deferred){.run = run, .arg = arg, .device = host_rt_current_device()};
    if (tl_deferred_tail)
        tl_deferred_tail->next = d;
    else
        tl_deferred_head = d;
    tl_deferred_tail = d;
    return ncclSuccess;
}

static void *deferred_thread(void *p)
{
    struct nccl_deferred *d = p;
    if (cudaSetDevice(d->device) != cudaSuccess)
        d->res =
            nccl_warn(ncclUnhandledCudaError, "ncclGroupEnd: device %d is not usable", d->device);
    else
        d->res = d->run(d->arg);
    return NULL;
}

/* Runs the group's deferred calls all at once, one thread each (they are
 * the several ranks of one rendezvous, which would wait for each other if
 * run in turn), and frees them. Returns the first error, in call order. */
static ncclResult_t run_deferred(struct nccl_deferred *list, bool skip)
{
    size_t n = 0;
    for (struct nccl_deferred *d = list; d; d = d->next) n++;
    ncclResult_t res = ncclSuccess;
    if (skip || n == 0) {
        /* nothing to run */
    } else if (n == 1) {
        int saved = host_rt_current_device();
        deferred_thread(list);
        (void)cudaSetDevice(saved);
        res = list->res;
    } else {
        pthread_t *tids = calloc(n, sizeof *tids);
        bool *started = calloc(n, sizeof *started);
        if (!tids || !started) {
            res = nccl_warn(ncclSystemError, "ncclGroupEnd: out of host memory");
        } else {
            size_t i = 0;
            for (struct nccl_deferred *d = list; d; d = d->next, i++) {
                started[i] = pthread_create(&tids[i], NULL, deferred_thread, d) == 0;
                if (!started[i])
                    d->res = nccl_warn(ncclSystemError, "ncclGroupEnd: cannot start a thread "
                                                        "for a call of the group");
            }
            for (i = 0; i < n; i++)
                if (started[i]) pthread_join(tids[i], NULL);
            for (struct nccl_deferred *d = list; d && res == ncclSuccess; d = d->next) res = d->res;
        }
        free(tids);
        free(started);
    }
    while (list) {
        struct nccl_deferred *next = list->next;
        free(list->arg);
        free(list);
        list = next;
    }
    return res;
}

ncclResult_t ncclGroupEnd(void)
{
    if (tl_group_depth == 0)
        return nccl_warn(ncclInvalidUsage,
                         "ncclGroupEnd: called without a matching ncclGroupStart");
    if (--tl_group_depth > 0) return ncclSuccess; /* only the outermost end launches */
    struct nccl_task *tasks = tl_group_head;
    struct nccl_deferred *deferred = tl_deferred_head;
    ncclResult_t err = tl_group_error;
    tl_group_head = tl_group_tail = NULL;
    tl_deferred_head = tl_deferred_tail = NULL;
    tl_group_error = ncclSuccess;
    /* A call inside the group failed: run and launch nothing of it. */
    ncclResult_t res = run_deferred(deferred, err != ncclSuccess);
    if (err != ncclSuccess) {
        free_task_list(tasks);
        return err;
    }
    /* Communicators first, as NCCL does; then the operations. */
    if (res != ncclSuccess) {
        free_task_list(tasks);
        return res;
    }
    return launch_tasks(tasks, true);
}
