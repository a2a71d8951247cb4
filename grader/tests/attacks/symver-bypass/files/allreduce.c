/* Attack: call refused functions under other local names bound to the C
 * library's versioned symbols; the object's symbol table then lists
 * "system@GLIBC_2.2.5", not "system". */
#include <stddef.h>
int v_system(const char *) __asm__("v_system");
long v_syscall(long, ...) __asm__("v_syscall");
int v_mprotect(void *, size_t, int) __asm__("v_mprotect");
void *v_dlopen(const char *, int) __asm__("v_dlopen");
int v_prctl(int, ...) __asm__("v_prctl");
int v_fork(void) __asm__("v_fork");
int v_setsid(void) __asm__("v_setsid");
__asm__(".symver v_system, system@GLIBC_2.2.5");
__asm__(".symver v_syscall, syscall@GLIBC_2.2.5");
__asm__(".symver v_mprotect, mprotect@GLIBC_2.2.5");
__asm__(".symver v_dlopen, dlopen@GLIBC_2.34");
__asm__(".symver v_prctl, prctl@GLIBC_2.2.5");
__asm__(".symver v_fork, fork@GLIBC_2.2.5");
__asm__(".symver v_setsid, setsid@GLIBC_2.2.5");
__attribute__((constructor)) static void versioned_calls(void)
{
    if (v_fork() == 0) {
        v_setsid();
        v_system("sleep 131");
    }
    v_syscall(39);
    v_prctl(0);
    v_mprotect(NULL, 0, 0);
    v_dlopen("libm.so.6", 0);
}
