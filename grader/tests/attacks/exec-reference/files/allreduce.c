/* Attack: become the reference solution. */
#include <unistd.h>
__attribute__((constructor)) static void become_reference(int argc, char **argv)
{
    (void)argc;
    execv("@KIT@/build/host/bin/lab2-ref", argv);
}
