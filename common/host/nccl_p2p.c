/*
 * nccl_p2p.c -- ncclSend/ncclRecv of the host backend.
 *
 * Outside a group each call is one blocking MPI call on the stream. Open
 * MPI's MPI_Send finishes early only for small (eager) messages; a large one
 * waits for the matching receive. So a ring in which every rank sends before
 * it receives deadlocks for large messages, exactly as unfused NCCL sends
 * do. Inside a group all receives and sends of a stream are posted at once
 * and completed together, which is what makes the same ring work.
 */
#include "nccl_internal.h"

#include <stdio.h>
#include <stdlib.h>

static ncclResult_t check_p2p(const char *fn, const char *name, const void *buf, size_t count,
                              ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t stream,
                              struct ncclComm **c)
{
    ncclResult_t res = nccl_check_comm(fn, comm, c);
    if (res == ncclSuccess) res = nccl_check_stream(fn, stream);
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

static size_t chunk_count(const struct nccl_task *t)
{
    size_t ch = t->comm->chunk_elems;
    return (t->count + ch - 1) / ch;
}

/* Checks that a receive got as many elements as it asked for: NCCL
 * requires the two sides to agree on the count. */
static void check_received(const struct nccl_task *t, const MPI_Status *st, size_t expected)
{
    int got = 0;
    if (MPI_Get_count(st, nccl_mpi_type(t->type), &got) != MPI_SUCCESS) return;
    if ((size_t)got != expected) {
        nccl_warn(ncclInvalidUsage,
                  "rank %d: ncclRecv from peer %d expected %zu elements but the matching "
                  "ncclSend sent %d; both sides must pass the same count",
                  t->comm->rank, t->root, expected, got);
    }
}

void nccl_p2p_execute_blocking(const struct nccl_task *t)
{
    struct ncclComm *c = t->comm;
    size_t es = nccl_type_size(t->type);
    MPI_Datatype mt = nccl_mpi_type(t->type);
    for (size_t off = 0; off < t->count; off += c->chunk_elems) {
        size_t n = t->count - off < c->chunk_elems ? t->count - off : c->chunk_elems;
        /* Nonblocking plus our wait, not MPI_Send/MPI_Recv: an unmatched
         * send (the unfused ring's deadlock) then waits without spinning. */
        MPI_Request req;
        MPI_Status st;
        int rc;
        if (t->kind == NCCL_TASK_SEND) {
            rc = MPI_Isend((const char *)t->sendbuff + off * es, (int)n, mt, t->root,
                           NCCL_HOST_P2P_TAG, c->data, &req);
            if (rc == MPI_SUCCESS) rc = nccl_mpi_wait(&req, &st);
            if (nccl_mpi_failed(c, rc, "ncclSend (MPI_Isend)")) return;
        } else {
            rc = MPI_Irecv((char *)t->recvbuff + off * es, (int)n, mt, t->root, NCCL_HOST_P2P_TAG,
                           c->data, &req);
            if (rc == MPI_SUCCESS) rc = nccl_mpi_wait(&req, &st);
            if (nccl_mpi_failed(c, rc, "ncclRecv (MPI_Irecv)")) return;
            check_received(t, &st, n);
        }
    }
}

void nccl_p2p_execute_fused(struct nccl_task *const *tasks, size_t n)
{
    size_t nreq = 0;
    for (size_t i = 0; i < n; i++) nreq += chunk_count(tasks[i]);
    size_t slots = nreq ? nreq : 1;
    MPI_Request *reqs = malloc(slots * sizeof(MPI_Request));
    MPI_Status *stats = malloc(slots * sizeof *stats);
    const struct nccl_task **owner = malloc(slots * sizeof(const struct nccl_task *));
    size_t *expect = malloc(slots * sizeof *expect);
    if (!reqs || !stats || !owner || !expect) {
        free(reqs);
        free(stats);
        free(owner);
        free(expect);
        nccl_mpi_failed(tasks[0]->comm, MPI_ERR_NO_MEM, "ncclGroupEnd (request arrays)");
        return;
    }
    size_t r = 0;
    bool failed = false;
    /* Receives first, so that every send already has a landing place. */
    for (int pass = 0; pass < 2 && !failed; pass++) {
        enum nccl_task_kind kind = pass == 0 ? NCCL_TASK_RECV : NCCL_TASK_SEND;
        for (size_t i = 0; i < n && !failed; i++) {
            const struct nccl_task *t = tasks[i];
            if (t->kind != kind) continue;
            struct ncclComm *c = t->comm;
            size_t es = nccl_type_size(t->type);
            MPI_Datatype mt = nccl_mpi_type(t->type);
            for (size_t off = 0; off < t->count && !failed; off += c->chunk_elems) {
                size_t cnt = t->count - off < c->chunk_elems ? t->count - off : c->chunk_elems;
                int rc;
                if (kind == NCCL_TASK_RECV)
                    rc = MPI_Irecv((char *)t->recvbuff + off * es, (int)cnt, mt, t->root,
                                   NCCL_HOST_P2P_TAG, c->data, &reqs[r]);
                else
                    rc = MPI_Isend((const char *)t->sendbuff + off * es, (int)cnt, mt, t->root,
                                   NCCL_HOST_P2P_TAG, c->data, &reqs[r]);
                failed =
                    nccl_mpi_failed(c, rc,
                                    kind == NCCL_TASK_RECV ? "ncclRecv in a group (MPI_Irecv)"
                                                           : "ncclSend in a group (MPI_Isend)");
                if (!failed) {
                    owner[r] = t;
                    expect[r] = cnt;
                    r++;
                }
            }
        }
    }
    /* Even after a failed post, wait for what was posted: the buffers must
     * not be handed back while MPI may still use them. */
    int rc = nccl_mpi_waitall((int)r, reqs, stats);
    if (rc == MPI_ERR_IN_STATUS) {
        for (size_t i = 0; i < r; i++)
            if (stats[i].MPI_ERROR != MPI_SUCCESS)
                nccl_mpi_failed(owner[i]->comm, stats[i].MPI_ERROR, "ncclGroupEnd (MPI_Waitall)");
    } else if (!nccl_mpi_failed(tasks[0]->comm, rc, "ncclGroupEnd (MPI_Waitall)")) {
        for (size_t i = 0; i < r; i++)
            if (owner[i]->kind == NCCL_TASK_RECV) check_received(owner[i], &stats[i], expect[i]);
    }
    free(reqs);
    free(stats);
    free(owner);
    free(expect);
}
