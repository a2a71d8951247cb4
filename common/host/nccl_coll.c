/*
 * nccl_coll.c -- collectives of the host backend: argument checks done at
 * call time (returning NCCL's codes), and the MPI work done later on the
 * stream's worker thread.
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
    if (res == ncclSuccess) res = nccl_check_stream(fn, stream);
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

/* All-gather and reduce-scatter move count*nranks elements in one MPI call. */
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

static bool ranges_overlap(const void *a, size_t alen, const void *b, size_t blen)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + blen && y < x + alen;
}

static void exec_allreduce(const struct nccl_task *t)
{
    struct ncclComm *c = t->comm;
    size_t es = nccl_type_size(t->type);
    bool in_place = t->sendbuff == t->recvbuff;
    const char *src = t->sendbuff;
    char *dst = t->recvbuff;
    for (size_t off = 0; off < t->count; off += c->chunk_elems) {
        size_t n = t->count - off < c->chunk_elems ? t->count - off : c->chunk_elems;
        int rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : src + off * es, dst + off * es, (int)n,
                               nccl_mpi_type(t->type), nccl_mpi_op(t->op), c->data);
        if (nccl_mpi_failed(c, rc, "ncclAllReduce (MPI_Allreduce)")) return;
    }
    if (t->op == ncclAvg) nccl_divide(dst, t->count, t->type, c->nranks);
}

static void exec_reduce(const struct nccl_task *t)
{
    struct ncclComm *c = t->comm;
    size_t es = nccl_type_size(t->type);
    bool is_root = c->rank == t->root;
    bool in_place = is_root && t->sendbuff == t->recvbuff;
    const char *src = t->sendbuff;
    char *dst = t->recvbuff;
    for (size_t off = 0; off < t->count; off += c->chunk_elems) {
        size_t n = t->count - off < c->chunk_elems ? t->count - off : c->chunk_elems;
        int rc =
            MPI_Reduce(in_place ? MPI_IN_PLACE : src + off * es, is_root ? dst + off * es : NULL,
                       (int)n, nccl_mpi_type(t->type), nccl_mpi_op(t->op), t->root, c->data);
        if (nccl_mpi_failed(c, rc, "ncclReduce (MPI_Reduce)")) return;
    }
    if (is_root && t->op == ncclAvg) nccl_divide(dst, t->count, t->type, c->nranks);
}

static void exec_broadcast(const struct nccl_task *t)
{
    struct ncclComm *c = t->comm;
    size_t es = nccl_type_size(t->type);
    char *buf = t->recvbuff;
    /* MPI broadcasts in place, so the root first puts its data there. */
    if (c->rank == t->root && t->sendbuff != t->recvbuff) memmove(buf, t->sendbuff, t->count * es);
    for (size_t off = 0; off < t->count; off += c->chunk_elems) {
        size_t n = t->count - off < c->chunk_elems ? t->count - off : c->chunk_elems;
        int rc = MPI_Bcast(buf + off * es, (int)n, nccl_mpi_type(t->type), t->root, c->data);
        if (nccl_mpi_failed(c, rc, "ncclBroadcast (MPI_Bcast)")) return;
    }
}

static void exec_allgather(const struct nccl_task *t)
{
    struct ncclComm *c = t->comm;
    size_t bytes = t->count * nccl_type_size(t->type);
    char *dst = t->recvbuff;
    MPI_Datatype mt = nccl_mpi_type(t->type);
    int rc;
    if (t->sendbuff == dst + (size_t)c->rank * bytes) {
        /* NCCL's in-place layout is exactly MPI_IN_PLACE's. */
        rc = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, dst, (int)t->count, mt, c->data);
    } else if (ranges_overlap(t->sendbuff, bytes, dst, bytes * (size_t)c->nranks)) {
        /* Partly overlapping buffers: MPI forbids aliasing, so copy first. */
        void *tmp = malloc(bytes);
        if (!tmp) {
            nccl_mpi_failed(c, MPI_ERR_NO_MEM, "ncclAllGather (temporary buffer)");
            return;
        }
        memcpy(tmp, t->sendbuff, bytes);
        rc = MPI_Allgather(tmp, (int)t->count, mt, dst, (int)t->count, mt, c->data);
        free(tmp);
    } else {
        rc = MPI_Allgather(t->sendbuff, (int)t->count, mt, dst, (int)t->count, mt, c->data);
    }
    nccl_mpi_failed(c, rc, "ncclAllGather (MPI_Allgather)");
}

static void exec_reduce_scatter(const struct nccl_task *t)
{
    struct ncclComm *c = t->comm;
    size_t bytes = t->count * nccl_type_size(t->type);
    MPI_Datatype mt = nccl_mpi_type(t->type);
    MPI_Op mop = nccl_mpi_op(t->op);
    int rc;
    /* MPI_IN_PLACE would leave the result at the start of the buffer, while
     * NCCL's in-place result sits at this rank's block; any overlap goes
     * through a temporary instead. */
    if (ranges_overlap(t->sendbuff, bytes * (size_t)c->nranks, t->recvbuff, bytes)) {
        void *tmp = malloc(bytes);
        if (!tmp) {
            nccl_mpi_failed(c, MPI_ERR_NO_MEM, "ncclReduceScatter (temporary buffer)");
            return;
        }
        rc = MPI_Reduce_scatter_block(t->sendbuff, tmp, (int)t->count, mt, mop, c->data);
        if (rc == MPI_SUCCESS) memcpy(t->recvbuff, tmp, bytes);
        free(tmp);
    } else {
        rc = MPI_Reduce_scatter_block(t->sendbuff, t->recvbuff, (int)t->count, mt, mop, c->data);
    }
    if (nccl_mpi_failed(c, rc, "ncclReduceScatter (MPI_Reduce_scatter_block)")) return;
    if (t->op == ncclAvg) nccl_divide(t->recvbuff, t->count, t->type, c->nranks);
}

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

/* NCCL requires every rank of a communicator to call the same collectives
 * in the same order with the same count, type, operation and root. Real
 * NCCL then hangs or returns garbage; MPI would pair the wrong calls and
 * overrun buffers. So the ranks first agree on a signature of the call
 * (one small all-reduce of the values and their negations, giving max and
 * min together) and a disagreement ends the job with a message saying so. */
static void check_same_call_everywhere(const struct nccl_task *t)
{
    struct ncclComm *c = t->comm;
    if (c->nranks == 1) return;
    bool has_op = t->kind == NCCL_TASK_ALLREDUCE || t->kind == NCCL_TASK_REDUCE ||
                  t->kind == NCCL_TASK_REDUCESCATTER;
    bool has_root = t->kind == NCCL_TASK_REDUCE || t->kind == NCCL_TASK_BROADCAST;
    enum { N = 6 };
    long long sig[2 * N] = {c->coll_seq++,
                            t->kind,
                            (long long)t->count,
                            t->type,
                            has_op ? (long long)t->op : -1,
                            has_root ? t->root : -1};
    for (int i = 0; i < N; i++) sig[N + i] = -sig[i];
    long long agreed[2 * N];
    /* A rank that skipped this collective leaves the others waiting here:
     * nonblocking, so that they wait without spinning (the data moves
     * after, once every rank has arrived). */
    MPI_Request req;
    int rc = MPI_Iallreduce(sig, agreed, 2 * N, MPI_LONG_LONG, MPI_MAX, c->data, &req);
    if (rc == MPI_SUCCESS) rc = nccl_mpi_wait(&req, MPI_STATUS_IGNORE);
    if (nccl_mpi_failed(c, rc, "collective signature check (MPI_Iallreduce)")) return;
    for (int i = 0; i < N; i++) {
        if (agreed[i] == -agreed[N + i]) continue;
        fprintf(stderr,
                "NCCL host backend ERROR: rank %d: the ranks disagree on collective #%lld of a "
                "communicator: this rank called %s(count=%zu, type %d, op %lld, root %lld), and "
                "at least one other rank called a different collective or passed a different "
                "count, type, operation or root. Every rank must call the same collectives in "
                "the same order with the same arguments (a rank that skips one, or uses its own "
                "count, makes real NCCL hang or return garbage).\n",
                c->rank, sig[0], coll_name(t->kind), t->count, (int)t->type, sig[4], sig[5]);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

void nccl_coll_execute(const struct nccl_task *t)
{
    if (!nccl_task_is_p2p(t)) check_same_call_everywhere(t);
    switch (t->kind) {
    case NCCL_TASK_ALLREDUCE: exec_allreduce(t); break;
    case NCCL_TASK_REDUCE: exec_reduce(t); break;
    case NCCL_TASK_BROADCAST: exec_broadcast(t); break;
    case NCCL_TASK_ALLGATHER: exec_allgather(t); break;
    case NCCL_TASK_REDUCESCATTER: exec_reduce_scatter(t); break;
    case NCCL_TASK_SEND:
    case NCCL_TASK_RECV: break; /* handled by nccl_p2p.c */
    }
}
