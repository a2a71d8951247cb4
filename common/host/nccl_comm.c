/*
 * nccl_comm.c -- communicators of the host backend: creation from a
 * unique id (ncclCommInitRank, ncclCommInitRankConfig, ncclCommInitAll),
 * splitting, destruction, and the query functions.
 *
 * Creation is NCCL's: the ranks meet at the bootstrap root named by the id
 * (nccl_boot.c), then connect to each other (nccl_transport.c). Nothing
 * here depends on MPI, and several ranks may live in one process (threads,
 * ncclCommInitAll): all state is per communicator.
 */
#include "nccl_internal.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COMM_MAGIC 0x4e63636cU /* "Nccl" */

static struct ncclComm *g_comms; /* live communicators (lock held) */

/* Ranks with the same identity share memory. NCCL_HOSTID, when set, is
 * the identity, as in NCCL (getHostHash): the kit sets it per virtual node
 * so that virtual nodes talk over TCP. Otherwise the kernel's boot id tells
 * machines (and containers of one machine) apart even where host names
 * repeat, the host name where boot ids could. */
static void host_identity(char *out, size_t len)
{
    const char *given = getenv("NCCL_HOSTID");
    if (given && *given) {
        /* The hash keeps long identities apart where the card cuts them. */
        uint64_t h = 1469598103934665603ULL; /* FNV-1a */
        for (const char *p = given; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
        snprintf(out, len, "hostid:%016llx:%.80s", (unsigned long long)h, given);
        return;
    }
    char boot[64] = "", name[64] = "";
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, boot, sizeof boot - 1);
        boot[n > 0 ? n : 0] = '\0';
        boot[strcspn(boot, "\n")] = '\0';
        close(fd);
    }
    if (gethostname(name, sizeof name - 1) != 0) name[0] = '\0';
    name[sizeof name - 1] = '\0';
    snprintf(out, len, "%s/%s", boot, name);
}

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

/* Largest element count one transfer piece may carry. NCCLAB_HOST_CHUNK_ELEMS
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

/* Builds this rank's communicator from the bootstrap table (takes
 * listen_fd). Collective over the new communicator. */
static ncclResult_t comm_create(const struct nccl_card *table, int nranks, int rank, int device,
                                uint64_t comm_magic, int listen_fd, struct ncclComm **out)
{
    if (nranks < 1) {
        close(listen_fd);
        return nccl_warn(ncclInternalError, "communicator of %d ranks requested", nranks);
    }
    struct ncclComm *c = calloc(1, sizeof *c);
    struct nccl_peer *peers = calloc((size_t)nranks, sizeof *peers);
    if (!c || !peers) {
        free(c);
        free(peers);
        close(listen_fd);
        return nccl_warn(ncclSystemError, "out of host memory creating a communicator");
    }
    c->magic = COMM_MAGIC;
    c->rank = rank;
    c->nranks = nranks;
    c->device = device;
    c->comm_magic = comm_magic;
    c->chunk_elems = chunk_elems_from_env();
    c->peers = peers;
    c->ring_next = c->ring_prev = -1;
    pthread_mutex_init(&c->ctrl_lock, NULL);
    for (int q = 0; q < nranks; q++) {
        peers[q].fd_p2p = peers[q].fd_coll = -1;
        pthread_mutex_init(&peers[q].send_busy, NULL);
        pthread_mutex_init(&peers[q].recv_busy, NULL);
    }
    ncclResult_t res = nccl_transport_setup(c, table, listen_fd);
    if (res != ncclSuccess) {
        nccl_transport_teardown(c);
        pthread_mutex_destroy(&c->ctrl_lock);
        free(c);
        return res;
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
    nccl_transport_teardown(c);
    pthread_mutex_destroy(&c->ctrl_lock);
    host_lock();
    for (size_t i = 0; i < c->ntails; i++) host_stream_unref_locked(c->tails[i].stream);
    nccl_reg_drop_comm_locked(c);
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

/* The device a rank drives, as the duplicate-GPU check compares it: the
 * node name the launcher gave this process (Slurm's, else PMIx's), then the
 * physical device. Launchers can run several "nodes" on one machine (a
 * test cluster): each has its own GPUs, as the MPI backend's node split
 * saw it, although the ranks still share memory. */
static void device_identity(int device, char *out, size_t len)
{
    char dev[32];
    host_rt_device_identity(device, dev, sizeof dev);
    const char *node = getenv("SLURMD_NODENAME");
    if (!node || !*node) node = getenv("PMIX_HOSTNAME");
    snprintf(out, len, "%.60s:%s", node ? node : "", dev);
}

/* ------------------------------------------------------------------ */
/* ncclCommInitRank and friends                                        */
/* ------------------------------------------------------------------ */

#define NCCL_CONFIG_MAGIC 0xcafebeefU

static ncclResult_t check_config(const char *fn, const ncclConfig_t *config)
{
    if (!config) return ncclSuccess;
    if (config->magic != NCCL_CONFIG_MAGIC)
        return nccl_warn(ncclInvalidArgument,
                         "%s: config was not initialised with NCCL_CONFIG_INITIALIZER", fn);
    if (config->blocking == 0)
        return nccl_warn(ncclInvalidArgument,
                         "%s: host backend: non-blocking communicators (config.blocking = 0) are "
                         "not supported; leave blocking at its default",
                         fn);
    return ncclSuccess;
}

/* The body of every way to create a communicator: joins the rendezvous of
 * id as rank of nranks on device. local_err is this rank's own argument
 * check, already reported; it still takes part, so the others fail too. */
static ncclResult_t init_rank(const char *fn, ncclComm_t *comm, int nranks, const ncclUniqueId *id,
                              int rank, int device, ncclResult_t local_err)
{
    struct nccl_card mine;
    memset(&mine, 0, sizeof mine);
    mine.nranks = nranks;
    mine.rank = rank;
    mine.device = device;
    mine.status = local_err;
    snprintf(mine.msg, sizeof mine.msg, "%s",
             local_err == ncclSuccess ? "" : ncclGetLastError(NULL));
    host_identity(mine.host, sizeof mine.host);
    mine.process = nccl_process_token();
    device_identity(device, mine.dev_ident, sizeof mine.dev_ident);
    struct nccl_card *table = NULL;
    int lfd = -1;
    uint64_t comm_magic = 0;
    ncclResult_t res = nccl_boot_join(id, &mine, &table, &lfd, &comm_magic);
    if (res != ncclSuccess) return res;
    struct ncclComm *c = NULL;
    res = comm_create(table, nranks, rank, device, comm_magic, lfd, &c);
    free(table);
    if (res != ncclSuccess) return res;
    *comm = c;
    (void)fn;
    return ncclSuccess;
}

/* ncclCommInitRank inside a group: joined at ncclGroupEnd, together with
 * the group's other ranks (one thread driving several devices). */
struct deferred_init {
    const char *fn;
    ncclComm_t *comm;
    int nranks, rank, device;
    ncclUniqueId id;
    ncclResult_t local;
};

static ncclResult_t run_deferred_init(void *p)
{
    struct deferred_init *d = p;
    return init_rank(d->fn, d->comm, d->nranks, &d->id, d->rank, d->device, d->local);
}

static ncclResult_t init_rank_checked(const char *fn, ncclComm_t *comm, int nranks,
                                      ncclUniqueId commId, int rank, const ncclConfig_t *config)
{
    if (comm) *comm = NULL;
    if (!comm) return nccl_warn(ncclInvalidArgument, "%s: comm pointer is NULL", fn);
    if (nranks < 1)
        return nccl_warn(ncclInvalidArgument, "%s: invalid nranks %d (must be >= 1)", fn, nranks);
    if (nranks > NCCL_HOST_MAX_RANKS)
        return nccl_warn(ncclInvalidArgument, "%s: host backend limit: nranks %d is above %d", fn,
                         nranks, NCCL_HOST_MAX_RANKS);
    if (!nccl_unique_id_valid(&commId))
        return nccl_warn(ncclInvalidArgument,
                         "%s: unique id was never initialised \xe2\x80\x94 did rank 0 call "
                         "ncclGetUniqueId and share it?",
                         fn);
    /* From here on, this rank can reach the others: a bad argument is
     * reported to them too, so they fail instead of waiting. */
    ncclResult_t local = ncclSuccess;
    if (rank < 0 || rank >= nranks)
        local =
            nccl_warn(ncclInvalidArgument, "%s: rank %d is out of range [0, %d)", fn, rank, nranks);
    if (local == ncclSuccess) local = check_config(fn, config);
    int device = 0;
    if (local == ncclSuccess && cudaGetDevice(&device) != cudaSuccess)
        local = nccl_warn(ncclUnhandledCudaError, "%s: cudaGetDevice failed (%s)", fn,
                          cudaGetErrorString(cudaGetLastError()));
    if (nccl_in_group()) {
        /* The communicator exists after ncclGroupEnd, as in NCCL. */
        struct deferred_init *d = malloc(sizeof *d);
        if (!d) return nccl_warn(ncclSystemError, "%s: out of host memory", fn);
        *d = (struct deferred_init){fn, comm, nranks, rank, device, commId, local};
        ncclResult_t res = nccl_group_defer(run_deferred_init, d);
        return res != ncclSuccess ? res : local;
    }
    return init_rank(fn, comm, nranks, &commId, rank, device, local);
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
    return init_rank_checked("ncclCommInitRank", comm, nranks, commId, rank, NULL);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t *config)
{
    return init_rank_checked("ncclCommInitRankConfig", comm, nranks, commId, rank, config);
}

/* ncclCommInitAll: one thread per device, each joining as one rank. */
struct init_all_arg {
    ncclComm_t *comm;
    int ndev, rank, device;
    const ncclUniqueId *id;
    ncclResult_t res;
};

static void *init_all_thread(void *p)
{
    struct init_all_arg *a = p;
    cudaError_t ce = cudaSetDevice(a->device);
    ncclResult_t local = ncclSuccess;
    if (ce != cudaSuccess)
        local = nccl_warn(ncclInvalidArgument, "ncclCommInitAll: device %d is not usable (%s)",
                          a->device, cudaGetErrorString(ce));
    a->res = init_rank("ncclCommInitAll", a->comm, a->ndev, a->id, a->rank, a->device, local);
    return NULL;
}

ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
    const char *fn = "ncclCommInitAll";
    if (!comms) return nccl_warn(ncclInvalidArgument, "%s: comms pointer is NULL", fn);
    if (ndev < 1 || ndev > NCCL_HOST_MAX_RANKS)
        return nccl_warn(ncclInvalidArgument, "%s: invalid ndev %d (must be 1..%d)", fn, ndev,
                         NCCL_HOST_MAX_RANKS);
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess)
        return nccl_warn(ncclUnhandledCudaError, "%s: cudaGetDeviceCount failed", fn);
    for (int i = 0; i < ndev; i++) {
        comms[i] = NULL;
        int d = devlist ? devlist[i] : i;
        if (d < 0 || d >= count)
            return nccl_warn(ncclInvalidArgument,
                             "%s: device %d (entry %d) is out of range: %d device(s) visible", fn,
                             d, i, count);
    }
    ncclUniqueId id;
    ncclResult_t res = ncclGetUniqueId(&id);
    if (res != ncclSuccess) return res;
    struct init_all_arg *args = calloc((size_t)ndev, sizeof *args);
    pthread_t *tids = calloc((size_t)ndev, sizeof *tids);
    if (!args || !tids) {
        free(args);
        free(tids);
        return nccl_warn(ncclSystemError, "%s: out of host memory", fn);
    }
    int started = 0;
    for (; started < ndev; started++) {
        args[started] = (struct init_all_arg){
            &comms[started], ndev, started, devlist ? devlist[started] : started, &id, ncclSuccess};
        if (pthread_create(&tids[started], NULL, init_all_thread, &args[started]) != 0) break;
    }
    /* A missing thread leaves the others to time out in the rendezvous. */
    if (started < ndev)
        res = nccl_warn(ncclSystemError, "%s: cannot start a thread per device", fn);
    for (int i = 0; i < started; i++) {
        pthread_join(tids[i], NULL);
        if (res == ncclSuccess && args[i].res != ncclSuccess) res = args[i].res;
    }
    if (res != ncclSuccess)
        for (int i = 0; i < started; i++) {
            if (comms[i]) ncclCommDestroy(comms[i]);
            comms[i] = NULL;
        }
    free(args);
    free(tids);
    return res;
}

/* ------------------------------------------------------------------ */
/* ncclCommSplit                                                       */
/* ------------------------------------------------------------------ */

struct split_card {
    int32_t color, key, status;
};

/* Whether parent rank a comes before parent rank b in their new
 * communicator: by key, then by parent rank, as in NCCL. */
static bool split_before(const struct split_card *all, int a, int b)
{
    int32_t ka = all[a].key, kb = all[b].key;
    return ka < kb || (ka == kb && a < b);
}

/* The collective part of a split: every rank of the parent takes part,
 * res being this rank's own argument check. */
static ncclResult_t split_body(struct ncclComm *parent, int color, int key, ncclComm_t *newcomm,
                               ncclResult_t res)
{
    const char *fn = "ncclCommSplit";
    int n = parent->nranks, me = parent->rank;
    struct split_card mine = {color, key, res};
    struct split_card *all = calloc((size_t)n, sizeof *all);
    ncclUniqueId *ids = calloc((size_t)n, sizeof *ids);
    if (!all || !ids) {
        free(all);
        free(ids);
        return nccl_warn(ncclSystemError, "%s: out of host memory", fn);
    }
    ncclResult_t ex = nccl_ctrl_allgather(parent, &mine, all, sizeof mine);
    if (ex == ncclSuccess) {
        int bad = -1;
        for (int i = 0; i < n && bad < 0; i++)
            if (all[i].status != ncclSuccess) bad = i;
        if (res == ncclSuccess && bad >= 0)
            res = nccl_warn(ncclInvalidUsage, "%s: rank %d failed (see its message)", fn, bad);
    } else {
        res = ex;
    }
    /* The first rank of each colour makes the new id and passes it over
     * the parent. */
    int newrank = 0, newn = 0, leader = -1;
    if (res == ncclSuccess && color != NCCL_SPLIT_NOCOLOR) {
        for (int q = 0; q < n; q++) {
            if (all[q].color != color) continue;
            newn++;
            if (split_before(all, q, me)) newrank++;
            if (leader < 0 || split_before(all, q, leader)) leader = q;
        }
    }
    ncclUniqueId my_id;
    memset(&my_id, 0, sizeof my_id);
    ncclResult_t idres = ncclSuccess;
    if (res == ncclSuccess && leader == me) idres = ncclGetUniqueId(&my_id);
    if (ex == ncclSuccess) {
        ncclResult_t agreed = nccl_ctrl_agree(parent, idres, fn);
        if (agreed == ncclSuccess) agreed = nccl_ctrl_allgather(parent, &my_id, ids, sizeof my_id);
        if (res == ncclSuccess) res = agreed;
    }
    if (res == ncclSuccess && color != NCCL_SPLIT_NOCOLOR)
        res = init_rank(fn, newcomm, newn, &ids[leader], newrank, parent->device, ncclSuccess);
    free(all);
    free(ids);
    return res;
}

/* ncclCommSplit inside a group: run at ncclGroupEnd with the group's
 * other splits (one thread splitting the communicators of several devices). */
struct deferred_split {
    struct ncclComm *parent;
    int color, key;
    ncclComm_t *newcomm;
    ncclResult_t local;
};

static ncclResult_t run_deferred_split(void *p)
{
    struct deferred_split *d = p;
    struct ncclComm *c = NULL;
    /* The parent may have been destroyed between the call and the group's end. */
    ncclResult_t res = nccl_check_comm("ncclCommSplit", d->parent, &c);
    if (res != ncclSuccess) return res;
    return split_body(c, d->color, d->key, d->newcomm, d->local);
}

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
    else
        res = check_config(fn, config);
    if (newcomm) *newcomm = NULL;
    if (nccl_in_group()) {
        struct deferred_split *d = malloc(sizeof *d);
        if (!d) return nccl_warn(ncclSystemError, "%s: out of host memory", fn);
        *d = (struct deferred_split){parent, color, key, newcomm, res};
        ncclResult_t dr = nccl_group_defer(run_deferred_split, d);
        return dr != ncclSuccess ? dr : res;
    }
    return split_body(parent, color, key, newcomm, res);
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
    /* Peers still waiting for this rank learn that it will not come. */
    nccl_set_rank_state(c, NCCL_RANK_LEFT);
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
    nccl_set_rank_state(c, NCCL_RANK_LEFT);
    nccl_comm_free(c);
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    if (!comm) return ncclSuccess; /* as NCCL */
    host_lock();
    struct ncclComm *c = nccl_comm_lookup_locked(comm);
    if (!c) {
        host_unlock();
        return nccl_warn(ncclInvalidArgument,
                         "ncclCommAbort: comm %p is not a live communicator (destroyed "
                         "already?)",
                         (void *)comm);
    }
    comm_unlink_locked(c);
    /* Operations waiting for peers give up at their next look, queued ones
     * do nothing; peers that wait for this rank are told it aborted. */
    atomic_store_explicit(&c->aborting, true, memory_order_release);
    host_unlock();
    nccl_set_rank_state(c, NCCL_RANK_ABORTED);
    host_lock();
    wait_comm_idle_locked(c);
    host_unlock();
    nccl_comm_free(c);
    return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)
{
    const char *fn = "ncclCommGetAsyncError";
    if (!asyncError) return nccl_warn(ncclInvalidArgument, "%s: asyncError pointer is NULL", fn);
    if (!comm) return nccl_warn(ncclInvalidArgument, "%s: comm argument is NULL", fn);
    host_lock();
    bool live = nccl_comm_lookup_locked(comm) != NULL;
    host_unlock();
    if (!live)
        return nccl_warn(ncclInvalidArgument, "%s: comm %p is not a live communicator", fn,
                         (void *)comm);
    /* Blocking communicators only, and an error that breaks a communicator
     * (a peer gone, mismatched calls) ends the process with its message
     * instead of waiting here to be polled: a live communicator is fine. */
    *asyncError = ncclSuccess;
    return ncclSuccess;
}

/* Shared body of the two "tell me an int about the comm" queries. */
static ncclResult_t comm_query(const char *fn, const ncclComm_t comm, int *out, int which)
{
    if (!out) return nccl_warn(ncclInvalidArgument, "%s: output pointer is NULL", fn);
    if (!comm) return nccl_warn(ncclInvalidArgument, "%s: comm argument is NULL", fn);
    host_lock();
    struct ncclComm *c = nccl_comm_lookup_locked(comm);
    if (c) *out = which == 0 ? c->nranks : which == 1 ? c->rank : c->device;
    host_unlock();
    if (!c)
        return nccl_warn(ncclInvalidArgument, "%s: comm %p is not a live communicator", fn,
                         (void *)comm);
    return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device)
{
    return comm_query("ncclCommCuDevice", comm, device, 2);
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
    return comm_query("ncclCommCount", comm, count, 0);
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
    return comm_query("ncclCommUserRank", comm, rank, 1);
}

ncclResult_t ncclabHostCommPeers(ncclComm_t comm, int *shm_peers, int *tcp_peers)
{
    const char *fn = "ncclabHostCommPeers";
    if (!shm_peers || !tcp_peers)
        return nccl_warn(ncclInvalidArgument, "%s: output pointer is NULL", fn);
    struct ncclComm *c = NULL;
    ncclResult_t res = nccl_check_comm(fn, comm, &c);
    if (res != ncclSuccess) return res;
    *shm_peers = *tcp_peers = 0;
    for (int q = 0; q < c->nranks; q++)
        if (q != c->rank) ++*(c->peers[q].local ? shm_peers : tcp_peers);
    return ncclSuccess;
}
