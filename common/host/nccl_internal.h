/*
 * nccl_internal.h -- shared declarations of the NCCL half of the host
 * backend. Only the backend sources in this folder include it.
 */
#ifndef NCCLAB_NCCL_INTERNAL_H
#define NCCLAB_NCCL_INTERNAL_H

#include <nccl.h>
#include <pthread.h>
#include <stdatomic.h>

#include "host_internal.h"

/* ---- nccl_transport.c: how the ranks of a communicator talk ---- */

/* One direction of a same-host pair: a byte ring in the receiver's
 * shared-memory segment. The sender advances head, the receiver tail; each
 * sits on its own cache line. */
struct nccl_fifo {
    _Atomic uint64_t head;
    char pad_head[56];
    _Atomic uint64_t tail;
    char pad_tail[56];
    /* NCCL_FIFO_BYTES of data follow */
};

/* A peer of this rank in one communicator. Same-host peers talk through
 * shared memory, others through two TCP sockets (send/recv and
 * collectives). The busy locks make one stream worker at a time own a
 * direction, so two workers never interleave their messages. */
struct nccl_peer {
    bool local;
    bool paced; /* another host identity: TCP through the link model */
    char *seg;  /* the peer's mapped segment (local peers, self included) */
    size_t seg_bytes;
    struct nccl_fifo *out[2]; /* me -> peer, in the peer's segment ([1]: collectives) */
    struct nccl_fifo *in[2];  /* peer -> me, in my segment */
    bool mid_message[2];      /* remote: a paced message is partly sent on this channel */
    int fd_p2p, fd_coll;      /* remote peers; -1 otherwise */
    pthread_mutex_t send_busy, recv_busy;
};

/* The link model (nccl_transport.c): TCP traffic to a peer of another host
 * identity goes through this rank's outgoing link, which carries
 * bytes_per_ns and adds latency_ns to every message. A link's queue empties
 * at free_ns (host_now_ns clock); a sender that gets more than the slack
 * ahead of it sleeps. */
struct nccl_link_model {
    double bytes_per_ns; /* GB/s: 1e9 B/s = 1 B/ns */
    uint64_t latency_ns;
};
enum { NCCL_LINK_SLACK_NS = 200 * 1000 }; /* how far a sender may run ahead, mid-message */
/* Charges `bytes` sent by a call that started at start_ns (plus the
 * latency when `new_message`) to a link whose queue empties at *free_ns;
 * an idle link banks no credit. Returns how long the sender must sleep at
 * now_ns: until the queue is empty when `message_done` (the message has
 * then taken latency + bytes / bandwidth from its start), else until it is
 * within the slack (0: go on). No model (bytes_per_ns 0): never. */
uint64_t nccl_link_charge(const struct nccl_link_model *m, uint64_t *free_ns, uint64_t start_ns,
                          uint64_t now_ns, size_t bytes, bool new_message, bool message_done);
/* Reads NCCLAB_NET_GBPS and NCCLAB_NET_LATENCY_US (once per process);
 * ncclInvalidArgument with *why set when one is malformed. */
ncclResult_t nccl_link_model_get(struct nccl_link_model *m, const char **why);

/* A message on a channel starts with this header: the sender's byte count
 * and what kind of message it is, so a mismatch is caught, not absorbed. */
struct nccl_msg_hdr {
    uint64_t bytes;
    uint32_t magic;
    uint32_t kind;
};

struct ncclComm {
    uint32_t magic;
    int rank, nranks, device;
    uint64_t comm_magic;       /* random per communicator; names its segments */
    size_t chunk_elems;        /* largest element count per transfer piece */
    bool all_local;            /* every rank on this host: shared-memory collectives */
    bool in_process;           /* every rank on this host in this process: segments in
                                  private memory, not /dev/shm */
    bool peers_ready;          /* the transport set-up went through */
    struct nccl_peer *peers;   /* [nranks] */
    int ring_next, ring_prev;  /* control ring sockets (-1 at one rank) */
    pthread_mutex_t ctrl_lock; /* one host-side control exchange at a time */
    uint64_t barrier_seq;      /* shared-memory barriers passed (worker side) */
    uint64_t scratch_flip;     /* which half of the scratch area the next piece uses */
    bool finalized;
    _Atomic bool aborting;  /* ncclCommAbort: operations in progress give up */
    int pending;            /* enqueued operations that have not finished */
    long long coll_seq;     /* collectives executed so far (stream workers, in order) */
    struct host_dep *tails; /* last enqueued operation(s) of this comm */
    size_t ntails;
    struct ncclComm *next_live;
};

/* What the bootstrap root learns from each rank and sends back to all. */
struct nccl_card {
    uint64_t id_magic;
    int32_t nranks, rank, device, status;
    int32_t timeout_s;  /* how long this rank lets the rendezvous wait */
    char host[128];     /* host identity: boot id and host name */
    uint64_t process;   /* random per process: ranks of one process share memory directly */
    char dev_ident[96]; /* node name (launcher's) and physical device behind `device` */
    uint32_t listen_ip; /* network byte order */
    uint16_t listen_port;
    char msg[200]; /* why status is not success */
};

/* Shared-memory layout sizes, and the largest communicator. */
enum {
    NCCL_HOST_MAX_RANKS = 4096,
    NCCL_FIFO_BYTES = 256 << 10,  /* per ordered same-host pair */
    NCCL_EAGER_BYTES = 64 << 10,  /* an unfused send this small completes unreceived */
    NCCL_SCRATCH_BYTES = 2 << 20, /* each half of a rank's collective scratch */
    NCCL_SEG_HDR_BYTES = 4096
};

/* What a rank's segment says about the rank, for peers that wait on it. */
enum nccl_rank_state {
    NCCL_RANK_LIVE = 0,
    NCCL_RANK_LEFT = 1,   /* finalized or destroyed the communicator */
    NCCL_RANK_ABORTED = 2 /* ncclCommAbort */
};

/* Header of a rank's segment: its barrier counter, the signature of the
 * collective it is running, and who it is (so that a peer waiting on it
 * can tell a rank that is slow from one that has gone). */
struct nccl_seg_hdr {
    uint64_t magic;
    char pad0[56];
    _Atomic uint64_t arrive;
    char pad1[56];
    int64_t sig[2][8];     /* by the parity of the collective's sequence number */
    _Atomic int32_t state; /* enum nccl_rank_state */
    int32_t pid;
    uint64_t pid_start;    /* the process's start time (clock ticks since boot) */
    uint64_t pid_ns;       /* inode of its PID namespace */
    _Atomic int32_t users; /* in_process: ranks that still use this segment */
};

/* Builds the transport of c from the bootstrap table (cards sorted by
 * rank) over the listening socket listen_fd (closed here). Collective over
 * the new communicator; every rank gets the same result. */
ncclResult_t nccl_transport_setup(struct ncclComm *c, const struct nccl_card *table, int listen_fd);
void nccl_transport_teardown(struct ncclComm *c);
/* Host-side all-gather of `bytes` from every rank over the control ring. */
ncclResult_t nccl_ctrl_allgather(struct ncclComm *c, const void *mine, void *all, size_t bytes);
/* Host-side agreement: every rank gets the worst of the ranks' results. */
ncclResult_t nccl_ctrl_agree(struct ncclComm *c, ncclResult_t mine, const char *fn);

/* Worker side. Each call moves what it can now and returns the number of
 * bytes moved (0: nothing possible yet). coll selects the collective
 * channel of a remote peer. A broken connection is fatal. A push to a peer
 * of another host goes through the link model, and may sleep to keep its
 * pace; `more` says that the message goes on after these bytes (a header
 * before its payload), so the message's latency is counted once. */
size_t nccl_chan_push(struct ncclComm *c, int peer, bool coll, const void *buf, size_t len,
                      bool more);
size_t nccl_chan_pop(struct ncclComm *c, int peer, bool coll, void *buf, size_t len);
/* A wait on sockets alone: blocks (poll, no CPU spent) for up to
 * timeout_ms until one of the n channels (peer, sending) can move. Returns
 * false at once, without waiting, when one of them is a shared-memory
 * peer: the caller then polls memory as usual. */
bool nccl_chan_block(struct ncclComm *c, const int *peers, const bool *sending, int n, bool coll,
                     int timeout_ms);
/* Bytes this rank pushed to peer that the peer has not consumed yet
 * (shared memory only; 0 for sockets, whose kernel buffers decide). */
uint64_t nccl_chan_unconsumed(struct ncclComm *c, int peer);
/* Shared-memory barrier over all ranks (all_local communicators); what
 * names the operation for a message if a rank waited for has gone. False
 * when the communicator is being aborted (the caller gives up). */
bool nccl_shm_barrier(struct ncclComm *c, const char *what);
/* Marks this rank's segment with its state for the peers. */
void nccl_set_rank_state(struct ncclComm *c, enum nccl_rank_state st);
/* True when local peer q can no longer take part: it finalized, destroyed
 * or aborted the communicator, or its process ended; why says which. False
 * for remote peers (a broken socket tells) and for this rank. */
bool nccl_peer_gone(struct ncclComm *c, int q, char *why, size_t len);
/* Ends the job: rank q has gone (why) while this rank waited for it in what. */
void nccl_peer_gone_fatal(struct ncclComm *c, int q, const char *why, const char *what)
    __attribute__((noreturn));
struct nccl_seg_hdr *nccl_seg_hdr(struct ncclComm *c, int rank);

char *nccl_scratch(struct ncclComm *c, int rank, uint64_t half);

/* A random number drawn once per process (struct nccl_card's process). */
uint64_t nccl_process_token(void);

/* ---- nccl_boot.c: unique ids and the bootstrap rendezvous ---- */

/* True when id was made by ncclGetUniqueId (checks its magic prefix). */
bool nccl_unique_id_valid(const ncclUniqueId *id);
/* Joins the rendezvous of id: sends *mine to the root and receives the
 * verdict. On success *table (malloc'd, nranks cards sorted by rank) and
 * *listen_fd (this rank's listening socket) are set. mine->status carries
 * this rank's own argument check; a failure anywhere fails every rank. */
ncclResult_t nccl_boot_join(const ncclUniqueId *id, struct nccl_card *mine,
                            struct nccl_card **table, int *listen_fd, uint64_t *comm_magic);
/* TCP helpers (addresses and ports in network byte order; timeouts in
 * ms, -1 for none). Return -1 with errno on failure. */
int nccl_sock_listen(uint32_t ip, uint16_t *port);
int nccl_sock_connect(uint32_t ip, uint16_t port, int timeout_ms);
int nccl_sock_accept(int lfd, int timeout_ms);
int nccl_sock_send(int fd, const void *buf, size_t len, int timeout_ms);
int nccl_sock_recv(int fd, void *buf, size_t len, int timeout_ms);
/* Seconds a rendezvous waits for missing ranks (NCCLAB_HOST_INIT_TIMEOUT). */
int nccl_boot_timeout_s(void);

/* ---- nccl_core.c ---- */

/* Stores a formatted message for ncclGetLastError, prints it to stderr as
 * "NCCL host backend WARN ..." (unless NCCLAB_HOST_QUIET is set), and
 * returns code so callers can write `return nccl_warn(...)`. */
ncclResult_t nccl_warn(ncclResult_t code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Ends the job after an error that leaves a communicator unusable (ranks
 * disagreeing on a collective, a peer gone): prints the message as an
 * ERROR and exits with status 1 (through MPI_Abort when MPI is running,
 * so that mpirun stops the other ranks too). */
void nccl_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Waiting without burning a core: the first NCCL_HOST_SPIN_MS poll busily
 * (a few microseconds of pause instructions, then yielding the CPU; 1 ms
 * where the machine has more ranks than CPUs), then naps that double from
 * 20 us to 1 ms. A job hung for a watchdog's 10 s costs each rank about
 * 0.1 s of CPU. */
struct nccl_wait {
    uint64_t spin_until_ns;
    uint64_t next_check_ns; /* when to look at the peers waited for again */
    long nap_us;
    unsigned polls;
};
void nccl_wait_start(struct nccl_wait *w);
void nccl_wait_pause(struct nccl_wait *w);
/* nccl_wait_pause for a wait on communicator c's peers: false once c is
 * being aborted, when the caller must give up its operation. */
bool nccl_comm_pause(struct ncclComm *c, struct nccl_wait *w);
/* True about every 100 ms of one wait: time to check (nccl_peer_gone) that
 * the peers waited for are still there. */
bool nccl_wait_check_due(struct nccl_wait *w);

/* Datatypes and reduction operators. The check functions warn and return
 * ncclInvalidArgument on anything the backend cannot do. */
ncclResult_t nccl_check_type(const char *fn, ncclDataType_t type);
ncclResult_t nccl_check_op(const char *fn, ncclRedOp_t op);
size_t nccl_type_size(ncclDataType_t type);
/* dst[i] = op(srcs[0][i], ..., srcs[n-1][i]) for count elements; dst may be
 * one of the sources. */
void nccl_reduce_n(void *dst, const void *const *srcs, int n, size_t count, ncclDataType_t type,
                   ncclRedOp_t op);
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
/* nccl_mem.c: forgets the buffer registrations of a communicator that is
 * going away. Lock held. */
void nccl_reg_drop_comm_locked(const struct ncclComm *comm);

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

/* Validates the stream argument of fn for communicator c: a live stream of
 * c's device (a default-stream handle means c's device's default stream). */
ncclResult_t nccl_check_stream(const char *fn, cudaStream_t stream, const struct ncclComm *c);

/* Takes a validated task (copied): enqueues it on its stream now, or keeps
 * it for ncclGroupEnd when a group is open. */
ncclResult_t nccl_submit(const struct nccl_task *task);

/* A host-side call made inside a group (communicator creation, split): it
 * runs at the outermost ncclGroupEnd, on a thread of its own with the
 * caller's current device, together with the group's other such calls.
 * arg is malloc'd and freed after the run (also when it never runs). */
typedef ncclResult_t (*nccl_deferred_fn)(void *arg);
ncclResult_t nccl_group_defer(nccl_deferred_fn run, void *arg);

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
