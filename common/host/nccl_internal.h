/*
 * nccl_internal.h -- shared declarations of the NCCL half of the host
 * backend. Only the backend sources in this folder include it.
 */
#ifndef NCCLAB_NCCL_INTERNAL_H
#define NCCLAB_NCCL_INTERNAL_H

#include <mpi.h>
#include <nccl.h>

#include "host_internal.h"

/* Tag of every point-to-point message; matching relies on MPI's in-order
 * delivery between a pair of ranks, just as NCCL's send/recv pairing does. */
#define NCCL_HOST_P2P_TAG 0x4e43

struct ncclComm {
    uint32_t magic;
    MPI_Comm data; /* used by stream workers for the operations */
    MPI_Comm ctrl; /* used by host-side collectives (split, checks) */
    int rank, nranks, device;
    size_t chunk_elems; /* largest element count per MPI call */
    bool finalized;
    int pending;            /* enqueued operations that have not finished */
    long long coll_seq;     /* collectives executed so far (stream workers, in order) */
    struct host_dep *tails; /* last enqueued operation(s) of this comm */
    size_t ntails;
    struct ncclComm *next_live;
};

/* ---- nccl_core.c ---- */

/* Stores a formatted message for ncclGetLastError, prints it to stderr as
 * "NCCL host backend WARN ..." (unless NCCLAB_HOST_QUIET is set), and
 * returns code so callers can write `return nccl_warn(...)`. */
ncclResult_t nccl_warn(ncclResult_t code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* True when id was made by ncclGetUniqueId (checks its magic prefix). */
bool nccl_unique_id_valid(const ncclUniqueId *id);

/* Makes sure MPI is initialised with MPI_THREAD_MULTIPLE (initialising it
 * ourselves, and finalising at exit, if nobody has). */
ncclResult_t nccl_mpi_ready(void);

/* MPI_Waitall that does not burn a core while it waits for a peer that is
 * late or never comes (a rank that skipped a call, a deadlocked ring): it
 * polls with MPI_Testall, busily for the first NCCL_HOST_SPIN_MS, then
 * with short sleeps. Open MPI's own blocking calls spin for as long as they
 * wait, so on a shared machine a hung job used to eat every core until its
 * watchdog ended it. Same return value as MPI_Waitall. */
int nccl_mpi_waitall(int n, MPI_Request *reqs, MPI_Status *stats);
/* The same for one request. */
int nccl_mpi_wait(MPI_Request *req, MPI_Status *status);

/* Reports a failed MPI call made on behalf of comm (worker side): records
 * an asynchronous error on the comm and warns. Returns rc != MPI_SUCCESS. */
bool nccl_mpi_failed(struct ncclComm *comm, int rc, const char *what);

/* Datatypes and reduction operators. The check functions warn and return
 * ncclInvalidArgument on anything the backend cannot do. */
ncclResult_t nccl_check_type(const char *fn, ncclDataType_t type);
ncclResult_t nccl_check_op(const char *fn, ncclRedOp_t op);
size_t nccl_type_size(ncclDataType_t type);
MPI_Datatype nccl_mpi_type(ncclDataType_t type);
MPI_Op nccl_mpi_op(ncclRedOp_t op);
/* Divides count elements at buf by n in place (the tail of ncclAvg). */
void nccl_divide(void *buf, size_t count, ncclDataType_t type, int n);

/* Checks that buf holds count elements of device memory; name is the
 * argument's name for the message ("sendbuff"). */
ncclResult_t nccl_check_buffer(const char *fn, const char *name, const void *buf, size_t count,
                               size_t elem_size);

/* ---- nccl_comm.c ---- */

/* Live communicator for handle, or NULL. Lock held. */
struct ncclComm *nccl_comm_lookup_locked(ncclComm_t handle);
/* Validates a communicator argument of fn and returns it in *out. */
ncclResult_t nccl_check_comm(const char *fn, ncclComm_t handle, struct ncclComm **out);
/* Called when one enqueued operation of comm has finished. Lock held. */
void nccl_comm_op_done_locked(struct ncclComm *comm);
void nccl_comm_free(struct ncclComm *comm);

/* ---- nccl_enqueue.c: turning calls into stream operations ---- */

enum nccl_task_kind {
    NCCL_TASK_ALLREDUCE,
    NCCL_TASK_REDUCE,
    NCCL_TASK_BROADCAST,
    NCCL_TASK_ALLGATHER,
    NCCL_TASK_REDUCESCATTER,
    NCCL_TASK_SEND,
    NCCL_TASK_RECV
};

struct nccl_task {
    enum nccl_task_kind kind;
    const void *sendbuff;
    void *recvbuff;
    size_t count; /* per-rank count (sendcount / recvcount) */
    ncclDataType_t type;
    ncclRedOp_t op;
    int root; /* root of reduce/broadcast, peer of send/recv */
    struct ncclComm *comm;
    cudaStream_t stream; /* the handle as given */
    struct nccl_task *next;
};

static inline bool nccl_task_is_p2p(const struct nccl_task *t)
{
    return t->kind == NCCL_TASK_SEND || t->kind == NCCL_TASK_RECV;
}

/* Validates the stream argument of fn. */
ncclResult_t nccl_check_stream(const char *fn, cudaStream_t stream);

/* Takes a validated task (copied): enqueues it on its stream now, or keeps
 * it for ncclGroupEnd when a group is open. */
ncclResult_t nccl_submit(const struct nccl_task *task);

/* Remembers the first error raised inside an open group (ncclGroupEnd
 * returns it). Returns err. */
ncclResult_t nccl_group_note_error(ncclResult_t err);

/* ---- worker side ---- */
void nccl_coll_execute(const struct nccl_task *t);                     /* nccl_coll.c */
void nccl_p2p_execute_blocking(const struct nccl_task *t);             /* nccl_p2p.c */
void nccl_p2p_execute_fused(struct nccl_task *const *tasks, size_t n); /* nccl_p2p.c */

/* True between ncclGroupStart and the matching outermost ncclGroupEnd (this thread). */
bool nccl_in_group(void);

#endif /* NCCLAB_NCCL_INTERNAL_H */
