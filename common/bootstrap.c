#include "bootstrap.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <mpi.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../labs/lab1_bootstrap/lab1.h"
#include "errors.h"
#include "options.h"
#include "taught.h"
#include "watchdog.h"

/* ---- environment ---- */

static int env_int(const char *const *names, int *out, const char **which)
{
    const char *v = NULL;
    for (int i = 0; names[i] && !v; i++) {
        v = getenv(names[i]);
        if (v && !*v) v = NULL;
        if (v) *which = names[i];
    }
    if (!v) return 0;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < 0 || x > (1L << 24))
        ncclab_die(2, "environment variable %s='%s' is not a valid non-negative integer", *which,
                   v);
    *out = (int)x;
    return 1;
}

/* The rank count on this node and the node count, which lab 1 does not ask
 * for: the GPU check and virtual nodes need them. */
static const char *const LSIZE_VARS[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "LOCAL_WORLD_SIZE", NULL};
static const char *const NNODES_VARS[] = {"NNODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES", NULL};

/* The Slurm node this task runs on, when the node is not this machine
 * under its own name: several slurmd on one host (the kit's test cluster),
 * whose "nodes" NCCL would otherwise take for one host. Its SLURM_NODEID,
 * or -1 (no Slurm, or a node that is a machine of its own). */
static int emulated_slurm_node(const char **name)
{
    const char *node = getenv("SLURMD_NODENAME"), *id = getenv("SLURM_NODEID");
    *name = node;
    if (!node || !*node || !id || !*id) return -1;
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0) return -1;
    host[strcspn(host, ".")] = '\0'; /* the short name, as Slurm's NodeName usually is */
    if (strcmp(host, node) == 0) return -1;
    char *end;
    long v = strtol(id, &end, 10);
    return *end || v < 0 || v > (1L << 24) ? -1 : (int)v;
}

/* Gives this rank the host identity of its node (NCCL_HOSTID: NCCL's
 * getHostHash, src/misc/utils.cc, reads it instead of the host name and
 * boot id; the host backend follows the same rule), before the first NCCL
 * call. Ranks with different identities talk through the network transport
 * (NCCL: IB or sockets; host backend: TCP with its link model). */
static void set_host_identity(int ranks_per_node, int net, struct ncclab_world *w)
{
    w->host_id[0] = '\0';
    w->net_between = 0;
    if (net == NCCLAB_NET_OFF) return;
    const char *slurm_name = NULL;
    const int slurm_node = emulated_slurm_node(&slurm_name);
    const char *given = getenv("NCCL_HOSTID");
    char base[128];
    if (given && *given)
        snprintf(base, sizeof base, "%s", given); /* the site's or the user's own */
    else if (slurm_node >= 0)
        snprintf(base, sizeof base, "%s-%s", w->host, slurm_name);
    else
        snprintf(base, sizeof base, "%s", w->host);
    if (ranks_per_node > 0)
        snprintf(w->host_id, sizeof w->host_id, "%s-vnode%d", base, w->node);
    else if (slurm_node >= 0 && !(given && *given))
        snprintf(w->host_id, sizeof w->host_id, "%s", base);
    else
        return; /* real nodes: NCCL's own identity already tells them apart */
    if (setenv("NCCL_HOSTID", w->host_id, 1) != 0)
        ncclab_die(2, "cannot set NCCL_HOSTID=%s: %s", w->host_id, strerror(errno));
    w->net_between = 1;
}

static void apply_virtual_nodes(int ranks_per_node, int net, struct ncclab_world *w)
{
    if (ranks_per_node > 0) {
        w->node = w->rank / ranks_per_node;
        w->nnodes = (w->nranks + ranks_per_node - 1) / ranks_per_node;
        w->local_rank = w->rank % ranks_per_node;
        int left = w->nranks - w->node * ranks_per_node;
        w->local_size = left < ranks_per_node ? left : ranks_per_node;
    }
    set_host_identity(ranks_per_node, net, w);
}

void ncclab_env_world(int ranks_per_node, int net, struct ncclab_world *w)
{
    memset(w, 0, sizeof *w);
    /* Who this process is, as lab 1's Task 1 reads it (common/taught.h). */
    struct lab1_launch launch = {-1, -1, -1, -1, NULL};
    if (ncclab_taught_lab1_read_launch(&launch) != 0)
        ncclab_die(2, "cannot tell this process's rank: no launcher's variables are set. Start it "
                      "with a launcher (srun, mpirun, torchrun) or set RANK, WORLD_SIZE and "
                      "LOCAL_RANK yourself");
    w->rank = launch.rank;
    w->nranks = launch.nranks;
    w->local_rank = launch.local_rank;
    w->node = launch.node;
    if (w->local_rank < 0) w->local_rank = 0; /* a launcher that gives none: one rank per node */
    if (w->nranks < 1 || w->rank < 0 || w->rank >= w->nranks)
        ncclab_die(2,
                   "lab1_read_launch (lab 1, Task 1) read rank %d of %d ranks, local rank %d (%s): "
                   "not a rank of the job. Check the launcher's variables, or lab 1's Task 1",
                   w->rank, w->nranks, w->local_rank, launch.launcher ? launch.launcher : "none");
    const char *which = NULL;
    if (!env_int(LSIZE_VARS, &w->local_size, &which)) {
        /* SLURM_TASKS_PER_NODE looks like "2(x3),1": the first number is ours
         * on homogeneous jobs, which is good enough for a GPU-count check. */
        const char *t = getenv("SLURM_TASKS_PER_NODE");
        w->local_size = t ? atoi(t) : w->local_rank + 1;
    }
    if (w->local_size <= w->local_rank) w->local_size = w->local_rank + 1;
    if (w->node < 0) w->node = 0;
    if (!env_int(NNODES_VARS, &w->nnodes, &which) || w->nnodes <= w->node) w->nnodes = w->node + 1;
    w->gpu_local_rank = w->local_rank;
    w->gpu_local_size = w->local_size;
    gethostname(w->host, sizeof w->host - 1);
    apply_virtual_nodes(ranks_per_node, net, w);
    ncclab_set_log_rank(w->rank);
}

/* ---- MPI ---- */

/* Open MPI's MPI_Finalize unloads its PMIx component and libpmix itself
 * (dlclose) while a PMIx event can still be queued on Open MPI's event
 * loop; the progress thread then calls into unmapped code. Seen under load
 * as a rare SIGSEGV at an address with no code, called from libevent_core,
 * in any lab and rank count. So every library loaded once MPI is up is
 * marked never to be unloaded (RTLD_NODELETE): a late callback finds its
 * code, and the libraries go when the process ends, as all others do. */
static int collect_library(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    char **names = data;
    if (!info->dlpi_name || !info->dlpi_name[0]) return 0;
    for (int i = 0; i < 255; i++)
        if (!names[i]) {
            names[i] = strdup(info->dlpi_name);
            return 0;
        }
    return 1; /* full */
}

static void keep_libraries_loaded(void)
{
    char *names[256] = {NULL};
    dl_iterate_phdr(collect_library, names); /* no dlopen inside: the loader's lock is held */
    for (int i = 0; i < 256 && names[i]; i++) {
        void *h = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
        if (h) dlclose(h); /* our own reference; the library stays */
        free(names[i]);
    }
}

void ncclab_mpi_bootstrap(int *argc, char ***argv, int ranks_per_node, int net,
                          struct ncclab_world *w)
{
    memset(w, 0, sizeof *w);
    int up = 0, provided = 0;
    MPI_CHECK(MPI_Initialized(&up));
    /* MULTIPLE: the host backend calls MPI from its stream threads. */
    if (!up) MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
    keep_libraries_loaded();
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &w->rank));
    MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &w->nranks));
    ncclab_set_log_rank(w->rank);
    gethostname(w->host, sizeof w->host - 1);

    /* Ranks that share memory share a node; where Slurm runs several nodes
     * on this one machine (and the network between them is on), its node
     * number splits them further. */
    MPI_Comm shared, local;
    MPI_CHECK(
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w->rank, MPI_INFO_NULL, &shared));
    const char *slurm_name = NULL;
    const int slurm_node = net == NCCLAB_NET_OFF ? -1 : emulated_slurm_node(&slurm_name);
    MPI_CHECK(MPI_Comm_split(shared, slurm_node < 0 ? 0 : slurm_node, w->rank, &local));
    MPI_CHECK(MPI_Comm_free(&shared));
    MPI_CHECK(MPI_Comm_rank(local, &w->local_rank));
    MPI_CHECK(MPI_Comm_size(local, &w->local_size));
    /* Number the nodes by their first rank: the local leaders form a
     * communicator whose ranks are the node indices. */
    MPI_Comm leaders;
    MPI_CHECK(
        MPI_Comm_split(MPI_COMM_WORLD, w->local_rank == 0 ? 0 : MPI_UNDEFINED, w->rank, &leaders));
    if (w->local_rank == 0) {
        MPI_CHECK(MPI_Comm_rank(leaders, &w->node));
        MPI_CHECK(MPI_Comm_size(leaders, &w->nnodes));
        MPI_CHECK(MPI_Comm_free(&leaders));
    }
    int ids[2] = {w->node, w->nnodes};
    MPI_CHECK(MPI_Bcast(ids, 2, MPI_INT, 0, local));
    w->node = ids[0];
    w->nnodes = ids[1];
    MPI_CHECK(MPI_Comm_free(&local));
    w->gpu_local_rank = w->local_rank;
    w->gpu_local_size = w->local_size;
    apply_virtual_nodes(ranks_per_node, net, w);
}

ncclComm_t ncclab_world_comm(const struct ncclab_world *w, int over_tcp)
{
    /* Lab 1's Task 3 (common/taught.h). */
    ncclComm_t comm = over_tcp ? ncclab_taught_lab1_comm_init_tcp(w->rank, w->nranks)
                               : ncclab_taught_lab1_comm_init_mpi(w->rank, w->nranks);
    const char *fn = over_tcp ? "lab1_comm_init_tcp" : "lab1_comm_init_mpi";
    if (!comm)
        ncclab_die(1,
                   "%s (lab 1, Task 3), which makes every lab's communicator, returned none: "
                   "finish lab 1's Task 3 first",
                   fn);
    int rank = -1, nranks = -1;
    NCCL_CHECK(ncclCommUserRank(comm, &rank));
    NCCL_CHECK(ncclCommCount(comm, &nranks));
    if (rank != w->rank || nranks != w->nranks)
        ncclab_die(1,
                   "%s (lab 1, Task 3) made a communicator in which this process is rank %d of "
                   "%d, expected rank %d of %d",
                   fn, rank, nranks, w->rank, w->nranks);
    return comm;
}

ncclComm_t ncclab_kit_world_comm(const struct ncclab_world *w, int over_tcp)
{
    /* Every rank offers an id and all take the first rank's: over MPI one
     * gather, over TCP the helper lab 1 uses. */
    static const double wait_s = 60.0; /* for the peers, as lab 1's handout says */
    ncclUniqueId mine, first;
    memset(&mine, 0, sizeof mine);
    if (w->rank == 0) NCCL_CHECK(ncclGetUniqueId(&mine));
    if (over_tcp) {
        first = mine;
        ncclab_tcp_share_unique_id(&first, w->rank, w->nranks, wait_s);
    } else {
        ncclUniqueId *all = malloc(sizeof *all * (size_t)w->nranks);
        if (!all) ncclab_die(1, "out of memory");
        MPI_CHECK(MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE,
                                MPI_COMM_WORLD));
        first = all[0];
        free(all);
    }
    ncclComm_t comm = NULL;
    NCCL_CHECK(ncclCommInitRank(&comm, w->nranks, first, w->rank));
    return comm;
}

void ncclab_finalize(void)
{
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down) {
        /* A crash in Open MPI's own teardown then says so: "crashed while
         * finalizing MPI", which the grader makes again before charging it
         * (grader/schedule.c; a rare race of Open MPI 4.1 with PMIx). */
        ncclab_watchdog_context("finalizing MPI (MPI_Finalize, after the lab's work)");
        MPI_Finalize();
    }
}

/* ---- TCP: rank 0 serves the id ---- */

static const char HELLO[8] = {'n', 'c', 'c', 'l', 'a', 'b', 'I', 'D'};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int master_port(void)
{
    const char *p = getenv("MASTER_PORT");
    if (!p || !*p)
        ncclab_die(2, "MASTER_PORT is not set: the TCP bootstrap needs MASTER_ADDR (rank 0's host) "
                      "and MASTER_PORT (a free TCP port), e.g. export MASTER_ADDR=$(hostname) "
                      "MASTER_PORT=29500; under Slurm derive the port from SLURM_JOB_ID");
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p || *end || v < 1 || v > 65535)
        ncclab_die(2, "MASTER_PORT='%s' is not a TCP port number (1-65535)", p);
    if (v < 1024 && geteuid() != 0)
        ncclab_die(2, "MASTER_PORT=%ld is a privileged port: choose one above 1023", v);
    return (int)v;
}

static const char *master_addr(void)
{
    const char *a = getenv("MASTER_ADDR");
    if (!a || !*a)
        ncclab_die(2, "MASTER_ADDR is not set: set it to the host name or address of the node "
                      "running rank 0 (under Slurm: the first host of "
                      "'scontrol show hostnames $SLURM_JOB_NODELIST')");
    return a;
}

/* Read or write exactly len bytes before the deadline; 0 on success. */
static int io_all(int fd, void *buf, size_t len, int writing, double deadline)
{
    char *p = buf;
    while (len > 0) {
        struct pollfd pfd = {fd, writing ? POLLOUT : POLLIN, 0};
        int ms = (int)((deadline - now_s()) * 1000);
        if (ms <= 0 || poll(&pfd, 1, ms) <= 0) return -1;
        ssize_t n = writing ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (n <= 0) {
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static void serve_id(const ncclUniqueId *id, int port, int nranks, double timeout_s)
{
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    int v6 = fd >= 0;
    if (!v6) fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) ncclab_die(1, "TCP bootstrap: socket() failed: %s", strerror(errno));
    int one = 1, zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc;
    if (v6) {
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
        struct sockaddr_in6 a = {0};
        a.sin6_family = AF_INET6;
        a.sin6_addr = in6addr_any;
        a.sin6_port = htons((unsigned short)port);
        rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    } else {
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        a.sin_port = htons((unsigned short)port);
        rc = bind(fd, (struct sockaddr *)&a, sizeof a);
    }
    if (rc != 0) {
        if (errno == EADDRINUSE)
            ncclab_die(2,
                       "TCP bootstrap: MASTER_PORT %d is already in use on this host (another "
                       "job, or a previous run still closing): choose another port, e.g. "
                       "MASTER_PORT=$((20000 + SLURM_JOB_ID %% 20000))",
                       port);
        ncclab_die(2, "TCP bootstrap: cannot listen on port %d: %s", port, strerror(errno));
    }
    if (listen(fd, 128) != 0) ncclab_die(1, "TCP bootstrap: listen failed: %s", strerror(errno));

    double deadline = now_s() + timeout_s;
    int served = 0;
    while (served < nranks - 1) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int ms = (int)((deadline - now_s()) * 1000);
        if (ms <= 0 || poll(&pfd, 1, ms) <= 0)
            ncclab_die(2,
                       "TCP bootstrap: only %d of the %d other ranks fetched the id within %.0f s. "
                       "Are all ranks started, with the same MASTER_ADDR/MASTER_PORT, and is "
                       "WORLD_SIZE right?",
                       served, nranks - 1, timeout_s);
        int c = accept(fd, NULL, NULL);
        if (c < 0) continue;
        char hello[sizeof HELLO];
        /* A stranger (a port scan, a stale client) is dropped, not served. */
        if (io_all(c, hello, sizeof hello, 0, now_s() + 5) == 0 &&
            memcmp(hello, HELLO, sizeof hello) == 0 &&
            io_all(c, (void *)id, sizeof *id, 1, now_s() + 5) == 0)
            served++;
        close(c);
    }
    close(fd);
}

static void fetch_id(ncclUniqueId *id, const char *addr, int port, double timeout_s)
{
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int gai = getaddrinfo(addr, service, &hints, &res);
    if (gai != 0)
        ncclab_die(2, "TCP bootstrap: cannot resolve MASTER_ADDR '%s': %s", addr,
                   gai_strerror(gai));

    double deadline = now_s() + timeout_s;
    int last_errno = 0;
    for (;;) {
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
            int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
            if (fd < 0) continue;
            if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
                io_all(fd, (void *)HELLO, sizeof HELLO, 1, deadline) == 0 &&
                io_all(fd, id, sizeof *id, 0, deadline) == 0) {
                close(fd);
                freeaddrinfo(res);
                return;
            }
            last_errno = errno;
            close(fd);
        }
        if (now_s() > deadline) break;
        usleep(100 * 1000); /* rank 0 may not be listening yet */
    }
    freeaddrinfo(res);
    ncclab_die(2,
               "TCP bootstrap: could not get the id from the master %s:%d within %.0f s (%s). "
               "Is rank 0 running, is MASTER_ADDR rank 0's host, and is the port reachable?",
               addr, port, timeout_s, last_errno ? strerror(last_errno) : "timed out");
}

void ncclab_tcp_share_unique_id(ncclUniqueId *id, int rank, int nranks, double timeout_s)
{
    /* Sites and tests may shorten or lengthen the wait without recompiling. */
    const char *t = getenv("NCCLAB_BOOTSTRAP_TIMEOUT");
    if (t && *t) {
        char *end;
        double v = strtod(t, &end);
        if (end == t || *end || !(v > 0))
            ncclab_die(2, "NCCLAB_BOOTSTRAP_TIMEOUT='%s' is not a positive number of seconds", t);
        timeout_s = v;
    }
    const char *addr = master_addr();
    int port = master_port();
    if (nranks <= 1) return;
    if (rank == 0)
        serve_id(id, port, nranks, timeout_s);
    else
        fetch_id(id, addr, port, timeout_s);
}
