/*
 * nccl_comm.c -- communicators of the host backend: creation from a
 * unique id, splitting, destruction, and the query functions.
 *
 * Every communicator owns two MPI communicators with the same group: `data`
 * for the operations that stream workers run, `ctrl` for the collectives the
 * calling thread runs (agreement checks, splits). Keeping them apart means a
 * split never races with a queued all-reduce over the same MPI communicator.
 */
#include "nccl_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMM_MAGIC 0x4e63636cU /* "Nccl" */

static struct ncclComm *g_comms; /* live communicators (lock held) */

/* Our own copy of MPI_COMM_WORLD for the init-time agreement, so the
 * backend's collectives can never match the application's. */
static MPI_Comm g_world = MPI_COMM_NULL;

struct ncclComm *nccl_comm_lookup_locked(ncclComm_t handle)
{
    for (struct ncclComm *c = g_comms; c; c = c->next_live)
        if (c == handle) return c;
    return NULL;
}

ncclResult_t nccl_check_comm(const char *fn, ncclComm_t handle, struct ncclComm **out)
{
    /* Explicit return codes (not nccl_warn's) so static analysers can see
     * that *out is set whenever this succeeds. */
    *out = NULL;
    if (!handle) {
        nccl_warn(ncclInvalidArgument, "%s: comm argument is NULL", fn);
        return ncclInvalidArgument;
    }
    host_lock();
    struct ncclComm *c = nccl_comm_lookup_locked(handle);
    bool finalized = c && c->finalized;
    host_unlock();
    if (!c) {
        nccl_warn(ncclInvalidArgument,
                  "%s: comm %p is not a live communicator (destroyed, or never created by "
                  "ncclCommInitRank/ncclCommSplit)",
                  fn, (void *)handle);
        return ncclInvalidArgument;
    }
    if (finalized) {
        nccl_warn(ncclInvalidUsage, "%s: comm %p was finalized with ncclCommFinalize", fn,
                  (void *)handle);
        return ncclInvalidUsage;
    }
    *out = c;
    return ncclSuccess;
}

/* Largest element count one MPI call may carry. NCCLAB_HOST_CHUNK_ELEMS
 * lowers it so tests can exercise the chunking with small buffers. */
static size_t chunk_elems_from_env(void)
{
    const char *s = getenv("NCCLAB_HOST_CHUNK_ELEMS");
    if (!s || !*s) return INT_MAX;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0' || v < 1 || v > INT_MAX) {
        nccl_warn(ncclSuccess, "ignoring NCCLAB_HOST_CHUNK_ELEMS=\"%s\" (want 1..%d)", s, INT_MAX);
        return INT_MAX;
    }
    return (size_t)v;
}

/* Wraps an MPI communicator that this rank belongs to in a new ncclComm;
 * takes ownership of data. */
static ncclResult_t comm_create(MPI_Comm data, int device, struct ncclComm **out)
{
    struct ncclComm *c = calloc(1, sizeof *c);
    if (!c) {
        MPI_Comm_free(&data);
        return nccl_warn(ncclSystemError, "out of host memory creating a communicator");
    }
    c->magic = COMM_MAGIC;
    c->data = data;
    c->ctrl = MPI_COMM_NULL;
    c->device = device;
    c->chunk_elems = chunk_elems_from_env();
    int rc = MPI_Comm_rank(data, &c->rank);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_size(data, &c->nranks);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_dup(data, &c->ctrl);
    /* Failures must come back as codes we can report, not abort the job. */
    if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(c->data, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS) rc = MPI_Comm_set_errhandler(c->ctrl, MPI_ERRORS_RETURN);
    if (rc != MPI_SUCCESS) {
        if (c->ctrl != MPI_COMM_NULL) MPI_Comm_free(&c->ctrl);
        MPI_Comm_free(&c->data);
        free(c);
        return nccl_warn(ncclSystemError, "MPI failed while setting up a communicator");
    }
    host_lock();
    c->next_live = g_comms;
    g_comms = c;
    host_unlock();
    *out = c;
    return ncclSuccess;
}

void nccl_comm_free(struct ncclComm *c)
{
    int finalized = 0;
    /* After MPI_Finalize, MPI objects may no longer be touched. */
    if (MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized) {
        if (c->ctrl != MPI_COMM_NULL && MPI_Comm_free(&c->ctrl) != MPI_SUCCESS)
            nccl_warn(ncclSystemError, "MPI_Comm_free failed for a communicator");
        if (c->data != MPI_COMM_NULL && MPI_Comm_free(&c->data) != MPI_SUCCESS)
            nccl_warn(ncclSystemError, "MPI_Comm_free failed for a communicator");
    }
    host_lock();
    for (size_t i = 0; i < c->ntails; i++) host_stream_unref_locked(c->tails[i].stream);
    host_unlock();
    free(c->tails);
    c->magic = 0;
    free(c);
}

void nccl_comm_op_done_locked(struct ncclComm *c) { c->pending--; }

/* Removes c from the live list so its handle stops being accepted. */
static void comm_unlink_locked(struct ncclComm *c)
{
    for (struct ncclComm **pp = &g_comms; *pp; pp = &(*pp)->next_live)
        if (*pp == c) {
            *pp = c->next_live;
            return;
        }
}

/* ------------------------------------------------------------------ */
/* ncclCommInitRank                                                    */
/* ------------------------------------------------------------------ */

/* What each rank tells the others during init. */
struct init_card {
    ncclUniqueId id;
    int rank;
    int device;
    char device_identity[32];
};

/* Agreement step: every rank learns the worst result of all ranks, so that
 * one rank's failure makes every rank fail instead of leaving the others
 * stuck in the next collective. Returns the combined result. */
static ncclResult_t agree(MPI_Comm comm, ncclResult_t mine, const char *fn)
{
    int local = (int)mine, worst = 0;
    MPI_Request req;
    int rc = MPI_Iallreduce(&local, &worst, 1, MPI_INT, MPI_MAX, comm, &req);
    if (rc == MPI_SUCCESS) rc = nccl_mpi_wait(&req, MPI_STATUS_IGNORE); /* a rank may be late */
    if (rc != MPI_SUCCESS)
        return nccl_warn(ncclSystemError, "%s: MPI_Iallreduce failed during the agreement step",
                         fn);
    if (mine != ncclSuccess) return mine;
    /* This rank's own arguments were fine, so from its point of view the
     * call was used wrongly elsewhere. */
    if (worst != ncclSuccess)
        return nccl_warn(ncclInvalidUsage,
                         "%s: another rank failed (see its message); no communicator was "
                         "created",
                         fn);
    return ncclSuccess;
}

static ncclResult_t world_comm(void)
{
    if (g_world != MPI_COMM_NULL) return ncclSuccess;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &g_world) != MPI_SUCCESS ||
        MPI_Comm_set_errhandler(g_world, MPI_ERRORS_RETURN) != MPI_SUCCESS)
        return nccl_warn(ncclSystemError, "ncclCommInitRank: cannot duplicate MPI_COMM_WORLD");
    return ncclSuccess;
}

static ncclResult_t check_init_args(ncclComm_t *comm, int nranks, const ncclUniqueId *id, int rank)
{
    const char *fn = "ncclCommInitRank";
    if (!comm) return nccl_warn(ncclInvalidArgument, "%s: comm pointer is NULL", fn);
    if (nranks < 1)
        return nccl_warn(ncclInvalidArgument, "%s: invalid nranks %d (must be >= 1)", fn, nranks);
    if (rank < 0 || rank >= nranks)
        return nccl_warn(ncclInvalidArgument, "%s: rank %d is out of range [0, %d)", fn, rank,
                         nranks);
    if (!nccl_unique_id_valid(id))
        return nccl_warn(ncclInvalidArgument,
                         "%s: unique id was never initialised \xe2\x80\x94 did rank 0 call "
                         "ncclGetUniqueId and share it?",
                         fn);
    return ncclSuccess;
}

/* Checks the cards gathered from all ranks (identical on every rank). */
static ncclResult_t check_cards(const struct init_card *cards, int n)
{
    const char *fn = "ncclCommInitRank";
    for (int i = 1; i < n; i++)
        if (memcmp(&cards[i].id, &cards[0].id, sizeof cards[0].id) != 0)
            return nccl_warn(ncclInvalidUsage,
                             "%s: ranks passed different ncclUniqueId values: rank 0 must "
                             "create one id and every rank must receive that same id "
                             "(broadcast it)",
                             fn);
    /* The split sorted the cards by rank; a repeat shows up as neighbours. */
    for (int i = 1; i < n; i++)
        if (cards[i].rank == cards[i - 1].rank)
            return nccl_warn(ncclInvalidUsage,
                             "%s: rank %d was passed by more than one process; each process "
                             "must pass a distinct rank in [0, %d)",
                             fn, cards[i].rank, n);
    return ncclSuccess;
}

/* Two ranks on one node driving the same device is an error in NCCL. */
static ncclResult_t check_duplicate_devices(MPI_Comm data, const struct init_card *mine)
{
    const char *fn = "ncclCommInitRank";
    MPI_Comm node = MPI_COMM_NULL;
    if (MPI_Comm_split_type(data, MPI_COMM_TYPE_SHARED, mine->rank, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS)
        return nccl_warn(ncclSystemError, "%s: MPI_Comm_split_type failed", fn);
    int n = 0;
    ncclResult_t res = ncclSuccess;
    struct init_card *cards = NULL;
    if (MPI_Comm_size(node, &n) != MPI_SUCCESS || !(cards = calloc((size_t)n, sizeof *cards))) {
        res = nccl_warn(ncclSystemError, "%s: cannot gather node-local devices", fn);
        n = 0;
    }
    /* Everyone in the node must take part in the gather, even on error. */
    int failed = res != ncclSuccess, any_failed = 0;
    if (MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, node) != MPI_SUCCESS)
        any_failed = 1;
    if (!any_failed && MPI_Allgather(mine, (int)sizeof *mine, MPI_BYTE, cards, (int)sizeof *mine,
                                     MPI_BYTE, node) != MPI_SUCCESS)
        res = nccl_warn(ncclSystemError, "%s: MPI_Allgather of devices failed", fn);
    else if (any_failed && res == ncclSuccess)
        res = nccl_warn(ncclSystemError, "%s: another rank could not gather devices", fn);
    for (int i = 0; res == ncclSuccess && i < n; i++)
        for (int j = i + 1; res == ncclSuccess && j < n; j++)
            if (strcmp(cards[i].device_identity, cards[j].device_identity) == 0) {
                int a = cards[i].rank < cards[j].rank ? i : j, b = a == i ? j : i;
                res = nccl_warn(ncclInvalidUsage,
                                "%s: Duplicate GPU detected: rank %d and rank %d both on "
                                "device %d (call cudaSetDevice with a different device on "
                                "each rank of a node before ncclCommInitRank)",
                                fn, cards[a].rank, cards[b].rank, cards[a].device);
            }
    free(cards);
    if (MPI_Comm_free(&node) != MPI_SUCCESS && res == ncclSuccess)
        res = nccl_warn(ncclSystemError, "%s: MPI_Comm_free failed", fn);
    return res;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
    const char *fn = "ncclCommInitRank";
    ncclResult_t res = check_init_args(comm, nranks, &commId, rank);
    if (comm) *comm = NULL;
    ncclResult_t ready = nccl_mpi_ready();
    if (ready != ncclSuccess) return ready; /* MPI unusable: cannot even tell the other ranks */
    ready = world_comm();
    if (ready != ncclSuccess) return ready;

    int device = 0;
    if (res == ncclSuccess && cudaGetDevice(&device) != cudaSuccess)
        res = nccl_warn(ncclUnhandledCudaError, "%s: cudaGetDevice failed (%s)", fn,
                        cudaGetErrorString(cudaGetLastError()));

    int world_size = 0;
    if (MPI_Comm_size(g_world, &world_size) != MPI_SUCCESS)
        return nccl_warn(ncclSystemError, "%s: MPI_Comm_size failed", fn);
    if (res == ncclSuccess && nranks != world_size)
        res = nccl_warn(ncclInvalidUsage,
                        "%s: nranks is %d but MPI_COMM_WORLD has %d processes; the host "
                        "backend only builds world-sized communicators from ncclCommInitRank "
                        "(create sub-groups with ncclCommSplit)",
                        fn, nranks, world_size);
    res = agree(g_world, res, fn);
    if (res != ncclSuccess) return res;

    /* Order the new communicator by NCCL rank, which may differ from the
     * MPI rank. */
    MPI_Comm data = MPI_COMM_NULL;
    if (MPI_Comm_split(g_world, 0, rank, &data) != MPI_SUCCESS)
        return nccl_warn(ncclSystemError, "%s: MPI_Comm_split failed", fn);
    if (MPI_Comm_set_errhandler(data, MPI_ERRORS_RETURN) != MPI_SUCCESS) {
        MPI_Comm_free(&data);
        return nccl_warn(ncclSystemError, "%s: MPI_Comm_set_errhandler failed", fn);
    }

    struct init_card mine;
    memset(&mine, 0, sizeof mine);
    mine.id = commId;
    mine.rank = rank;
    mine.device = device;
    host_rt_device_identity(device, mine.device_identity, sizeof mine.device_identity);
    struct init_card *cards = calloc((size_t)nranks, sizeof *cards);
    if (!cards) res = nccl_warn(ncclSystemError, "%s: out of host memory", fn);
    res = agree(data, res, fn);
    if (res == ncclSuccess && MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, cards,
                                            (int)sizeof mine, MPI_BYTE, data) != MPI_SUCCESS)
        res = nccl_warn(ncclSystemError, "%s: MPI_Allgather failed", fn);
    if (res == ncclSuccess) res = check_cards(cards, nranks);
    free(cards);
    /* The duplicate-device check is node-local; agree on the outcome so
     * ranks on other nodes fail too. */
    if (res == ncclSuccess) res = agree(data, check_duplicate_devices(data, &mine), fn);
    if (res != ncclSuccess) {
        MPI_Comm_free(&data);
        return res;
    }
    struct ncclComm *c = NULL;
    res = comm_create(data, device, &c);
    if (res == ncclSuccess) *comm = c;
    return res;
}

/* ------------------------------------------------------------------ */
/* ncclCommSplit                                                       */
/* ------------------------------------------------------------------ */

#define NCCL_CONFIG_MAGIC 0xcafebeefU

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
                           ncclConfig_t *config)
{
    const char *fn = "ncclCommSplit";
    struct ncclComm *parent = NULL;
    ncclResult_t res = nccl_check_comm(fn, comm, &parent);
    if (res != ncclSuccess) return res; /* no usable communicator to tell the others with */
    if (!newcomm)
        res = nccl_warn(ncclInvalidArgument, "%s: newcomm pointer is NULL", fn);
    else if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
        res = nccl_warn(ncclInvalidArgument,
                        "%s: color %d is invalid (use a non-negative color or "
                        "NCCL_SPLIT_NOCOLOR)",
                        fn, color);
    else if (config && config->magic != NCCL_CONFIG_MAGIC)
        res = nccl_warn(ncclInvalidArgument,
                        "%s: config was not initialised with NCCL_CONFIG_INITIALIZER", fn);
    if (newcomm) *newcomm = NULL;
    res = agree(parent->ctrl, res, fn);
    if (res != ncclSuccess) return res;
    if (!newcomm) return ncclInvalidArgument; /* already reported above */

    /* MPI orders by key, then by rank in the parent: exactly NCCL's rule. */
    MPI_Comm data = MPI_COMM_NULL;
    int mpi_color = color == NCCL_SPLIT_NOCOLOR ? MPI_UNDEFINED : color;
    if (MPI_Comm_split(parent->ctrl, mpi_color, key, &data) != MPI_SUCCESS)
        return nccl_warn(ncclSystemError, "%s: MPI_Comm_split failed", fn);
    if (data == MPI_COMM_NULL)
        return ncclSuccess; /* NCCL_SPLIT_NOCOLOR: this rank gets no communicator */
    struct ncclComm *c = NULL;
    res = comm_create(data, parent->device, &c);
    if (res == ncclSuccess) *newcomm = c;
    return res;
}

/* ------------------------------------------------------------------ */
/* Teardown and queries                                                */
/* ------------------------------------------------------------------ */

/* Waits (lock held) until no operation of c is queued or running. */
static void wait_comm_idle_locked(struct ncclComm *c)
{
    while (c->pending > 0) host_wait_locked();
}

ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
    struct ncclComm *c = NULL;
    ncclResult_t res = nccl_check_comm("ncclCommFinalize", comm, &c);
    if (res != ncclSuccess) return res;
    host_lock();
    wait_comm_idle_locked(c);
    c->finalized = true;
    host_unlock();
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    if (!comm) return ncclSuccess; /* as NCCL: destroying NULL is a no-op */
    host_lock();
    struct ncclComm *c = nccl_comm_lookup_locked(comm);
    if (!c) {
        host_unlock();
        return nccl_warn(ncclInvalidArgument,
                         "ncclCommDestroy: comm %p is not a live communicator (destroyed "
                         "twice?)",
                         (void *)comm);
    }
    comm_unlink_locked(c);
    wait_comm_idle_locked(c);
    host_unlock();
    nccl_comm_free(c);
    return ncclSuccess;
}

/* Shared body of the two "tell me an int about the comm" queries. */
static ncclResult_t comm_query(const char *fn, const ncclComm_t comm, int *out, int which)
{
    if (!out) return nccl_warn(ncclInvalidArgument, "%s: output pointer is NULL", fn);
    if (!comm) return nccl_warn(ncclInvalidArgument, "%s: comm argument is NULL", fn);
    host_lock();
    struct ncclComm *c = nccl_comm_lookup_locked(comm);
    if (c) *out = which == 0 ? c->nranks : c->rank;
    host_unlock();
    if (!c)
        return nccl_warn(ncclInvalidArgument, "%s: comm %p is not a live communicator", fn,
                         (void *)comm);
    return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
    return comm_query("ncclCommCount", comm, count, 0);
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
    return comm_query("ncclCommUserRank", comm, rank, 1);
}
