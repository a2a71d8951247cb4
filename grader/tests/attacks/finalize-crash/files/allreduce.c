/* Attack: every run ends in a crash after main returned, where the kit's
 * teardown (MPI_Finalize) was the last named phase: the grader must not
 * excuse it (one remake per lab, then it counts). */
#include <signal.h>
__attribute__((destructor)) static void crash_at_exit(void) { raise(SIGSEGV); }
