/* Attack: leave a daemon behind that outlives the run and holds its output. */
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void leave_a_daemon(void)
{
    if (fork() == 0) {
        setsid();
        if (fork() == 0) {
            sleep(300);
            _exit(0);
        }
        _exit(0);
    }
}
