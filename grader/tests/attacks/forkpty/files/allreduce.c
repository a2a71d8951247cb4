/* Attack: a process started by forkpty, whose name is not fork. */
#include <pty.h>
#include <unistd.h>
__attribute__((constructor)) static void pty_child(void)
{
    int master;
    if (forkpty(&master, NULL, NULL, NULL) == 0) {
        sleep(131);
        _exit(0);
    }
}
