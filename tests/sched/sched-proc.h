/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Running a BPF scheduler's loader as a child process, for guest tests
 * and benchmarks, and telling from the kernel's sysfs when it is in
 * charge and when it is gone.
 */
#ifndef SCXD_SCHED_PROC_H
#define SCXD_SCHED_PROC_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SCX_SYSFS "/sys/kernel/sched_ext"

struct sched_proc {
	pid_t pid;
	char label[64];
	char log[PATH_MAX];	/* the loader's stdout and stderr */
	bool is_sched_run;	/* prints sched-run's "exit kind=" line */
	unsigned long long cgroup_ino;	/* a child's cgroup, 0 for a root */
};

int read_line(const char *path, char *buf, size_t len);
int write_str(const char *path, const char *s);
void sleep_ms(unsigned int ms);

/*
 * How long a loader may take to be in charge: seconds under TCG alone,
 * much more beside 64 other loaders on a busy host (60 s; a benchmark may
 * set its own).
 */
extern unsigned int sched_proc_timeout_ms;

bool scx_state_is(const char *want);
bool scx_wait_state(const char *want, unsigned int timeout_ms);

/*
 * Wait until the child scheduler on @cgroup has its sysfs directory
 * (sub-<cgroup id>, anywhere under /sys/kernel/sched_ext).
 */
bool scx_wait_sub_sched(const char *cgroup, unsigned int timeout_ms);

/* Does the running kernel support sub-schedulers (scx_bpf_sub_dispatch)? */
bool scx_kernel_has_sub_sched(void);

/*
 * Start @argv (a loader) and wait until /sys/kernel/sched_ext/state says
 * "enabled" and, if @want_ops is set, root/ops names it. On failure @why
 * says what happened and the loader is gone.
 */
int sched_proc_start(struct sched_proc *sp, char *const argv[], const char *label,
		     const char *want_ops, char *why, size_t why_len);

/*
 * Start @argv, a loader attaching a child scheduler, while a root
 * scheduler runs. 0 once sched-run reports it attached (within
 * sched_proc_timeout_ms);
 * the caller checks the child's sysfs directory itself.
 */
int sched_proc_start_child(struct sched_proc *sp, char *const argv[], const char *cgroup,
			   const char *label, char *why, size_t why_len);

/*
 * SIGINT it and wait; 0 when it exited with status 0 (for sched-run: and
 * reported kind=64, unregistered) and state is "disabled" again (for a
 * child: its sub-<cgid> directory is gone). @why
 * gets the exit report either way.
 */
int sched_proc_stop(struct sched_proc *sp, char *why, size_t why_len);

#endif
