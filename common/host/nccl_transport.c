/*
 * nccl_transport.c -- how the ranks of one communicator reach each other
 * once the bootstrap has handed out the table.
 *
 * Control: a ring of TCP connections (rank r connects to r+1), used by the
 * calling thread for host-side exchanges (agreements, ncclCommSplit), so it
 * never competes with the stream workers' data.
 *
 * Data between ranks of one host: every rank creates a shared-memory
 * segment (shm_open, named from the communicator's random magic) holding a
 * header (barrier counter, collective signature), one byte FIFO per
 * sending peer (self included) and a two-half scratch area for the
 * collectives; every rank maps the segments of the others on its host, and
 * the names are unlinked once all are mapped, so nothing outlives the job.
 * Data between hosts: two TCP connections per pair (send/recv, collectives),
 * paced by the link model (below): each rank's sends to other hosts share
 * one link of NCCLAB_NET_GBPS, and every message adds NCCLAB_NET_LATENCY_US.
 */
#include "nccl_internal.h"

#include <ncclab_host_net.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEG_MAGIC 0x6e63636c73686d31ULL /* "ncclshm1" */

enum { PURPOSE_RING = 1, PURPOSE_P2P = 2, PURPOSE_COLL = 3 };

/* First message on every data or control connection. */
struct hello {
    uint64_t comm_magic;
    int32_t rank, purpose;
};

static size_t fifo_stride(void) { return sizeof(struct nccl_fifo) + NCCL_FIFO_BYTES; }

/* FIFOs per sending peer: send/recv, plus collectives where some ranks are
 * on other hosts (the scratch areas serve them otherwise). */
static size_t fifo_kinds(const struct ncclComm *c) { return c->all_local ? 1 : 2; }

static size_t seg_bytes(const struct ncclComm *c)
{
    return NCCL_SEG_HDR_BYTES + fifo_kinds(c) * (size_t)c->nranks * fifo_stride() +
           2 * (size_t)NCCL_SCRATCH_BYTES;
}

/* FIFO of sender `from` in a segment (coll: the collectives' one). */
static struct nccl_fifo *seg_fifo(const struct ncclComm *c, char *seg, int from, int coll)
{
    return (struct nccl_fifo *)(seg + NCCL_SEG_HDR_BYTES +
                                (fifo_kinds(c) * (size_t)from + (size_t)coll) * fifo_stride());
}

struct nccl_seg_hdr *nccl_seg_hdr(struct ncclComm *c, int rank)
{
    return (struct nccl_seg_hdr *)c->peers[rank].seg;
}

char *nccl_scratch(struct ncclComm *c, int rank, uint64_t half)
{
    return c->peers[rank].seg + NCCL_SEG_HDR_BYTES +
           fifo_kinds(c) * (size_t)c->nranks * fifo_stride() +
           (half & 1) * (size_t)NCCL_SCRATCH_BYTES;
}

static void seg_name(char *out, size_t len, uint64_t magic, int rank)
{
    snprintf(out, len, "/ncclab-%016llx-%d", (unsigned long long)magic, rank);
}

/* ------------------------------------------------------------------ */
/* Control ring                                                        */
/* ------------------------------------------------------------------ */

ncclResult_t nccl_ctrl_allgather(struct ncclComm *c, const void *mine, void *all, size_t bytes)
{
    char *out = all;
    memcpy(out + (size_t)c->rank * bytes, mine, bytes);
    int n = c->nranks;
    if (n == 1) return ncclSuccess;
    pthread_mutex_lock(&c->ctrl_lock);
    ncclResult_t res = ncclSuccess;
    /* Step s passes on the block that came from rank - s. Blocks are small,
     * so the send fits in the socket buffer before the receive is posted. */
    for (int s = 0; s < n - 1 && res == ncclSuccess; s++) {
        int send_from = (c->rank - s + n) % n, recv_from = (c->rank - s - 1 + n) % n;
        if (nccl_sock_send(c->ring_next, out + (size_t)send_from * bytes, bytes, -1) != 0 ||
            nccl_sock_recv(c->ring_prev, out + (size_t)recv_from * bytes, bytes, -1) != 0)
            res = nccl_warn(ncclRemoteError,
                            "rank %d: lost the control connection to a neighbour (%s): another "
                            "rank of the communicator ended or crashed",
                            c->rank, strerror(errno));
    }
    pthread_mutex_unlock(&c->ctrl_lock);
    return res;
}

ncclResult_t nccl_ctrl_agree(struct ncclComm *c, ncclResult_t mine, const char *fn)
{
    int32_t *all = calloc((size_t)c->nranks, sizeof *all);
    int32_t me = (int32_t)mine;
    if (!all) return nccl_warn(ncclSystemError, "%s: out of host memory", fn);
    ncclResult_t res = nccl_ctrl_allgather(c, &me, all, sizeof me);
    int worst = -1;
    for (int i = 0; res == ncclSuccess && i < c->nranks; i++)
        if (all[i] != ncclSuccess && worst < 0) worst = i;
    ncclResult_t code = worst >= 0 ? (ncclResult_t)all[worst] : ncclSuccess;
    free(all);
    if (res != ncclSuccess) return res;
    if (mine != ncclSuccess) return mine;
    /* This rank's own part went fine, so from its point of view the call
     * failed elsewhere. */
    if (code != ncclSuccess)
        return nccl_warn(ncclInvalidUsage, "%s: rank %d failed (see its message)", fn, worst);
    return ncclSuccess;
}

/* ------------------------------------------------------------------ */
/* Set-up and teardown                                                 */
/* ------------------------------------------------------------------ */

static ncclResult_t sock_fail(const char *what, int peer)
{
    return nccl_warn(ncclSystemError,
                     "ncclCommInitRank: %s rank %d failed: %s (check that the hosts can reach "
                     "each other over TCP; NCCLAB_HOST_IFNAME picks the interface)",
                     what, peer, strerror(errno));
}

/* Opens the control ring and the data connections to remote peers:
 * connects first (a listening socket queues them), then accepts. */
static ncclResult_t connect_all(struct ncclComm *c, const struct nccl_card *t, int lfd)
{
    int n = c->nranks, me = c->rank, tmo = nccl_boot_timeout_s() * 1000;
    int expected = 0;
    struct link {
        int peer, purpose;
    };
    struct link *plan = calloc(2 * (size_t)n + 1, sizeof *plan);
    if (!plan) return nccl_warn(ncclSystemError, "ncclCommInitRank: out of host memory");
    int nplan = 0;
    if (n > 1) {
        plan[nplan++] = (struct link){(me + 1) % n, PURPOSE_RING};
        expected++;
    }
    for (int q = 0; q < n; q++) {
        if (q == me || c->peers[q].local) continue;
        if (me > q) {
            plan[nplan++] = (struct link){q, PURPOSE_P2P};
            plan[nplan++] = (struct link){q, PURPOSE_COLL};
        } else {
            expected += 2;
        }
    }
    for (int i = 0; i < nplan; i++) {
        int q = plan[i].peer;
        int fd = nccl_sock_connect(t[q].listen_ip, t[q].listen_port, tmo);
        struct hello h = {c->comm_magic, me, plan[i].purpose};
        if (fd < 0) {
            free(plan);
            return sock_fail("connecting to", q);
        }
        if (nccl_sock_send(fd, &h, sizeof h, tmo) != 0) {
            close(fd);
            free(plan);
            return sock_fail("greeting", q);
        }
        if (plan[i].purpose == PURPOSE_RING)
            c->ring_next = fd;
        else if (plan[i].purpose == PURPOSE_P2P)
            c->peers[q].fd_p2p = fd;
        else
            c->peers[q].fd_coll = fd;
    }
    free(plan);
    for (int i = 0; i < expected; i++) {
        int fd = nccl_sock_accept(lfd, tmo);
        if (fd < 0) return sock_fail("waiting for a connection from", -1);
        struct hello h;
        if (nccl_sock_recv(fd, &h, sizeof h, tmo) != 0 || h.comm_magic != c->comm_magic ||
            h.rank < 0 || h.rank >= n) {
            close(fd);
            i--; /* not one of ours */
            continue;
        }
        if (h.purpose == PURPOSE_RING)
            c->ring_prev = fd;
        else if (h.purpose == PURPOSE_P2P)
            c->peers[h.rank].fd_p2p = fd;
        else
            c->peers[h.rank].fd_coll = fd;
    }
    return ncclSuccess;
}

/* Who this process is, for peers checking that it is still there: its
 * pid, start time and PID namespace (read once). */
static struct {
    pthread_once_t once;
    int32_t pid;
    uint64_t start, ns;
} g_self = {.once = PTHREAD_ONCE_INIT};

/* Field 22 of /proc/PID/stat: the start time in clock ticks since boot; 0
 * when the process is gone, and its state letter in *state. */
static uint64_t process_start(int pid, char *state)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command name may hold anything */
    if (!p) return 0;
    unsigned long long start = 0;
    if (sscanf(p + 1,
               " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu",
               state, &start) != 2)
        return 0;
    return start;
}

static void self_init(void)
{
    char state = 0;
    g_self.pid = (int32_t)getpid();
    g_self.start = process_start(g_self.pid, &state);
    struct stat st;
    g_self.ns = stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Creates this rank's segment: in /dev/shm for peers in other processes,
 * in private memory when every rank of this host is a thread of this
 * process (ncclCommInitAll: nothing to share through the file system, and
 * no /dev/shm to fill). */
static ncclResult_t create_segment(struct ncclComm *c)
{
    size_t bytes = seg_bytes(c);
    void *p = MAP_FAILED;
    char name[64];
    seg_name(name, sizeof name, c->comm_magic, c->rank);
    if (c->in_process) {
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return nccl_warn(ncclSystemError,
                             "cannot reserve %zu bytes of host memory for rank %d: %s", bytes,
                             c->rank, strerror(errno));
    } else {
        int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0)
            return nccl_warn(ncclSystemError,
                             "shm_open(%s) failed: %s (is /dev/shm mounted and "
                             "writable?)",
                             name, strerror(errno));
        /* Reserve the pages now: a full /dev/shm then fails here, with a
         * message, instead of killing the job with SIGBUS at some later copy. */
        int e = ftruncate(fd, (off_t)bytes) == 0 ? posix_fallocate(fd, 0, (off_t)bytes) : errno;
        if (e != 0) {
            close(fd);
            shm_unlink(name);
            return nccl_warn(ncclSystemError,
                             "cannot reserve %zu bytes of shared memory for %s: %s (/dev/shm is "
                             "full or too small: free space there, or give the job a larger "
                             "/dev/shm)",
                             bytes, name, strerror(e));
        }
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        e = errno;
        close(fd);
        if (p == MAP_FAILED) {
            shm_unlink(name);
            return nccl_warn(ncclSystemError, "mmap of the shared segment %s failed: %s", name,
                             strerror(e));
        }
    }
    c->peers[c->rank].seg = p;
    c->peers[c->rank].seg_bytes = bytes;
    struct nccl_seg_hdr *h = p;
    pthread_once(&g_self.once, self_init);
    h->magic = SEG_MAGIC;
    h->pid = g_self.pid;
    h->pid_start = g_self.start;
    h->pid_ns = g_self.ns;
    atomic_store(&h->state, NCCL_RANK_LIVE);
    int users = 0;
    for (int q = 0; q < c->nranks; q++) users += c->peers[q].local;
    atomic_store(&h->users, users);
    return ncclSuccess;
}

static ncclResult_t map_peer_segment(struct ncclComm *c, int q)
{
    char name[64];
    seg_name(name, sizeof name, c->comm_magic, q);
    size_t bytes = seg_bytes(c);
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0)
        return nccl_warn(ncclSystemError, "opening rank %d's shared segment %s failed: %s", q, name,
                         strerror(errno));
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED)
        return nccl_warn(ncclSystemError, "mmap of rank %d's shared segment failed: %s", q,
                         strerror(e));
    c->peers[q].seg = p;
    c->peers[q].seg_bytes = bytes;
    return ncclSuccess;
}

ncclResult_t nccl_transport_setup(struct ncclComm *c, const struct nccl_card *t, int lfd)
{
    const char *fn = "ncclCommInitRank";
    int n = c->nranks, me = c->rank;
    const char *force = getenv("NCCLAB_HOST_FORCE_TCP");
    bool force_tcp = force && *force && strcmp(force, "0") != 0;
    c->all_local = true;
    c->in_process = true;
    bool paced = false;
    for (int q = 0; q < n; q++) {
        const bool same_host = strcmp(t[q].host, t[me].host) == 0;
        c->peers[q].local = q == me || (!force_tcp && same_host);
        /* The link model is for traffic between host identities, not for
         * the tests' NCCLAB_HOST_FORCE_TCP. */
        c->peers[q].paced = !same_host;
        paced |= !same_host;
        if (!c->peers[q].local) c->all_local = false;
        if (c->peers[q].local && t[q].process != t[me].process) c->in_process = false;
    }
    /* A malformed link model fails the creation of every communicator that
     * would use it. Every rank gets through the same steps and agrees after
     * each, so one failure fails all ranks instead of leaving them waiting. */
    struct nccl_link_model model;
    const char *why = NULL;
    ncclResult_t model_res = paced ? nccl_link_model_get(&model, &why) : ncclSuccess;
    ncclResult_t res = connect_all(c, t, lfd);
    close(lfd);
    if (res == ncclSuccess && model_res != ncclSuccess)
        model_res =
            nccl_warn(ncclInvalidArgument, "%s: %s (the link model between hosts)", fn, why);
    if (res == ncclSuccess) res = nccl_ctrl_agree(c, model_res, fn);
    if (res != ncclSuccess) return res; /* no control ring to tell the others with */
    res = nccl_ctrl_agree(c, create_segment(c), fn);
    if (res != ncclSuccess) return res;
    /* Every rank takes the same steps (the hosts differ in how they share):
     * the segments' addresses, which threads of one process use directly,
     * then the mapping of the other processes' segments by name. */
    char *mine = c->peers[me].seg, **addr = calloc((size_t)n, sizeof *addr);
    if (!addr) return nccl_warn(ncclSystemError, "%s: out of host memory", fn);
    res = nccl_ctrl_allgather(c, &mine, addr, sizeof mine);
    ncclResult_t mapped = ncclSuccess;
    for (int q = 0; q < n && mapped == ncclSuccess && res == ncclSuccess; q++) {
        if (q == me || !c->peers[q].local) continue;
        if (c->in_process) {
            c->peers[q].seg = addr[q];
            c->peers[q].seg_bytes = c->peers[me].seg_bytes;
        } else {
            mapped = map_peer_segment(c, q);
        }
    }
    free(addr);
    if (res == ncclSuccess) res = nccl_ctrl_agree(c, mapped, fn);
    if (!c->in_process) {
        /* Everyone has mapped everything (or given up): the names can go. */
        char name[64];
        seg_name(name, sizeof name, c->comm_magic, me);
        if (shm_unlink(name) != 0 && res == ncclSuccess)
            res = nccl_warn(ncclSystemError, "shm_unlink(%s) failed: %s", name, strerror(errno));
    }
    if (res != ncclSuccess) return res;
    for (int q = 0; q < n; q++)
        if (c->peers[q].local) {
            for (int k = 0; k < (int)fifo_kinds(c); k++) {
                c->peers[q].out[k] = seg_fifo(c, c->peers[q].seg, me, k);
                c->peers[q].in[k] = seg_fifo(c, c->peers[me].seg, q, k);
            }
        }
    c->peers_ready = true;
    return ncclSuccess;
}

/* Lets go of the segments: each process unmaps its own mappings; in one
 * process, a segment is unmapped by the last rank that still uses it (the
 * others may still read it, to learn that its owner has left). */
static void release_segments(struct ncclComm *c)
{
    for (int q = 0; q < c->nranks; q++) {
        struct nccl_peer *p = &c->peers[q];
        if (!p->seg) continue;
        bool unmap = !c->in_process;
        /* After a failed set-up a peer may or may not hold this rank's
         * address: its private segment is then left mapped (an error path). */
        if (c->in_process && c->peers_ready)
            unmap = atomic_fetch_sub(&((struct nccl_seg_hdr *)p->seg)->users, 1) == 1;
        if (unmap && munmap(p->seg, p->seg_bytes) != 0)
            nccl_warn(ncclSystemError, "munmap of a shared segment failed: %s", strerror(errno));
        p->seg = NULL;
    }
}

void nccl_transport_teardown(struct ncclComm *c)
{
    if (!c->peers) return;
    release_segments(c);
    for (int q = 0; q < c->nranks; q++) {
        struct nccl_peer *p = &c->peers[q];
        if (p->fd_p2p >= 0) close(p->fd_p2p);
        if (p->fd_coll >= 0) close(p->fd_coll);
        pthread_mutex_destroy(&p->send_busy);
        pthread_mutex_destroy(&p->recv_busy);
    }
    if (c->ring_next >= 0) close(c->ring_next);
    if (c->ring_prev >= 0) close(c->ring_prev);
    free(c->peers);
    c->peers = NULL;
}

void nccl_set_rank_state(struct ncclComm *c, enum nccl_rank_state st)
{
    if (c->peers && c->peers[c->rank].seg)
        atomic_store_explicit(&nccl_seg_hdr(c, c->rank)->state, st, memory_order_release);
}

bool nccl_peer_gone(struct ncclComm *c, int q, char *why, size_t len)
{
    if (q == c->rank || !c->peers[q].local || !c->peers[q].seg) return false;
    struct nccl_seg_hdr *h = nccl_seg_hdr(c, q);
    switch (atomic_load_explicit(&h->state, memory_order_acquire)) {
    case NCCL_RANK_LEFT:
        snprintf(why, len, "rank %d has finalized or destroyed the communicator", q);
        return true;
    case NCCL_RANK_ABORTED:
        snprintf(why, len, "rank %d has aborted the communicator (ncclCommAbort)", q);
        return true;
    default: break;
    }
    /* A thread of this process cannot end alone; another PID namespace's
     * process cannot be seen from here. */
    pthread_once(&g_self.once, self_init);
    if (h->pid == g_self.pid || h->pid_ns != g_self.ns || h->pid_start == 0) return false;
    char state = 0;
    uint64_t start = process_start(h->pid, &state);
    if (start == h->pid_start && state != 'Z' && state != 'X') return false;
    snprintf(why, len, "the process of rank %d (pid %d) has ended or crashed", q, (int)h->pid);
    return true;
}

void nccl_peer_gone_fatal(struct ncclComm *c, int q, const char *why, const char *what)
{
    (void)q;
    nccl_fatal("rank %d: %s while this rank still waited for it in %s: every rank must make the "
               "same NCCL calls, and a rank that fails or stops early leaves the others "
               "waiting (real NCCL would hang here)",
               c->rank, why, what);
}

/* ------------------------------------------------------------------ */
/* Data channels (worker side)                                         */
/* ------------------------------------------------------------------ */

/* ---- the link model ---- */

uint64_t nccl_link_charge(const struct nccl_link_model *m, uint64_t *free_ns, uint64_t start_ns,
                          uint64_t now_ns, size_t bytes, bool new_message, bool message_done)
{
    if (!(m->bytes_per_ns > 0)) return 0;         /* no model */
    if (*free_ns < start_ns) *free_ns = start_ns; /* an idle link banks no credit */
    *free_ns +=
        (new_message ? m->latency_ns : 0) + (uint64_t)llround((double)bytes / m->bytes_per_ns);
    const uint64_t lead = *free_ns > now_ns ? *free_ns - now_ns : 0;
    if (message_done) return lead;
    /* Mid-message the sender may run a little ahead: it then sleeps for
     * longer spans, and a late wake-up costs no bandwidth. */
    return lead > NCCL_LINK_SLACK_NS ? lead - NCCL_LINK_SLACK_NS / 2 : 0;
}

static struct {
    pthread_once_t once;
    struct nccl_link_model model;
    const char *why; /* what was malformed, or NULL */
} g_model = {.once = PTHREAD_ONCE_INIT};

/* A positive number from the environment within [lo, hi], else def. */
static double env_number(const char *name, double def, double lo, double hi, const char **why,
                         const char *bad)
{
    const char *s = getenv(name);
    if (!s || !*s) return def;
    char *end = NULL;
    double v = strtod(s, &end);
    if (*end || !isfinite(v) || v < lo || v > hi) {
        if (!*why) *why = bad;
        return def;
    }
    return v;
}

static void model_init(void)
{
    const char *why = NULL;
    double gbps = env_number("NCCLAB_NET_GBPS", NCCLAB_NET_DEFAULT_GBPS, 0, 1e4, &why,
                             "NCCLAB_NET_GBPS must be a number of GB/s between 0.001 and 10000, "
                             "or 0 for no link model");
    if (gbps > 0 && gbps < 1e-3 && !why)
        why = "NCCLAB_NET_GBPS must be a number of GB/s between 0.001 and 10000, or 0 for no link "
              "model";
    double lat = env_number("NCCLAB_NET_LATENCY_US", NCCLAB_NET_DEFAULT_LATENCY_US, 0, 1e6, &why,
                            "NCCLAB_NET_LATENCY_US must be a number of microseconds between 0 "
                            "and 1000000");
    g_model.model.bytes_per_ns = gbps;
    g_model.model.latency_ns = (uint64_t)llround(lat * 1e3);
    g_model.why = why;
}

ncclResult_t nccl_link_model_get(struct nccl_link_model *m, const char **why)
{
    pthread_once(&g_model.once, model_init);
    *m = g_model.model;
    *why = g_model.why;
    return g_model.why ? ncclInvalidArgument : ncclSuccess;
}

ncclResult_t ncclabHostLinkModel(double *gbps, double *latency_us, const char **why)
{
    struct nccl_link_model m;
    const char *w = NULL;
    ncclResult_t res = nccl_link_model_get(&m, &w);
    if (gbps) *gbps = m.bytes_per_ns;
    if (latency_us) *latency_us = (double)m.latency_ns / 1e3;
    if (why) *why = w;
    return res;
}

/* One outgoing link per device of this process: a rank's link, shared by
 * all its communicators, as a GPU's NIC is. */
enum { NCCL_LINKS = 64 };
static struct {
    pthread_mutex_t lock;
    uint64_t free_ns;
} g_links[NCCL_LINKS] = {[0 ... NCCL_LINKS - 1] = {PTHREAD_MUTEX_INITIALIZER, 0}};

/* Sleeps without burning the CPU; the thread's timer slack (50 us by
 * default) is cut to 1 us first, so that short waits stay short. */
static void link_sleep(uint64_t ns)
{
    static _Thread_local bool slack_set;
    if (!slack_set) {
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); /* best effort */
        slack_set = true;
    }
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static void link_pace(struct ncclComm *c, struct nccl_peer *p, int coll, uint64_t start_ns,
                      size_t sent, size_t len, bool more)
{
    struct nccl_link_model m;
    const char *why;
    nccl_link_model_get(&m, &why);     /* a malformed model failed the communicator's creation */
    if (!(m.bytes_per_ns > 0)) return; /* NCCLAB_NET_GBPS=0: no model */
    const bool new_message = !p->mid_message[coll], done = sent == len && !more;
    p->mid_message[coll] = !done;
    unsigned dev = (unsigned)c->device % NCCL_LINKS;
    pthread_mutex_lock(&g_links[dev].lock);
    uint64_t nap = nccl_link_charge(&m, &g_links[dev].free_ns, start_ns, host_now_ns(), sent,
                                    new_message, done);
    pthread_mutex_unlock(&g_links[dev].lock);
    if (nap) link_sleep(nap);
}

static size_t sock_move(struct ncclComm *c, int peer, int fd, void *buf, size_t len, bool sending)
{
    if (len == 0) return 0;
    ssize_t n = sending ? send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT)
                        : recv(fd, buf, len, MSG_DONTWAIT);
    if (n > 0) return (size_t)n;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 0;
    nccl_fatal("rank %d: the connection to rank %d broke (%s): that rank ended, crashed or "
               "destroyed the communicator while this rank still needed it",
               c->rank, peer, n == 0 ? "closed by the peer" : strerror(errno));
}

size_t nccl_chan_push(struct ncclComm *c, int peer, bool coll, const void *buf, size_t len,
                      bool more)
{
    struct nccl_peer *p = &c->peers[peer];
    if (!p->local) {
        /* The copy into the socket is part of the transfer, as a NIC's DMA
         * is: the link's clock starts before it. */
        const uint64_t start = p->paced ? host_now_ns() : 0;
        size_t n = sock_move(c, peer, coll ? p->fd_coll : p->fd_p2p, (void *)buf, len, true);
        if (n > 0 && p->paced) link_pace(c, p, coll, start, n, len, more);
        return n;
    }
    struct nccl_fifo *f = p->out[coll];
    char *data = (char *)(f + 1);
    uint64_t head = atomic_load_explicit(&f->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&f->tail, memory_order_acquire);
    size_t room = NCCL_FIFO_BYTES - (size_t)(head - tail);
    size_t n = len < room ? len : room;
    if (n == 0) return 0;
    size_t at = (size_t)(head % NCCL_FIFO_BYTES), first = NCCL_FIFO_BYTES - at;
    if (first > n) first = n;
    memcpy(data + at, buf, first);
    memcpy(data, (const char *)buf + first, n - first);
    atomic_store_explicit(&f->head, head + n, memory_order_release);
    return n;
}

size_t nccl_chan_pop(struct ncclComm *c, int peer, bool coll, void *buf, size_t len)
{
    struct nccl_peer *p = &c->peers[peer];
    if (!p->local) return sock_move(c, peer, coll ? p->fd_coll : p->fd_p2p, buf, len, false);
    struct nccl_fifo *f = p->in[coll];
    const char *data = (const char *)(f + 1);
    uint64_t tail = atomic_load_explicit(&f->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&f->head, memory_order_acquire);
    size_t avail = (size_t)(head - tail);
    size_t n = len < avail ? len : avail;
    if (n == 0) return 0;
    size_t at = (size_t)(tail % NCCL_FIFO_BYTES), first = NCCL_FIFO_BYTES - at;
    if (first > n) first = n;
    memcpy(buf, data + at, first);
    memcpy((char *)buf + first, data, n - first);
    atomic_store_explicit(&f->tail, tail + n, memory_order_release);
    return n;
}

bool nccl_chan_block(struct ncclComm *c, const int *peers, const bool *sending, int n, bool coll,
                     int timeout_ms)
{
    enum { MAX_FDS = 64 };
    struct pollfd fds[MAX_FDS];
    if (n < 1 || n > MAX_FDS) return false;
    for (int i = 0; i < n; i++) {
        const struct nccl_peer *p = &c->peers[peers[i]];
        if (p->local) return false;
        fds[i] = (struct pollfd){coll ? p->fd_coll : p->fd_p2p, sending[i] ? POLLOUT : POLLIN, 0};
    }
    /* A broken connection shows as ready: the next move reports it. */
    if (poll(fds, (nfds_t)n, timeout_ms) < 0 && errno != EINTR) return false;
    return true;
}

uint64_t nccl_chan_unconsumed(struct ncclComm *c, int peer)
{
    struct nccl_peer *p = &c->peers[peer];
    if (!p->local) return 0;
    return atomic_load_explicit(&p->out[0]->head, memory_order_relaxed) -
           atomic_load_explicit(&p->out[0]->tail, memory_order_acquire);
}

bool nccl_shm_barrier(struct ncclComm *c, const char *what)
{
    uint64_t target = ++c->barrier_seq;
    atomic_store_explicit(&nccl_seg_hdr(c, c->rank)->arrive, target, memory_order_release);
    for (int q = 0; q < c->nranks; q++) {
        _Atomic uint64_t *a = &nccl_seg_hdr(c, q)->arrive;
        struct nccl_wait w;
        nccl_wait_start(&w);
        char why[160];
        while (atomic_load_explicit(a, memory_order_acquire) < target) {
            if (!nccl_comm_pause(c, &w)) return false;
            /* A rank that arrived and then left is fine: look again after
             * learning that it has gone. */
            if (nccl_wait_check_due(&w) && nccl_peer_gone(c, q, why, sizeof why) &&
                atomic_load_explicit(a, memory_order_acquire) < target)
                nccl_peer_gone_fatal(c, q, why, what);
        }
    }
    return true;
}
