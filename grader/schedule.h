/* Making the runs: the machine gate shared by every submission graded at
 * once, the order a lab's runs are made in (in parallel, then the
 * throughput runs alone), what a hang stops, and making one run (its
 * command line, environment and limits, in its sandbox when there is one,
 * then analyse.h's verdict on how it ended). */
#ifndef GRADER_SCHEDULE_H
#define GRADER_SCHEDULE_H

#include <pthread.h>

#include "grader.h"

struct engine_options;

/* What the machine is doing, shared by every submission graded at once: at
 * most `slots` builds or runs at a time, whose memory limits add up to no
 * more than the pool (cgroup.h), and a throughput (timing) run alone on it
 * — it waits for the others to end, and none starts beside it. */
struct machine_gate {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int slots;         /* builds and runs at once */
    int busy;          /* of those, now */
    int alone;         /* a timing run holds the machine */
    int waiting_alone; /* timing runs waiting: nothing new starts before them */
    size_t mem_pool;   /* the memory all of them may hold together */
    size_t mem_used;   /* the memory limits of those running now */
};
void machine_gate_init(struct machine_gate *g, int slots);
/* `mem_bytes`: the memory limit of the step's group (0: none). Where the
 * pool is the machine's memory and the grader is root, the step also holds
 * its memory in a ledger every such grader on the machine shares
 * (schedule.c), so their steps' limits add up to what the machine has too:
 * enter returns what to hand back to leave (-1: nothing held). */
int machine_gate_enter(struct machine_gate *g, int alone, size_t mem_bytes);
void machine_gate_leave(struct machine_gate *g, int alone, size_t mem_bytes, int held);

/* One run of a lab, to be made. */
struct job {
    struct run *run;
    const char *binary; /* host path */
    const char *work;   /* the lab's scratch directory (host) */
    const struct engine_options *opt;
    const struct lab_module *mod;
    int index;        /* in the module's table */
    int taken;        /* started (or decided not to) */
    int after_hang;   /* not made, or thrown away: an earlier run in the order hung */
    int hang_blocker; /* ...that run: its index in jobs */
    int decided;      /* its outcome is final (a hung run made again alone included) */
    /* The lab's runs made again because the machine was busy, and after a
     * crash in MPI_Finalize: one of each per lab (the caller's counters). */
    int *busy_remakes;
    int *finalize_remakes;
    int *launch_remakes; /* ...and after Open MPI failed to start the job (three) */
};

/* Make the `n` runs of one lab (those not `taken` already), opt->jobs at a
 * time: every run but the throughput ones in the module's order, then the
 * throughput runs one by one. A run after a hang that would hang the same
 * way is not made, or not counted when it was: its job gets after_hang
 * and hang_blocker, its run `skipped` (the caller tells the hung run's
 * problem how many). The caller sets busy_remakes and finalize_remakes. What is
 * graded depends on the module's table only, never on opt->jobs or timing.
 * Runs needing more than `max_ranks` ranks are not charged to a hang.
 * Called again with more jobs appended (grade.c's task replays), the runs
 * made before keep their order and verdicts; the new ones come after them
 * (a hang among the earlier ones still stops a new run it covers). */
void schedule_runs(struct job *jobs, int n, const struct engine_options *opt, int max_ranks);

#endif
