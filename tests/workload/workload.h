/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A workload generator for scheduler tests and benchmarks.
 *
 * A workload is a few groups of identical tasks, each task a process:
 *  - spin:     CPU-bound, counts loops of a fixed chunk of work;
 *  - sleep:    does work_us of work, sleeps sleep_us, counts cycles and
 *              records how late it woke up (wake-up latency);
 *  - pingpong: pairs of processes bouncing one byte over pipes, counts
 *              round trips.
 * A group can be given a nice level, a cgroup to run in and one CPU to
 * be pinned to. All tasks start together and stop at the same deadline;
 * each reports its count of operations and the CPU time it got.
 */
#ifndef SCXD_WORKLOAD_H
#define SCXD_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum wl_kind {
	WL_SPIN,
	WL_SLEEP,
	WL_PINGPONG,
};

struct wl_group {
	enum wl_kind kind;
	unsigned int n;		/* tasks; pingpong: pairs */
	int nice;
	int cpu;		/* pin to this CPU; -1: no pinning */
	const char *cgroup;	/* cgroup directory to run in; NULL: ours */
	unsigned int work_us;	/* sleep: work per cycle */
	unsigned int sleep_us;	/* sleep: sleep per cycle */
	const char *name;	/* label in the report; NULL: the kind */
};

struct wl_task_result {
	unsigned int group;
	int pid;
	uint64_t ops;
	uint64_t cpu_ns;
	uint64_t lat_sum_ns;	/* sleep: sum of wake-up delays */
	uint64_t lat_max_ns;
	uint64_t lat_n;
	uint64_t cpus_seen;	/* bit N: sched_getcpu() returned N (N < 64) */
	int failed;		/* set up failed (cgroup, nice, pinning) */
	/*
	 * CPU time the kernel accounted to the task (se.sum_exec_runtime of
	 * /proc/PID/sched) between the start and the deadline, read by the
	 * runner for every task over the same window; valid when
	 * wl_result.window is set (a kernel with CONFIG_SCHED_DEBUG).
	 */
	uint64_t window_cpu_ns;
};

struct wl_result {
	unsigned int n_tasks;
	bool window;		/* window_cpu_ns read for every task */
	double wall_s;
	struct wl_task_result *tasks;
};

#define WL_MAX_TASKS 512

const char *wl_kind_name(enum wl_kind kind);

/* Parse "kind=spin,n=4,nice=0,cpu=1,cgroup=/x,work_us=500,sleep_us=2000". */
int wl_group_parse(char *spec, struct wl_group *g);

/*
 * Run @groups for @duration_s seconds. Fills @res (free with
 * wl_result_free()). Returns 0, or -errno if tasks could not be started;
 * a task that could not be set up has .failed set.
 */
int wl_run(const struct wl_group *groups, unsigned int n_groups,
	   double duration_s, struct wl_result *res);
void wl_result_free(struct wl_result *res);

/* Sum of ops of the tasks of group @g. */
uint64_t wl_group_ops(const struct wl_result *res, unsigned int g);
uint64_t wl_group_cpu_ns(const struct wl_result *res, unsigned int g);

/* The kernel's count of @pid's CPU time (se.sum_exec_runtime); false if unreadable. */
bool wl_task_cpu_ns(pid_t pid, uint64_t *ns);

/*
 * Machine-readable report, one line per task and per group, then
 *   total ops=N ops_per_s=X
 */
void wl_report(FILE *f, const struct wl_group *groups, unsigned int n_groups,
	       const struct wl_result *res);

#endif
