/* Attack: refuse to die politely. */
#include <signal.h>
#include <unistd.h>
__attribute__((constructor)) static void stubborn(void)
{
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
}
#define lab2_time_allreduce lab2_time_allreduce_reference
