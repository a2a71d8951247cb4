/* Run slots shared by every grader (and test) on a machine that names the
 * same folder: NCCLAB_RUN_SLOTS=DIR:N lets at most N ranks run at once among
 * all of them. A run of k ranks holds k of the locks DIR/slot-0 ..
 * slot-(N-1) (at most N) while it lives: what loads a machine is the ranks
 * that compute at once, not the number of launchers. A test suite sets it so
 * that its sections, each with graders and jobs of its own, keep the
 * machine busy without piling work onto it (a load of 20 on 2 CPUs made the
 * suite no faster and every run's start and end slower).
 *
 * The locks are all taken at once or none (a run never holds some while it
 * waits for the rest), and a run that has waited a while closes a turnstile
 * (DIR/turnstile) behind it: no new run starts until it has its slots, so a
 * run of many ranks is not starved by a stream of small ones. */
#ifndef NCCLAB_GRADER_SLOTS_H
#define NCCLAB_GRADER_SLOTS_H

#define RUN_SLOTS_MAX 64

struct run_slots {
    int n;                 /* locks held */
    int fd[RUN_SLOTS_MAX]; /* their descriptors (close-on-exec) */
};

/* Waits for `ranks` slots (1 to N) and holds them in *held. Without
 * NCCLAB_RUN_SLOTS (or a folder it cannot use, said once on stderr) holds
 * none and returns at once. */
void run_slots_take(int ranks, struct run_slots *held);
/* Gives them back (the locks go with their descriptors). */
void run_slots_give(struct run_slots *held);

#endif
