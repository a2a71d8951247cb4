/* Counting wrappers installed with -Wl,--wrap (see trace.h). Each records
 * the call and forwards it to the real function unchanged. */
#include "trace.h"

#include <cuda_runtime.h>
#include <nccl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

static _Atomic long counts[NCCLAB_TRACE_COUNT];
static _Atomic long zero_counts[NCCLAB_TRACE_NDATA];
static _Atomic long long bytes[NCCLAB_TRACE_NDATA];
static _Atomic long long send_peer[NCCLAB_TRACE_MAX_PEERS + 1];
static _Atomic long long recv_peer[NCCLAB_TRACE_MAX_PEERS + 1];
static _Atomic int split_color, split_key;
static double elapsed_last_ms, elapsed_sum_ms; /* under arg_lock */

const char ncclab_trace_any_buf[1]; /* its address means "any buffer" */

/* The distinct (operator, send, recv) a kind of data call was given. */
struct arg_slot {
    int op;
    const void *send, *recv;
    long calls;
};
static struct arg_slot arg_slots[NCCLAB_TRACE_NDATA][NCCLAB_TRACE_ARG_SLOTS];
static long arg_overflow[NCCLAB_TRACE_NDATA];
static pthread_mutex_t arg_lock = PTHREAD_MUTEX_INITIALIZER;

static void note_args(enum ncclab_traced what, int op, const void *send, const void *recv)
{
    pthread_mutex_lock(&arg_lock);
    struct arg_slot *s = arg_slots[what];
    int i = 0;
    while (i < NCCLAB_TRACE_ARG_SLOTS && s[i].calls > 0 &&
           !(s[i].op == op && s[i].send == send && s[i].recv == recv))
        i++;
    if (i == NCCLAB_TRACE_ARG_SLOTS) {
        arg_overflow[what]++;
    } else {
        s[i] = (struct arg_slot){op, send, recv, s[i].calls + 1};
    }
    pthread_mutex_unlock(&arg_lock);
}

void ncclab_trace_reset(void)
{
    for (int i = 0; i < NCCLAB_TRACE_COUNT; i++) atomic_store(&counts[i], 0);
    for (int i = 0; i < NCCLAB_TRACE_NDATA; i++) {
        atomic_store(&zero_counts[i], 0);
        atomic_store(&bytes[i], 0);
    }
    for (int i = 0; i <= NCCLAB_TRACE_MAX_PEERS; i++) {
        atomic_store(&send_peer[i], 0);
        atomic_store(&recv_peer[i], 0);
    }
    pthread_mutex_lock(&arg_lock);
    for (int i = 0; i < NCCLAB_TRACE_NDATA; i++) {
        for (int k = 0; k < NCCLAB_TRACE_ARG_SLOTS; k++) arg_slots[i][k].calls = 0;
        arg_overflow[i] = 0;
    }
    elapsed_last_ms = elapsed_sum_ms = 0;
    pthread_mutex_unlock(&arg_lock);
}

long ncclab_trace_elapsed(double *last_ms, double *sum_ms)
{
    pthread_mutex_lock(&arg_lock);
    if (last_ms) *last_ms = elapsed_last_ms;
    if (sum_ms) *sum_ms = elapsed_sum_ms;
    long n = atomic_load(&counts[NCCLAB_TRACE_EVENT_ELAPSED]);
    pthread_mutex_unlock(&arg_lock);
    return n;
}

long ncclab_trace_calls_not_given(enum ncclab_traced what, int op, const void *send,
                                  const void *recv, int *got_op, const void **got_send,
                                  const void **got_recv)
{
    if ((int)what < 0 || what >= NCCLAB_TRACE_NDATA) return 0;
    long other = 0;
    int first = 1;
    pthread_mutex_lock(&arg_lock);
    for (int k = 0; k < NCCLAB_TRACE_ARG_SLOTS; k++) {
        const struct arg_slot *s = &arg_slots[what][k];
        if (s->calls == 0) break;
        if ((op == NCCLAB_TRACE_ANY_OP || s->op == op) &&
            (send == NCCLAB_TRACE_ANY_BUF || s->send == send) &&
            (recv == NCCLAB_TRACE_ANY_BUF || s->recv == recv))
            continue;
        if (first) {
            if (got_op) *got_op = s->op;
            if (got_send) *got_send = s->send;
            if (got_recv) *got_recv = s->recv;
            first = 0;
        }
        other += s->calls;
    }
    if (arg_overflow[what] > 0 && first) {
        if (got_op) *got_op = -2;
        if (got_send) *got_send = NULL;
        if (got_recv) *got_recv = NULL;
    }
    other += arg_overflow[what];
    pthread_mutex_unlock(&arg_lock);
    return other;
}

const char *ncclab_redop_name(int op, char *buf, unsigned len)
{
    static const char *const names[] = {"sum", "prod", "max", "min", "avg"};
    if (op >= 0 && op < 5)
        snprintf(buf, len, "%s", names[op]);
    else if (op == -1)
        snprintf(buf, len, "none");
    else
        snprintf(buf, len, "op%d", op);
    return buf;
}

long ncclab_trace_count(enum ncclab_traced what)
{
    if ((int)what < 0 || what >= NCCLAB_TRACE_COUNT) return -1;
    return atomic_load(&counts[what]);
}

long ncclab_trace_zero_calls(enum ncclab_traced what)
{
    if ((int)what < 0 || what >= NCCLAB_TRACE_NDATA) return 0;
    return atomic_load(&zero_counts[what]);
}

long long ncclab_trace_bytes(enum ncclab_traced what)
{
    if ((int)what < 0 || what >= NCCLAB_TRACE_NDATA) return 0;
    return atomic_load(&bytes[what]);
}

long long ncclab_trace_peer_bytes(enum ncclab_traced what, int peer)
{
    if (peer < 0 || peer > NCCLAB_TRACE_MAX_PEERS) peer = NCCLAB_TRACE_MAX_PEERS;
    if (what == NCCLAB_TRACE_SEND) return atomic_load(&send_peer[peer]);
    if (what == NCCLAB_TRACE_RECV) return atomic_load(&recv_peer[peer]);
    return -1;
}

long ncclab_trace_count_mask(unsigned mask)
{
    long calls = 0;
    for (int k = 0; k < NCCLAB_TRACE_COUNT; k++)
        if (mask & (1u << k)) calls += ncclab_trace_count((enum ncclab_traced)k);
    return calls;
}

long ncclab_trace_collective_calls(const char **first)
{
    static const struct {
        enum ncclab_traced what;
        const char *name;
    } colls[] = {{NCCLAB_TRACE_ALLREDUCE, "ncclAllReduce"},
                 {NCCLAB_TRACE_REDUCESCATTER, "ncclReduceScatter"},
                 {NCCLAB_TRACE_ALLGATHER, "ncclAllGather"},
                 {NCCLAB_TRACE_REDUCE, "ncclReduce"},
                 {NCCLAB_TRACE_BROADCAST, "ncclBroadcast"}};
    long total = 0;
    *first = "none";
    for (size_t i = 0; i < sizeof colls / sizeof *colls; i++) {
        long c = ncclab_trace_count(colls[i].what) + ncclab_trace_zero_calls(colls[i].what);
        if (c > 0 && total == 0) *first = colls[i].name;
        total += c;
    }
    return total;
}

long ncclab_trace_data_calls_except(unsigned except)
{
    long n = 0;
    for (int i = 0; i < NCCLAB_TRACE_NDATA; i++)
        if (!(except & (1u << i))) n += atomic_load(&counts[i]);
    return n;
}

long ncclab_trace_last_split(int *color, int *key)
{
    long n = atomic_load(&counts[NCCLAB_TRACE_COMM_SPLIT]);
    if (n > 0) {
        if (color) *color = atomic_load(&split_color);
        if (key) *key = atomic_load(&split_key);
    }
    return n;
}

int ncclab_type_size(int t)
{
    /* The values of ncclDataType_t, the same in NCCL and the host backend. */
    switch (t) {
    case 0:  /* int8, char */
    case 1:  /* uint8 */
    case 10: /* fp8 e4m3 */
    case 11: /* fp8 e5m2 */ return 1;
    case 6: /* float16 */
    case 9: /* bfloat16 */ return 2;
    case 2: /* int32 */
    case 3: /* uint32 */
    case 7: /* float32 */ return 4;
    case 4: /* int64 */
    case 5: /* uint64 */
    case 8: /* float64 */ return 8;
    default: return 0;
    }
}

#define COUNT(what) atomic_fetch_add(&counts[what], 1)

/* A data-moving call: counted only when it moves something, with what it
 * was given. */
static void data_call(enum ncclab_traced what, size_t count, ncclDataType_t type, int op,
                      const void *send, const void *recv)
{
    if (count == 0) {
        atomic_fetch_add(&zero_counts[what], 1);
        return;
    }
    COUNT(what);
    atomic_fetch_add(&bytes[what], (long long)count * ncclab_type_size((int)type));
    note_args(what, op, send, recv);
}

static void peer_call(_Atomic long long *table, int peer, size_t count, ncclDataType_t type)
{
    if (count == 0) return;
    if (peer < 0 || peer > NCCLAB_TRACE_MAX_PEERS) peer = NCCLAB_TRACE_MAX_PEERS;
    atomic_fetch_add(&table[peer], (long long)count * ncclab_type_size((int)type));
}

/* The calls the trace wraps, with their parameter types: for each, the
 * __real_ function (resolved by the linker's --wrap) and our __wrap_ one
 * are declared from this one list (prototypes keep -Wmissing-prototypes
 * quiet and document the signatures). */
#define TRACED_CALLS(X)                                                                            \
    X(ncclResult_t, ncclAllReduce,                                                                 \
      (const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t))       \
    X(ncclResult_t, ncclReduce,                                                                    \
      (const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t, cudaStream_t))  \
    X(ncclResult_t, ncclBroadcast,                                                                 \
      (const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))               \
    X(ncclResult_t, ncclAllGather,                                                                 \
      (const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t))                    \
    X(ncclResult_t, ncclReduceScatter,                                                             \
      (const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t))       \
    X(ncclResult_t, ncclSend,                                                                      \
      (const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))                       \
    X(ncclResult_t, ncclRecv, (void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))     \
    X(ncclResult_t, ncclGroupStart, (void))                                                        \
    X(ncclResult_t, ncclGroupEnd, (void))                                                          \
    X(ncclResult_t, ncclCommSplit, (ncclComm_t, int, int, ncclComm_t *, ncclConfig_t *))           \
    X(cudaError_t, cudaStreamSynchronize, (cudaStream_t))                                          \
    X(cudaError_t, cudaEventSynchronize, (cudaEvent_t))                                            \
    X(cudaError_t, cudaDeviceSynchronize, (void))                                                  \
    X(cudaError_t, cudaEventRecord, (cudaEvent_t, cudaStream_t))                                   \
    X(cudaError_t, cudaEventElapsedTime, (float *, cudaEvent_t, cudaEvent_t))
#define DECLARE_REAL_AND_WRAP(ret, name, params)                                                   \
    ret __real_##name params;                                                                      \
    ret __wrap_##name params;
TRACED_CALLS(DECLARE_REAL_AND_WRAP)
#undef DECLARE_REAL_AND_WRAP

ncclResult_t __wrap_ncclAllReduce(const void *s, void *r, size_t n, ncclDataType_t t,
                                  ncclRedOp_t op, ncclComm_t c, cudaStream_t st)
{
    data_call(NCCLAB_TRACE_ALLREDUCE, n, t, (int)op, s, r);
    return __real_ncclAllReduce(s, r, n, t, op, c, st);
}
ncclResult_t __wrap_ncclReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op,
                               int root, ncclComm_t c, cudaStream_t st)
{
    data_call(NCCLAB_TRACE_REDUCE, n, t, (int)op, s, r);
    return __real_ncclReduce(s, r, n, t, op, root, c, st);
}
ncclResult_t __wrap_ncclBroadcast(const void *s, void *r, size_t n, ncclDataType_t t, int root,
                                  ncclComm_t c, cudaStream_t st)
{
    data_call(NCCLAB_TRACE_BROADCAST, n, t, -1, s, r);
    return __real_ncclBroadcast(s, r, n, t, root, c, st);
}
ncclResult_t __wrap_ncclAllGather(const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t c,
                                  cudaStream_t st)
{
    data_call(NCCLAB_TRACE_ALLGATHER, n, t, -1, s, r);
    return __real_ncclAllGather(s, r, n, t, c, st);
}
ncclResult_t __wrap_ncclReduceScatter(const void *s, void *r, size_t n, ncclDataType_t t,
                                      ncclRedOp_t op, ncclComm_t c, cudaStream_t st)
{
    data_call(NCCLAB_TRACE_REDUCESCATTER, n, t, (int)op, s, r);
    return __real_ncclReduceScatter(s, r, n, t, op, c, st);
}
ncclResult_t __wrap_ncclSend(const void *b, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
                             cudaStream_t st)
{
    data_call(NCCLAB_TRACE_SEND, n, t, -1, b, NULL);
    peer_call(send_peer, peer, n, t);
    return __real_ncclSend(b, n, t, peer, c, st);
}
ncclResult_t __wrap_ncclRecv(void *b, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
                             cudaStream_t st)
{
    data_call(NCCLAB_TRACE_RECV, n, t, -1, NULL, b);
    peer_call(recv_peer, peer, n, t);
    return __real_ncclRecv(b, n, t, peer, c, st);
}
ncclResult_t __wrap_ncclGroupStart(void)
{
    COUNT(NCCLAB_TRACE_GROUP_START);
    return __real_ncclGroupStart();
}
ncclResult_t __wrap_ncclGroupEnd(void)
{
    COUNT(NCCLAB_TRACE_GROUP_END);
    return __real_ncclGroupEnd();
}
ncclResult_t __wrap_ncclCommSplit(ncclComm_t c, int color, int key, ncclComm_t *out,
                                  ncclConfig_t *config)
{
    atomic_store(&split_color, color);
    atomic_store(&split_key, key);
    COUNT(NCCLAB_TRACE_COMM_SPLIT);
    return __real_ncclCommSplit(c, color, key, out, config);
}
cudaError_t __wrap_cudaStreamSynchronize(cudaStream_t s)
{
    COUNT(NCCLAB_TRACE_STREAM_SYNC);
    return __real_cudaStreamSynchronize(s);
}
cudaError_t __wrap_cudaEventSynchronize(cudaEvent_t e)
{
    COUNT(NCCLAB_TRACE_EVENT_SYNC);
    return __real_cudaEventSynchronize(e);
}
cudaError_t __wrap_cudaDeviceSynchronize(void)
{
    COUNT(NCCLAB_TRACE_DEVICE_SYNC);
    return __real_cudaDeviceSynchronize();
}
cudaError_t __wrap_cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    COUNT(NCCLAB_TRACE_EVENT_RECORD);
    return __real_cudaEventRecord(e, s);
}
cudaError_t __wrap_cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    const cudaError_t err = __real_cudaEventElapsedTime(ms, start, end);
    if (err == cudaSuccess && ms) {
        pthread_mutex_lock(&arg_lock);
        elapsed_last_ms = *ms;
        elapsed_sum_ms += *ms;
        COUNT(NCCLAB_TRACE_EVENT_ELAPSED);
        pthread_mutex_unlock(&arg_lock);
    }
    return err;
}
