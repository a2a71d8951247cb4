#include "watchdog.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "errors.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int thread_started;
static int armed;
static struct timespec deadline;
static double armed_seconds;
static char what_text[256], hint_text[512];

static void *watch(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!armed) pthread_cond_wait(&changed, &lock);
        int rc = pthread_cond_timedwait(&changed, &lock, &deadline);
        if (rc == ETIMEDOUT && armed) {
            int r = ncclab_log_rank();
            fprintf(stderr,
                    "[rank %d] watchdog: no progress for %.0f s while %s — this looks like a "
                    "deadlock or hang.\n[rank %d]   likely cause: %s\n",
                    r, armed_seconds, what_text, r, hint_text);
            fflush(stderr);
            fflush(stdout);
            _exit(NCCLAB_EXIT_HANG);
        }
    }
    return NULL;
}

void ncclab_watchdog_arm(double seconds, const char *what, const char *hint)
{
    pthread_mutex_lock(&lock);
    if (!thread_started) {
        pthread_t t;
        if (pthread_create(&t, NULL, watch, NULL) == 0) {
            pthread_detach(t);
            thread_started = 1;
        }
    }
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += (time_t)seconds;
    deadline.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    armed_seconds = seconds;
    snprintf(what_text, sizeof what_text, "%s", what ? what : "running");
    snprintf(hint_text, sizeof hint_text, "%s",
             hint ? hint
                  : "a rank skipped a collective or the ranks called them in different orders");
    armed = 1;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}

void ncclab_watchdog_disarm(void)
{
    pthread_mutex_lock(&lock);
    armed = 0;
    pthread_cond_broadcast(&changed);
    pthread_mutex_unlock(&lock);
}
