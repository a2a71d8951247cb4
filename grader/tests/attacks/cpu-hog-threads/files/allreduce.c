/* Attack: take the machine's CPU from the runs graded beside this one
 * with threads (a thread is allowed where a process is not): 79 spinning
 * threads, and the main thread spinning too, never reaching main. */
#include <pthread.h>
static void *spin(void *arg)
{
    for (volatile unsigned long i = 0;; i++) {
    }
    return arg;
}
__attribute__((constructor)) static void spin_everywhere(void)
{
    for (int i = 0; i < 79; i++) {
        pthread_t t;
        pthread_create(&t, NULL, spin, NULL);
    }
    spin(NULL);
}
