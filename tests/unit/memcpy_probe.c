/* Prints this machine's memcpy bandwidth in GB/s, measured as a lab's rank 0
 * measures it for its timing ceiling (common/perflimits.h). The test suite
 * (tests/run-all.sh) measures it once, while the machine is still quiet, and
 * gives the figure to every run and grader it starts (NCCLAB_MEMCPY_GBPS):
 * each would otherwise copy 448 MB again to learn the same, and measure less
 * the busier the suite made the machine. Exit 1 when nothing was measured. */
#include <stdio.h>

#include "perflimits.h"

int main(void)
{
    double gbps = ncclab_memcpy_gbps();
    if (!(gbps > 0)) {
        fprintf(stderr, "memcpy_probe: could not measure memcpy (out of memory?)\n");
        return 1;
    }
    printf("%.17g\n", gbps); /* as the grader passes its own figure (schedule.c) */
    return 0;
}
