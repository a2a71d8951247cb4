/*
 * runtime.c -- CUDA runtime subset of the host backend: device enumeration,
 * error reporting, the registry of "device" allocations, and the memory
 * copy/set calls. Streams and events live in stream.c.
 */
#include "host_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOST_DEFAULT_DEVICES 8
/* cudaMalloc returns blocks aligned to at least 256 bytes; so do we. */
#define HOST_ALLOC_ALIGN 256

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/* Like CUDA, the last error is per host thread and sticky until read. */
static _Thread_local cudaError_t tl_last_error = cudaSuccess;

cudaError_t host_rt_error(cudaError_t err)
{
    if (err != cudaSuccess && err != cudaErrorNotReady) tl_last_error = err;
    return err;
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t err = tl_last_error;
    tl_last_error = cudaSuccess;
    return err;
}

/* The error codes this backend returns, each with its text (the CUDA
 * runtime's wording): one list for cudaGetErrorName and cudaGetErrorString. */
#define HOST_CUDA_ERRORS(X)                                                                        \
    X(cudaSuccess, "no error")                                                                     \
    X(cudaErrorInvalidValue, "invalid argument")                                                   \
    X(cudaErrorMemoryAllocation, "out of memory")                                                  \
    X(cudaErrorInitializationError, "initialization error")                                        \
    X(cudaErrorInvalidDevicePointer, "invalid device pointer")                                     \
    X(cudaErrorInvalidMemcpyDirection, "invalid copy direction for memcpy")                        \
    X(cudaErrorNoDevice, "no CUDA-capable device is detected")                                     \
    X(cudaErrorInvalidDevice, "invalid device ordinal")                                            \
    X(cudaErrorInvalidResourceHandle, "invalid resource handle")                                   \
    X(cudaErrorIllegalState, "the operation cannot be performed in the present state")             \
    X(cudaErrorNotReady, "device not ready")                                                       \
    X(cudaErrorNotSupported, "operation not supported")                                            \
    X(cudaErrorUnknown, "unknown error")

const char *cudaGetErrorName(cudaError_t error)
{
#define NAME_CASE(code, text)                                                                      \
    case code: return #code;
    switch (error) {
        HOST_CUDA_ERRORS(NAME_CASE)
    }
#undef NAME_CASE
    return "unrecognized error code";
}

const char *cudaGetErrorString(cudaError_t error)
{
#define TEXT_CASE(code, text)                                                                      \
    case code: return text;
    switch (error) {
        HOST_CUDA_ERRORS(TEXT_CASE)
    }
#undef TEXT_CASE
    return "unrecognized error code";
}

/* ------------------------------------------------------------------ */
/* Devices                                                             */
/* ------------------------------------------------------------------ */

/* Read once, like CUDA reads its environment once at initialisation. */
static struct {
    pthread_once_t once;
    int count;
    cudaError_t status;
    char identity[HOST_MAX_DEVICES][32];
} g_dev = {.once = PTHREAD_ONCE_INIT};

/* Each host thread has its own current device, default 0, as in CUDA. */
static _Thread_local int tl_device = 0;

int host_rt_current_device(void) { return tl_device; }

static void devices_from_visible_list(const char *list)
{
    /* One device per comma-separated entry; an empty list hides them all. */
    g_dev.count = 0;
    if (list[0] == '\0') return;
    const char *p = list;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (g_dev.count < HOST_MAX_DEVICES) {
            size_t n = len < sizeof g_dev.identity[0] - 1 ? len : sizeof g_dev.identity[0] - 1;
            memcpy(g_dev.identity[g_dev.count], p, n);
            g_dev.identity[g_dev.count][n] = '\0';
        }
        g_dev.count++;
        if (!end) break;
        p = end + 1;
    }
    if (g_dev.count > HOST_MAX_DEVICES) g_dev.count = HOST_MAX_DEVICES;
}

static void devices_init(void)
{
    g_dev.status = cudaSuccess;
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    const char *wanted = getenv("NCCLAB_HOST_DEVICES");
    if (visible) {
        devices_from_visible_list(visible);
    } else if (wanted) {
        char *end = NULL;
        errno = 0;
        long n = strtol(wanted, &end, 10);
        if (errno != 0 || end == wanted || *end != '\0' || n < 0 || n > HOST_MAX_DEVICES) {
            fprintf(stderr,
                    "ncclab host backend: NCCLAB_HOST_DEVICES=\"%s\" is not valid; "
                    "it must be an integer from 0 to %d (the number of simulated devices)\n",
                    wanted, HOST_MAX_DEVICES);
            g_dev.count = 0;
            g_dev.status = cudaErrorInitializationError;
            return;
        }
        g_dev.count = (int)n;
    } else {
        g_dev.count = HOST_DEFAULT_DEVICES;
    }
    if (!visible)
        for (int d = 0; d < g_dev.count; d++)
            snprintf(g_dev.identity[d], sizeof g_dev.identity[d], "%d", d);
    if (g_dev.count == 0) g_dev.status = cudaErrorNoDevice;
}

cudaError_t host_rt_init_status(void)
{
    pthread_once(&g_dev.once, devices_init);
    return g_dev.status;
}

void host_rt_device_identity(int dev, char *out, size_t outlen)
{
    pthread_once(&g_dev.once, devices_init);
    if (dev >= 0 && dev < g_dev.count)
        snprintf(out, outlen, "%s", g_dev.identity[dev]);
    else
        snprintf(out, outlen, "?%d", dev);
}

cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count) return host_rt_error(cudaErrorInvalidValue);
    cudaError_t st = host_rt_init_status();
    *count = g_dev.count;
    return host_rt_error(st);
}

cudaError_t cudaSetDevice(int device)
{
    cudaError_t st = host_rt_init_status();
    if (st != cudaSuccess) return host_rt_error(st);
    if (device < 0 || device >= g_dev.count) return host_rt_error(cudaErrorInvalidDevice);
    tl_device = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device) return host_rt_error(cudaErrorInvalidValue);
    cudaError_t st = host_rt_init_status();
    if (st != cudaSuccess) return host_rt_error(st);
    *device = tl_device;
    return cudaSuccess;
}

/* Reads one "Key:   123 kB" line of /proc/meminfo, in bytes. */
static int meminfo_bytes(const char *key, size_t *out)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return -1;
    char line[256];
    size_t keylen = strlen(key);
    int found = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, keylen) == 0 && line[keylen] == ':') {
            unsigned long long kb = strtoull(line + keylen + 1, NULL, 10);
            *out = (size_t)kb * 1024u;
            found = 0;
            break;
        }
    }
    fclose(f);
    return found;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (!prop) return host_rt_error(cudaErrorInvalidValue);
    cudaError_t st = host_rt_init_status();
    if (st != cudaSuccess) return host_rt_error(st);
    if (device < 0 || device >= g_dev.count) return host_rt_error(cudaErrorInvalidDevice);

    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "Host backend (Open MPI, no GPU)");
    for (int i = 0; i < 16; i++) prop->uuid.bytes[i] = (char)(i == 15 ? device : 0);
    size_t total = 0;
    if (meminfo_bytes("MemTotal", &total) != 0) total = 0;
    prop->totalGlobalMem = total;
    prop->sharedMemPerBlock = 48 * 1024;
    prop->regsPerBlock = 65536;
    prop->warpSize = 32;
    prop->memPitch = (size_t)INT32_MAX;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = INT32_MAX;
    prop->maxGridSize[1] = 65535;
    prop->maxGridSize[2] = 65535;
    prop->totalConstMem = 64 * 1024;
    /* No real compute capability: report 0.0 so nobody mistakes it. */
    prop->major = 0;
    prop->minor = 0;
    prop->multiProcessorCount = 1;
    prop->integrated = 1;
    prop->canMapHostMemory = 1;
    prop->concurrentKernels = 1;
    /* A distinct, stable bus id per visible device keeps "same device?"
     * comparisons meaningful. */
    prop->pciDomainID = 0;
    prop->pciBusID = device;
    prop->pciDeviceID = 0;
    prop->asyncEngineCount = 1;
    prop->unifiedAddressing = 1;
    /* What the backend does not do is reported as absent: managed memory,
     * memory pools, host registration, IPC, peer RDMA. */
    prop->managedMemory = 0;
    prop->pageableMemoryAccess = 1;
    prop->pageableMemoryAccessUsesHostPageTables = 1;
    prop->canUseHostPointerForRegisteredMem = 1;
    prop->globalL1CacheSupported = 1;
    prop->localL1CacheSupported = 1;
    prop->sharedMemPerBlockOptin = 48 * 1024;
    prop->sharedMemPerMultiprocessor = 48 * 1024;
    prop->regsPerMultiprocessor = 65536;
    prop->maxBlocksPerMultiProcessor = 1;
    prop->maxThreadsPerMultiProcessor = 1024;
    prop->deviceNumaId = -1;
    prop->hostNumaId = -1;
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void)
{
    cudaError_t st = host_rt_init_status();
    if (st != cudaSuccess) return host_rt_error(st);
    host_sync_device();
    return cudaSuccess;
}

/* ------------------------------------------------------------------ */
/* Memory registry                                                     */
/* ------------------------------------------------------------------ */

struct mem_block {
    void *ptr;      /* what to free */
    uintptr_t base; /* the same address, for comparisons */
    size_t size;
    int nccl; /* ncclMemAlloc's: freed by ncclMemFree only */
};

/* Sorted by base so lookups are a binary search. */
struct mem_registry {
    struct mem_block *blocks;
    size_t count, cap;
};

static pthread_mutex_t g_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mem_registry g_device_mem; /* cudaMalloc */
static struct mem_registry g_pinned_mem; /* cudaMallocHost / cudaHostAlloc */

/* Index of the block containing p, or -1. Caller holds g_mem_lock. */
static long registry_find(const struct mem_registry *r, uintptr_t p)
{
    size_t lo = 0, hi = r->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct mem_block *b = &r->blocks[mid];
        if (p < b->base)
            hi = mid;
        else if (p - b->base < (b->size ? b->size : 1))
            return (long)mid;
        else
            lo = mid + 1;
    }
    return -1;
}

static int registry_add(struct mem_registry *r, void *p, size_t size)
{
    if (r->count == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        struct mem_block *nb = realloc(r->blocks, cap * sizeof *nb);
        if (!nb) return -1;
        r->blocks = nb;
        r->cap = cap;
    }
    uintptr_t base = (uintptr_t)p;
    size_t i = r->count;
    while (i > 0 && r->blocks[i - 1].base > base) {
        r->blocks[i] = r->blocks[i - 1];
        i--;
    }
    r->blocks[i].ptr = p;
    r->blocks[i].base = base;
    r->blocks[i].size = size;
    r->blocks[i].nccl = 0;
    r->count++;
    return 0;
}

/* Removes the block that starts exactly at p; returns -1 if there is none. */
static int registry_remove(struct mem_registry *r, void *p)
{
    long i = registry_find(r, (uintptr_t)p);
    if (i < 0 || r->blocks[i].base != (uintptr_t)p) return -1;
    memmove(&r->blocks[i], &r->blocks[i + 1], (r->count - (size_t)i - 1) * sizeof r->blocks[0]);
    r->count--;
    return 0;
}

static enum host_mem_status registry_check(const struct mem_registry *r, const void *p,
                                           size_t bytes)
{
    enum host_mem_status st;
    pthread_mutex_lock(&g_mem_lock);
    long i = registry_find(r, (uintptr_t)p);
    if (i < 0) {
        st = HOST_MEM_NOT_DEVICE;
    } else {
        const struct mem_block *b = &r->blocks[i];
        size_t offset = (uintptr_t)p - b->base;
        st = bytes <= b->size - offset ? HOST_MEM_OK : HOST_MEM_OVERRUN;
    }
    pthread_mutex_unlock(&g_mem_lock);
    return st;
}

enum host_mem_status host_mem_check_device(const void *p, size_t bytes)
{
    return registry_check(&g_device_mem, p, bytes);
}

static cudaError_t alloc_registered(struct mem_registry *r, void **out, size_t size)
{
    if (!out) return cudaErrorInvalidValue;
    cudaError_t st = host_rt_init_status();
    if (st != cudaSuccess) return st;
    if (size == 0) {
        *out = NULL;
        return cudaSuccess;
    }
    void *p = NULL;
    if (posix_memalign(&p, HOST_ALLOC_ALIGN, size) != 0) return cudaErrorMemoryAllocation;
    pthread_mutex_lock(&g_mem_lock);
    int rc = registry_add(r, p, size);
    pthread_mutex_unlock(&g_mem_lock);
    if (rc != 0) {
        free(p);
        return cudaErrorMemoryAllocation;
    }
    *out = p;
    return cudaSuccess;
}

static cudaError_t free_registered(struct mem_registry *r, void *p)
{
    if (!p) return cudaSuccess;
    pthread_mutex_lock(&g_mem_lock);
    long i = registry_find(r, (uintptr_t)p);
    int rc = i >= 0 && r->blocks[i].nccl ? -1 : registry_remove(r, p);
    pthread_mutex_unlock(&g_mem_lock);
    if (rc != 0) return cudaErrorInvalidValue;
    free(p);
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    return host_rt_error(alloc_registered(&g_device_mem, devPtr, size));
}

cudaError_t host_mem_alloc_nccl(void **p, size_t size)
{
    cudaError_t st = alloc_registered(&g_device_mem, p, size);
    if (st != cudaSuccess || !*p) return st;
    pthread_mutex_lock(&g_mem_lock);
    g_device_mem.blocks[registry_find(&g_device_mem, (uintptr_t)*p)].nccl = 1;
    pthread_mutex_unlock(&g_mem_lock);
    return cudaSuccess;
}

int host_mem_free_nccl(void *p)
{
    host_sync_device(); /* queued work may still use it, as for cudaFree */
    pthread_mutex_lock(&g_mem_lock);
    long i = registry_find(&g_device_mem, (uintptr_t)p);
    int rc = -1; /* p starts no block */
    if (i >= 0 && g_device_mem.blocks[i].base == (uintptr_t)p)
        rc = g_device_mem.blocks[i].nccl ? registry_remove(&g_device_mem, p) : -2;
    pthread_mutex_unlock(&g_mem_lock);
    if (rc == 0) free(p);
    return rc;
}

size_t host_mem_block_size(const void *p)
{
    pthread_mutex_lock(&g_mem_lock);
    long i = registry_find(&g_device_mem, (uintptr_t)p);
    size_t size =
        i >= 0 && g_device_mem.blocks[i].base == (uintptr_t)p ? g_device_mem.blocks[i].size : 0;
    pthread_mutex_unlock(&g_mem_lock);
    return size;
}

cudaError_t cudaFree(void *devPtr)
{
    /* cudaFree synchronises the device first: queued work may still use it. */
    if (devPtr) host_sync_device();
    return host_rt_error(free_registered(&g_device_mem, devPtr));
}

/* Pinned host memory is ordinary host memory here; it is registered only
 * so that cudaFreeHost can refuse pointers it did not hand out. */
cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    return host_rt_error(alloc_registered(&g_pinned_mem, ptr, size));
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    if (flags != cudaHostAllocDefault) return host_rt_error(cudaErrorInvalidValue);
    return host_rt_error(alloc_registered(&g_pinned_mem, pHost, size));
}

cudaError_t cudaFreeHost(void *ptr)
{
    if (ptr) host_sync_device();
    return host_rt_error(free_registered(&g_pinned_mem, ptr));
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    if (!free_bytes || !total_bytes) return host_rt_error(cudaErrorInvalidValue);
    cudaError_t st = host_rt_init_status();
    if (st != cudaSuccess) return host_rt_error(st);
    if (meminfo_bytes("MemTotal", total_bytes) != 0 ||
        meminfo_bytes("MemAvailable", free_bytes) != 0)
        return host_rt_error(cudaErrorUnknown);
    return cudaSuccess;
}

/* ------------------------------------------------------------------ */
/* Copies and fills                                                    */
/* ------------------------------------------------------------------ */

/* A side of a copy given as cudaMemcpyDefault: a pointer into a cudaMalloc
 * block is device memory and must hold count bytes from there; any other
 * pointer is host memory (unified addressing tells them apart). */
static cudaError_t check_default_side(const void *p, size_t count)
{
    return host_mem_check_device(p, count) == HOST_MEM_OVERRUN ? cudaErrorInvalidValue
                                                               : cudaSuccess;
}

/* The side of a copy that the kind says is on the device must be device
 * memory holding count bytes; a swapped or host pointer, or a block too
 * small, is cudaErrorInvalidValue, as CUDA reports it. */
static cudaError_t check_copy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    if ((int)kind < cudaMemcpyHostToHost || (int)kind > cudaMemcpyDefault)
        return cudaErrorInvalidMemcpyDirection;
    if (count == 0) return cudaSuccess;
    if (!dst || !src) return cudaErrorInvalidValue;
    if (kind == cudaMemcpyDefault) {
        cudaError_t st = check_default_side(dst, count);
        return st == cudaSuccess ? check_default_side(src, count) : st;
    }
    bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (dst_dev && host_mem_check_device(dst, count) != HOST_MEM_OK) return cudaErrorInvalidValue;
    if (src_dev && host_mem_check_device(src, count) != HOST_MEM_OK) return cudaErrorInvalidValue;
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    cudaError_t st = host_rt_init_status();
    if (st == cudaSuccess) st = check_copy(dst, src, count, kind);
    if (st != cudaSuccess) return host_rt_error(st);
    /* Legacy default stream semantics: wait for all earlier work first. */
    host_sync_device();
    if (count) memmove(dst, src, count);
    return cudaSuccess;
}

struct copy_op {
    void *dst;
    const void *src;
    size_t count;
};

static void run_copy_op(void *arg)
{
    struct copy_op *op = arg;
    if (op->count) memmove(op->dst, op->src, op->count); /* an empty copy may have no pointers */
    free(op);
}

static cudaError_t enqueue_copy(struct copy_op *tmpl, cudaStream_t stream)
{
    struct copy_op *op = malloc(sizeof *op);
    if (!op) return cudaErrorMemoryAllocation;
    *op = *tmpl;
    host_lock();
    struct CUstream_st *s = host_stream_lookup_locked(stream);
    cudaError_t st = s ? host_stream_enqueue_locked(s, run_copy_op, op, NULL, 0, NULL)
                       : cudaErrorInvalidResourceHandle;
    host_unlock();
    if (st != cudaSuccess) free(op);
    return st;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    cudaError_t st = host_rt_init_status();
    if (st == cudaSuccess) st = check_copy(dst, src, count, kind);
    if (st != cudaSuccess) return host_rt_error(st);
    /* Even an empty copy is a stream operation (it orders like one). */
    struct copy_op tmpl = {.dst = dst, .src = src, .count = count};
    return host_rt_error(enqueue_copy(&tmpl, stream));
}

/* cudaMemset writes device memory (or pinned host memory, which the device
 * reaches under unified addressing); anything else is an invalid value. */
static cudaError_t check_set(const void *p, size_t count)
{
    if (count == 0) return cudaSuccess;
    if (!p) return cudaErrorInvalidValue;
    if (host_mem_check_device(p, count) == HOST_MEM_OK ||
        registry_check(&g_pinned_mem, p, count) == HOST_MEM_OK)
        return cudaSuccess;
    return cudaErrorInvalidValue;
}

struct set_op {
    void *dst;
    unsigned char value;
    size_t count;
};

static void run_set_op(void *arg)
{
    struct set_op *op = arg;
    if (op->count) memset(op->dst, op->value, op->count); /* an empty fill may have no pointer */
    free(op);
}

static cudaError_t enqueue_set(void *dst, int value, size_t count, cudaStream_t stream)
{
    cudaError_t st = host_rt_init_status();
    if (st == cudaSuccess) st = check_set(dst, count);
    if (st != cudaSuccess) return st;
    struct set_op *op = malloc(sizeof *op);
    if (!op) return cudaErrorMemoryAllocation;
    *op = (struct set_op){.dst = dst, .value = (unsigned char)value, .count = count};
    host_lock();
    struct CUstream_st *s = host_stream_lookup_locked(stream);
    st = s ? host_stream_enqueue_locked(s, run_set_op, op, NULL, 0, NULL)
           : cudaErrorInvalidResourceHandle;
    host_unlock();
    if (st != cudaSuccess) free(op);
    return st;
}

/* As on a GPU, the fill is an operation of the legacy default stream of
 * the current device: later work on that device's blocking streams waits
 * for it, a cudaStreamNonBlocking stream does not, and the host does not
 * wait at all. */
cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    return host_rt_error(enqueue_set(devPtr, value, count, NULL));
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    return host_rt_error(enqueue_set(devPtr, value, count, stream));
}
