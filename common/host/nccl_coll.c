/*
 * nccl_coll.c -- collectives of the host backend: argument checks done at
 * call time (returning NCCL's codes), and the data movement done later on
 * the stream's worker thread: through shared scratch areas when every rank
 * is on this host, else as direct exchanges over the collective channels.
 */
#include "nccl_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Call side                                                           */
/* ------------------------------------------------------------------ */

/* Checks shared by every collective; fills comm. op_needed is false for
 * operations without a reduction. */
static ncclResult_t check_common(const char *fn, ncclComm_t comm, cudaStream_t stream,
                                 ncclDataType_t type, bool op_needed, ncclRedOp_t op,
                                 struct ncclComm **c)
{
    ncclResult_t res = nccl_check_comm(fn, comm, c);
    if (res == ncclSuccess) res = nccl_check_stream(fn, stream, *c);
    if (res == ncclSuccess) res = nccl_check_type(fn, type);
    if (res == ncclSuccess && op_needed) res = nccl_check_op(fn, op);
    return res;
}

static ncclResult_t check_root(const char *fn, int root, const struct ncclComm *c)
{
    if (root < 0 || root >= c->nranks)
        return nccl_warn(ncclInvalidArgument, "%s: root %d is out of range [0, %d)", fn, root,
                         c->nranks);
    return ncclSuccess;
}

/* All-gather and reduce-scatter: count*nranks elements must stay below INT_MAX
 * (a host backend limit kept from its MPI days; NCCL has none). */
static ncclResult_t check_total(const char *fn, size_t count, const struct ncclComm *c)
{
    if (count > (size_t)INT_MAX / (size_t)c->nranks)
        return nccl_warn(ncclInvalidArgument,
                         "%s: host backend limit: count %zu x %d ranks exceeds INT_MAX "
                         "elements in one operation; split it into smaller calls",
                         fn, count, c->nranks);
    return ncclSuccess;
}

static ncclResult_t finish(const struct nccl_task *t, ncclResult_t res)
{
    if (res != ncclSuccess) return nccl_group_note_error(res);
    if (t->count == 0) return ncclSuccess; /* legal, and nothing to do */
    return nccl_group_note_error(nccl_submit(t));
}

static bool ranges_overlap(const void *a, size_t alen, const void *b, size_t blen)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + blen && y < x + alen;
}

/* NCCL defines one in-place layout per collective (sendbuff == recvbuff, or
 * the rank's slot of the larger buffer: `in_place`) and leaves any other
 * overlap of input and output undefined; it does not check. Here such an
 * overlap is refused, so that code relying on it fails on every machine
 * rather than on some GPUs. */
static ncclResult_t check_layout(const char *fn, const void *sendbuff, size_t send_bytes,
                                 const void *recvbuff, size_t recv_bytes, uintptr_t in_place,
                                 const char *layout)
{
    if (!send_bytes || !recv_bytes || (uintptr_t)sendbuff == in_place ||
        !ranges_overlap(sendbuff, send_bytes, recvbuff, recv_bytes))
        return ncclSuccess;
    return nccl_warn(ncclInvalidUsage,
                     "%s: sendbuff %p (%zu bytes) overlaps recvbuff %p (%zu bytes) but is not "
                     "the in-place layout (%s, %#lx here): NCCL leaves any other overlap of "
                     "input and output undefined",
                     fn, sendbuff, send_bytes, recvbuff, recv_bytes, layout,
                     (unsigned long)in_place);
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream)
{
    const char *fn = "ncclAllReduce";
    struct ncclComm *c = NULL;
    ncclResult_t res = check_common(fn, comm, stream, datatype, true, op, &c);
    size_t es = nccl_type_size(datatype);
    if (res == ncclSuccess) res = nccl_check_buffer(fn, "sendbuff", sendbuff, count, es);
    if (res == ncclSuccess) res = nccl_check_buffer(fn, "recvbuff", recvbuff, count, es);
    if (res == ncclSuccess)
        res = check_layout(fn, sendbuff, count * es, recvbuff, count * es, (uintptr_t)recvbuff,
                           "sendbuff == recvbuff");
    /* clang-format off */
    struct nccl_task t = {.kind = NCCL_TASK_ALLREDUCE, .sendbuff = sendbuff, .recvbuff = recvbuff,
                          .count = count, .type = datatype, .op = op, .comm = c, .stream = stream};
    /* clang-format on */
    return finish(&t, res);
}

ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
    const char *fn = "ncclReduce";
    struct ncclComm *c = NULL;
    ncclResult_t res = check_common(fn, comm, stream, datatype, true, op, &c);
    size_t es = nccl_type_size(datatype);
    if (res == ncclSuccess) res = check_root(fn, root, c);
    if (res == ncclSuccess) res = nccl_check_buffer(fn, "sendbuff", sendbuff, count, es);
    /* Only the root receives; elsewhere recvbuff may be NULL. */
    if (res == ncclSuccess && c->rank == root)
        res = nccl_check_buffer(fn, "recvbuff", recvbuff, count, es);
    /* clang-format off */
    struct nccl_task t = {.kind = NCCL_TASK_REDUCE, .sendbuff = sendbuff, .recvbuff = recvbuff,
                          .count = count, .type = datatype, .op = op, .root = root, .comm = c,
                          .stream = stream};
    /* clang-format on */
    return finish(&t, res);
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
{
    const char *fn = "ncclBroadcast";
    struct ncclComm *c = NULL;
    ncclResult_t res = check_common(fn, comm, stream, datatype, false, ncclSum, &c);
    size_t es = nccl_type_size(datatype);
    if (res == ncclSuccess) res = check_root(fn, root, c);
    /* Only the root sends; elsewhere sendbuff is ignored. */
    if (res == ncclSuccess && c->rank == root)
        res = nccl_check_buffer(fn, "sendbuff", sendbuff, count, es);
    if (res == ncclSuccess) res = nccl_check_buffer(fn, "recvbuff", recvbuff, count, es);
    /* clang-format off */
    struct nccl_task t = {.kind = NCCL_TASK_BROADCAST, .sendbuff = sendbuff, .recvbuff = recvbuff,
                          .count = count, .type = datatype, .root = root, .comm = c,
                          .stream = stream};
    /* clang-format on */
    return finish(&t, res);
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
    const char *fn = "ncclAllGather";
    struct ncclComm *c = NULL;
    ncclResult_t res = check_common(fn, comm, stream, datatype, false, ncclSum, &c);
    size_t es = nccl_type_size(datatype);
    if (res == ncclSuccess) res = check_total(fn, sendcount, c);
    if (res == ncclSuccess) res = nccl_check_buffer(fn, "sendbuff", sendbuff, sendcount, es);
    if (res == ncclSuccess)
        res = nccl_check_buffer(fn, "recvbuff", recvbuff, sendcount * (size_t)c->nranks, es);
    if (res == ncclSuccess)
        res =
            check_layout(fn, sendbuff, sendcount * es, recvbuff, sendcount * es * (size_t)c->nranks,
                         (uintptr_t)recvbuff + (size_t)c->rank * sendcount * es,
                         "sendbuff == recvbuff + rank * sendcount");
    /* clang-format off */
    struct nccl_task t = {.kind = NCCL_TASK_ALLGATHER, .sendbuff = sendbuff, .recvbuff = recvbuff,
                          .count = sendcount, .type = datatype, .comm = c, .stream = stream};
    /* clang-format on */
    return finish(&t, res);
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream)
{
    const char *fn = "ncclReduceScatter";
    struct ncclComm *c = NULL;
    ncclResult_t res = check_common(fn, comm, stream, datatype, true, op, &c);
    size_t es = nccl_type_size(datatype);
    if (res == ncclSuccess) res = check_total(fn, recvcount, c);
    if (res == ncclSuccess)
        res = nccl_check_buffer(fn, "sendbuff", sendbuff, recvcount * (size_t)c->nranks, es);
    if (res == ncclSuccess) res = nccl_check_buffer(fn, "recvbuff", recvbuff, recvcount, es);
    /* In place: recvbuff == sendbuff + rank * recvcount, i.e. sendbuff is
     * where the rank's slot says the larger buffer starts. */
    if (res == ncclSuccess)
        res = check_layout(fn, sendbuff, recvcount * es * (size_t)c->nranks, recvbuff,
                           recvcount * es, (uintptr_t)recvbuff - (size_t)c->rank * recvcount * es,
                           "recvbuff == sendbuff + rank * recvcount");
    /* clang-format off */
    struct nccl_task t = {.kind = NCCL_TASK_REDUCESCATTER, .sendbuff = sendbuff,
                          .recvbuff = recvbuff, .count = recvcount, .type = datatype, .op = op,
                          .comm = c, .stream = stream};
    /* clang-format on */
    return finish(&t, res);
}

/* ------------------------------------------------------------------ */
/* Worker side                                                         */
/* ------------------------------------------------------------------ */

static const char *coll_name(enum nccl_task_kind kind)
{
    switch (kind) {
    case NCCL_TASK_ALLREDUCE: return "ncclAllReduce";
    case NCCL_TASK_REDUCE: return "ncclReduce";
    case NCCL_TASK_BROADCAST: return "ncclBroadcast";
    case NCCL_TASK_ALLGATHER: return "ncclAllGather";
    case NCCL_TASK_REDUCESCATTER: return "ncclReduceScatter";
    case NCCL_TASK_SEND: return "ncclSend";
    case NCCL_TASK_RECV: return "ncclRecv";
    }
    return "?";
}

static void *xmalloc(size_t bytes, const char *what)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        nccl_fatal("out of host memory (%zu bytes for %s); free host memory or run fewer ranks "
                   "per machine",
                   bytes, what);
    return p;
}

/* Elements [lo, hi) of n that rank q of nranks handles. */
static size_t slice_lo(size_t n, int q, int nranks) { return n * (size_t)q / (size_t)nranks; }

enum { SIG_N = 6 };

/* NCCL requires every rank of a communicator to call the same collectives
 * in the same order with the same count, type, operation and root. Real
 * NCCL then hangs or returns garbage; here each collective starts with
 * every rank publishing a signature of its call, and a disagreement ends
 * the job with a message saying so. */
static void make_signature(const struct nccl_task *t, int64_t sig[SIG_N])
{
    bool has_op = t->kind == NCCL_TASK_ALLREDUCE || t->kind == NCCL_TASK_REDUCE ||
                  t->kind == NCCL_TASK_REDUCESCATTER;
    bool has_root = t->kind == NCCL_TASK_REDUCE || t->kind == NCCL_TASK_BROADCAST;
    sig[0] = t->comm->coll_seq++;
    sig[1] = t->kind;
    sig[2] = (int64_t)t->count;
    sig[3] = t->type;
    sig[4] = has_op ? (int64_t)t->op : -1;
    sig[5] = has_root ? t->root : -1;
}

static void compare_signature(const struct nccl_task *t, const int64_t mine[SIG_N],
                              const int64_t theirs[SIG_N])
{
    if (memcmp(mine, theirs, SIG_N * sizeof mine[0]) == 0) return;
    nccl_fatal("rank %d: the ranks disagree on collective #%lld of a communicator: this rank "
               "called %s(count=%zu, type %d, op %lld, root %lld), and at least one other rank "
               "called a different collective or passed a different count, type, operation or "
               "root. Every rank must call the same collectives in the same order with the same "
               "arguments (a rank that skips one, or uses its own count, makes real NCCL hang or "
               "return garbage).",
               t->comm->rank, (long long)mine[0], coll_name(t->kind), t->count, (int)t->type,
               (long long)mine[4], (long long)mine[5]);
}

/* ---- one host: through the ranks' shared scratch areas ---- */

/* A collective in progress on shared memory. Its signature is published
 * before the first barrier and checked right after it, so the check costs
 * no barrier of its own; the slot alternates with the sequence number, as
 * a fast rank may publish the next call's signature while a slow one still
 * reads this one. */
struct shm_call {
    const struct nccl_task *t;
    int64_t sig[SIG_N];
    bool checked;
};

/* False when the communicator is being aborted: the collective gives up. */
static bool shm_sync(struct shm_call *k)
{
    struct ncclComm *c = k->t->comm;
    if (!nccl_shm_barrier(c, coll_name(k->t->kind))) return false;
    if (k->checked) return true;
    k->checked = true;
    int slot = (int)(k->sig[0] & 1);
    for (int q = 0; q < c->nranks; q++)
        compare_signature(k->t, k->sig, nccl_seg_hdr(c, q)->sig[slot]);
    return true;
}

/* Elements per piece: what fits a scratch half (per_rank_blocks times),
 * never more than the communicator's chunk size. */
static size_t piece_elems(const struct ncclComm *c, size_t es, int per_rank_blocks)
{
    size_t n = NCCL_SCRATCH_BYTES / (es * (size_t)per_rank_blocks);
    return n < c->chunk_elems ? n : c->chunk_elems;
}

/* All-reduce (all) or reduce to t->root. Per piece, every rank copies its
 * input into its scratch; then with two ranks each reduces the whole piece
 * from both scratches straight into its output (one barrier), with more
 * each reduces its slice of all scratches in place and the receivers copy
 * the reduced slices out (two barriers, but every rank reads the piece
 * once instead of nranks times). */
static void shm_reduce(struct shm_call *k, bool all)
{
    const struct nccl_task *t = k->t;
    struct ncclComm *c = t->comm;
    int n = c->nranks, me = c->rank;
    size_t es = nccl_type_size(t->type), piece = piece_elems(c, es, 1);
    const char *src = t->sendbuff;
    char *dst = t->recvbuff;
    bool receives = all || me == t->root;
    const void **srcs = xmalloc((size_t)n * sizeof *srcs, "a reduction");
    for (size_t off = 0; off < t->count; off += piece) {
        size_t cnt = t->count - off < piece ? t->count - off : piece;
        uint64_t half = c->scratch_flip++;
        memcpy(nccl_scratch(c, me, half), src + off * es, cnt * es);
        if (!shm_sync(k)) break;
        if (n <= 2) {
            if (!receives) continue;
            for (int q = 0; q < n; q++) srcs[q] = nccl_scratch(c, q, half);
            nccl_reduce_n(dst + off * es, srcs, n, cnt, t->type, t->op);
            if (t->op == ncclAvg) nccl_divide(dst + off * es, cnt, t->type, n);
            continue;
        }
        size_t lo = slice_lo(cnt, me, n), hi = slice_lo(cnt, me + 1, n);
        if (hi > lo) {
            for (int q = 0; q < n; q++) srcs[q] = nccl_scratch(c, q, half) + lo * es;
            char *mine = nccl_scratch(c, me, half) + lo * es;
            nccl_reduce_n(mine, srcs, n, hi - lo, t->type, t->op);
            if (t->op == ncclAvg) nccl_divide(mine, hi - lo, t->type, n);
        }
        if (!shm_sync(k)) break;
        if (!receives) continue;
        for (int q = 0; q < n; q++) {
            size_t qlo = slice_lo(cnt, q, n), qhi = slice_lo(cnt, q + 1, n);
            memcpy(dst + (off + qlo) * es, nccl_scratch(c, q, half) + qlo * es, (qhi - qlo) * es);
        }
    }
    free(srcs);
}

static void shm_broadcast(struct shm_call *k)
{
    const struct nccl_task *t = k->t;
    struct ncclComm *c = t->comm;
    int me = c->rank;
    size_t es = nccl_type_size(t->type), piece = piece_elems(c, es, 1);
    const char *src = t->sendbuff;
    char *dst = t->recvbuff;
    for (size_t off = 0; off < t->count; off += piece) {
        size_t cnt = t->count - off < piece ? t->count - off : piece;
        uint64_t half = c->scratch_flip++;
        if (me == t->root) memcpy(nccl_scratch(c, me, half), src + off * es, cnt * es);
        if (!shm_sync(k)) return;
        if (me != t->root)
            memcpy(dst + off * es, nccl_scratch(c, t->root, half), cnt * es);
        else if (src != dst)
            memmove(dst + off * es, src + off * es, cnt * es);
    }
}

static void shm_allgather(struct shm_call *k, const char *src)
{
    const struct nccl_task *t = k->t;
    struct ncclComm *c = t->comm;
    int n = c->nranks, me = c->rank;
    size_t es = nccl_type_size(t->type), piece = piece_elems(c, es, 1);
    char *dst = t->recvbuff;
    for (size_t off = 0; off < t->count; off += piece) {
        size_t cnt = t->count - off < piece ? t->count - off : piece;
        uint64_t half = c->scratch_flip++;
        memcpy(nccl_scratch(c, me, half), src + off * es, cnt * es);
        if (!shm_sync(k)) return;
        for (int q = 0; q < n; q++)
            memcpy(dst + ((size_t)q * t->count + off) * es, nccl_scratch(c, q, half), cnt * es);
    }
}

static void shm_reduce_scatter(struct shm_call *k, const char *src)
{
    const struct nccl_task *t = k->t;
    struct ncclComm *c = t->comm;
    int n = c->nranks, me = c->rank;
    size_t es = nccl_type_size(t->type), piece = piece_elems(c, es, n);
    char *dst = t->recvbuff;
    const void **srcs = xmalloc((size_t)n * sizeof *srcs, "a reduction");
    for (size_t off = 0; off < t->count; off += piece) {
        size_t cnt = t->count - off < piece ? t->count - off : piece;
        uint64_t half = c->scratch_flip++;
        char *mine = nccl_scratch(c, me, half);
        for (int q = 0; q < n; q++)
            memcpy(mine + (size_t)q * cnt * es, src + ((size_t)q * t->count + off) * es, cnt * es);
        if (!shm_sync(k)) break;
        for (int q = 0; q < n; q++) srcs[q] = nccl_scratch(c, q, half) + (size_t)me * cnt * es;
        nccl_reduce_n(dst + off * es, srcs, n, cnt, t->type, t->op);
        if (t->op == ncclAvg) nccl_divide(dst + off * es, cnt, t->type, n);
    }
    free(srcs);
}

/* Every piece of every collective has a barrier between the ranks'
 * writes to a scratch half and anyone's reads of it; the halves alternate,
 * so a rank writes a half again only after passing the next piece's
 * barrier, which every rank reaches only once done reading it. */
static void shm_execute(const struct nccl_task *t, const char *src)
{
    struct ncclComm *c = t->comm;
    struct shm_call k = {.t = t, .checked = c->nranks == 1};
    make_signature(t, k.sig);
    memcpy(nccl_seg_hdr(c, c->rank)->sig[k.sig[0] & 1], k.sig, sizeof k.sig);
    switch (t->kind) {
    case NCCL_TASK_ALLREDUCE: shm_reduce(&k, true); break;
    case NCCL_TASK_REDUCE: shm_reduce(&k, false); break;
    case NCCL_TASK_BROADCAST: shm_broadcast(&k); break;
    case NCCL_TASK_ALLGATHER: shm_allgather(&k, src); break;
    case NCCL_TASK_REDUCESCATTER: shm_reduce_scatter(&k, src); break;
    default: break;
    }
}

/* ---- across hosts: direct exchanges over the collective channels ---- */

struct span {
    int peer;
    char *buf;
    size_t len, done;
};

/* True after waiting (up to 1 ms) for a socket of the unfinished spans,
 * when all of them go to other hosts; false when some peer shares memory. */
static bool wait_on_sockets(struct ncclComm *c, const struct span *sends, int ns,
                            const struct span *recvs, int nr)
{
    enum { MAX_WAIT = 64 };
    int peers[MAX_WAIT];
    bool sending[MAX_WAIT];
    int k = 0;
    for (int i = 0; i < ns + nr; i++) {
        const struct span *s = i < ns ? &sends[i] : &recvs[i - ns];
        if (s->done == s->len) continue;
        if (k == MAX_WAIT) return false;
        peers[k] = s->peer;
        sending[k++] = i < ns;
    }
    return k > 0 && nccl_chan_block(c, peers, sending, k, true, 1);
}

/* Moves every listed send and receive to completion, all at once; false
 * when the communicator is being aborted. A local peer found gone while
 * its part is unfinished ends the job (after one more try: it may have
 * finished its part and then left). */
static bool exchange(const struct nccl_task *t, struct span *sends, int ns, struct span *recvs,
                     int nr)
{
    struct ncclComm *c = t->comm;
    struct nccl_wait w;
    nccl_wait_start(&w);
    int suspect = -1;
    char why[160] = "";
    for (;;) {
        bool moved = false, left = false;
        for (int i = 0; i < ns; i++) {
            struct span *s = &sends[i];
            if (s->done == s->len) continue;
            size_t k = nccl_chan_push(c, s->peer, true, s->buf + s->done, s->len - s->done, false);
            s->done += k;
            moved |= k > 0;
            left |= s->done < s->len;
        }
        for (int i = 0; i < nr; i++) {
            struct span *s = &recvs[i];
            if (s->done == s->len) continue;
            size_t k = nccl_chan_pop(c, s->peer, true, s->buf + s->done, s->len - s->done);
            s->done += k;
            moved |= k > 0;
            left |= s->done < s->len;
        }
        if (!left) return true;
        if (moved) {
            nccl_wait_start(&w);
            suspect = -1;
            continue;
        }
        if (suspect >= 0) nccl_peer_gone_fatal(c, suspect, why, coll_name(t->kind));
        /* Waiting on other hosts only (a paced network, say): sleep in
         * poll until a socket is ready, rather than spinning. */
        if (wait_on_sockets(c, sends, ns, recvs, nr)) {
            if (atomic_load_explicit(&c->aborting, memory_order_acquire)) return false;
            continue;
        }
        if (!nccl_comm_pause(c, &w)) return false;
        if (!nccl_wait_check_due(&w)) continue;
        for (int i = 0; i < ns + nr && suspect < 0; i++) {
            struct span *s = i < ns ? &sends[i] : &recvs[i - ns];
            if (s->done < s->len && nccl_peer_gone(c, s->peer, why, sizeof why)) suspect = s->peer;
        }
    }
}

/* One send of the same buffer to every other rank (to_all), or one to
 * `to`; receives from every other rank into recv_at(q), or from `from`. */
struct plan {
    struct span *sends, *recvs;
    int ns, nr;
};

static void plan_init(struct plan *p, int nranks)
{
    p->sends = xmalloc((size_t)nranks * sizeof *p->sends, "a collective");
    p->recvs = xmalloc((size_t)nranks * sizeof *p->recvs, "a collective");
    p->ns = p->nr = 0;
}

static void plan_send(struct plan *p, int peer, const void *buf, size_t len)
{
    p->sends[p->ns++] = (struct span){peer, (char *)buf, len, 0};
}

static void plan_recv(struct plan *p, int peer, void *buf, size_t len)
{
    p->recvs[p->nr++] = (struct span){peer, buf, len, 0};
}

static bool plan_run(const struct nccl_task *t, struct plan *p)
{
    bool ok = exchange(t, p->sends, p->ns, p->recvs, p->nr);
    p->ns = p->nr = 0;
    return ok;
}

static void plan_free(struct plan *p)
{
    free(p->sends);
    free(p->recvs);
}

/* Reduce-scatter of the rows [lo_q, hi_q) of a count-element vector: rank
 * q ends with the reduced slice q in out (hi_q - lo_q elements). False when
 * aborted. */
static bool net_reduce_slices(const struct nccl_task *t, struct plan *p, const char *src,
                              size_t count, char *out)
{
    struct ncclComm *c = t->comm;
    int n = c->nranks, me = c->rank;
    size_t es = nccl_type_size(t->type);
    size_t lo = slice_lo(count, me, n), len = slice_lo(count, me + 1, n) - lo;
    char *tmp = xmalloc((size_t)n * len * es, "a reduction");
    const void **srcs = xmalloc((size_t)n * sizeof *srcs, "a reduction");
    for (int q = 0; q < n; q++) {
        size_t qlo = slice_lo(count, q, n), qlen = slice_lo(count, q + 1, n) - qlo;
        if (q == me)
            memcpy(tmp + (size_t)q * len * es, src + lo * es, len * es);
        else {
            plan_send(p, q, src + qlo * es, qlen * es);
            plan_recv(p, q, tmp + (size_t)q * len * es, len * es);
        }
        srcs[q] = tmp + (size_t)q * len * es;
    }
    bool ok = plan_run(t, p);
    if (ok) {
        nccl_reduce_n(out, srcs, n, len, t->type, t->op);
        if (t->op == ncclAvg) nccl_divide(out, len, t->type, n);
    }
    free(srcs);
    free(tmp);
    return ok;
}

static void net_execute(const struct nccl_task *t, const char *src)
{
    struct ncclComm *c = t->comm;
    int n = c->nranks, me = c->rank;
    size_t es = nccl_type_size(t->type), bytes = t->count * es;
    char *dst = t->recvbuff;
    struct plan p;
    plan_init(&p, n);
    int64_t sig[SIG_N], *theirs = xmalloc((size_t)n * sizeof sig, "a collective");
    make_signature(t, sig);
    for (int q = 0; q < n; q++)
        if (q != me) {
            plan_send(&p, q, sig, sizeof sig);
            plan_recv(&p, q, theirs + (size_t)q * SIG_N, sizeof sig);
        }
    bool ok = plan_run(t, &p);
    for (int q = 0; q < n && ok; q++)
        if (q != me) compare_signature(t, sig, theirs + (size_t)q * SIG_N);
    free(theirs);
    switch (ok ? t->kind : NCCL_TASK_SEND) { /* aborted: nothing more */
    case NCCL_TASK_ALLREDUCE:
    case NCCL_TASK_REDUCE: {
        size_t lo = slice_lo(t->count, me, n), len = slice_lo(t->count, me + 1, n) - lo;
        char *mine = xmalloc(len * es, "a reduction");
        if (!net_reduce_slices(t, &p, src, t->count, mine)) {
            free(mine);
            break;
        }
        bool all = t->kind == NCCL_TASK_ALLREDUCE;
        for (int q = 0; q < n; q++) {
            size_t qlo = slice_lo(t->count, q, n), qlen = slice_lo(t->count, q + 1, n) - qlo;
            if (q == me) continue;
            if (all || q == t->root) plan_send(&p, q, mine, len * es);
            if (all || me == t->root) plan_recv(&p, q, dst + qlo * es, qlen * es);
        }
        if (plan_run(t, &p) && (all || me == t->root)) memcpy(dst + lo * es, mine, len * es);
        free(mine);
        break;
    }
    case NCCL_TASK_BROADCAST:
        for (int q = 0; q < n; q++)
            if (q != me && me == t->root) plan_send(&p, q, src, bytes);
        if (me != t->root) plan_recv(&p, t->root, dst, bytes);
        if (plan_run(t, &p) && me == t->root && src != dst) memmove(dst, src, bytes);
        break;
    case NCCL_TASK_ALLGATHER:
        for (int q = 0; q < n; q++)
            if (q != me) {
                plan_send(&p, q, src, bytes);
                plan_recv(&p, q, dst + (size_t)q * bytes, bytes);
            }
        if (plan_run(t, &p) && src != dst + (size_t)me * bytes)
            memcpy(dst + (size_t)me * bytes, src, bytes);
        break;
    case NCCL_TASK_REDUCESCATTER: {
        /* Slices of the whole vector are exactly the ranks' blocks. */
        char *mine = xmalloc(bytes, "a reduction");
        if (net_reduce_slices(t, &p, src, t->count * (size_t)n, mine)) memcpy(dst, mine, bytes);
        free(mine);
        break;
    }
    default: break;
    }
    plan_free(&p);
}

void nccl_coll_execute(const struct nccl_task *t)
{
    struct ncclComm *c = t->comm;
    if (atomic_load_explicit(&c->aborting, memory_order_acquire)) return; /* ncclCommAbort */
    size_t es = nccl_type_size(t->type);
    const char *src = t->sendbuff;
    char *copy = NULL;
    /* All-gather and reduce-scatter read their input while writing their
     * output: NCCL's exact in-place layout is safe; any other overlap is
     * refused at the call (check_layout), and would go through a copy. */
    if (t->kind == NCCL_TASK_ALLGATHER) {
        size_t b = t->count * es;
        if (src != (char *)t->recvbuff + (size_t)c->rank * b &&
            ranges_overlap(src, b, t->recvbuff, b * (size_t)c->nranks))
            src = copy = memcpy(xmalloc(b, "an all-gather"), src, b);
    } else if (t->kind == NCCL_TASK_REDUCESCATTER) {
        size_t b = t->count * es, all = b * (size_t)c->nranks;
        if ((char *)t->recvbuff != src + (size_t)c->rank * b &&
            ranges_overlap(src, all, t->recvbuff, b))
            src = copy = memcpy(xmalloc(all, "a reduce-scatter"), src, all);
    }
    if (c->all_local)
        shm_execute(t, src);
    else
        net_execute(t, src);
    free(copy);
}
