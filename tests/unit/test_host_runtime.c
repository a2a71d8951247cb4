/*
 * test_host_runtime.c -- Check tests of the host backend's CUDA runtime
 * (single process): devices, memory, streams, events, host functions,
 * implicit synchronisation and error codes.
 *
 * Device-count settings are read once per process, so those cases run
 * this same binary again as a child ("--probe-devices") with the
 * environment under test.
 */
#include <cuda_runtime.h>

#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stream_gate.h"

#ifndef NCCLAB_HOST_BACKEND
#error "this test is for the host backend"
#endif

static char g_self[4096];

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void gate_init(struct gate *g)
{
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    g->open = 0;
    g->reached = 0;
}

static void gate_destroy(struct gate *g)
{
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
}

/* Host function that appends its tag to a shared log. */
struct order_log {
    pthread_mutex_t mu;
    int n;
    int tags[64];
};
struct order_item {
    struct order_log *log;
    int tag;
};

static void log_fn(void *arg)
{
    struct order_item *it = arg;
    pthread_mutex_lock(&it->log->mu);
    if (it->log->n < 64) it->log->tags[it->log->n++] = it->tag;
    pthread_mutex_unlock(&it->log->mu);
}

static void sleep_100ms_then_set(void *arg)
{
    sleep_ms(100);
    __atomic_store_n((int *)arg, 1, __ATOMIC_SEQ_CST);
}

static int flag_get(int *f) { return __atomic_load_n(f, __ATOMIC_SEQ_CST); }

/* ------------------------------------------------------------------ */
/* Devices                                                             */
/* ------------------------------------------------------------------ */

struct probe {
    int count, rc;
    char output[4096];
};

/* Runs this binary with --probe-devices under the given environment. */
static void probe_devices(const char *visible, const char *host_devices, struct probe *p)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        unsetenv("CUDA_VISIBLE_DEVICES");
        unsetenv("NCCLAB_HOST_DEVICES");
        if (visible) setenv("CUDA_VISIBLE_DEVICES", visible, 1);
        if (host_devices) setenv("NCCLAB_HOST_DEVICES", host_devices, 1);
        execl(g_self, g_self, "--probe-devices", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    size_t used = 0;
    ssize_t n;
    while (used < sizeof p->output - 1 &&
           (n = read(fds[0], p->output + used, sizeof p->output - 1 - used)) > 0)
        used += (size_t)n;
    p->output[used] = '\0';
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    const char *res = strstr(p->output, "RESULT ");
    ck_assert_msg(res != NULL, "probe printed no result: %s", p->output);
    ck_assert_int_eq(sscanf(res, "RESULT %d %d", &p->count, &p->rc), 2);
}

/* --probe-memory: the device memory model under NCCLAB_HOST_DEVICE_MEM
 * (set by the test, read once at initialisation): prints one line
 * "MEM total free_before a b c free_after d e name" with the sizes in MiB and
 * the cudaError_t codes of: 48 MiB (fits), 32 MiB more (beyond the size),
 * the same 48 MiB on device 1 (each device its own), 48 MiB again on device
 * 0 after freeing the first (freed memory comes back). */
static int probe_memory(void)
{
    size_t freeb = 0, total = 0, after = 0;
    void *a = NULL, *b = NULL, *c = NULL, *d = NULL;
    int rc0 = cudaMemGetInfo(&freeb, &total);
    int ra = cudaMalloc(&a, (size_t)48 << 20);
    int rb = cudaMalloc(&b, (size_t)32 << 20);
    const char *name = cudaGetErrorString((cudaError_t)rb);
    cudaMemGetInfo(&after, &total);
    cudaSetDevice(1);
    int rc = cudaMalloc(&c, (size_t)48 << 20);
    cudaSetDevice(0);
    cudaFree(a);
    int rd = cudaMalloc(&d, (size_t)48 << 20);
    struct cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    printf("MEM %d %zu %zu %zu %d %d %d %zu %d %s\n", rc0, total >> 20, prop.totalGlobalMem >> 20,
           freeb >> 20, ra, rb, rc, after >> 20, rd, name);
    return 0;
}

START_TEST(test_device_memory_limit)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        setenv("NCCLAB_HOST_DEVICE_MEM", "64M", 1);
        execl(g_self, g_self, "--probe-memory", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char out[512] = "";
    ssize_t n = read(fds[0], out, sizeof out - 1);
    out[n > 0 ? n : 0] = '\0';
    close(fds[0]);
    waitpid(pid, NULL, 0);
    int rc0, ra, rb, rc, rd;
    size_t total, prop_total, freeb, after;
    char name[64] = "";
    ck_assert_msg(sscanf(out, "MEM %d %zu %zu %zu %d %d %d %zu %d %63[^\n]", &rc0, &total,
                         &prop_total, &freeb, &ra, &rb, &rc, &after, &rd, name) == 10,
                  "probe said: %s", out);
    ck_assert_int_eq(rc0, cudaSuccess);
    ck_assert_uint_eq(total, 64); /* the size set, in cudaMemGetInfo and the properties */
    ck_assert_uint_eq(prop_total, 64);
    ck_assert_uint_le(freeb, 64);
    ck_assert_int_eq(ra, cudaSuccess);
    ck_assert_int_eq(rb, cudaErrorMemoryAllocation); /* 48 + 32 > 64: CUDA's error and words */
    ck_assert_str_eq(name, "out of memory");
    ck_assert_uint_le(after, 16);
    ck_assert_int_eq(rc, cudaSuccess);
    ck_assert_int_eq(rd, cudaSuccess);

    /* A size that is not one is refused at initialisation, with a message. */
    struct probe p;
    setenv("NCCLAB_HOST_DEVICE_MEM", "lots", 1);
    probe_devices(NULL, NULL, &p);
    unsetenv("NCCLAB_HOST_DEVICE_MEM");
    ck_assert_int_eq(p.rc, cudaErrorInitializationError);
    ck_assert_ptr_nonnull(strstr(p.output, "NCCLAB_HOST_DEVICE_MEM"));
}
END_TEST

/* Without NCCLAB_HOST_DEVICE_MEM a device is as large as the host's memory
 * (at most 80 GiB), and no more than the host can give now is called free.
 * A process that holds memory of several devices shares half of the host's
 * memory among them: the other half is for its host copies of it. */
START_TEST(test_device_memory_default)
{
    size_t freeb = 0, total = 0;
    ck_assert_int_eq(cudaMemGetInfo(&freeb, &total), cudaSuccess);
    ck_assert_uint_le(total, (size_t)80 << 30);
    ck_assert_uint_le(freeb, total);
    /* More than the host has: the error, not an OOM kill. */
    void *p = NULL;
    ck_assert_int_eq(cudaMalloc(&p, total + ((size_t)1 << 20)), cudaErrorMemoryAllocation);
    ck_assert_int_eq(cudaGetLastError(), cudaErrorMemoryAllocation);
    /* With a block on device 0, more than half of the host on device 1,
     * whose size would allow it: refused at once (nothing is written), and
     * free says no more. */
    const size_t host = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
    void *small = NULL;
    ck_assert_int_eq(cudaMalloc(&small, 4096), cudaSuccess);
    ck_assert_int_eq(cudaSetDevice(1), cudaSuccess);
    ck_assert_int_eq(cudaMemGetInfo(&freeb, &total), cudaSuccess);
    ck_assert_uint_le(freeb, host / 2);
    ck_assert_int_eq(cudaMalloc(&p, host / 2 + ((size_t)1 << 20)), cudaErrorMemoryAllocation);
    ck_assert_int_eq(cudaGetLastError(), cudaErrorMemoryAllocation);
    ck_assert_int_eq(cudaSetDevice(0), cudaSuccess);
    ck_assert_int_eq(cudaFree(small), cudaSuccess);
}
END_TEST

START_TEST(test_device_count_default)
{
    int n = -1;
    ck_assert_int_eq(cudaGetDeviceCount(&n), cudaSuccess);
    ck_assert_int_eq(n, 8);
    ck_assert_int_eq(cudaGetDeviceCount(NULL), cudaErrorInvalidValue);
}
END_TEST

START_TEST(test_device_count_env)
{
    struct probe p;
    probe_devices("", NULL, &p);
    ck_assert_int_eq(p.count, 0);
    ck_assert_int_eq(p.rc, cudaErrorNoDevice);
    probe_devices("2,3,5", NULL, &p);
    ck_assert_int_eq(p.count, 3);
    ck_assert_int_eq(p.rc, cudaSuccess);
    probe_devices("1", "5", &p); /* CUDA_VISIBLE_DEVICES wins */
    ck_assert_int_eq(p.count, 1);
    probe_devices(NULL, "4", &p);
    ck_assert_int_eq(p.count, 4);
    ck_assert_int_eq(p.rc, cudaSuccess);
    probe_devices(NULL, "0", &p);
    ck_assert_int_eq(p.rc, cudaErrorNoDevice);
    probe_devices(NULL, "65", &p);
    ck_assert_int_ne(p.rc, cudaSuccess);
    ck_assert_ptr_nonnull(strstr(p.output, "NCCLAB_HOST_DEVICES"));
    probe_devices(NULL, "four", &p);
    ck_assert_int_ne(p.rc, cudaSuccess);
    ck_assert_ptr_nonnull(strstr(p.output, "NCCLAB_HOST_DEVICES"));
}
END_TEST

static void *read_device_in_thread(void *arg)
{
    int *out = arg;
    cudaGetDevice(out);
    return NULL;
}

START_TEST(test_set_get_device)
{
    int d = -1;
    ck_assert_int_eq(cudaSetDevice(-1), cudaErrorInvalidDevice);
    ck_assert_int_eq(cudaGetLastError(), cudaErrorInvalidDevice);
    ck_assert_int_eq(cudaSetDevice(8), cudaErrorInvalidDevice);
    ck_assert_int_eq(cudaSetDevice(7), cudaSuccess);
    ck_assert_int_eq(cudaGetDevice(&d), cudaSuccess);
    ck_assert_int_eq(d, 7);
    /* The current device is per host thread; a new thread starts at 0. */
    int other = -1;
    pthread_t th;
    pthread_create(&th, NULL, read_device_in_thread, &other);
    pthread_join(th, NULL);
    ck_assert_int_eq(other, 0);
    ck_assert_int_eq(cudaGetDevice(NULL), cudaErrorInvalidValue);
    cudaGetLastError();
}
END_TEST

START_TEST(test_device_properties)
{
    struct cudaDeviceProp prop;
    ck_assert_int_eq(cudaGetDeviceProperties(&prop, 3), cudaSuccess);
    ck_assert_str_eq(prop.name, "Host backend (Open MPI, no GPU)");
    ck_assert_uint_gt(prop.totalGlobalMem, 0);
    ck_assert_int_eq(prop.pciBusID, 3);
    ck_assert_int_ge(prop.multiProcessorCount, 1);
    ck_assert_int_eq(prop.warpSize, 32);
    ck_assert_int_eq(prop.unifiedAddressing, 1);
    /* What the backend cannot do is not claimed. */
    ck_assert_int_eq(prop.managedMemory, 0);
    ck_assert_int_eq(prop.memoryPoolsSupported, 0);
    ck_assert_int_eq(prop.major, 0);
    ck_assert_int_eq(cudaGetDeviceProperties(&prop, 8), cudaErrorInvalidDevice);
    ck_assert_int_eq(cudaGetDeviceProperties(NULL, 0), cudaErrorInvalidValue);
    size_t freeb = 0, total = 0;
    ck_assert_int_eq(cudaMemGetInfo(&freeb, &total), cudaSuccess);
    ck_assert_uint_gt(total, 0);
    ck_assert_uint_le(freeb, total);
    ck_assert_int_eq(cudaMemGetInfo(NULL, &total), cudaErrorInvalidValue);
    cudaGetLastError();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

START_TEST(test_error_strings_and_sticky_error)
{
    ck_assert_int_eq(cudaSuccess, 0);
    ck_assert_int_eq(cudaErrorInvalidValue, 1);
    ck_assert_int_eq(cudaErrorMemoryAllocation, 2);
    ck_assert_int_eq(cudaErrorNoDevice, 100);
    ck_assert_int_eq(cudaErrorInvalidDevice, 101);
    ck_assert_int_eq(cudaErrorInvalidResourceHandle, 400);
    ck_assert_int_eq(cudaErrorNotReady, 600);
    ck_assert_str_eq(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue");
    ck_assert_str_eq(cudaGetErrorString(cudaSuccess), "no error");
    ck_assert_str_eq(cudaGetErrorString(cudaErrorInvalidDevice), "invalid device ordinal");
    ck_assert_ptr_nonnull(cudaGetErrorString((cudaError_t)12345));

    cudaGetLastError();
    ck_assert_int_eq(cudaGetLastError(), cudaSuccess);
    ck_assert_int_eq(cudaFree((void *)0x10), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaSetDevice(0), cudaSuccess); /* success keeps it */
    ck_assert_int_eq(cudaGetLastError(), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaGetLastError(), cudaSuccess);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Memory                                                              */
/* ------------------------------------------------------------------ */

START_TEST(test_malloc_free)
{
    void *p = NULL;
    ck_assert_int_eq(cudaMalloc(&p, 1000), cudaSuccess);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % 256, 0);
    ck_assert_int_eq(cudaFree((char *)p + 8), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaFree(p), cudaSuccess);
    ck_assert_int_eq(cudaFree(p), cudaErrorInvalidValue); /* double free */
    ck_assert_int_eq(cudaFree(NULL), cudaSuccess);
    void *m = malloc(64);
    ck_assert_int_eq(cudaFree(m), cudaErrorInvalidValue);
    free(m);
    ck_assert_int_eq(cudaMalloc(NULL, 16), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaMalloc(&p, SIZE_MAX / 2), cudaErrorMemoryAllocation);
    cudaGetLastError();
}
END_TEST

START_TEST(test_memcpy_memset)
{
    enum { N = 4096 };
    unsigned char host[N], back[N];
    for (int i = 0; i < N; i++) host[i] = (unsigned char)(i * 7);
    void *d = NULL, *d2 = NULL;
    ck_assert_int_eq(cudaMalloc(&d, N), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&d2, N), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(d, host, N, cudaMemcpyHostToDevice), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(d2, d, N, cudaMemcpyDeviceToDevice), cudaSuccess);
    memset(back, 0, N);
    ck_assert_int_eq(cudaMemcpy(back, d2, N, cudaMemcpyDeviceToHost), cudaSuccess);
    ck_assert_mem_eq(back, host, N);
    ck_assert_int_eq(cudaMemcpy(back, d, N, cudaMemcpyDefault), cudaSuccess);

    /* The device side of a copy must be cudaMalloc memory, and big enough. */
    ck_assert_int_eq(cudaMemcpy(back, host, N, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaMemcpy(back, host, N, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaMemcpy((char *)d + 1, host, N, cudaMemcpyHostToDevice),
                     cudaErrorInvalidValue);
    ck_assert_int_eq(cudaMemcpy(d, host, N, (enum cudaMemcpyKind)9),
                     cudaErrorInvalidMemcpyDirection);
    ck_assert_int_eq(cudaMemcpy(d, host, 0, cudaMemcpyHostToDevice), cudaSuccess);
    ck_assert_int_eq(cudaFree(d), cudaSuccess);
    ck_assert_int_eq(cudaFree(d2), cudaSuccess);
    cudaGetLastError();
}
END_TEST

/* Every cudaMemcpy kind, with CUDA's checks: explicit kinds name which side
 * is device memory; cudaMemcpyDefault finds out from the pointers. */
START_TEST(test_memcpy_kinds)
{
    enum { N = 1024 };
    char a[N], b[N];
    memset(a, 'a', N);
    memset(b, 0, N);
    void *d = NULL, *pinned = NULL;
    ck_assert_int_eq(cudaMalloc(&d, N), cudaSuccess);
    ck_assert_int_eq(cudaMallocHost(&pinned, N), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(b, a, N, cudaMemcpyHostToHost), cudaSuccess);
    ck_assert_mem_eq(a, b, N);
    ck_assert_int_eq(cudaMemcpy(pinned, a, N, cudaMemcpyHostToHost), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(d, pinned, N, cudaMemcpyHostToDevice), cudaSuccess);
    memset(b, 0, N);
    ck_assert_int_eq(cudaMemcpy(b, d, N, cudaMemcpyDeviceToHost), cudaSuccess);
    ck_assert_mem_eq(a, b, N);
    /* Default: any mix of host and device pointers... */
    memset(b, 'b', N);
    ck_assert_int_eq(cudaMemcpy(d, b, N, cudaMemcpyDefault), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(a, d, N, cudaMemcpyDefault), cudaSuccess);
    ck_assert_mem_eq(a, b, N);
    ck_assert_int_eq(cudaMemcpy(a, b, N, cudaMemcpyDefault), cudaSuccess);
    /* ...but a device block must hold the bytes. */
    ck_assert_int_eq(cudaMemcpy((char *)d + 8, b, N, cudaMemcpyDefault), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaMemcpy(a, (char *)d + 8, N, cudaMemcpyDefault), cudaErrorInvalidValue);
    /* Device to device needs device memory on both sides. */
    ck_assert_int_eq(cudaMemcpy(d, a, N, cudaMemcpyDeviceToDevice), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaMemcpy(NULL, a, N, cudaMemcpyHostToHost), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaMemcpy(a, b, N, (enum cudaMemcpyKind) - 1),
                     cudaErrorInvalidMemcpyDirection);
    ck_assert_int_eq(cudaFreeHost(pinned), cudaSuccess);
    ck_assert_int_eq(cudaFree(d), cudaSuccess);
    cudaGetLastError();
}
END_TEST

/* cudaMemset is an operation of the legacy default stream: a blocking
 * stream's later work sees it, the host does not wait for it. */
START_TEST(test_memset)
{
    enum { N = 4096 };
    unsigned char back[N];
    unsigned char *d = NULL, *pinned = NULL;
    ck_assert_int_eq(cudaMalloc((void **)&d, N), cudaSuccess);
    ck_assert_int_eq(cudaMallocHost((void **)&pinned, N), cudaSuccess);
    ck_assert_int_eq(cudaMemset(d, 0x5a, N), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(back, d, N, cudaMemcpyDeviceToHost), cudaSuccess);
    for (int i = 0; i < N; i++) ck_assert_uint_eq(back[i], 0x5a);
    /* Only the low byte of the value counts, as in CUDA. */
    ck_assert_int_eq(cudaMemset(d + 100, 0x1234, 10), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(back, d, N, cudaMemcpyDeviceToHost), cudaSuccess);
    ck_assert_uint_eq(back[99], 0x5a);
    ck_assert_uint_eq(back[100], 0x34);
    ck_assert_uint_eq(back[109], 0x34);
    ck_assert_uint_eq(back[110], 0x5a);
    /* Pinned host memory is reachable too; ordinary host memory is not. */
    ck_assert_int_eq(cudaMemset(pinned, 7, N), cudaSuccess);
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    ck_assert_uint_eq(pinned[N - 1], 7);
    ck_assert_int_eq(cudaMemset(back, 0, N), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaMemset(d + 1, 0, N), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaMemset(NULL, 0, 4), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaMemset(NULL, 0, 0), cudaSuccess);
    ck_assert_int_eq(cudaGetLastError(), cudaErrorInvalidValue);

    /* Ordered like a kernel on the default stream: held back by a blocking
     * stream's gate, and seen by that stream's later work. */
    cudaStream_t blocking, nonblocking;
    ck_assert_int_eq(cudaStreamCreate(&blocking), cudaSuccess);
    ck_assert_int_eq(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking), cudaSuccess);
    struct gate g;
    gate_init(&g);
    ck_assert_int_eq(cudaLaunchHostFunc(blocking, gate_wait_fn, &g), cudaSuccess);
    ck_assert_int_eq(cudaMemset(d, 1, N), cudaSuccess);
    ck_assert_int_eq(cudaMemcpyAsync(back, d, N, cudaMemcpyDeviceToHost, nonblocking), cudaSuccess);
    ck_assert_int_eq(cudaStreamSynchronize(nonblocking), cudaSuccess);
    ck_assert_uint_eq(back[0], 0x5a); /* the non-blocking stream did not wait */
    ck_assert_int_eq(cudaMemsetAsync(d, 2, N, nonblocking), cudaSuccess);
    ck_assert_int_eq(cudaStreamSynchronize(nonblocking), cudaSuccess);
    gate_open(&g);
    ck_assert_int_eq(cudaMemcpyAsync(back, d, N, cudaMemcpyDeviceToHost, blocking), cudaSuccess);
    ck_assert_int_eq(cudaStreamSynchronize(blocking), cudaSuccess);
    ck_assert_uint_eq(back[N - 1], 1); /* the default stream's fill came after */
    ck_assert_int_eq(cudaMemsetAsync(d, 0, N, (cudaStream_t)&g), cudaErrorInvalidResourceHandle);
    ck_assert_int_eq(cudaMemsetAsync(back, 0, N, nonblocking), cudaErrorInvalidValue);
    cudaGetLastError();
    gate_destroy(&g);
    ck_assert_int_eq(cudaStreamDestroy(blocking), cudaSuccess);
    ck_assert_int_eq(cudaStreamDestroy(nonblocking), cudaSuccess);
    ck_assert_int_eq(cudaFreeHost(pinned), cudaSuccess);
    ck_assert_int_eq(cudaFree(d), cudaSuccess);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Streams and asynchrony                                              */
/* ------------------------------------------------------------------ */

START_TEST(test_stream_handles)
{
    cudaStream_t s = NULL;
    ck_assert_int_eq(cudaStreamCreate(&s), cudaSuccess);
    ck_assert_int_eq(cudaStreamQuery(s), cudaSuccess);
    ck_assert_int_eq(cudaStreamSynchronize(s), cudaSuccess);
    ck_assert_int_eq(cudaStreamDestroy(s), cudaSuccess);
    ck_assert_int_eq(cudaStreamDestroy(s), cudaErrorInvalidResourceHandle);
    ck_assert_int_eq(cudaStreamSynchronize(s), cudaErrorInvalidResourceHandle);
    ck_assert_int_eq(cudaStreamQuery(s), cudaErrorInvalidResourceHandle);
    int junk;
    ck_assert_int_eq(cudaStreamSynchronize((cudaStream_t)&junk), cudaErrorInvalidResourceHandle);
    ck_assert_int_eq(cudaStreamCreate(NULL), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaStreamCreateWithFlags(&s, 0x10), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    ck_assert_int_eq(cudaStreamDestroy(s), cudaSuccess);
    /* The default stream always exists and cannot be destroyed. */
    ck_assert_int_eq(cudaStreamSynchronize(NULL), cudaSuccess);
    ck_assert_int_eq(cudaStreamSynchronize(cudaStreamLegacy), cudaSuccess);
    ck_assert_int_eq(cudaStreamQuery(0), cudaSuccess);
    ck_assert_int_eq(cudaStreamDestroy(NULL), cudaErrorInvalidResourceHandle);
    cudaGetLastError();
}
END_TEST

START_TEST(test_async_copy_runs_later)
{
    enum { N = 1 << 16 };
    unsigned char *src = malloc(N), *dst = malloc(N);
    for (int i = 0; i < N; i++) src[i] = (unsigned char)(i + 1);
    memset(dst, 0, N);
    void *d = NULL;
    ck_assert_int_eq(cudaMalloc(&d, N), cudaSuccess);
    cudaStream_t s;
    ck_assert_int_eq(cudaStreamCreate(&s), cudaSuccess);
    struct gate g;
    gate_init(&g);
    ck_assert_int_eq(cudaLaunchHostFunc(s, gate_wait_fn, &g), cudaSuccess);
    ck_assert_int_eq(cudaMemcpyAsync(d, src, N, cudaMemcpyHostToDevice, s), cudaSuccess);
    ck_assert_int_eq(cudaMemcpyAsync(dst, d, N, cudaMemcpyDeviceToHost, s), cudaSuccess);
    sleep_ms(50);
    /* Nothing has run: the worker is held at the gate. */
    ck_assert_int_eq(cudaStreamQuery(s), cudaErrorNotReady);
    ck_assert_int_eq(cudaGetLastError(), cudaSuccess); /* NotReady is not an error */
    ck_assert_uint_eq(dst[100], 0);
    gate_open(&g);
    ck_assert_int_eq(cudaStreamSynchronize(s), cudaSuccess);
    ck_assert_int_eq(cudaStreamQuery(s), cudaSuccess);
    ck_assert_mem_eq(dst, src, N);
    ck_assert_int_eq(cudaMemcpyAsync(dst, src, N, cudaMemcpyHostToDevice, s),
                     cudaErrorInvalidValue);
    ck_assert_int_eq(cudaStreamDestroy(s), cudaSuccess);
    ck_assert_int_eq(cudaMemcpyAsync(d, src, N, cudaMemcpyHostToDevice, s),
                     cudaErrorInvalidResourceHandle);
    cudaGetLastError();
    gate_destroy(&g);
    cudaFree(d);
    free(src);
    free(dst);
}
END_TEST

START_TEST(test_host_func_order)
{
    struct order_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
    struct order_item items[20];
    cudaStream_t s;
    ck_assert_int_eq(cudaStreamCreate(&s), cudaSuccess);
    for (int i = 0; i < 20; i++) {
        items[i] = (struct order_item){&log, i};
        ck_assert_int_eq(cudaLaunchHostFunc(i % 2 ? s : NULL, log_fn, &items[i]), cudaSuccess);
    }
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    ck_assert_int_eq(log.n, 20);
    /* Each stream runs in FIFO order; with the legacy default stream the
     * two streams also order against each other. */
    for (int i = 0; i < 20; i++) ck_assert_int_eq(log.tags[i], i);
    ck_assert_int_eq(cudaLaunchHostFunc(s, NULL, NULL), cudaErrorInvalidValue);
    ck_assert_int_eq(cudaStreamDestroy(s), cudaSuccess);
    ck_assert_int_eq(cudaLaunchHostFunc(s, log_fn, &items[0]), cudaErrorInvalidResourceHandle);
    cudaGetLastError();
}
END_TEST

START_TEST(test_sync_calls_wait_for_streams)
{
    cudaStream_t s;
    int flag = 0;
    void *d = NULL;
    char host[8] = {0};
    ck_assert_int_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&d, 8), cudaSuccess);

    ck_assert_int_eq(cudaLaunchHostFunc(s, sleep_100ms_then_set, &flag), cudaSuccess);
    ck_assert_int_eq(flag_get(&flag), 0);
    ck_assert_int_eq(cudaMemcpy(d, host, 8, cudaMemcpyHostToDevice), cudaSuccess);
    ck_assert_int_eq(flag_get(&flag), 1);

    flag = 0;
    ck_assert_int_eq(cudaLaunchHostFunc(s, sleep_100ms_then_set, &flag), cudaSuccess);
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    ck_assert_int_eq(flag_get(&flag), 1);

    flag = 0;
    ck_assert_int_eq(cudaLaunchHostFunc(s, sleep_100ms_then_set, &flag), cudaSuccess);
    ck_assert_int_eq(cudaFree(d), cudaSuccess);
    ck_assert_int_eq(flag_get(&flag), 1);

    /* Destroying a stream lets its queued work finish first. */
    flag = 0;
    ck_assert_int_eq(cudaLaunchHostFunc(s, sleep_100ms_then_set, &flag), cudaSuccess);
    ck_assert_int_eq(cudaStreamDestroy(s), cudaSuccess);
    ck_assert_int_eq(flag_get(&flag), 1);
}
END_TEST

START_TEST(test_legacy_default_stream)
{
    cudaStream_t blocking, blocking2, nonblocking;
    ck_assert_int_eq(cudaStreamCreate(&blocking), cudaSuccess);
    ck_assert_int_eq(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking), cudaSuccess);
    struct gate g;
    gate_init(&g);
    int on_default = 0, after_default = 0;

    /* Default-stream work waits for a blocking stream... */
    ck_assert_int_eq(cudaLaunchHostFunc(blocking, gate_wait_fn, &g), cudaSuccess);
    ck_assert_int_eq(cudaLaunchHostFunc(NULL, sleep_100ms_then_set, &on_default), cudaSuccess);
    /* ...and later blocking-stream work waits for the default stream. */
    ck_assert_int_eq(cudaStreamCreate(&blocking2), cudaSuccess);
    ck_assert_int_eq(cudaLaunchHostFunc(blocking2, sleep_100ms_then_set, &after_default),
                     cudaSuccess);
    sleep_ms(250);
    ck_assert_int_eq(flag_get(&on_default), 0);
    ck_assert_int_eq(flag_get(&after_default), 0);
    /* A non-blocking stream does not wait for the default stream. */
    int independent = 0;
    ck_assert_int_eq(cudaLaunchHostFunc(nonblocking, sleep_100ms_then_set, &independent),
                     cudaSuccess);
    ck_assert_int_eq(cudaStreamSynchronize(nonblocking), cudaSuccess);
    ck_assert_int_eq(flag_get(&independent), 1);
    ck_assert_int_eq(flag_get(&on_default), 0);
    gate_open(&g);
    ck_assert_int_eq(cudaStreamSynchronize(blocking2), cudaSuccess);
    ck_assert_int_eq(flag_get(&on_default), 1);
    ck_assert_int_eq(flag_get(&after_default), 1);
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    gate_destroy(&g);
    ck_assert_int_eq(cudaStreamDestroy(nonblocking), cudaSuccess);
    ck_assert_int_eq(cudaStreamDestroy(blocking2), cudaSuccess);
    ck_assert_int_eq(cudaStreamDestroy(blocking), cudaSuccess);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

START_TEST(test_events_not_ready_then_timed)
{
    cudaStream_t s;
    cudaEvent_t start, stop;
    ck_assert_int_eq(cudaStreamCreate(&s), cudaSuccess);
    ck_assert_int_eq(cudaEventCreate(&start), cudaSuccess);
    ck_assert_int_eq(cudaEventCreate(&stop), cudaSuccess);
    /* A never-recorded event has no time. */
    float ms = -1;
    ck_assert_int_eq(cudaEventElapsedTime(&ms, start, stop), cudaErrorInvalidResourceHandle);

    struct gate g;
    gate_init(&g);
    ck_assert_int_eq(cudaEventRecord(start, s), cudaSuccess);
    ck_assert_int_eq(cudaLaunchHostFunc(s, gate_wait_fn, &g), cudaSuccess);
    ck_assert_int_eq(cudaEventRecord(stop, s), cudaSuccess);
    /* The start event is stamped when the worker gets to it, which on a
     * busy machine can be well after the record call: hold the gate for
     * 120 ms from then on. */
    gate_wait_reached(&g);
    sleep_ms(120);
    ck_assert_int_eq(cudaEventElapsedTime(&ms, start, stop), cudaErrorNotReady);
    gate_open(&g);
    ck_assert_int_eq(cudaEventSynchronize(stop), cudaSuccess);
    ck_assert_int_eq(cudaEventElapsedTime(&ms, start, stop), cudaSuccess);
    ck_assert_float_ge(ms, 100.0f);
    ck_assert_float_lt(ms, 5000.0f);
    ck_assert_int_eq(cudaEventElapsedTime(NULL, start, stop), cudaErrorInvalidValue);

    cudaEvent_t notime;
    ck_assert_int_eq(cudaEventCreateWithFlags(&notime, cudaEventDisableTiming), cudaSuccess);
    ck_assert_int_eq(cudaEventRecord(notime, s), cudaSuccess);
    ck_assert_int_eq(cudaEventSynchronize(notime), cudaSuccess);
    ck_assert_int_eq(cudaEventElapsedTime(&ms, start, notime), cudaErrorInvalidResourceHandle);
    ck_assert_int_eq(cudaEventCreateWithFlags(&notime, cudaEventInterprocess),
                     cudaErrorInvalidValue);

    ck_assert_int_eq(cudaEventDestroy(start), cudaSuccess);
    ck_assert_int_eq(cudaEventDestroy(start), cudaErrorInvalidResourceHandle);
    ck_assert_int_eq(cudaEventRecord(start, s), cudaErrorInvalidResourceHandle);
    ck_assert_int_eq(cudaEventRecord(stop, (cudaStream_t)&ms), cudaErrorInvalidResourceHandle);
    ck_assert_int_eq(cudaEventCreate(NULL), cudaErrorInvalidValue);
    cudaGetLastError();
    cudaEventDestroy(stop);
    cudaStreamDestroy(s);
    gate_destroy(&g);
}
END_TEST

START_TEST(test_event_query)
{
    cudaStream_t s;
    cudaEvent_t e;
    ck_assert_int_eq(cudaStreamCreate(&s), cudaSuccess);
    ck_assert_int_eq(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), cudaSuccess);
    ck_assert_int_eq(cudaEventQuery(e), cudaSuccess); /* never recorded: nothing to wait for */
    struct gate g;
    gate_init(&g);
    ck_assert_int_eq(cudaLaunchHostFunc(s, gate_wait_fn, &g), cudaSuccess);
    ck_assert_int_eq(cudaEventRecord(e, s), cudaSuccess);
    ck_assert_int_eq(cudaEventQuery(e), cudaErrorNotReady);
    ck_assert_int_eq(cudaStreamQuery(s), cudaErrorNotReady);
    /* Not ready is an answer, not an error: nothing sticks. */
    ck_assert_int_eq(cudaGetLastError(), cudaSuccess);
    gate_open(&g);
    ck_assert_int_eq(cudaEventSynchronize(e), cudaSuccess);
    ck_assert_int_eq(cudaEventQuery(e), cudaSuccess);
    ck_assert_int_eq(cudaEventDestroy(e), cudaSuccess);
    ck_assert_int_eq(cudaEventQuery(e), cudaErrorInvalidResourceHandle);
    ck_assert_int_eq(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    ck_assert_int_eq(cudaStreamDestroy(s), cudaSuccess);
    gate_destroy(&g);
}
END_TEST

START_TEST(test_event_destroy_while_pending)
{
    cudaStream_t s;
    cudaEvent_t e;
    struct gate g;
    gate_init(&g);
    ck_assert_int_eq(cudaStreamCreate(&s), cudaSuccess);
    ck_assert_int_eq(cudaEventCreate(&e), cudaSuccess);
    ck_assert_int_eq(cudaLaunchHostFunc(s, gate_wait_fn, &g), cudaSuccess);
    ck_assert_int_eq(cudaEventRecord(e, s), cudaSuccess);
    ck_assert_int_eq(cudaEventDestroy(e), cudaSuccess); /* legal in CUDA */
    gate_open(&g);
    ck_assert_int_eq(cudaStreamSynchronize(s), cudaSuccess);
    ck_assert_int_eq(cudaStreamDestroy(s), cudaSuccess);
    gate_destroy(&g);
}
END_TEST

START_TEST(test_stream_wait_event)
{
    cudaStream_t s1, s2;
    cudaEvent_t e;
    ck_assert_int_eq(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
    ck_assert_int_eq(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
    ck_assert_int_eq(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), cudaSuccess);
    struct gate g;
    gate_init(&g);
    struct order_log log = {.mu = PTHREAD_MUTEX_INITIALIZER};
    struct order_item first = {&log, 1}, second = {&log, 2};
    ck_assert_int_eq(cudaLaunchHostFunc(s1, gate_wait_fn, &g), cudaSuccess);
    ck_assert_int_eq(cudaLaunchHostFunc(s1, log_fn, &first), cudaSuccess);
    ck_assert_int_eq(cudaEventRecord(e, s1), cudaSuccess);
    ck_assert_int_eq(cudaStreamWaitEvent(s2, e, 0), cudaSuccess);
    ck_assert_int_eq(cudaLaunchHostFunc(s2, log_fn, &second), cudaSuccess);
    sleep_ms(100);
    ck_assert_int_eq(log.n, 0);
    ck_assert_int_eq(cudaStreamQuery(s2), cudaErrorNotReady);
    gate_open(&g);
    ck_assert_int_eq(cudaStreamSynchronize(s2), cudaSuccess);
    ck_assert_int_eq(log.n, 2);
    ck_assert_int_eq(log.tags[0], 1);
    ck_assert_int_eq(log.tags[1], 2);
    ck_assert_int_eq(cudaStreamWaitEvent(s2, (cudaEvent_t)&log, 0), cudaErrorInvalidResourceHandle);
    ck_assert_int_eq(cudaStreamWaitEvent(s2, e, 7), cudaErrorInvalidValue);
    cudaGetLastError();
    cudaEventDestroy(e);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    gate_destroy(&g);
}
END_TEST

static Suite *runtime_suite(void)
{
    Suite *s = suite_create("host_runtime");
    TCase *dev = tcase_create("devices");
    tcase_add_test(dev, test_device_count_default);
    tcase_add_test(dev, test_device_count_env);
    tcase_add_test(dev, test_set_get_device);
    tcase_add_test(dev, test_device_properties);
    tcase_add_test(dev, test_error_strings_and_sticky_error);
    suite_add_tcase(s, dev);
    TCase *mem = tcase_create("memory");
    tcase_add_test(mem, test_malloc_free);
    tcase_add_test(mem, test_device_memory_limit);
    tcase_add_test(mem, test_device_memory_default);
    tcase_add_test(mem, test_memcpy_memset);
    tcase_add_test(mem, test_memcpy_kinds);
    tcase_add_test(mem, test_memset);
    suite_add_tcase(s, mem);
    TCase *str = tcase_create("streams");
    tcase_set_timeout(str, 30);
    tcase_add_test(str, test_stream_handles);
    tcase_add_test(str, test_async_copy_runs_later);
    tcase_add_test(str, test_host_func_order);
    tcase_add_test(str, test_sync_calls_wait_for_streams);
    tcase_add_test(str, test_legacy_default_stream);
    suite_add_tcase(s, str);
    TCase *ev = tcase_create("events");
    tcase_set_timeout(ev, 30);
    tcase_add_test(ev, test_events_not_ready_then_timed);
    tcase_add_test(ev, test_event_query);
    tcase_add_test(ev, test_event_destroy_while_pending);
    tcase_add_test(ev, test_stream_wait_event);
    suite_add_tcase(s, ev);
    return s;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--probe-memory") == 0) return probe_memory();
    if (argc > 1 && strcmp(argv[1], "--probe-devices") == 0) {
        int n = -1;
        cudaError_t rc = cudaGetDeviceCount(&n);
        printf("RESULT %d %d\n", n, (int)rc);
        return 0;
    }
    /* The tests expect the default of 8 simulated devices. */
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("NCCLAB_HOST_DEVICES");
    ssize_t len = readlink("/proc/self/exe", g_self, sizeof g_self - 1);
    if (len <= 0) {
        fprintf(stderr, "cannot find this test's own executable\n");
        return 1;
    }
    g_self[len] = '\0';

    SRunner *sr = srunner_create(runtime_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
