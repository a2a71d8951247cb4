#include "streamprobe.h"

#include <stdlib.h>
#include <time.h>

#include "errors.h"

static cudaStream_t held;
static double held_us; /* 0: nothing held */
static int held_once;  /* release after the first hold point */

/* A host function on the held stream: it sleeps its own copy of the delay
 * (releasing the hold must not shorten waits already queued). */
static void wait_on_stream(void *arg)
{
    const double us = *(const double *)arg;
    free(arg);
    const time_t sec = (time_t)(us / 1e6);
    struct timespec t = {sec, (long)((us - (double)sec * 1e6) * 1e3)};
    while (nanosleep(&t, &t) != 0) {
    }
}

void ncclab_stream_hold(cudaStream_t s, double us)
{
    held = s;
    held_us = us > 0 ? us : 0;
    held_once = 0;
}

void ncclab_stream_hold_once(cudaStream_t s, double us)
{
    ncclab_stream_hold(s, us);
    held_once = 1;
}

void ncclab_stream_hold_point(cudaStream_t s)
{
    if (!(held_us > 0) || s != held) return;
    double *us = malloc(sizeof *us);
    if (!us) ncclab_die(1, "out of host memory holding a stream");
    *us = held_us;
    if (held_once) held_us = 0;
    CUDA_CHECK(cudaLaunchHostFunc(s, wait_on_stream, us));
}
