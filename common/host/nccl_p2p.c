/*
 * nccl_p2p.c -- ncclSend/ncclRecv of the host backend.
 *
 * A message is a header (byte count, kind) and the payload, pushed through
 * the pair's channel (shared-memory FIFO or socket). Outside a group each
 * call is one operation of its stream that ends when the message is in and,
 * beyond NCCL_EAGER_BYTES, taken out by the receiver. So a ring in which
 * every rank sends before it receives deadlocks for large messages, as
 * unfused NCCL sends do. Inside a group all sends and receives of a stream
 * advance together, which is what makes the same ring work.
 */
#include "nccl_internal.h"
#include "watchdog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ncclResult_t check_p2p(const char *fn, const char *name, const void *buf, size_t count,
                              ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t stream,
                              struct ncclComm **c)
{
    ncclResult_t res = nccl_check_comm(fn, comm, c);
    if (res == ncclSuccess) res = nccl_check_stream(fn, stream, *c);
    if (res == ncclSuccess && (peer < 0 || peer >= (*c)->nranks))
        res = nccl_warn(ncclInvalidArgument, "%s: peer %d is out of range [0, %d)", fn, peer,
                        (*c)->nranks);
    if (res == ncclSuccess) res = nccl_check_type(fn, type);
    if (res == ncclSuccess) res = nccl_check_buffer(fn, name, buf, count, nccl_type_size(type));
    /* NCCL pairs a send to self with the receive from self only inside one
     * group and refuses either alone, which would wait forever. */
    if (res == ncclSuccess && count > 0 && peer == (*c)->rank && !nccl_in_group())
        res = nccl_warn(ncclInvalidUsage,
                        "%s: rank %d sends to or receives from itself outside a group; put the "
                        "matching ncclSend and ncclRecv between ncclGroupStart and ncclGroupEnd",
                        fn, peer);
    return res;
}

static ncclResult_t submit_p2p(enum nccl_task_kind kind, const void *sendbuff, void *recvbuff,
                               size_t count, ncclDataType_t type, int peer, struct ncclComm *c,
                               cudaStream_t stream)
{
    if (count == 0) return ncclSuccess;
    struct nccl_task t = {.kind = kind,
                          .sendbuff = sendbuff,
                          .recvbuff = recvbuff,
                          .count = count,
                          .type = type,
                          .root = peer,
                          .comm = c,
                          .stream = stream};
    return nccl_group_note_error(nccl_submit(&t));
}

ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream)
{
    struct ncclComm *c = NULL;
    ncclResult_t res =
        check_p2p("ncclSend", "sendbuff", sendbuff, count, datatype, peer, comm, stream, &c);
    if (res != ncclSuccess) return nccl_group_note_error(res);
    return submit_p2p(NCCL_TASK_SEND, sendbuff, NULL, count, datatype, peer, c, stream);
}

ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream)
{
    struct ncclComm *c = NULL;
    ncclResult_t res =
        check_p2p("ncclRecv", "recvbuff", recvbuff, count, datatype, peer, comm, stream, &c);
    if (res != ncclSuccess) return nccl_group_note_error(res);
    return submit_p2p(NCCL_TASK_RECV, NULL, recvbuff, count, datatype, peer, c, stream);
}

/* ------------------------------------------------------------------ */
/* Worker side                                                         */
/* ------------------------------------------------------------------ */

#define MSG_MAGIC 0x4e43434dU /* "NCCM" */

/* One message in flight: the header first, then the payload. */
struct xfer {
    const struct nccl_task *task;
    struct nccl_msg_hdr hdr;
    size_t hdr_done, done, len;
    bool owned, finished;
};

static pthread_mutex_t *busy_lock(const struct nccl_task *t)
{
    struct nccl_peer *p = &t->comm->peers[t->root];
    return t->kind == NCCL_TASK_SEND ? &p->send_busy : &p->recv_busy;
}

static void xfer_init(struct xfer *x, const struct nccl_task *t)
{
    memset(x, 0, sizeof *x);
    x->task = t;
    x->len = t->count * nccl_type_size(t->type);
    x->hdr = (struct nccl_msg_hdr){.bytes = x->len, .magic = MSG_MAGIC, .kind = t->kind};
}

/* Moves what can move now; true if anything did. */
static bool xfer_progress(struct xfer *x)
{
    const struct nccl_task *t = x->task;
    struct ncclComm *c = t->comm;
    if (x->finished) return false;
    /* One worker at a time per direction and peer, so that two streams'
     * messages never interleave. */
    if (!x->owned) {
        if (pthread_mutex_trylock(busy_lock(t)) != 0) return false;
        x->owned = true;
    }
    bool sending = t->kind == NCCL_TASK_SEND;
    size_t moved = 0;
    if (x->hdr_done < sizeof x->hdr) {
        char *h = (char *)&x->hdr + x->hdr_done;
        size_t want = sizeof x->hdr - x->hdr_done;
        size_t n = sending ? nccl_chan_push(c, t->root, false, h, want, x->len > 0)
                           : nccl_chan_pop(c, t->root, false, h, want);
        x->hdr_done += n;
        moved += n;
        if (x->hdr_done < sizeof x->hdr) return moved > 0;
        if (!sending && (x->hdr.magic != MSG_MAGIC || x->hdr.kind != NCCL_TASK_SEND))
            nccl_fatal("rank %d: the data from rank %d is not a send/recv message: the two "
                       "ranks disagree on the order of their operations",
                       c->rank, t->root);
        if (!sending && x->hdr.bytes != x->len)
            nccl_fatal("rank %d: ncclRecv from peer %d expected %zu elements but the matching "
                       "ncclSend sent %llu bytes (%zu-byte elements); both sides must pass the "
                       "same count and datatype",
                       c->rank, t->root, t->count, (unsigned long long)x->hdr.bytes,
                       nccl_type_size(t->type));
    }
    if (x->done < x->len) {
        size_t n = sending ? nccl_chan_push(c, t->root, false, (const char *)t->sendbuff + x->done,
                                            x->len - x->done, false)
                           : nccl_chan_pop(c, t->root, false, (char *)t->recvbuff + x->done,
                                           x->len - x->done);
        x->done += n;
        moved += n;
    }
    if (x->done == x->len) {
        x->finished = true;
        pthread_mutex_unlock(busy_lock(t));
        x->owned = false;
    }
    return moved > 0 || x->finished;
}

/* Lets go of a transfer that an abort interrupts. */
static void xfer_drop(struct xfer *x)
{
    if (x->owned) pthread_mutex_unlock(busy_lock(x->task));
    x->owned = false;
    x->finished = true;
}

__attribute__((noreturn)) static void p2p_gone(const struct nccl_task *t, const char *why)
{
    char what[64];
    if (t->kind == NCCL_TASK_SEND)
        snprintf(what, sizeof what, "ncclSend to rank %d", t->root);
    else
        snprintf(what, sizeof what, "ncclRecv from rank %d", t->root);
    nccl_peer_gone_fatal(t->comm, t->root, why, what);
}

void nccl_p2p_execute_blocking(const struct nccl_task *t)
{
    struct ncclComm *c = t->comm;
    if (atomic_load_explicit(&c->aborting, memory_order_acquire)) return; /* ncclCommAbort */
    struct xfer x;
    xfer_init(&x, t);
    struct nccl_wait w;
    nccl_wait_start(&w);
    char why[160];
    bool suspect = false;
    while (!x.finished) {
        if (xfer_progress(&x)) {
            ncclab_watchdog_progress(); /* data moved (watchdog.h) */
            suspect = false;
            continue;
        }
        if (suspect) p2p_gone(t, why);
        /* A peer on another host: sleep in poll until its socket is ready. */
        const bool sending = t->kind == NCCL_TASK_SEND;
        if (x.owned && nccl_chan_block(c, &t->root, &sending, 1, false, 1) &&
            !atomic_load_explicit(&c->aborting, memory_order_acquire))
            continue;
        if (!nccl_comm_pause(c, &w)) {
            xfer_drop(&x);
            return;
        }
        suspect = nccl_wait_check_due(&w) && nccl_peer_gone(c, t->root, why, sizeof why);
    }
    /* NCCL's send waits for its receiver; only a small message may sit in
     * the transport unreceived. So a ring where every rank sends first
     * deadlocks for large messages, as with NCCL. */
    if (t->kind == NCCL_TASK_SEND) {
        uint64_t left = nccl_chan_unconsumed(c, t->root);
        while (left > NCCL_EAGER_BYTES) {
            if (!nccl_comm_pause(c, &w)) return;
            uint64_t now_left = nccl_chan_unconsumed(c, t->root);
            if (now_left < left) ncclab_watchdog_progress(); /* the receiver took some */
            left = now_left;
            if (nccl_wait_check_due(&w) && nccl_peer_gone(c, t->root, why, sizeof why) &&
                nccl_chan_unconsumed(c, t->root) > NCCL_EAGER_BYTES)
                p2p_gone(t, why);
        }
    }
}

void nccl_p2p_execute_fused(struct nccl_task *const *tasks, size_t n)
{
    struct xfer *xs = calloc(n, sizeof *xs);
    if (!xs)
        nccl_fatal("out of host memory running a group of %zu send/recv operations; free host "
                   "memory or run fewer ranks per machine",
                   n);
    for (size_t i = 0; i < n; i++) xfer_init(&xs[i], tasks[i]);
    /* All sends and receives advance together: that is what lets a ring in
     * which everyone sends first complete. */
    size_t left = n;
    struct nccl_wait w;
    nccl_wait_start(&w);
    char why[160];
    const struct nccl_task *suspect = NULL;
    while (left > 0) {
        bool moved = false;
        for (size_t i = 0; i < n; i++) {
            if (xs[i].finished) continue;
            if (xfer_progress(&xs[i])) moved = true;
            if (xs[i].finished) left--;
        }
        if (left == 0) break;
        if (moved) {
            nccl_wait_start(&w);
            suspect = NULL;
            continue;
        }
        if (suspect) p2p_gone(suspect, why);
        /* Every task of a batch belongs to one stream; an abort of any of
         * their communicators stops the batch (its operations are that
         * communicator's as much as the others'). */
        bool aborted = false;
        for (size_t i = 0; i < n && !aborted; i++)
            aborted = !xs[i].finished && atomic_load(&tasks[i]->comm->aborting);
        if (aborted) {
            for (size_t i = 0; i < n; i++)
                if (!xs[i].finished) xfer_drop(&xs[i]);
            break;
        }
        nccl_wait_pause(&w);
        if (!nccl_wait_check_due(&w)) continue;
        for (size_t i = 0; i < n && !suspect; i++)
            if (!xs[i].finished && nccl_peer_gone(tasks[i]->comm, tasks[i]->root, why, sizeof why))
                suspect = tasks[i];
    }
    free(xs);
}
