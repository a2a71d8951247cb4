/*
 * nccl_mem.c -- ncclMemAlloc/ncclMemFree and buffer registration
 * (ncclCommRegister/ncclCommDeregister) of the host backend.
 *
 * On a GPU, a buffer from ncclMemAlloc that is registered with the
 * communicator lets NCCL's point-to-point copies write straight into the
 * receiver's buffer instead of through a staging FIFO. Here every copy is
 * a memcpy anyway, so registration changes no speed; what it keeps is the
 * contract: ncclMemAlloc's memory is device memory that only ncclMemFree
 * frees, a registration names a live communicator and memory of a device
 * block, a handle is deregistered once, through the communicator that made
 * it (NCCL answers ncclInvalidUsage otherwise), and registering the same
 * range twice gives the same handle, counted. Memory still registered is
 * not freed: ncclMemFree refuses it (NCCL would leave a dangling mapping).
 * A communicator's registrations end with it.
 */
#include "nccl_internal.h"

#include <stdint.h>
#include <stdlib.h>

#define REG_MAGIC 0x6e72656775ULL /* "nregu" */

struct nccl_reg {
    uint64_t magic;
    struct ncclComm *comm;
    uintptr_t base;
    size_t size;
    int refs;
    struct nccl_reg *next;
};

static struct nccl_reg *g_regs; /* every live registration; host_lock guards it */

ncclResult_t ncclMemAlloc(void **ptr, size_t size)
{
    if (!ptr) return nccl_warn(ncclInvalidArgument, "ncclMemAlloc: ptr is NULL");
    if (size == 0)
        return nccl_warn(ncclInvalidArgument,
                         "ncclMemAlloc: size is 0; allocate at least one byte");
    cudaError_t e = host_mem_alloc_nccl(ptr, size);
    if (e != cudaSuccess)
        return nccl_warn(ncclSystemError, "ncclMemAlloc: cannot allocate %zu bytes (%s)", size,
                         cudaGetErrorString(e));
    return ncclSuccess;
}

/* The first registration overlapping [base, base + size), or NULL. Lock held. */
static struct nccl_reg *reg_overlapping_locked(uintptr_t base, size_t size)
{
    for (struct nccl_reg *r = g_regs; r; r = r->next)
        if (r->base < base + size && base < r->base + r->size) return r;
    return NULL;
}

ncclResult_t ncclMemFree(void *ptr)
{
    if (!ptr) return ncclSuccess; /* as free() */
    const size_t size = host_mem_block_size(ptr);
    host_lock();
    const struct nccl_reg *r = size ? reg_overlapping_locked((uintptr_t)ptr, size) : NULL;
    host_unlock();
    if (r)
        return nccl_warn(ncclInvalidUsage,
                         "ncclMemFree: %p is still registered with communicator %p; call "
                         "ncclCommDeregister on its handle first",
                         ptr, (void *)r->comm);
    switch (host_mem_free_nccl(ptr)) {
    case 0: return ncclSuccess;
    case -2:
        return nccl_warn(ncclInvalidArgument,
                         "ncclMemFree: %p came from cudaMalloc; free it with cudaFree", ptr);
    default:
        return nccl_warn(ncclInvalidArgument,
                         "ncclMemFree: %p is not the start of memory from ncclMemAlloc (freed "
                         "twice?)",
                         ptr);
    }
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void *buff, size_t size, void **handle)
{
    const char *fn = "ncclCommRegister";
    if (!handle) return nccl_warn(ncclInvalidArgument, "%s: handle is NULL", fn);
    struct ncclComm *c = NULL;
    ncclResult_t res = nccl_check_comm(fn, comm, &c);
    if (res != ncclSuccess) return res;
    if (size == 0) return nccl_warn(ncclInvalidArgument, "%s: size is 0", fn);
    res = nccl_check_buffer(fn, "buff", buff, size, 1);
    if (res != ncclSuccess) return res;
    host_lock();
    struct nccl_reg *r = g_regs;
    while (r && !(r->comm == c && r->base == (uintptr_t)buff && r->size == size)) r = r->next;
    if (r) {
        r->refs++;
    } else if ((r = calloc(1, sizeof *r)) != NULL) {
        *r = (struct nccl_reg){REG_MAGIC, c, (uintptr_t)buff, size, 1, g_regs};
        g_regs = r;
    }
    host_unlock();
    if (!r) return nccl_warn(ncclSystemError, "%s: out of memory", fn);
    *handle = r;
    return ncclSuccess;
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void *handle)
{
    const char *fn = "ncclCommDeregister";
    struct ncclComm *c = NULL;
    ncclResult_t res = nccl_check_comm(fn, comm, &c);
    if (res != ncclSuccess) return res;
    host_lock();
    struct nccl_reg **pp = &g_regs;
    while (*pp && (*pp != handle || (*pp)->comm != c)) pp = &(*pp)->next;
    struct nccl_reg *r = *pp;
    if (r && --r->refs == 0) {
        *pp = r->next;
        r->magic = 0;
        free(r);
    }
    host_unlock();
    if (!r)
        return nccl_warn(ncclInvalidUsage,
                         "%s: handle %p is not a registration of communicator %p "
                         "(deregistered already, or made by another communicator?)",
                         fn, handle, (void *)comm);
    return ncclSuccess;
}

void nccl_reg_drop_comm_locked(const struct ncclComm *c)
{
    for (struct nccl_reg **pp = &g_regs; *pp;) {
        struct nccl_reg *r = *pp;
        if (r->comm == c) {
            *pp = r->next;
            r->magic = 0;
            free(r);
        } else {
            pp = &r->next;
        }
    }
}
