/*
 * nccl_boot.c -- unique ids and the bootstrap rendezvous, as NCCL does it:
 * ncclGetUniqueId opens a listening TCP socket served by a "root" thread
 * and writes its address into the id; every rank of ncclCommInitRank
 * connects there, sends a card (rank, nranks, host, device, own listening
 * address), and the root checks the set and answers every rank with the
 * same verdict: the table of all cards, or one error that every rank
 * reports. No MPI is involved.
 *
 * A rendezvous that does not fill up (a wrong nranks, ranks holding
 * different ids, a rank that never calls) ends after NCCLAB_HOST_INIT_TIMEOUT
 * seconds with an error on every rank that came, instead of hanging. A root
 * serves rounds until one succeeds (so an id can be retried after a failed
 * init), then closes.
 */
#include "nccl_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

/* An id starts with this text, so a zeroed or uninitialised id is caught. */
static const char k_id_magic[16] = "ncclab-host-id2";

/* The id's bytes after the magic. */
struct id_body {
    uint32_t ip; /* network byte order */
    uint16_t port;
    uint16_t pad;
    uint64_t job_magic;
};

enum { VERDICT_MSG_BYTES = 512, MAX_RANKS = NCCL_HOST_MAX_RANKS };

/* The root's answer; on success nranks cards follow. */
struct verdict {
    int32_t code;
    int32_t nranks;
    uint64_t comm_magic;
    int32_t failed_rank; /* rank whose own check failed, or -1 */
    char msg[VERDICT_MSG_BYTES];
};

int nccl_boot_timeout_s(void)
{
    const char *s = getenv("NCCLAB_HOST_INIT_TIMEOUT");
    if (!s || !*s) return 60;
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (*end != '\0' || v < 1 || v > 86400) {
        nccl_warn(ncclSuccess, "ignoring NCCLAB_HOST_INIT_TIMEOUT=\"%s\" (want 1..86400 seconds)",
                  s);
        return 60;
    }
    return (int)v;
}

/* ------------------------------------------------------------------ */
/* Socket helpers                                                      */
/* ------------------------------------------------------------------ */

/* Sends or receives exactly len bytes, waiting at most timeout_ms in all
 * (-1: forever). Returns 0, or -1 with errno (ETIMEDOUT, ECONNRESET...). */
static int sock_io(int fd, void *buf, size_t len, bool sending, int timeout_ms)
{
    char *p = buf;
    uint64_t deadline = timeout_ms < 0 ? 0 : host_now_ns() + (uint64_t)timeout_ms * 1000000u;
    while (len > 0) {
        ssize_t n = sending ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT)
                            : recv(fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0) {
            errno = ECONNRESET;
            return -1;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
        int wait_ms = -1;
        if (timeout_ms >= 0) {
            uint64_t now = host_now_ns();
            if (now >= deadline) {
                errno = ETIMEDOUT;
                return -1;
            }
            wait_ms = (int)((deadline - now) / 1000000u) + 1;
        }
        struct pollfd pfd = {fd, sending ? POLLOUT : POLLIN, 0};
        if (poll(&pfd, 1, wait_ms) < 0 && errno != EINTR) return -1;
    }
    return 0;
}

int nccl_sock_send(int fd, const void *buf, size_t len, int timeout_ms)
{
    return sock_io(fd, (void *)buf, len, true, timeout_ms);
}

int nccl_sock_recv(int fd, void *buf, size_t len, int timeout_ms)
{
    return sock_io(fd, buf, len, false, timeout_ms);
}

/* The address other hosts can reach this one at: NCCLAB_HOST_IFNAME's (or
 * NCCL_SOCKET_IFNAME's) IPv4 address, else the first non-loopback
 * interface that is up, else loopback. */
static uint32_t advertised_ip(void)
{
    const char *want = getenv("NCCLAB_HOST_IFNAME");
    if (!want || !*want) want = getenv("NCCL_SOCKET_IFNAME");
    struct ifaddrs *ifs = NULL;
    uint32_t found = htonl(INADDR_LOOPBACK);
    if (getifaddrs(&ifs) != 0) return found;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
        if (want && *want ? strcmp(i->ifa_name, want) != 0 : (i->ifa_flags & IFF_LOOPBACK) != 0)
            continue;
        found = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr;
        break;
    }
    freeifaddrs(ifs);
    return found;
}

/* Listening ports come from above the kernel's ephemeral range where there
 * is room: programs that pick a "free" port by binding port 0 and closing
 * it (a grader, a launcher), then hand it to a process that binds it later,
 * must not find one of ours sitting on it meanwhile. */
static uint16_t listen_port_candidate(unsigned attempt)
{
    unsigned lo = 32768, hi = 60999;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f) {
        if (fscanf(f, "%u %u", &lo, &hi) != 2) hi = 65535;
        fclose(f);
    }
    if (hi >= 65535 - 1024 || attempt >= 64) return 0; /* no room: let the kernel choose */
    uint32_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) r = (uint32_t)host_now_ns();
    return htons((uint16_t)(hi + 1 + r % (65535 - hi)));
}

int nccl_sock_listen(uint32_t ip, uint16_t *port)
{
    for (unsigned attempt = 0;; attempt++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return -1;
        uint16_t want = listen_port_candidate(attempt);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = ip, .sin_port = want};
        socklen_t len = sizeof sa;
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(fd, 1024) == 0 &&
            getsockname(fd, (struct sockaddr *)&sa, &len) == 0) {
            *port = sa.sin_port;
            return fd;
        }
        int e = errno;
        close(fd);
        errno = e;
        if (want == 0 || e != EADDRINUSE) return -1;
    }
}

int nccl_sock_connect(uint32_t ip, uint16_t port, int timeout_ms)
{
    uint64_t deadline = host_now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) return -1;
        /* The kernel gives this socket an ephemeral local port; with
         * SO_REUSEADDR it does not stop another program from binding that
         * port for listening (one that picked it as "free" a moment ago). */
        int one = 1;
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) {
            close(fd);
            return -1;
        }
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = ip, .sin_port = port};
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
            if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
                close(fd);
                return -1;
            }
            return fd;
        }
        int e = errno;
        close(fd);
        /* A listener that is not up yet, or a full backlog: try again. */
        if ((e != ECONNREFUSED && e != EAGAIN && e != EINTR) || host_now_ns() >= deadline) {
            errno = e;
            return -1;
        }
        struct timespec nap = {0, 20 * 1000000L};
        nanosleep(&nap, NULL);
    }
}

int nccl_sock_accept(int lfd, int timeout_ms)
{
    struct pollfd pfd = {lfd, POLLIN, 0};
    int rc;
    do rc = poll(&pfd, 1, timeout_ms);
    while (rc < 0 && errno == EINTR);
    if (rc == 0) errno = ETIMEDOUT;
    if (rc <= 0) return -1;
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) return -1;
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static ncclResult_t random_bytes(void *buf, size_t want)
{
    size_t got = 0;
    while (got < want) {
        ssize_t n = getrandom((char *)buf + got, want - got, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return nccl_warn(ncclSystemError, "getrandom failed: %s", strerror(errno));
        }
        got += (size_t)n;
    }
    return ncclSuccess;
}

static pthread_once_t g_token_once = PTHREAD_ONCE_INIT;
static uint64_t g_token;

static void token_init(void)
{
    if (random_bytes(&g_token, sizeof g_token) != ncclSuccess) g_token = host_now_ns();
}

uint64_t nccl_process_token(void)
{
    pthread_once(&g_token_once, token_init);
    /* With the pid mixed in, a forked child is a process of its own. */
    return g_token ^ ((uint64_t)getpid() * 0x9e3779b97f4a7c15ULL);
}

/* ------------------------------------------------------------------ */
/* The root                                                            */
/* ------------------------------------------------------------------ */

struct root_arg {
    int lfd;
    uint64_t job_magic;
};

/* Fills v with the verdict on the cards of one round (n arrived, nranks
 * wanted, timed_out when the deadline passed first). */
static void judge_round(struct nccl_card *cards, int n, int nranks, bool timed_out, int timeout_s,
                        struct verdict *v)
{
    memset(v, 0, sizeof *v);
    v->failed_rank = -1;
    v->nranks = nranks;
    for (int i = 0; i < n; i++)
        if (cards[i].status != ncclSuccess) {
            v->code = ncclInvalidUsage;
            v->failed_rank = cards[i].rank;
            snprintf(v->msg, sizeof v->msg,
                     "another rank failed (rank %d: %s); no communicator was created",
                     cards[i].rank, cards[i].msg);
            return;
        }
    if (timed_out) {
        v->code = ncclInvalidUsage;
        snprintf(v->msg, sizeof v->msg,
                 "only %d of the %d ranks (nranks) joined within %d s: every rank must pass the "
                 "same nranks and the ncclUniqueId that one rank made with ncclGetUniqueId "
                 "(broadcast it; ranks passed different ncclUniqueId values if each made its "
                 "own), and that many ranks must be started (for a smaller communicator use "
                 "ncclCommSplit)",
                 n, nranks, timeout_s);
        return;
    }
    for (int i = 0; i < n; i++)
        if (cards[i].nranks != nranks) {
            v->code = ncclInvalidUsage;
            snprintf(v->msg, sizeof v->msg,
                     "ranks passed different nranks (%d and %d); every rank must pass the same "
                     "communicator size",
                     nranks, cards[i].nranks);
            return;
        }
    /* Sort by rank (insertion sort: n is small) and look for repeats. */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && cards[j].rank < cards[j - 1].rank; j--) {
            struct nccl_card t = cards[j];
            cards[j] = cards[j - 1];
            cards[j - 1] = t;
        }
    for (int i = 1; i < n; i++)
        if (cards[i].rank == cards[i - 1].rank) {
            v->code = ncclInvalidUsage;
            snprintf(v->msg, sizeof v->msg,
                     "rank %d was passed by more than one process or thread; each must pass a "
                     "distinct rank in [0, %d)",
                     cards[i].rank, nranks);
            return;
        }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (strcmp(cards[i].host, cards[j].host) == 0 &&
                strcmp(cards[i].dev_ident, cards[j].dev_ident) == 0) {
                v->code = ncclInvalidUsage;
                snprintf(v->msg, sizeof v->msg,
                         "Duplicate GPU detected: rank %d and rank %d both on device %d (call "
                         "cudaSetDevice with a different device on each rank of a node before "
                         "ncclCommInitRank)",
                         cards[i].rank, cards[j].rank, cards[i].device);
                return;
            }
    v->code = ncclSuccess;
}

/* Serves rounds until one succeeds. Errors end the thread with a warning:
 * the waiting ranks then see the connection drop and report it. */
static void *root_main(void *p)
{
    struct root_arg arg = *(struct root_arg *)p;
    free(p);
    bool done = false;
    while (!done) {
        int fds[MAX_RANKS];
        struct nccl_card *cards = NULL;
        int n = 0, nranks = 0;
        bool timed_out = false;
        uint64_t deadline = 0;
        int timeout_s = 0;
        for (;;) {
            int wait_ms = -1;
            if (n > 0) {
                uint64_t now = host_now_ns();
                if (now >= deadline) {
                    timed_out = true;
                    break;
                }
                wait_ms = (int)((deadline - now) / 1000000u) + 1;
            }
            int fd = nccl_sock_accept(arg.lfd, wait_ms);
            if (fd < 0) {
                if (errno == ETIMEDOUT) continue;
                nccl_warn(ncclSystemError, "bootstrap root: accept failed: %s", strerror(errno));
                break;
            }
            struct nccl_card card;
            if (nccl_sock_recv(fd, &card, sizeof card, 10000) != 0 ||
                card.id_magic != arg.job_magic) {
                close(fd); /* a stray or stale connection: not part of this round */
                continue;
            }
            if (n == 0) {
                nranks = card.nranks;
                if (nranks < 1 || nranks > MAX_RANKS) nranks = 1;
                cards = calloc((size_t)nranks, sizeof *cards);
                if (!cards) {
                    nccl_warn(ncclSystemError, "bootstrap root: out of host memory");
                    close(fd);
                    break;
                }
                /* The first rank's patience sets the round's (the root
                 * thread must not read the environment: a rank of this
                 * process may be changing it). */
                timeout_s = card.timeout_s > 0 ? card.timeout_s : 60;
                deadline = host_now_ns() + (uint64_t)timeout_s * 1000000000u;
            }
            fds[n] = fd;
            cards[n++] = card;
            if (n == nranks || card.nranks != nranks) break;
        }
        if (n == 0) break;
        struct verdict v;
        judge_round(cards, n, nranks, timed_out, timeout_s, &v);
        if (v.code == ncclSuccess &&
            random_bytes(&v.comm_magic, sizeof v.comm_magic) != ncclSuccess) {
            v.code = ncclSystemError;
            snprintf(v.msg, sizeof v.msg, "the bootstrap root could not draw random bytes");
        }
        for (int i = 0; i < n; i++) {
            bool sent = nccl_sock_send(fds[i], &v, sizeof v, 10000) == 0 &&
                        (v.code != ncclSuccess ||
                         nccl_sock_send(fds[i], cards, (size_t)n * sizeof *cards, 10000) == 0);
            if (!sent)
                nccl_warn(ncclSystemError, "bootstrap root: could not answer a rank: %s",
                          strerror(errno));
            close(fds[i]);
        }
        free(cards);
        done = v.code == ncclSuccess;
    }
    close(arg.lfd);
    return NULL;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
    if (!uniqueId)
        return nccl_warn(ncclInvalidArgument, "ncclGetUniqueId: uniqueId pointer is NULL");
    struct id_body body = {.ip = advertised_ip()};
    ncclResult_t res = random_bytes(&body.job_magic, sizeof body.job_magic);
    if (res != ncclSuccess) return res;
    int lfd = nccl_sock_listen(body.ip, &body.port);
    if (lfd < 0)
        return nccl_warn(ncclSystemError,
                         "ncclGetUniqueId: cannot open the bootstrap socket: %s (set "
                         "NCCLAB_HOST_IFNAME to an interface with an IPv4 address)",
                         strerror(errno));
    struct root_arg *arg = malloc(sizeof *arg);
    pthread_t tid;
    pthread_attr_t attr;
    bool started = false;
    if (arg && pthread_attr_init(&attr) == 0) {
        *arg = (struct root_arg){lfd, body.job_magic};
        started = pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED) == 0 &&
                  pthread_create(&tid, &attr, root_main, arg) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!started) {
        free(arg);
        close(lfd);
        return nccl_warn(ncclSystemError, "ncclGetUniqueId: cannot start the bootstrap thread");
    }
    memset(uniqueId, 0, sizeof *uniqueId);
    memcpy(uniqueId->internal, k_id_magic, sizeof k_id_magic);
    memcpy(uniqueId->internal + sizeof k_id_magic, &body, sizeof body);
    return ncclSuccess;
}

bool nccl_unique_id_valid(const ncclUniqueId *id)
{
    return memcmp(id->internal, k_id_magic, sizeof k_id_magic) == 0;
}

/* ------------------------------------------------------------------ */
/* A rank joining                                                      */
/* ------------------------------------------------------------------ */

ncclResult_t nccl_boot_join(const ncclUniqueId *id, struct nccl_card *mine,
                            struct nccl_card **table, int *listen_fd, uint64_t *comm_magic)
{
    struct id_body body;
    memcpy(&body, id->internal + sizeof k_id_magic, sizeof body);
    char where[INET_ADDRSTRLEN + 8] = "?";
    struct in_addr ia = {.s_addr = body.ip};
    if (inet_ntop(AF_INET, &ia, where, INET_ADDRSTRLEN))
        snprintf(where + strlen(where), 8, ":%u", (unsigned)ntohs(body.port));
    *table = NULL;
    *listen_fd = -1;
    mine->timeout_s = nccl_boot_timeout_s();
    int timeout_ms = mine->timeout_s * 1000;
    int fd = nccl_sock_connect(body.ip, body.port, timeout_ms);
    if (fd < 0)
        return nccl_warn(ncclSystemError,
                         "cannot reach the bootstrap root at %s (%s): the process that called "
                         "ncclGetUniqueId must still be running, and this id must come from it",
                         where, strerror(errno));
    /* Our own listener, on the interface that reaches the root. */
    struct sockaddr_in self;
    memset(&self, 0, sizeof self);
    socklen_t slen = sizeof self;
    int lfd = -1;
    if (getsockname(fd, (struct sockaddr *)&self, &slen) == 0)
        lfd = nccl_sock_listen(self.sin_addr.s_addr, &mine->listen_port);
    if (lfd < 0) {
        close(fd);
        return nccl_warn(ncclSystemError, "cannot open a listening socket: %s", strerror(errno));
    }
    mine->listen_ip = self.sin_addr.s_addr;
    mine->id_magic = body.job_magic;
    struct verdict v;
    /* The root answers within its timeout; allow a margin on top. */
    if (nccl_sock_send(fd, mine, sizeof *mine, timeout_ms) != 0 ||
        nccl_sock_recv(fd, &v, sizeof v, timeout_ms + 30000) != 0) {
        int e = errno;
        close(fd);
        close(lfd);
        return nccl_warn(ncclSystemError,
                         "no answer from the bootstrap root at %s (%s): did the process that "
                         "called ncclGetUniqueId end or fail?",
                         where, strerror(e));
    }
    v.msg[sizeof v.msg - 1] = '\0';
    if (v.code != ncclSuccess) {
        close(fd);
        close(lfd);
        if (mine->status != ncclSuccess) return (ncclResult_t)mine->status; /* own message given */
        return nccl_warn((ncclResult_t)v.code, "ncclCommInitRank: %s", v.msg);
    }
    struct nccl_card *t = calloc((size_t)v.nranks, sizeof *t);
    if (!t || nccl_sock_recv(fd, t, (size_t)v.nranks * sizeof *t, timeout_ms) != 0) {
        free(t);
        close(fd);
        close(lfd);
        return nccl_warn(ncclSystemError, "lost the bootstrap root at %s while reading the table",
                         where);
    }
    close(fd);
    *table = t;
    *listen_fd = lfd;
    *comm_magic = v.comm_magic;
    return ncclSuccess;
}
