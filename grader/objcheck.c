/* The checks of a student's object, from nm and objdump (objcheck.h). */
#include "objcheck.h"

#include <stdio.h>
#include <string.h>

#include "build.h"

/* Calls graded code may not make in any lab, and why. Checked on the
 * student's object alone, before it is linked with the driver, by name
 * without its version (`system@GLIBC_2.2.5`, from a .symver directive, is
 * system). An early diagnosis only: the run's system-call filter
 * (common/confine.c) refuses starting programs and processes and making
 * executable memory whatever names the object uses. */
static const struct {
    const char *pattern, *why;
} refused_calls[] = {
    {"__real_*", "it reaches NCCL/CUDA behind the kit's call counters (common/trace.c)"},
    {"__wrap_*", "it calls the kit's call counters directly (common/trace.c)"},
    {"ncclab_trace_*", "the call counters belong to the provided driver"},
    {"ncclab_taught_*", "it is the kit's copy of a lab's task (common/taught.h): write your own"},
    {"ncclab_time_op", "it is the kit's own stopwatch (common/timing.h): time with CUDA events "
                       "yourself (lab 2, Task 2)"},
    {"ncclab_now_us", "it is the kit's own clock (common/timing.h): time with CUDA events "
                      "yourself (lab 2, Task 2)"},
    {"ncclab_algbw_*", "it is the kit's own bandwidth arithmetic (common/bandwidth.h): compute "
                       "the bandwidths yourself (lab 7, Task 3)"},
    {"ncclab_busbw_*", "it is the kit's own bandwidth arithmetic (common/bandwidth.h): compute "
                       "the bandwidths yourself (lab 7, Task 3)"},
    {"ncclab_record_*", "only the provided driver prints #ncclab records"},
    {"ncclab_report_*", "only the provided driver prints #ncclab records"},
    {"ncclab_lab_*", "it belongs to the provided driver"},
    {"ncclab_watchdog_*", "it belongs to the provided driver"},
    {"fork", "it starts a process: only the launcher starts processes"},
    {"vfork", "it starts a process: only the launcher starts processes"},
    {"_Fork", "it starts a process: only the launcher starts processes"},
    {"__fork", "it starts a process: only the launcher starts processes"},
    {"__vfork", "it starts a process: only the launcher starts processes"},
    {"forkpty", "it starts a process: only the launcher starts processes"},
    {"clone", "it starts a process: only the launcher starts processes"},
    {"clone3", "it starts a process: only the launcher starts processes"},
    {"__clone*", "it starts a process: only the launcher starts processes"},
    {"posix_spawn*", "it starts a process: only the launcher starts processes"},
    /* Through the launcher, which runs outside the filter: MPI's dynamic
     * processes and PMIx's spawn start programs on the rank's behalf. */
    {"MPI_Comm_spawn*", "it asks the launcher to start programs: only the grader's launch starts "
                        "ranks"},
    {"PMPI_Comm_spawn*", "it asks the launcher to start programs: only the grader's launch "
                         "starts ranks"},
    {"MPI_Comm_connect", "it connects to processes outside the run"},
    {"MPI_Comm_accept", "it connects to processes outside the run"},
    {"MPI_Comm_join", "it connects to processes outside the run"},
    {"MPI_Open_port", "it connects to processes outside the run"},
    {"MPI_Publish_name", "it connects to processes outside the run"},
    {"MPI_Lookup_name", "it connects to processes outside the run"},
    {"PMPI_Comm_connect", "it connects to processes outside the run"},
    {"PMPI_Comm_accept", "it connects to processes outside the run"},
    {"PMPI_Comm_join", "it connects to processes outside the run"},
    {"PMIx_*", "it talks to the launcher's process manager (PMIx_Spawn starts programs)"},
    {"pmix_*", "it talks to the launcher's process manager (PMIx_Spawn starts programs)"},
    {"PMI_*", "it talks to the launcher's process manager"},
    {"PMI2_*", "it talks to the launcher's process manager"},
    {"ompi_dpm_*", "it reaches Open MPI's dynamic processes (spawn, connect)"},
    {"orte_*", "it reaches the launcher's internals"},
    {"prte_*", "it reaches the launcher's internals"},
    {"daemon", "it detaches a process from the run"},
    {"setsid", "it detaches a process from the run"},
    {"setpgid", "it detaches a process from the run"},
    {"exec*", "it runs another program"},
    {"fexecve", "it runs another program"},
    {"system", "it runs another program"},
    {"popen", "it runs another program"},
    {"wordexp", "it runs another program (the shell, for a command substitution)"},
    {"rexec*", "it runs another program"},
    {"dlopen", "it loads code at run time"},
    {"dlmopen", "it loads code at run time"},
    {"dlsym", "it looks up code at run time"},
    {"dlvsym", "it looks up code at run time"},
    {"__libc_dl*", "it loads code at run time"},
    {"__libc_*", "it reaches the C library's internals (__libc_system, __libc_fork)"},
    {"_dl_*", "it reaches the dynamic loader's internals"},
    {"syscall", "it makes raw system calls"},
    {"ptrace", "it acts on other processes"},
    {"process_vm_*", "it acts on other processes"},
    {"pidfd_*", "it acts on other processes"},
    {"prctl", "it changes how the process is confined"},
    {"unshare", "it changes how the process is confined"},
    {"setns", "it changes how the process is confined"},
    {"mount", "it changes how the process is confined"},
    {"umount*", "it changes how the process is confined"},
    {"chroot", "it changes how the process is confined"},
    {"pivot_root", "it changes how the process is confined"},
    {"personality", "it changes how the process is confined"},
    {"mprotect", "it makes memory executable"},
    {"pkey_mprotect", "it makes memory executable"},
    {"mmap*", "it maps memory by hand (allocate with malloc or cudaMalloc)"},
    {"mremap", "it maps memory by hand (allocate with malloc or cudaMalloc)"},
    {"remap_file_pages", "it maps memory by hand (allocate with malloc or cudaMalloc)"},
    {"shmat", "it maps shared memory by hand, which can be made executable (allocate with malloc "
              "or cudaMalloc)"},
    {"memfd_create", "it creates in-memory files to run"},
    {"_IO_*", "it reaches the C library's stream internals (_IO_proc_open is popen)"},
};

static int pattern_match(const char *pattern, size_t plen, const char *name)
{
    if (plen > 0 && pattern[plen - 1] == '*') return strncmp(name, pattern, plen - 1) == 0;
    return strlen(name) == plen && strncmp(name, pattern, plen) == 0;
}

/* Does the module's list forbid `name`? The first entry that matches wins;
 * "!NAME" entries allow. */
static int module_forbids(const char *list, const char *name)
{
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ",");
        size_t allow = *p == '!';
        if (n > allow && pattern_match(p + allow, n - allow, name)) return !allow;
        p += n;
        if (*p == ',') p++;
    }
    return 0;
}

/* `name` without a symbol version: "system@GLIBC_2.2.5" and
 * "system@@GLIBC_2.2.5" are "system". */
static const char *unversioned(const char *name, char *buf, size_t len)
{
    snprintf(buf, len, "%.*s", (int)strcspn(name, "@"), name);
    return buf;
}

/* Why `name` may not be called in this lab; NULL when it may. */
static const char *refusal(const struct lab_module *mod, const char *name)
{
    for (size_t i = 0; i < sizeof refused_calls / sizeof *refused_calls; i++)
        if (pattern_match(refused_calls[i].pattern, strlen(refused_calls[i].pattern), name))
            return refused_calls[i].why;
    if (!mod->forbidden_calls)
        return module_forbids(FORBIDDEN_MPI_BUT_SYNC, name) ? FORBIDDEN_MPI_BUT_SYNC_WHY : NULL;
    if (module_forbids(mod->forbidden_calls, name))
        return mod->forbidden_reason ? mod->forbidden_reason : "this lab does not allow it";
    return NULL;
}

void parse_nm(char *text, struct strv *undef, struct strv *defined)
{
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[512], type[4];
        if (sscanf(line, "%511s %3s", name, type) != 2 || type[1]) continue;
        char t = type[0];
        if (t == 'U' || t == 'w' || t == 'v')
            sv_add(undef, name);
        else if ((t >= 'A' && t <= 'Z') || t == 'u')
            sv_add(defined, name);
    }
}

/* The first GNU indirect function (`nm` type i) `nm -P` lists, copied
 * into name; 0 if none. Its resolver runs while the executable is
 * relocated, before any start-up code of the driver or the C library. */
static int find_ifunc(const char *text, char *name, size_t len)
{
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        const char *sp = memchr(p, ' ', n);
        if (sp && sp + 2 <= p + n && sp[1] == 'i' && (sp + 2 == p + n || sp[2] == ' ')) {
            snprintf(name, len, "%.*s", (int)(sp - p), p);
            return 1;
        }
        p = nl ? nl + 1 : p + n;
    }
    return 0;
}

/* Whether the kit's library defines `name` (a global symbol). */
static int kit_defines(const struct kit_build *kit, const char *name)
{
    for (int i = 0; kit->defined && kit->defined[i]; i++)
        if (strcmp(kit->defined[i], name) == 0) return 1;
    return 0;
}

/* A system-call instruction in `objdump -d` output: only inline assembly
 * puts one in a C object, to reach the kernel around every check above. */
static int has_raw_syscall(const char *text)
{
    static const char *const insns[] = {"\tsyscall", "\tsysenter", "\tint    $0x80", "\tsvc\t",
                                        "\tsvc "};
    for (size_t i = 0; i < sizeof insns / sizeof *insns; i++)
        if (strstr(text, insns[i])) return 1;
    return 0;
}

/* Whether `objdump -h` output marks .note.GNU-stack as code, or has none
 * (a C compiler always writes one): the linker then gives the whole
 * process an executable stack. */
static int executable_stack(const char *text)
{
    const char *p = strstr(text, " .note.GNU-stack ");
    if (!p) return 1;
    const char *nl = strchr(p, '\n');
    if (!nl) return 0;
    const char *end = strchr(nl + 1, '\n');
    size_t n = end ? (size_t)(end - nl - 1) : strlen(nl + 1);
    return memmem(nl + 1, n, "CODE", 4) != NULL;
}

int object_symbols_refused(const struct lab_module *mod, const char *file, char *nm_text,
                           struct strv *undef, struct strv *defined, char *log, size_t len)
{
    char ifunc[256];
    int rc = 0;
    if (find_ifunc(nm_text, ifunc, sizeof ifunc)) {
        text_append(log, len,
                    "%s defines %s as an indirect function (ifunc), which graded code may not "
                    "have: its resolver runs before the driver starts\n",
                    file, ifunc);
        rc = -1;
    }
    parse_nm(nm_text, undef, defined);
    if (rc) return rc;
    int refused = 0;
    for (int k = 0; k < undef->n; k++) {
        char base[512];
        const char *name = undef->v[k];
        const char *why = refusal(mod, unversioned(name, base, sizeof base));
        if (!why) continue;
        if (refused++ >= 6) continue;
        if (strcmp(base, name) != 0)
            text_append(log, len, "%s calls %s (as %s), which graded code may not use: %s\n", file,
                        base, name, why);
        else
            text_append(log, len, "%s calls %s, which graded code may not use: %s\n", file, name,
                        why);
    }
    if (refused > 6) text_append(log, len, "(and %d more such calls)\n", refused - 6);
    return refused ? -1 : 0;
}

int object_code_refused(const char *file, const char *objdump_text, char *log, size_t len)
{
    if (has_raw_syscall(objdump_text)) {
        text_append(log, len,
                    "%s holds a system-call instruction (inline assembly), which graded "
                    "code may not use: it goes around the grader's checks\n",
                    file);
        return -1;
    }
    if (executable_stack(objdump_text)) {
        text_append(log, len,
                    "%s asks for an executable stack (its .note.GNU-stack section is code), "
                    "which graded code may not have: code written there at run time goes "
                    "around the grader's checks\n",
                    file);
        return -1;
    }
    if (strstr(objdump_text, " .preinit_array")) {
        text_append(log, len,
                    "%s has a .preinit_array entry (code run before the C library's and the "
                    "driver's start-up), which graded code may not have: the driver notes "
                    "its standard output there\n",
                    file);
        return -1;
    }
    return 0;
}

/* Only the lab's own functions (labN_*) stay global: a definition of
 * printf, malloc or an NCCL call in the student's file stays its own. A
 * definition of something else the driver calls (a kit helper such as
 * ncclab_summarise, or puts, which prints the records) would replace the
 * kit's copy for the driver too: refused. */
int object_definitions_refused(const struct kit_build *kit, int lab, const char *file,
                               const struct strv *defined, const struct strv *needs, char *log,
                               size_t len)
{
    char prefix[16];
    snprintf(prefix, sizeof prefix, "lab%d_", lab);
    int replaced = 0;
    for (int k = 0; k < defined->n; k++) {
        char base[512];
        unversioned(defined->v[k], base, sizeof base);
        if ((!sv_has(needs, base) && !kit_defines(kit, base)) ||
            strncmp(base, prefix, strlen(prefix)) == 0)
            continue;
        if (replaced++ < 6)
            text_append(log, len,
                        "%s defines %s, which the provided driver or the kit defines: graded "
                        "code may define only the lab's own functions (%s*); rename yours or "
                        "make it static\n",
                        file, defined->v[k], prefix);
    }
    if (replaced > 6) text_append(log, len, "(and %d more such definitions)\n", replaced - 6);
    return replaced ? -1 : 0;
}
