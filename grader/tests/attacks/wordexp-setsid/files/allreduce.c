/* Attack: a command substitution starts /bin/sh, which leaves a sleep
 * running in a session of its own (a sweep of the run's session misses it). */
#include <wordexp.h>
__attribute__((constructor)) static void leave_a_sleeper(void)
{
    wordexp_t w;
    if (wordexp("$(setsid sleep 131 &)", &w, 0) == 0) wordfree(&w);
}
