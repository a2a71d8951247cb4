/* Results: the nccl-tests style table for people and the `#ncclab` records
 * for programs (format: docs/records.md).
 *
 * Each rank adds records locally; ncclab_report_flush gathers them to rank 0
 * over the NCCL communicator, and rank 0 prints the table and every record,
 * so lines from different ranks never interleave in the job's output. */
#ifndef NCCLAB_RESULTS_H
#define NCCLAB_RESULTS_H

#include <cuda_runtime.h>
#include <nccl.h>
#include <stddef.h>

#include "bandwidth.h"
#include "bootstrap.h"
#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NCCLAB_RECORD_PREFIX "#ncclab "
#define NCCLAB_RECORD_MAX 1024

struct ncclab_record {
    char text[NCCLAB_RECORD_MAX];
    int len;
};

struct ncclab_report {
    int lab;
    const struct ncclab_world *world;
    int device;
    struct ncclab_record *recs;
    int nrecs, cap;
    int failed_checks; /* on this rank */
};

/* One timed operation at one size. */
struct ncclab_perf {
    const char *name; /* what the row is, e.g. "allreduce", "ring_grouped" */
    enum ncclab_coll coll;
    size_t bytes;      /* as nccl-tests counts it */
    size_t count;      /* elements */
    const char *type;  /* "float" */
    const char *redop; /* "sum", or "none" */
    int root;          /* -1 when none */
    int nranks;        /* ranks taking part (group size); 0 = the world */
    double time_us;    /* mean per operation */
    int iters, warmup;
    double wall_us;    /* driver's synchronised wall clock around all iterations */
    long calls;        /* NCCL calls seen during the timed call; -1 unknown */
    long long wrong;   /* wrong elements afterwards; -1 not checked */
    const char *group; /* NULL, or "global" / "node_local" / "cross_node" */
    /* What the link-time trace saw during the measurement (set by
     * ncclab_perf_trace; printed only when `traced` is 1). */
    int traced;
    long long traced_bytes; /* bytes given to the measured NCCL function(s) */
    long zero_calls;        /* data-moving calls with a count of 0 (any kind) */
    long other_calls;       /* data-moving calls of other kinds */
    /* What those calls were given (set by ncclab_perf_args; printed only
     * when `args` is 1): calls with another reduction than the row's, and
     * calls with other buffers than the driver's, each with what the first
     * of them had ("max"; "sendbuf", "recvbuf", "other", "none"). */
    int args;
    long op_other_calls;
    char op_other[16];
    long buffer_other_calls;
    const char *buffer_send, *buffer_recv;
};

/* Fill p->traced* from the trace (common/trace.h): `measured` is a mask of
 * (1u << NCCLAB_TRACE_...) bits, the NCCL functions the row measures. Call
 * it right after the timed code, before anything else calls NCCL. */
void ncclab_perf_trace(struct ncclab_perf *p, unsigned measured);

/* Fill p->args and the fields after it from the trace: the calls of the
 * kinds in `measured` against the reduction `op` (an ncclRedOp_t, for the
 * reductions among them; NCCLAB_TRACE_ANY_OP: not checked) and the buffers
 * `send` and `recv` (NCCLAB_TRACE_ANY_BUF: not checked; a send is checked
 * against `send` alone, a receive against `recv`). */
void ncclab_perf_args(struct ncclab_perf *p, unsigned measured, int op, const void *send,
                      const void *recv);

void ncclab_report_init(struct ncclab_report *r, int lab, const struct ncclab_world *w, int device);
void ncclab_report_free(struct ncclab_report *r);

/* Start a record with the fields every record carries; add more with the
 * ncclab_record_* calls. The pointer stays valid until the next begin. */
struct ncclab_record *ncclab_record_begin(struct ncclab_report *r, const char *kind,
                                          const char *name);
void ncclab_record_int(struct ncclab_record *rec, const char *key, long long value);
void ncclab_record_num(struct ncclab_record *rec, const char *key, double value);
void ncclab_record_str(struct ncclab_record *rec, const char *key, const char *value);

/* Add a perf record (algbw and busbw computed here). */
struct ncclab_record *ncclab_report_perf(struct ncclab_report *r, const struct ncclab_perf *p);

/* Add a check record; returns 1 if the buffer matched, else 0. */
int ncclab_report_check(struct ncclab_report *r, const char *name, const struct ncclab_summary *s);

/* Gather every rank's records to rank 0 over `comm` and print the table and
 * the records there. Rank 0 also judges every perf record (and lab 2's
 * overlap) with the rules the grader uses, from the same system profile
 * (common/perflimits.h): an impossible figure prints a FAILED line and
 * counts as a failed check. With comm == NULL each rank prints its own records.
 * Returns the number of failed checks over all ranks (over this rank only
 * when comm == NULL). The records are cleared afterwards. */
int ncclab_report_flush(struct ncclab_report *r, ncclComm_t comm, cudaStream_t stream);

/* The last word of a run, after rank 0 has printed all it prints: every
 * rank waits here for rank 0 and returns rank 0's `failed` (its timing
 * judgement included), so that all end with one exit status and none
 * ends before rank 0 is done. A rank that ended first with status 1 would
 * have mpirun stop rank 0 halfway through its records: MPI_Finalize waits
 * for every rank, the TCP bootstrap has nothing else that does. Collective
 * over `comm`; with comm == NULL it returns `failed`. */
int ncclab_report_agree(int failed, ncclComm_t comm, cudaStream_t stream);

/* Find `key` in a record line; copies its value into buf. 0 if found. */
int ncclab_record_field(const char *line, const char *key, char *buf, size_t len);

/* "cuda" or "host". */
const char *ncclab_backend_name(void);

#ifdef __cplusplus
}
#endif
#endif
