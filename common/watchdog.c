#include "watchdog.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "errors.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int thread_started;
static int armed;
static unsigned long arm_count; /* bumped by every arm: a new phase */
static struct timespec deadline;
static double armed_seconds;
static char what_text[256], hint_text[512];

/* What the host backend reports as it moves data (ncclab_watchdog_progress),
 * and the count the watchdog saw last. "No progress for N s" means that:
 * a phase whose data still moves, only slowly because the machine is busy,
 * is not a hang; a cycle of waits moves nothing, at any load, and is stopped
 * N s after its last byte moved. (The CUDA backend reports nothing: there the
 * deadline is N s after the arm.) */
static atomic_ulong progress;
static unsigned long progress_seen;

void ncclab_watchdog_progress(void)
{
    atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
}

static void deadline_from_now(void)
{
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += (time_t)armed_seconds;
    deadline.tv_nsec += (long)((armed_seconds - (double)(time_t)armed_seconds) * 1e9);
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
}

static int before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void *watch(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!armed) pthread_cond_wait(&changed, &lock);
        /* Wake at the deadline, or within a second to look for progress. */
        unsigned long phase = arm_count;
        struct timespec wake;
        clock_gettime(CLOCK_REALTIME, &wake);
        wake.tv_sec += 1;
        if (before(&deadline, &wake)) wake = deadline;
        int rc = pthread_cond_timedwait(&changed, &lock, &wake);
        if (!armed || phase != arm_count) continue; /* disarmed or armed anew */
        unsigned long p = atomic_load_explicit(&progress, memory_order_relaxed);
        if (p != progress_seen) {
            progress_seen = p;
            deadline_from_now();
            continue;
        }
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        if ((rc == ETIMEDOUT || rc == 0) && !before(&now, &deadline)) {
            int r = ncclab_log_rank();
            fprintf(stderr,
                    "[rank %d] watchdog: no progress for %.0f s while %s — this looks like a "
                    "deadlock or hang.\n[rank %d]   likely cause: %s\n",
                    r, armed_seconds, what_text, r, hint_text);
            fflush(stderr);
            fflush(stdout);
            _exit(NCCLAB_EXIT_HANG);
        }
    }
    return NULL;
}

/* A crash names what was running: the line the signal handler writes,
 * prepared at arm time (a handler may only write(2)). Two buffers, so that
 * one being rewritten is never the one read. */
static char crash_line[2][320];
static volatile sig_atomic_t crash_ready = -1; /* the buffer to write, -1: none */
#define NCRASH 5
static struct sigaction crash_old[NCRASH];
static const int crash_signals[NCRASH] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

/* The crash report's output: write(2) alone (a handler may not use stdio). */
static void write_text(const char *text)
{
    ssize_t unused = write(2, text, strlen(text));
    (void)unused;
}

/* "<text><value in hex>". */
static void write_hex(const char *text, unsigned long value)
{
    char buf[20];
    size_t n = 0;
    buf[n++] = '0';
    buf[n++] = 'x';
    int shift = 60;
    while (shift > 0 && !(value >> shift & 0xf)) shift -= 4;
    for (; shift >= 0; shift -= 4) buf[n++] = "0123456789abcdef"[value >> shift & 0xf];
    buf[n] = '\0';
    write_text(text);
    write_text(buf);
}

static void write_dec(const char *text, unsigned long value)
{
    char buf[24];
    size_t n = sizeof buf - 1;
    buf[n] = '\0';
    do buf[--n] = (char)('0' + value % 10);
    while ((value /= 10) != 0 && n > 0);
    write_text(text);
    write_text(buf + n);
}

/* The instruction that faulted, from the signal's context. */
static unsigned long fault_pc(const void *uctx)
{
    const ucontext_t *uc = uctx;
    if (!uc) return 0;
#if defined(__x86_64__)
    return (unsigned long)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (unsigned long)uc->uc_mcontext.pc;
#else
    return 0;
#endif
}

/* A register's value as the address it holds (the one place a number
 * becomes a pointer here). */
static const void *as_address(unsigned long value)
{
    return (const void *)value; // NOLINT(performance-no-int-to-ptr): a register holds an address
}

/* Right after a call into a dead address (code of a library no longer
 * mapped), where the call would have returned to: the word on top of the
 * stack on x86-64, the link register on arm64; 0 if unknown. */
static unsigned long caller_of_fault(const void *uctx)
{
    const ucontext_t *uc = uctx;
    if (!uc) return 0;
#if defined(__x86_64__)
    const unsigned long sp = (unsigned long)uc->uc_mcontext.gregs[REG_RSP];
    return sp ? *(const unsigned long *)as_address(sp) : 0;
#elif defined(__aarch64__)
    return (unsigned long)uc->uc_mcontext.regs[30];
#else
    return 0;
#endif
}

/* " in OBJECT (symbol+off) at offset O" for an address, when dladdr knows it. */
static void write_where(unsigned long pc)
{
    Dl_info where;
    if (!pc || !dladdr(as_address(pc), &where) || !where.dli_fname) return;
    write_text(" in ");
    write_text(where.dli_fname);
    if (where.dli_sname) {
        write_text(" (");
        write_text(where.dli_sname);
        write_hex("+", pc - (unsigned long)where.dli_saddr);
        write_text(")");
    }
    write_hex(" at offset ", pc - (unsigned long)where.dli_fbase);
}

static void on_crash(int sig, siginfo_t *info, void *uctx)
{
    int k = crash_ready;
    if (k >= 0) {
        const char *line = crash_line[k];
        ssize_t unused = write(2, line, strlen(line));
        (void)unused;
    }
    /* Where: the faulting address and this thread's stack (a rare crash
     * seen once in a loaded CI run is otherwise a signal number only).
     * backtrace() was called once at install time, so its unwinder is
     * loaded and it does not allocate here. */
    if (info && info->si_code > 0) {
        write_hex("[ncclab] fatal signal at address ", (unsigned long)info->si_addr);
        write_hex(", signal ", (unsigned long)sig);
        /* The faulting instruction and the object that holds it, before
         * the unwinder runs: on a corrupted stack backtrace() itself may
         * fault, and this line is then all there is. */
        const unsigned long pc = fault_pc(uctx);
        write_dec(", thread ", (unsigned long)syscall(SYS_gettid));
        write_dec(" of process ", (unsigned long)getpid());
        write_hex(", pc ", pc);
        write_where(pc);
        Dl_info mapped;
        if (pc && pc == (unsigned long)info->si_addr && !dladdr(as_address(pc), &mapped)) {
            /* A jump to an address where no object is: say who called. */
            const unsigned long ret = caller_of_fault(uctx);
            write_hex(" (no code there; called from ", ret);
            write_where(ret);
            write_text(")");
        }
        write_text("; stack:\n");
        void *frames[32];
        int n = backtrace(frames, 32);
        backtrace_symbols_fd(frames, n, 2);
    }
    /* The previous action (the default, or a sanitizer's) takes over: a
     * fault repeats when this handler returns, and meets it; a signal sent
     * by kill or raise is sent again. */
    for (int i = 0; i < NCRASH; i++)
        if (crash_signals[i] == sig) sigaction(sig, &crash_old[i], NULL);
    if (!info || info->si_code <= 0) raise(sig);
}

/* Once per process, whichever of arm and context comes first. Lock held. */
static void crash_handlers_install(void)
{
    static int installed;
    if (installed) return;
    installed = 1;
    void *warm[1];
    (void)backtrace(warm, 1); /* loads the unwinder now, outside any handler */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_crash;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    /* A stack of its own for the handler on this (the main) thread, so that
     * a stack overflow is still reported; other threads use their own. */
    static stack_t alt;
    if (!alt.ss_sp && (alt.ss_sp = malloc(1 << 16)) != NULL) {
        alt.ss_size = 1 << 16;
        if (sigaltstack(&alt, NULL) != 0) alt.ss_size = 0;
    }
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NCRASH; i++) sigaction(crash_signals[i], &sa, &crash_old[i]);
}

static void crash_context(const char *what)
{
    int next = crash_ready == 0 ? 1 : 0;
    snprintf(crash_line[next], sizeof crash_line[next], "[rank %d] crashed while %s\n",
             ncclab_log_rank(), what);
    crash_ready = next;
}

void ncclab_watchdog_arm(double seconds, const char *what, const char *hint)
{
    pthread_mutex_lock(&lock);
    crash_handlers_install();
    if (!thread_started) {
        pthread_t t;
        if (pthread_create(&t, NULL, watch, NULL) == 0) {
            pthread_detach(t);
            thread_started = 1;
        }
    }
    armed_seconds = seconds;
    deadline_from_now();
    progress_seen = atomic_load_explicit(&progress, memory_order_relaxed);
    arm_count++;
    snprintf(what_text, sizeof what_text, "%s", what ? what : "running");
    snprintf(hint_text, sizeof hint_text, "%s",
             hint ? hint
                  : "a rank skipped a collective or the ranks called them in different orders");
    armed = 1;
    crash_context(what_text);
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

void ncclab_watchdog_context(const char *what)
{
    pthread_mutex_lock(&lock);
    crash_handlers_install();
    snprintf(what_text, sizeof what_text, "%s", what);
    crash_context(what_text);
    pthread_mutex_unlock(&lock);
}

int ncclab_watchdog_doing(char *buf, size_t len)
{
    pthread_mutex_lock(&lock);
    int named = crash_ready >= 0 && what_text[0] != '\0';
    if (named && len > 0) snprintf(buf, len, "%s", what_text);
    pthread_mutex_unlock(&lock);
    return named;
}

int ncclab_watchdog_hint(char *buf, size_t len)
{
    pthread_mutex_lock(&lock);
    int named = armed && hint_text[0] != '\0';
    if (named && len > 0) snprintf(buf, len, "%s", hint_text);
    pthread_mutex_unlock(&lock);
    return named;
}

void ncclab_watchdog_disarm(void)
{
    pthread_mutex_lock(&lock);
    armed = 0;
    crash_ready = -1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}
