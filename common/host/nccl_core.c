/*
 * nccl_core.c -- pieces every NCCL call of the host backend shares: the
 * version, unique ids, error strings and the last-error message, MPI
 * start-up, and the datatype/operator/buffer checks.
 */
#include "nccl_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Errors and the last-error message                                   */
/* ------------------------------------------------------------------ */

static pthread_mutex_t g_msg_lock = PTHREAD_MUTEX_INITIALIZER;
static char g_last_error[1024];

static bool warnings_quiet(void)
{
    const char *q = getenv("NCCLAB_HOST_QUIET");
    return q && q[0] && strcmp(q, "0") != 0;
}

ncclResult_t nccl_warn(ncclResult_t code, const char *fmt, ...)
{
    char msg[sizeof g_last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&g_msg_lock);
    memcpy(g_last_error, msg, sizeof msg);
    pthread_mutex_unlock(&g_msg_lock);
    if (!warnings_quiet()) fprintf(stderr, "NCCL host backend WARN %s\n", msg);
    return code;
}

const char *ncclGetLastError(ncclComm_t comm)
{
    /* Like NCCL, the message is process-wide; the comm is not consulted. */
    (void)comm;
    return g_last_error;
}

const char *ncclGetErrorString(ncclResult_t result)
{
    switch (result) {
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError: return "unhandled cuda error (see ncclGetLastError for details)";
    case ncclSystemError: return "unhandled system error (see ncclGetLastError for details)";
    case ncclInternalError: return "internal error in the NCCL host backend";
    case ncclInvalidArgument: return "invalid argument (see ncclGetLastError for details)";
    case ncclInvalidUsage: return "invalid usage (see ncclGetLastError for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    case ncclNumResults: break;
    }
    return "unknown result code";
}

ncclResult_t ncclGetVersion(int *version)
{
    if (!version) return nccl_warn(ncclInvalidArgument, "ncclGetVersion: version pointer is NULL");
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

/* ------------------------------------------------------------------ */
/* Unique ids                                                          */
/* ------------------------------------------------------------------ */

/* An id starts with this text, so a zeroed or uninitialised id is caught. */
static const char k_id_magic[16] = "ncclab-host-id1";

ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId)
{
    if (!uniqueId)
        return nccl_warn(ncclInvalidArgument, "ncclGetUniqueId: uniqueId pointer is NULL");
    memset(uniqueId, 0, sizeof *uniqueId);
    memcpy(uniqueId->internal, k_id_magic, sizeof k_id_magic);
    /* 32 random bytes make ids of separate ncclGetUniqueId calls differ. */
    unsigned char *rnd = (unsigned char *)uniqueId->internal + sizeof k_id_magic;
    size_t want = 32, got = 0;
    while (got < want) {
        ssize_t n = getrandom(rnd + got, want - got, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            return nccl_warn(ncclSystemError, "ncclGetUniqueId: getrandom failed: %s",
                             strerror(errno));
        }
        got += (size_t)n;
    }
    /* The creator's pid and time are not needed, but help when debugging. */
    uint64_t extra[2] = {(uint64_t)getpid(), host_now_ns()};
    memcpy(rnd + want, extra, sizeof extra);
    return ncclSuccess;
}

bool nccl_unique_id_valid(const ncclUniqueId *id)
{
    return memcmp(id->internal, k_id_magic, sizeof k_id_magic) == 0;
}

/* ------------------------------------------------------------------ */
/* MPI start-up                                                        */
/* ------------------------------------------------------------------ */

static pthread_mutex_t g_mpi_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_mpi_checked;

static void finalize_mpi_at_exit(void)
{
    int finalized = 0;
    if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) return;
    /* Queued operations still use MPI: let them finish first. */
    host_sync_all_streams();
    if (MPI_Finalize() != MPI_SUCCESS)
        fprintf(stderr, "NCCL host backend WARN MPI_Finalize failed at exit\n");
}

ncclResult_t nccl_mpi_ready(void)
{
    ncclResult_t res = ncclSuccess;
    pthread_mutex_lock(&g_mpi_lock);
    int initialized = 0, finalized = 0, provided = 0;
    if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized) {
        res = nccl_warn(ncclInvalidUsage,
                        "MPI has already been finalised; create and use NCCL communicators "
                        "before MPI_Finalize");
        goto out;
    }
    if (g_mpi_checked) goto out;
    if (MPI_Initialized(&initialized) != MPI_SUCCESS) {
        res = nccl_warn(ncclSystemError, "MPI_Initialized failed");
        goto out;
    }
    if (!initialized) {
        /* TCP-bootstrap mode: nobody started MPI, so the backend does, and
         * shuts it down again at exit. Workers call MPI concurrently, hence
         * MPI_THREAD_MULTIPLE. */
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
            res = nccl_warn(ncclSystemError, "MPI_Init_thread failed in the NCCL host backend");
            goto out;
        }
        if (atexit(finalize_mpi_at_exit) != 0) {
            res = nccl_warn(ncclSystemError, "cannot register MPI_Finalize with atexit");
            goto out;
        }
        if (provided < MPI_THREAD_MULTIPLE) {
            res = nccl_warn(ncclSystemError,
                            "this MPI library does not provide MPI_THREAD_MULTIPLE, which the "
                            "NCCL host backend needs (its stream threads call MPI)");
            goto out;
        }
    } else {
        if (MPI_Query_thread(&provided) != MPI_SUCCESS) {
            res = nccl_warn(ncclSystemError, "MPI_Query_thread failed");
            goto out;
        }
        if (provided < MPI_THREAD_MULTIPLE) {
            res = nccl_warn(ncclInvalidUsage,
                            "MPI was initialised with a thread level below MPI_THREAD_MULTIPLE, "
                            "but the NCCL host backend calls MPI from its stream threads: "
                            "initialise MPI with "
                            "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...) and check that "
                            "'provided' is MPI_THREAD_MULTIPLE");
            goto out;
        }
    }
    g_mpi_checked = true;
out:
    pthread_mutex_unlock(&g_mpi_lock);
    return res;
}

/* Busy polling for the first 50 ms keeps short waits as quick as MPI's own
 * (everything the labs time on this backend takes less); after that, a
 * sleep between polls that doubles from 20 us up to 1 ms. A job hung for
 * the watchdog's 10 s then costs its ranks about 0.1 s of CPU each, not 10. */
enum { NCCL_HOST_SPIN_MS = 50, NCCL_HOST_NAP_MIN_US = 20, NCCL_HOST_NAP_MAX_US = 1000 };

/* One poll's worth of waiting: nothing while spinning, then a nap. */
struct polite_wait {
    double spin_until;
    long nap_us;
};

static struct polite_wait polite_start(void)
{
    return (struct polite_wait){MPI_Wtime() + NCCL_HOST_SPIN_MS * 1e-3, NCCL_HOST_NAP_MIN_US};
}

static void polite_pause(struct polite_wait *w)
{
    if (MPI_Wtime() < w->spin_until) return;
    struct timespec nap = {0, w->nap_us * 1000};
    nanosleep(&nap, NULL);
    if (w->nap_us < NCCL_HOST_NAP_MAX_US) w->nap_us *= 2;
}

int nccl_mpi_waitall(int n, MPI_Request *reqs, MPI_Status *stats)
{
    for (struct polite_wait w = polite_start();; polite_pause(&w)) {
        int done = 0;
        int rc = MPI_Testall(n, reqs, &done, stats);
        if (rc != MPI_SUCCESS || done) return rc;
    }
}

int nccl_mpi_wait(MPI_Request *req, MPI_Status *status)
{
    for (struct polite_wait w = polite_start();; polite_pause(&w)) {
        int done = 0;
        int rc = MPI_Test(req, &done, status);
        if (rc != MPI_SUCCESS || done) return rc;
    }
}

bool nccl_mpi_failed(struct ncclComm *comm, int rc, const char *what)
{
    if (rc == MPI_SUCCESS) return false;
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error code %d", rc);
    host_lock();
    int rank = comm->rank;
    host_unlock();
    nccl_warn(ncclSystemError, "rank %d: %s failed: %s", rank, what, text);
    return true;
}

/* ------------------------------------------------------------------ */
/* Datatypes, operators, buffers                                       */
/* ------------------------------------------------------------------ */

static const char *type_name(ncclDataType_t type)
{
    switch (type) {
    case ncclInt8: return "ncclInt8";
    case ncclUint8: return "ncclUint8";
    case ncclInt32: return "ncclInt32";
    case ncclUint32: return "ncclUint32";
    case ncclInt64: return "ncclInt64";
    case ncclUint64: return "ncclUint64";
    case ncclFloat16: return "ncclFloat16";
    case ncclFloat32: return "ncclFloat32";
    case ncclFloat64: return "ncclFloat64";
    case ncclBfloat16: return "ncclBfloat16";
    case ncclFloat8e4m3: return "ncclFloat8e4m3";
    case ncclFloat8e5m2: return "ncclFloat8e5m2";
    case ncclNumTypes: break;
    }
    return NULL;
}

ncclResult_t nccl_check_type(const char *fn, ncclDataType_t type)
{
    switch (type) {
    case ncclFloat32:
    case ncclFloat64:
    case ncclInt32:
    case ncclInt64:
    case ncclUint8: return ncclSuccess;
    default: break;
    }
    const char *name = type_name(type);
    if (!name) return nccl_warn(ncclInvalidArgument, "%s: invalid datatype %d", fn, (int)type);
    return nccl_warn(ncclInvalidArgument,
                     "%s: host backend: datatype %s is not supported; use float, double, "
                     "int32, int64 or uint8",
                     fn, name);
}

ncclResult_t nccl_check_op(const char *fn, ncclRedOp_t op)
{
    if ((int)op >= (int)ncclSum && (int)op < (int)ncclNumOps) return ncclSuccess;
    return nccl_warn(ncclInvalidArgument,
                     "%s: invalid reduction operation %d (the host backend supports ncclSum, "
                     "ncclProd, ncclMax, ncclMin and ncclAvg)",
                     fn, (int)op);
}

size_t nccl_type_size(ncclDataType_t type)
{
    switch (type) {
    case ncclUint8: return 1;
    case ncclInt32:
    case ncclFloat32: return 4;
    case ncclInt64:
    case ncclFloat64: return 8;
    default: return 0;
    }
}

MPI_Datatype nccl_mpi_type(ncclDataType_t type)
{
    switch (type) {
    case ncclUint8: return MPI_UINT8_T;
    case ncclInt32: return MPI_INT32_T;
    case ncclInt64: return MPI_INT64_T;
    case ncclFloat32: return MPI_FLOAT;
    case ncclFloat64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
    }
}

MPI_Op nccl_mpi_op(ncclRedOp_t op)
{
    switch (op) {
    case ncclProd: return MPI_PROD;
    case ncclMax: return MPI_MAX;
    case ncclMin: return MPI_MIN;
    case ncclSum:
    case ncclAvg: /* a sum, divided afterwards */
    default: return MPI_SUM;
    }
}

void nccl_divide(void *buf, size_t count, ncclDataType_t type, int n)
{
    /* Integer types truncate, as NCCL's integer average does. */
    switch (type) {
    case ncclUint8: {
        uint8_t *p = buf;
        for (size_t i = 0; i < count; i++) p[i] = (uint8_t)(p[i] / (unsigned)n);
        break;
    }
    case ncclInt32: {
        int32_t *p = buf;
        for (size_t i = 0; i < count; i++) p[i] /= n;
        break;
    }
    case ncclInt64: {
        int64_t *p = buf;
        for (size_t i = 0; i < count; i++) p[i] /= n;
        break;
    }
    case ncclFloat32: {
        float *p = buf;
        for (size_t i = 0; i < count; i++) p[i] /= (float)n;
        break;
    }
    case ncclFloat64: {
        double *p = buf;
        for (size_t i = 0; i < count; i++) p[i] /= (double)n;
        break;
    }
    default: break;
    }
}

ncclResult_t nccl_check_buffer(const char *fn, const char *name, const void *buf, size_t count,
                               size_t elem_size)
{
    if (count == 0) return ncclSuccess;
    if (!buf)
        return nccl_warn(ncclInvalidArgument, "%s: %s is NULL but count is %zu", fn, name, count);
    if (count > SIZE_MAX / elem_size)
        return nccl_warn(ncclInvalidArgument, "%s: count %zu is too large", fn, count);
    size_t bytes = count * elem_size;
    switch (host_mem_check_device(buf, bytes)) {
    case HOST_MEM_OK: return ncclSuccess;
    case HOST_MEM_NOT_DEVICE:
        return nccl_warn(ncclInvalidArgument,
                         "%s: %s buffer %p is not device memory (allocate it with cudaMalloc)", fn,
                         name, buf);
    case HOST_MEM_OVERRUN: break;
    }
    return nccl_warn(ncclInvalidArgument,
                     "%s: %s buffer %p is too small: %zu bytes from there run past the end of "
                     "its cudaMalloc allocation",
                     fn, name, buf, bytes);
}
