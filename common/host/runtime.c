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
/* Smaller allocations skip the host budget's look at /proc/meminfo: they
 * cannot decide whether the host runs out. */
#define HOST_BUDGET_CHECK_FROM ((size_t)1 << 20)

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
    size_t mem_bytes;  /* each device's memory (device_mem_init) */
    size_t pool_bytes; /* what the devices of a process using several hold (device_pool) */
} g_dev = {.once = PTHREAD_ONCE_INIT};

static int meminfo_bytes(const char *key, size_t *out);
static size_t device_pool(void);

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

/* ------------------------------------------------------------------ */
/* Device memory: a size per pretend device, and the host's budget     */
/* ------------------------------------------------------------------ */

#define HOST_GIB ((size_t)1 << 30)
/* An H100's memory: no pretend device is larger, however large the host. */
#define HOST_DEVICE_MEM_MAX (80 * HOST_GIB)

/* "12G", "512M", "1073741824": bytes, with an optional binary K/M/G/T
 * suffix (an optional "iB" or "B" after it). 0 on success. */
static int parse_bytes(const char *text, size_t *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || !(v > 0)) return -1;
    double unit = 1;
    switch (*end) {
    case 'K':
    case 'k':
        unit = 1024.0;
        end++;
        break;
    case 'M':
    case 'm':
        unit = 1024.0 * 1024;
        end++;
        break;
    case 'G':
    case 'g':
        unit = 1024.0 * 1024 * 1024;
        end++;
        break;
    case 'T':
    case 't':
        unit = 1024.0 * 1024 * 1024 * 1024;
        end++;
        break;
    default: break;
    }
    if (unit > 1 && strcmp(end, "iB") == 0) end += 2;
    if (*end == 'B') end++;
    if (*end != '\0' || v * unit >= 18e18) return -1;
    *out = (size_t)(v * unit);
    return 0;
}

/* Each device's memory: NCCLAB_HOST_DEVICE_MEM when set; else the host's
 * MemTotal, at most 80 GiB. Either way an allocation must also fit what the
 * host can give now (host_budget), which all devices and all processes of
 * the host share: that is what keeps several devices within one machine
 * (and cudaMemGetInfo's free near MemAvailable, which the labs divide among
 * the ranks of the machine, common/lab.c); and in a process that uses
 * several devices, their pool (device_pool). */
static int device_mem_init(void)
{
    const char *set = getenv("NCCLAB_HOST_DEVICE_MEM");
    if (set) {
        if (parse_bytes(set, &g_dev.mem_bytes) != 0) {
            fprintf(stderr,
                    "ncclab host backend: NCCLAB_HOST_DEVICE_MEM=\"%s\" is not valid; it must "
                    "be a size in bytes above 0, with an optional K, M, G or T (binary) "
                    "suffix, e.g. 16G (the memory of each simulated device)\n",
                    set);
            return -1;
        }
        return 0;
    }
    size_t total = 0;
    if (meminfo_bytes("MemTotal", &total) != 0 || total == 0) total = 8 * HOST_GIB;
    g_dev.mem_bytes = total;
    if (g_dev.mem_bytes > HOST_DEVICE_MEM_MAX) g_dev.mem_bytes = HOST_DEVICE_MEM_MAX;
    return 0;
}

/* Two numbers from files DIR/A and DIR/B: 0; -1 when either cannot be read
 * (cgroup v2's "max" is no number: no limit). */
static int read_two(const char *dir, const char *a, const char *b, unsigned long long *va,
                    unsigned long long *vb)
{
    char path[700];
    const char *names[2] = {a, b};
    unsigned long long *vals[2] = {va, vb};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "r");
        if (!f) return -1;
        int got = fscanf(f, "%llu", vals[i]);
        fclose(f);
        if (got != 1) return -1;
    }
    return 0;
}

/* The room left under this process's cgroup memory limit (v2: memory.max
 * - memory.current; v1: memory.limit_in_bytes - memory.usage_in_bytes)
 * into *out: 0; -1 when there is no limit to see. */
static int cgroup_room(size_t *out, size_t *limit)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return -1;
    char line[512], dir[600];
    unsigned long long max = 0, cur = 0;
    int found = -1;
    while (found != 0 && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "0::", 3) == 0) {
            snprintf(dir, sizeof dir, "/sys/fs/cgroup%s", line + 3);
            found = read_two(dir, "memory.max", "memory.current", &max, &cur);
        } else if (strstr(line, ":memory:")) {
            snprintf(dir, sizeof dir, "/sys/fs/cgroup/memory%s", strstr(line, ":memory:") + 8);
            found = read_two(dir, "memory.limit_in_bytes", "memory.usage_in_bytes", &max, &cur);
        }
    }
    fclose(f);
    if (found != 0 || max >= (1ULL << 60)) return -1; /* v1 writes "no limit" as ~2^63 */
    *out = cur < max ? (size_t)(max - cur) : 0;
    *limit = (size_t)max;
    return 0;
}

/* What this host can still give to memory that will be used: MemAvailable
 * (shared with every other process, ranks of the same job included) or a
 * cgroup limit's room, less a reserve (1/32 of MemTotal or of the cgroup's
 * limit, at least 256 or 32 MiB) that keeps the kernel's OOM killer away. SIZE_MAX when unknown. */
static size_t host_budget(void)
{
    size_t avail = 0, total = 0, room = 0, limit = 0;
    if (meminfo_bytes("MemAvailable", &avail) != 0) return SIZE_MAX;
    if (meminfo_bytes("MemTotal", &total) != 0) total = 0;
    size_t floor = (size_t)256 << 20;
    if (cgroup_room(&room, &limit) == 0 && room < avail) {
        avail = room; /* the cgroup's limit binds: a reserve in its proportion */
        total = limit;
        floor = (size_t)32 << 20;
    }
    size_t reserve = total / 32 > floor ? total / 32 : floor;
    return avail > reserve ? avail - reserve : 0;
}

/* What the devices of a process that uses several may hold together: half
 * of the host's memory (or of a cgroup's limit, where lower), less the
 * reserve. On a machine with GPUs the devices' memory is not the host's,
 * and a program that drives every device from one process commonly keeps a
 * host copy of each buffer (NCCL's one-process ring example does, 1 GiB
 * each way on every device): the other half is left for those, so that
 * such a program meets cudaErrorMemoryAllocation instead of the OOM killer
 * when it fills its host copies. A process of one device (the labs: a rank
 * each) is held by the host budget alone, which its ranks share
 * (common/lab.c). SIZE_MAX when unknown. */
static size_t device_pool(void)
{
    size_t total = 0, room = 0, limit = 0, floor = (size_t)256 << 20;
    if (meminfo_bytes("MemTotal", &total) != 0 || total == 0) return SIZE_MAX;
    if (cgroup_room(&room, &limit) == 0 && limit < total) {
        total = limit;
        floor = (size_t)32 << 20;
    }
    size_t reserve = total / 32 > floor ? total / 32 : floor;
    return total > reserve ? (total - reserve) / 2 : 0;
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
    if (g_dev.status == cudaSuccess && device_mem_init() != 0)
        g_dev.status = cudaErrorInitializationError;
    g_dev.pool_bytes = device_pool();
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
    prop->totalGlobalMem = g_dev.mem_bytes;
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
    int nccl;   /* ncclMemAlloc's: freed by ncclMemFree only */
    int device; /* whose memory it counts against; -1: host memory */
};

/* Sorted by base so lookups are a binary search. */
struct mem_registry {
    struct mem_block *blocks;
    size_t count, cap;
};

static pthread_mutex_t g_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mem_registry g_device_mem;       /* cudaMalloc */
static struct mem_registry g_pinned_mem;       /* cudaMallocHost / cudaHostAlloc */
static size_t g_device_used[HOST_MAX_DEVICES]; /* this process's cudaMalloc bytes, by device */

/* What the device can still give this process: what is left of its size
 * and, where the process holds memory of another device too (*several set),
 * of the pool they share. Caller holds g_mem_lock. */
static size_t device_left_locked(int device, int *several)
{
    size_t used = 0;
    *several = 0;
    for (int d = 0; d < HOST_MAX_DEVICES; d++) {
        used += g_device_used[d];
        if (d != device && g_device_used[d] > 0) *several = 1;
    }
    size_t left = g_dev.mem_bytes - g_device_used[device];
    if (!*several) return left;
    size_t pool_left = g_dev.pool_bytes > used ? g_dev.pool_bytes - used : 0;
    return left < pool_left ? left : pool_left;
}

/* What the host can give a block of this device now: all of its budget;
 * in a process of several devices, half, the other half kept for the
 * block's host copy. */
static size_t host_budget_for(int several) { return several ? host_budget() / 2 : host_budget(); }

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

static int registry_add(struct mem_registry *r, void *p, size_t size, int device)
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
    r->blocks[i].device = device;
    if (device >= 0) g_device_used[device] += size;
    r->count++;
    return 0;
}

/* Removes the block that starts exactly at p; returns -1 if there is none. */
static int registry_remove(struct mem_registry *r, void *p)
{
    long i = registry_find(r, (uintptr_t)p);
    if (i < 0 || r->blocks[i].base != (uintptr_t)p) return -1;
    if (r->blocks[i].device >= 0) g_device_used[r->blocks[i].device] -= r->blocks[i].size;
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
    const int device = r == &g_device_mem ? host_rt_current_device() : -1;
    /* A device holds what its size allows (and the devices of a process of
     * several, what their pool allows), and the host what it can give:
     * beyond any of them, "out of memory" as from a GPU, never the OOM
     * killer. */
    int several = 0;
    pthread_mutex_lock(&g_mem_lock);
    size_t left = device >= 0 ? device_left_locked(device, &several) : SIZE_MAX;
    pthread_mutex_unlock(&g_mem_lock);
    if (size > left) return cudaErrorMemoryAllocation;
    if (size > HOST_BUDGET_CHECK_FROM && size > host_budget_for(several))
        return cudaErrorMemoryAllocation;
    pthread_mutex_lock(&g_mem_lock);
    int full = device >= 0 && size > device_left_locked(device, &several);
    if (!full && device >= 0) g_device_used[device] += size; /* held while it is made */
    pthread_mutex_unlock(&g_mem_lock);
    if (full) return cudaErrorMemoryAllocation;
    void *p = NULL;
    int rc = posix_memalign(&p, HOST_ALLOC_ALIGN, size) != 0 ? -1 : 0;
    /* Every page written now, as a GPU's memory is there once cudaMalloc
     * returns: with the host's overcommit, a page first touched later could
     * meet an OOM kill instead of this call's error. */
    if (rc == 0)
        for (size_t off = 0; off < size; off += 4096) ((volatile char *)p)[off] = 0;
    pthread_mutex_lock(&g_mem_lock);
    if (device >= 0) g_device_used[device] -= size;
    if (rc == 0) rc = registry_add(r, p, size, device);
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
    /* The current device's size, and what of it (and of the pool, in a
     * process of several devices) this process has not taken, but never
     * more than the host can give now: what cudaMalloc would grant. */
    const int device = host_rt_current_device();
    int several = 0;
    pthread_mutex_lock(&g_mem_lock);
    size_t left = device_left_locked(device, &several);
    pthread_mutex_unlock(&g_mem_lock);
    size_t budget = host_budget_for(several);
    *total_bytes = g_dev.mem_bytes;
    *free_bytes = left < budget ? left : budget;
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
