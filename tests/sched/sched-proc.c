/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sched-proc.h"

void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int r = 0;

	buf[0] = '\0';
	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		r = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return r;
}

int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		r = -errno;
	close(fd);
	return r;
}

bool scx_state_is(const char *want)
{
	char buf[64];

	return read_line(SCX_SYSFS "/state", buf, sizeof(buf)) == 0 &&
	       !strcmp(buf, want);
}

bool scx_wait_state(const char *want, unsigned int timeout_ms)
{
	unsigned int t;

	for (t = 0; t < timeout_ms; t += 20) {
		if (scx_state_is(want))
			return true;
		sleep_ms(20);
	}
	return scx_state_is(want);
}

unsigned int sched_proc_timeout_ms = 60000;

static char wanted_dir[64];	/* nftw() passes no context to its callback */

static int match_dir(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	return flag == FTW_D && !strcmp(path + f->base, wanted_dir);
}

/* Is there a sub-<cgid> directory for the cgroup with inode @ino? */
static bool sub_sched_present(unsigned long long ino)
{
	snprintf(wanted_dir, sizeof(wanted_dir), "sub-%llu", ino);
	return nftw(SCX_SYSFS, match_dir, 16, FTW_PHYS) == 1;
}

static bool wait_sub_sched(unsigned long long ino, bool present, unsigned int timeout_ms)
{
	unsigned int t;

	for (t = 0; t < timeout_ms; t += 50) {
		if (sub_sched_present(ino) == present)
			return true;
		sleep_ms(50);
	}
	return sub_sched_present(ino) == present;
}

bool scx_wait_sub_sched(const char *cgroup, unsigned int timeout_ms)
{
	struct stat st;

	if (stat(cgroup, &st) < 0)
		return false;
	return wait_sub_sched(st.st_ino, true, timeout_ms);
}

bool scx_kernel_has_sub_sched(void)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, " scx_bpf_sub_dispatch\n") != NULL;
	fclose(f);
	return found;
}

/* The loader's last report line: sched-run's "exit kind=..." or flatcg's "EXIT: ...". */
static void exit_report(const struct sched_proc *sp, char *buf, size_t len)
{
	FILE *f = fopen(sp->log, "re");
	char line[2048];

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *at = strstr(line, "exit kind=");

		if (!at)
			at = strstr(line, "EXIT:");
		if (at) {
			at[strcspn(at, "\n")] = '\0';
			snprintf(buf, len, "%s", at);
		}
	}
	fclose(f);
}

static void last_log_line(const struct sched_proc *sp, char *buf, size_t len)
{
	FILE *f = fopen(sp->log, "re");
	char line[1024];

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0])
			snprintf(buf, len, "%s", line);
	}
	fclose(f);
}

static bool log_has(const struct sched_proc *sp, const char *what)
{
	FILE *f = fopen(sp->log, "re");
	char line[1024];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, what) != NULL;
	fclose(f);
	return found;
}

static void reap(struct sched_proc *sp, int *status)
{
	while (waitpid(sp->pid, status, 0) < 0 && errno == EINTR)
		;
	sp->pid = 0;
}

static int spawn(struct sched_proc *sp, char *const argv[], const char *label)
{
	memset(sp, 0, sizeof(*sp));
	snprintf(sp->label, sizeof(sp->label), "%s", label);
	snprintf(sp->log, sizeof(sp->log), "/tmp/loader.%s.log", label);
	sp->is_sched_run = strstr(argv[0], "sched-run") != NULL;

	sp->pid = fork();
	if (sp->pid < 0)
		return -errno;
	if (sp->pid == 0) {
		int fd = open(sp->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return 0;
}

int sched_proc_start_child(struct sched_proc *sp, char *const argv[], const char *cgroup,
			   const char *label, char *why, size_t why_len)
{
	unsigned long long cgroup_ino;
	char last[512];
	struct stat st;
	unsigned int t;
	int r, status;

	if (stat(cgroup, &st) < 0) {
		snprintf(why, why_len, "%s: %s: %s", label, cgroup, strerror(errno));
		return -errno;
	}
	cgroup_ino = st.st_ino;

	r = spawn(sp, argv, label);
	if (r < 0)
		return r;
	sp->cgroup_ino = cgroup_ino;
	/* sched-run says "attached" once the kernel took it, or exits */
	for (t = 0; t < sched_proc_timeout_ms; t += 50) {
		if (waitpid(sp->pid, &status, WNOHANG) == sp->pid) {
			sp->pid = 0;
			last_log_line(sp, last, sizeof(last));
			snprintf(why, why_len, "%s: loader exited: %s", label, last);
			return -ECHILD;
		}
		if (!sp->is_sched_run || log_has(sp, ": attached"))
			return 0;
		sleep_ms(50);
	}
	snprintf(why, why_len, "%s: loader not attached after %u s", label,
		 sched_proc_timeout_ms / 1000);
	kill(sp->pid, SIGKILL);
	reap(sp, &status);
	return -ETIMEDOUT;
}

int sched_proc_start(struct sched_proc *sp, char *const argv[], const char *label,
		     const char *want_ops, char *why, size_t why_len)
{
	char ops[128], last[512];
	int r, status;

	if (!scx_state_is("disabled")) {
		snprintf(why, why_len, "%s: sched_ext not disabled before loading", label);
		return -EBUSY;
	}
	r = spawn(sp, argv, label);
	if (r < 0)
		return r;

	/* enabling takes over a second under TCG */
	if (!scx_wait_state("enabled", sched_proc_timeout_ms)) {
		kill(sp->pid, SIGKILL);
		reap(sp, &status);
		last_log_line(sp, last, sizeof(last));
		snprintf(why, why_len, "%s: state not \"enabled\" after %u s; loader said: %s",
			 label, sched_proc_timeout_ms / 1000, last);
		return -ETIMEDOUT;
	}
	if (want_ops &&
	    (read_line(SCX_SYSFS "/root/ops", ops, sizeof(ops)) < 0 || strcmp(ops, want_ops))) {
		snprintf(why, why_len, "%s: root/ops is \"%s\", expected \"%s\"", label, ops, want_ops);
		return -ESRCH;
	}
	return 0;
}

int sched_proc_stop(struct sched_proc *sp, char *why, size_t why_len)
{
	char report[1400];
	int status = 0;

	if (sp->pid <= 0)
		return 0;
	kill(sp->pid, SIGINT);
	reap(sp, &status);
	exit_report(sp, report, sizeof(report));
	if (sp->cgroup_ino) {
		/* a child: its directory goes, the parent stays in charge */
		if (!wait_sub_sched(sp->cgroup_ino, false, 10000)) {
			snprintf(why, why_len, "%s: sub-%llu still in sysfs 10 s after unload; %s",
				 sp->label, sp->cgroup_ino, report);
			return -ETIMEDOUT;
		}
	} else if (!scx_wait_state("disabled", 10000)) {
		snprintf(why, why_len, "%s: state not \"disabled\" 10 s after unload; %s",
			 sp->label, report);
		return -ETIMEDOUT;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    (sp->is_sched_run && !strstr(report, "kind=64 "))) {
		snprintf(why, why_len, "%s: loader status %d, %s", sp->label,
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1,
			 report[0] ? report : "no exit report");
		return -EIO;
	}
	snprintf(why, why_len, "%s", report);
	return 0;
}
