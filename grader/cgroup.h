/* Fair share between runs: each build step and each run in a control group
 * (cgroup) of its own, where the machine lets the grader make one, so that
 * one run's processes cannot take the CPU, memory or process slots of
 * another's. Every group gets the same CPU weight whatever number of
 * processes or sessions it holds (the scheduler otherwise shares per
 * process, and per session with autogroup: 80 spinning processes, or
 * threads, against a reference's 4 took nearly all of it), a memory limit
 * and a process limit. When the step ends, everything in its group is
 * killed, wherever it went.
 *
 * cgroup v2 (one hierarchy: cpu.weight, memory.max, pids.max, cgroup.kill)
 * and v1 (the cpu, memory and pids hierarchies: cpu.shares,
 * memory.limit_in_bytes, pids.max) are both supported, found at start
 * under the groups the grader itself is in. Without either (not root, a
 * container's read-only /sys/fs/cgroup) the grader does without: a run that
 * times out is then made again alone before it is charged as a hang
 * (schedule.c). */
#ifndef GRADER_CGROUP_H
#define GRADER_CGROUP_H

#include <limits.h>
#include <stddef.h>

#define CGROUP_MAX_DIRS 3 /* v1: cpu, memory, pids; v2: one */

struct cgroups {
    int version;                            /* 2 or 1; 0: no cgroups here */
    char parent[CGROUP_MAX_DIRS][PATH_MAX]; /* the grader's own groups, one per hierarchy */
    int ndirs;
    char why[256]; /* why there are none */
};

/* One step's group: its directory in each hierarchy and the files a child
 * writes itself into (prepared before fork: writing is all it does). */
struct run_cgroup {
    char dir[CGROUP_MAX_DIRS][PATH_MAX];
    char procs[CGROUP_MAX_DIRS][PATH_MAX];
    int ndirs;
    int version;
};

/* Find the hierarchies and make the grader's parent groups
 * (ncclab-grader-PID), whose CPU weight is that of `jobs` runs (the runs
 * graded at once). 0, or -1 with the reason in cg->why (cg->version 0):
 * grading goes on without. */
int cgroups_init(struct cgroups *cg, int jobs);
/* Remove the parent groups (their children are gone by then). */
void cgroups_free(struct cgroups *cg);

/* The memory the grader may give its builds and runs at once: the
 * machine's (or the grader's own group's limit, when lower), less a
 * reserve for the grader and the system (an eighth, at least 1 GiB), so
 * that the limits of everything running at once add up to no more than
 * the machine has: no run can push the machine into its OOM killer or its
 * neighbours into a "hang". NCCLAB_GRADER_MEMORY_MB sets it instead (a
 * machine shared with other work). Fixed for the grader's lifetime. */
size_t cgroup_memory_pool(void);
/* 1 when the pool is the machine's memory (not a group's limit, not
 * NCCLAB_GRADER_MEMORY_MB): then every grader on the machine draws on the
 * same memory, and the machine gate shares the pool with them (schedule.h). */
int cgroup_memory_pool_is_machine(void);
/* What one step's group may hold: `want`, at most an eighth of the pool
 * but no less than 512 MiB (a quarter of a pool under 2 GiB); a fixed
 * share, not one per --jobs: a run's limit, hence its grade, is the same
 * whatever runs beside it. The machine gate (schedule.h) admits
 * steps while their shares fit in the pool. */
size_t cgroup_step_memory(size_t want);

/* A new group under the grader's for one step: `mem_bytes` of memory
 * (0: no limit), `pids` processes and threads (0: no limit), the same CPU
 * weight as every other. 0, or -1 (no group: the step runs without). */
int cgroup_make(const struct cgroups *cg, size_t mem_bytes, long pids, struct run_cgroup *rc);

/* In the child, between fork and exec: join the group (async-signal-safe).
 * 0 or -1. */
int cgroup_enter(const struct run_cgroup *rc);

/* Kill every process in the group until none is left. */
void cgroup_kill_all(const struct run_cgroup *rc);

/* Kill what is left and remove the group. */
void cgroup_remove(struct run_cgroup *rc);

#endif
