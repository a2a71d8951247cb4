#include "confine.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define CONFINE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CONFINE_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif
#ifndef SHM_EXEC
#define SHM_EXEC 0100000
#endif

/* Landlock (Linux 5.13+): the same numbers on x86-64 and arm64. */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#define LANDLOCK_EXECUTE (1ULL << 0) /* LANDLOCK_ACCESS_FS_EXECUTE */

/* A Landlock domain of the process's own, which this process and what it
 * starts can never leave. What it is for: the kernel lets a process in a
 * domain reach no process outside it as a debugger would, and opening
 * /proc/<pid>/mem for writing is such an access. Without it a rank could
 * write code into its mpirun (same uid, unfiltered) and have that start
 * programs for it. The domain handles one right, running a file, and grants
 * it nowhere: the filter refuses execve already. 0 on success; 1 where the
 * kernel has no Landlock (built without it, or not enabled at boot), which
 * leaves the rank under the filter alone; -1 with the reason in `why`. */
static int landlock_own_domain(char *why, size_t len)
{
    struct {
        uint64_t handled_access_fs;
    } attr = {LANDLOCK_EXECUTE};
    long fd = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (fd < 0) {
        if (errno == ENOSYS || errno == EOPNOTSUPP) return 1;
        snprintf(why, len, "landlock_create_ruleset: %s", strerror(errno));
        return -1;
    }
    long rc = syscall(SYS_landlock_restrict_self, (int)fd, 0);
    int err = errno;
    close((int)fd);
    if (rc != 0) {
        snprintf(why, len, "landlock_restrict_self: %s", strerror(err));
        return -1;
    }
    return 0;
}

int ncclab_confine_has_landlock(void)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1U /* ..._VERSION */);
    return abi >= 1;
}

#ifdef CONFINE_ARCH

#define KILL SECCOMP_RET_KILL_PROCESS
#define ALLOW SECCOMP_RET_ALLOW
#define DENY(e) (SECCOMP_RET_ERRNO | ((e)&SECCOMP_RET_DATA))
/* The low 32 bits of argument i (both architectures are little-endian). */
#define ARG(i) (offsetof(struct seccomp_data, args) + 8 * (i))

struct filter {
    struct sock_filter code[128];
    unsigned n;
};

static void emit(struct filter *f, struct sock_filter s)
{
    if (f->n < sizeof f->code / sizeof *f->code) f->code[f->n] = s;
    f->n++;
}
#define LD(off) emit(f, (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (off)))
#define RET(v) emit(f, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, (v)))
#define JEQ(k, t, e) emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (e)))
#define JGE(k, t, e) emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (k), (t), (e)))
#define JSET(k, t, e)                                                                              \
    emit(f, (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, (k), (t), (e)))

/* Each rule starts with the system call number in A and, when the call is
 * not its own, jumps over itself with A unchanged; a rule for its call
 * always returns. */
static void always(struct filter *f, unsigned nr, unsigned verdict)
{
    JEQ(nr, 0, 1);
    RET(verdict);
}

/* Argument `arg` with any bit of `bits`: `verdict`; else allowed. */
static void if_any_bit(struct filter *f, unsigned nr, unsigned arg, unsigned bits, unsigned verdict)
{
    JEQ(nr, 0, 4);
    LD(ARG(arg));
    JSET(bits, 0, 1);
    RET(verdict);
    RET(ALLOW);
}

static void build(struct filter *f)
{
    LD(offsetof(struct seccomp_data, arch));
    JEQ(CONFINE_ARCH, 1, 0);
    RET(KILL); /* another ABI (i386's int 0x80) around every rule below */
    LD(offsetof(struct seccomp_data, nr));
#ifdef __x86_64__
    JGE(0x40000000, 0, 1); /* the x32 ABI: the same calls by other numbers */
    RET(KILL);
    always(f, SYS_fork, KILL);
    always(f, SYS_vfork, KILL);
#endif
    /* Starting a program. */
    always(f, SYS_execve, KILL);
    always(f, SYS_execveat, KILL);
    /* A process, not a thread: threads are clone with CLONE_THREAD. glibc
     * tries clone3 first and falls back to clone on ENOSYS (clone3 passes
     * its flags in memory, out of a filter's reach). */
    always(f, SYS_clone3, DENY(ENOSYS));
    JEQ(SYS_clone, 0, 4);
    LD(ARG(0));
    JSET(CLONE_THREAD, 0, 1);
    RET(ALLOW);
    RET(KILL);
    /* Executable memory: no mapping that is both writable and executable,
     * no anonymous executable mapping, no page made executable later. The
     * dynamic loader's mappings of libraries (files, read and execute)
     * stay allowed: MPI_Init, NCCL and CUDA load theirs after this. */
    JEQ(SYS_mmap, 0, 7);
    LD(ARG(2));
    JSET(PROT_EXEC, 0, 3);
    JSET(PROT_WRITE, 3, 0);
    LD(ARG(3));
    JSET(MAP_ANONYMOUS, 1, 0);
    RET(ALLOW);
    RET(KILL);
    if_any_bit(f, SYS_mprotect, 2, PROT_EXEC, KILL);
    if_any_bit(f, SYS_pkey_mprotect, 2, PROT_EXEC, KILL);
    if_any_bit(f, SYS_shmat, 2, SHM_EXEC, KILL);
    always(f, SYS_remap_file_pages, KILL);
    /* personality(READ_IMPLIES_EXEC) makes every readable mapping
     * executable: only the query (0xffffffff) is answered. */
    JEQ(SYS_personality, 0, 4);
    LD(ARG(0));
    JEQ(0xffffffffU, 0, 1);
    RET(ALLOW);
    RET(DENY(EPERM));
    /* Reaching other processes, leaving the run's session, io_uring (whose
     * operations no filter sees). */
    always(f, SYS_ptrace, DENY(EPERM));
    always(f, SYS_process_vm_writev, DENY(EPERM));
    always(f, SYS_setsid, DENY(EPERM));
    always(f, SYS_io_uring_setup, DENY(EPERM));
    /* The kernel's keyrings outlive a run and are shared by its uid: a run
     * could leave itself a note ("this is my second try") that no sweep of
     * files or IPC finds. */
    always(f, SYS_add_key, DENY(EPERM));
    always(f, SYS_keyctl, DENY(EPERM));
    always(f, SYS_request_key, DENY(EPERM));
    RET(ALLOW);
}

#endif /* CONFINE_ARCH */

int ncclab_confine(char *why, size_t len)
{
#ifdef CONFINE_ARCH
    struct filter f = {.n = 0};
    build(&f);
    if (f.n > sizeof f.code / sizeof *f.code) {
        snprintf(why, len, "the filter does not fit (%u instructions)", f.n);
        return -1;
    }
    struct sock_fprog prog = {.len = (unsigned short)f.n, .filter = f.code};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        snprintf(why, len, "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
        return -1;
    }
    if (landlock_own_domain(why, len) < 0) return -1;
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
        snprintf(why, len, "seccomp(SECCOMP_SET_MODE_FILTER): %s", strerror(errno));
        return -1;
    }
    return 0;
#else
    snprintf(why, len, "no system-call filter is written for this architecture");
    return -1;
#endif
}

/* The preinit entry (results.c) hands us the environment: this runs before
 * the C library's own start-up, so getenv is not used. */
void ncclab_confine_if_asked(char **envp)
{
    static const char key[] = "NCCLAB_CONFINE=";
    for (char **e = envp; e && *e; e++) {
        if (strncmp(*e, key, sizeof key - 1) != 0 || strcmp(*e + sizeof key - 1, "1") != 0)
            continue;
        char why[160], msg[320];
        if (ncclab_confine(why, sizeof why) == 0) return;
        int n = snprintf(msg, sizeof msg,
                         "[ncclab] error: the grader's system-call filter cannot be installed "
                         "(%s): this machine's kernel needs seccomp filters (Linux 3.17 or "
                         "later, not disabled by the container)\n",
                         why);
        if (n > 0) {
            ssize_t ignored =
                write(STDERR_FILENO, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
            (void)ignored;
        }
        _exit(2);
    }
}
