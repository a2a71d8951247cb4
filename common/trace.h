/* A link-time trace of what a student's code asked NCCL to do.
 *
 * Lab binaries are linked with -Wl,--wrap=<function> for the functions
 * below, so every call from lab code passes through a counter here before
 * reaching NCCL or CUDA. The drivers reset the trace around a student's
 * function and read it afterwards ("did the timing loop really run warm-up +
 * iters all-reduces, each moving the whole buffer?") into the records, where
 * the grader checks it.
 *
 * What is counted is what moved, not only what was called: a collective or
 * a send/recv with a count of 0 moves nothing and is counted apart
 * (ncclab_trace_zero_calls), never as a call. Bytes are count x type size as
 * the NCCL call takes them (per rank: the all-gather's send count, the
 * reduce-scatter's receive count); sends and receives also by peer. And what
 * each data call was given: its reduction operator and its buffers, so that
 * a driver can tell a sum of sendbuf into recvbuf from, say, an in-place max
 * of recvbuf whose result was then written by hand. */
#ifndef NCCLAB_TRACE_H
#define NCCLAB_TRACE_H

#ifdef __cplusplus
extern "C" {
#endif

enum ncclab_traced {
    NCCLAB_TRACE_ALLREDUCE,
    NCCLAB_TRACE_REDUCE,
    NCCLAB_TRACE_BROADCAST,
    NCCLAB_TRACE_ALLGATHER,
    NCCLAB_TRACE_REDUCESCATTER,
    NCCLAB_TRACE_SEND,
    NCCLAB_TRACE_RECV,
    NCCLAB_TRACE_GROUP_START,
    NCCLAB_TRACE_GROUP_END,
    NCCLAB_TRACE_STREAM_SYNC,
    NCCLAB_TRACE_EVENT_SYNC,
    NCCLAB_TRACE_DEVICE_SYNC,
    NCCLAB_TRACE_EVENT_RECORD,
    NCCLAB_TRACE_COMM_SPLIT,
    NCCLAB_TRACE_EVENT_ELAPSED, /* cudaEventElapsedTime calls that succeeded */
    NCCLAB_TRACE_COUNT
};

/* The data-moving calls: the five collectives, ncclSend and ncclRecv. */
#define NCCLAB_TRACE_NDATA (NCCLAB_TRACE_RECV + 1)

/* Peers tracked one by one; sends and receives to higher ranks are summed
 * under ncclab_trace_peer_bytes(..., NCCLAB_TRACE_MAX_PEERS). */
#define NCCLAB_TRACE_MAX_PEERS 256

void ncclab_trace_reset(void);

/* Calls since the last reset. For the data-moving calls, only those with a
 * count above 0. */
long ncclab_trace_count(enum ncclab_traced what);

/* The sum of ncclab_trace_count over the kinds whose bit (1u << what) is
 * set in `mask`. */
long ncclab_trace_count_mask(unsigned mask);

/* Data-moving calls with a count of 0 (they move nothing). */
long ncclab_trace_zero_calls(enum ncclab_traced what);

/* Bytes the data-moving calls of this kind were given (count x type size). */
long long ncclab_trace_bytes(enum ncclab_traced what);

/* Bytes sent to (NCCLAB_TRACE_SEND) or received from (NCCLAB_TRACE_RECV)
 * `peer`; peer NCCLAB_TRACE_MAX_PEERS: every peer at or above it, and
 * invalid (negative) peers. -1 for another `what`. */
long long ncclab_trace_peer_bytes(enum ncclab_traced what, int peer);

/* Data-moving calls (count > 0) of every kind except those whose bit
 * (1u << what) is set in `except`. */
long ncclab_trace_data_calls_except(unsigned except);

/* Calls of the five collectives, those with a count of 0 included (lab 8
 * builds its all-reduce without any); *first gets the name of the first kind
 * called, in the order all-reduce, reduce-scatter, all-gather, reduce,
 * broadcast ("none" when there was none). */
long ncclab_trace_collective_calls(const char **first);

/* cudaEventElapsedTime calls that succeeded since the reset; *last_ms and
 * *sum_ms (when not NULL) get the last result and the sum of them all, in
 * the milliseconds the call gives (0 when there was none). A driver compares
 * them with the time a student's function returned: a match is a time in
 * milliseconds returned as microseconds, seen rather than guessed. */
long ncclab_trace_elapsed(double *last_ms, double *sum_ms);

/* ncclCommSplit calls since the reset; *color and *key (if not NULL) get
 * the arguments of the last one (unchanged when there was none). */
long ncclab_trace_last_split(int *color, int *key);

/* Calls of one kind (count > 0) NOT given exactly: the reduction operator
 * `op` (an ncclRedOp_t; NCCLAB_TRACE_ANY_OP: any), the send buffer `send`
 * and the receive buffer `recv` (NCCLAB_TRACE_ANY_BUF: any). Calls without
 * an operator (broadcast, all-gather, send, receive) have op -1; a send has
 * no receive buffer and a receive no send buffer (NULL). The first such
 * call's operator and buffers go to *got_op, *got_send, *got_recv (when not
 * NULL); past NCCLAB_TRACE_ARG_SLOTS different ones the rest count with
 * op -2 and NULL buffers. */
#define NCCLAB_TRACE_ANY_OP (-100)
extern const char ncclab_trace_any_buf[1];
#define NCCLAB_TRACE_ANY_BUF ((const void *)ncclab_trace_any_buf)
#define NCCLAB_TRACE_ARG_SLOTS 8
long ncclab_trace_calls_not_given(enum ncclab_traced what, int op, const void *send,
                                  const void *recv, int *got_op, const void **got_send,
                                  const void **got_recv);

/* "sum", "prod", "max", "min", "avg", or "op<N>" in buf (a premultiplied
 * sum, ncclRedOpCreatePreMulSum, is one of those). */
const char *ncclab_redop_name(int op, char *buf, unsigned len);

/* Size in bytes of an ncclDataType_t value (0 for an unknown type). */
int ncclab_type_size(int nccl_type);

#ifdef __cplusplus
}
#endif
#endif
