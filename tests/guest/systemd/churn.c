/* SPDX-License-Identifier: GPL-2.0 */
/*
 * churn: cgroup churn against a running scxd, inside the systemd guest.
 *
 *   churn run [OPTIONS]     create/attach/remove cycles, checked from sysfs
 *   churn populate --count N [--ops OPS] [--timeout S] [OPTIONS]
 *                           N cgroups under --dir that stay (the churn with N
 *                           live matching cgroups): made at once, then waited
 *                           for until each has an enabled sub-<cgid> running OPS
 *   churn depopulate [--batch N] [--timeout S] [OPTIONS]
 *                           remove them all (N at a time), wait until none
 *                           has a sub-<cgid>
 *   churn links [PIN_DIR]   print the id of every link pinned by scxd
 *   churn task MS           the workload a scope runs: spin and sleep MS ms
 *   churn forge-uevent      send a sched_ext uevent from this process (not the
 *                           kernel) to the kernel's uevent multicast group
 *
 * "run" mixes three kinds of cycle, all on cgroups the policy matches:
 *   - mkdir under --dir (e.g. /churn/c17), a task moved in right away while
 *     scxd reacts to the new cgroup, bounced out and in again later, moved
 *     out and the cgroup removed once --window newer ones exist;
 *   - every --scope-every'th cycle, a `systemd-run --scope` unit in --slice
 *     running "churn task", which systemd creates and removes.
 * Every --check-every cycles it stops and waits until the kernel's sysfs
 * tree is what the policy wants for the cgroups that exist at that moment:
 * the root scheduler named by --root-ops, and, when the kernel has
 * sub-schedulers (its BTF has sub_cgroup_id), a sub-<cgid> directory under
 * root/sub for exactly the direct children of --dir, --slice and every --also
 * (cgroups the caller makes outside the churn, matched by the policy) plus
 * whatever was there at the start. At the end everything it made is gone and the tree must be back
 * at that baseline. Every task it started must be seen to exit 0.
 * With --scxd-pid it samples scxd's RSS, fd count and CPU time after a
 * warm-up and at the end. --kill-every N SIGKILLs every Nth task so the
 * lost-task check can be seen to fail.
 *
 * Prints "ok - guest/churn/[PREFIX]NAME (figures)" / "not ok - ..." lines; exit
 * status is the number of failed checks.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#include <linux/bpf.h>
#include <linux/netlink.h>
#include <sys/socket.h>

#define SCX_SYSFS "/sys/kernel/sched_ext"
#define MAX_SUBS 4096
#define MAX_WINDOW 64
#define MAX_ALSO 4

struct options {
	unsigned long cycles;
	unsigned long max_seconds;
	unsigned long warmup;
	unsigned int window;
	unsigned int scope_every;
	unsigned int max_scopes;
	unsigned int check_every;
	unsigned int settle_seconds;
	unsigned int task_ms;
	const char *cgroup_root;
	const char *dir;	/* below cgroup_root, e.g. "churn" */
	const char *slice;	/* e.g. "scxd-churn.slice"; NULL: no scopes */
	const char *also[MAX_ALSO];	/* children wanted too, not churned */
	unsigned int n_also;
	const char *root_ops;	/* expected root/ops; NULL: not checked */
	pid_t scxd_pid;
	unsigned int rss_margin_kb;
	unsigned int kill_every;	/* self-test: SIGKILL every Nth task */
};

/* One mkdir cgroup of the window. */
struct churn_cg {
	char path[PATH_MAX];
	pid_t task;		/* 0 once reaped */
	unsigned long cycle;
};

struct proc_sample {
	long rss_kb;
	int fds;
	unsigned long long cpu_ticks;
};

struct churn_stats {
	unsigned long cycles, mkdirs, scopes, moves, move_races, seen_in, killed;
	unsigned long started, finished_ok, finished_bad, scope_failed;
	unsigned long checks, checks_failed;
	double settle_max_s, settle_sum_s;
	unsigned long rmdir_retries;
	char first_mismatch[512];
};

static const char *self_exe;
static char home_procs[PATH_MAX + 64];
static unsigned int scopes_running;
static pid_t scope_pids[MAX_WINDOW];
static struct churn_cg window[MAX_WINDOW];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int read_line(const char *path, char *buf, size_t len)
{
	_cleanup_(fclosep) FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		return ferror(f) ? -EIO : -ENODATA;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int write_pid(const char *procs, pid_t pid)
{
	_cleanup_(closep) int fd = open(procs, O_WRONLY | O_CLOEXEC);
	char buf[32];
	int n;

	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d\n", pid);
	if (write(fd, buf, n) != n)
		return -errno;
	return 0;
}

/* The cgroup this process runs in, where tasks go when moved out. */
static int find_home(const char *cgroup_root)
{
	char line[PATH_MAX - 64];
	int r;

	r = read_line("/proc/self/cgroup", line, sizeof(line));
	if (r < 0)
		return r;
	if (strncmp(line, "0::", 3))
		return -EINVAL;
	snprintf(home_procs, sizeof(home_procs), "%s%s/cgroup.procs", cgroup_root,
		 strcmp(line + 3, "/") ? line + 3 : "");
	return 0;
}

/* The workload: alternate 1 ms of spinning and 1 ms of sleep for @ms. */
static int task_body(unsigned int ms)
{
	double end = now_s() + ms / 1000.0;

	while (now_s() < end) {
		double spin = now_s() + 0.001;

		while (now_s() < spin)
			;
		sleep_ms(1);
	}
	return 0;
}

static pid_t spawn_task(unsigned int ms)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(task_body(ms));
	return pid;
}

static pid_t spawn_scope(const struct options *o, unsigned long cycle)
{
	char unit[64], slice[128], ms[16];
	pid_t pid;

	snprintf(unit, sizeof(unit), "churn-%lu", cycle);
	snprintf(slice, sizeof(slice), "--slice=%s", o->slice);
	snprintf(ms, sizeof(ms), "%u", o->task_ms);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDOUT_FILENO);
		execlp("systemd-run", "systemd-run", "--quiet", "--scope", slice,
		       "--unit", unit, "--", self_exe, "task", ms, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Reap children; @block waits for one. Forgets reaped tasks in the window. */
static void reap(struct churn_stats *st, bool block)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, block ? 0 : WNOHANG);
		bool is_scope = false;

		if (pid <= 0)
			return;
		for (unsigned int i = 0; i < MAX_WINDOW; i++) {
			if (window[i].task == pid)
				window[i].task = 0;
			if (scope_pids[i] == pid) {
				scope_pids[i] = 0;
				is_scope = true;
				scopes_running--;
			}
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			st->finished_ok++;
		} else {
			st->finished_bad++;
			if (is_scope && WIFEXITED(status))
				st->scope_failed++;
			fprintf(stderr, "churn: %s %d ended with %s %d\n",
				is_scope ? "scope (systemd-run)" : "task", pid,
				WIFEXITED(status) ? "exit status" : "signal",
				WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		}
		block = false;
	}
}

/* Move @pid into @cg's cgroup.procs; a task that already exited is fine. */
static void move_task(struct churn_stats *st, const char *cg, pid_t pid)
{
	char procs[PATH_MAX + 16];
	int r;

	if (pid <= 0)
		return;
	if (cg)
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	r = write_pid(cg ? procs : home_procs, pid);
	if (r == -ESRCH)
		st->move_races++;
	else if (r < 0)
		fprintf(stderr, "churn: moving task %d into %s: %s\n", pid,
			cg ? procs : home_procs, strerror(-r));
	else
		st->moves++;
}

/* Move what is left in @cg home and remove it; retry while it is busy. */
static int retire_cg(struct churn_stats *st, struct churn_cg *c)
{
	for (int tries = 0; tries < 2000; tries++) {
		move_task(st, NULL, c->task);
		if (rmdir(c->path) == 0) {
			c->path[0] = 0;
			return 0;
		}
		if (errno != EBUSY)
			break;
		st->rmdir_retries++;
		reap(st, false);
		sleep_ms(1);
	}
	fprintf(stderr, "churn: rmdir %s: %m\n", c->path);
	return -errno;
}

static int collect_subs(const char *dir, uint64_t *ids, unsigned int *n)
{
	_cleanup_(closedirp) DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char path[PATH_MAX], sub[PATH_MAX + 8];

		if (strncmp(de->d_name, "sub-", 4))
			continue;
		if (*n < MAX_SUBS)
			ids[(*n)++] = strtoull(de->d_name + 4, NULL, 10);
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		snprintf(sub, sizeof(sub), "%s/sub", path);
		collect_subs(sub, ids, n);
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static unsigned int uniq_u64(uint64_t *v, unsigned int n)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++)
		if (!k || v[k - 1] != v[i])
			v[k++] = v[i];
	return k;
}

/* Cgroup ids of the direct children of @dir (below the cgroup root). */
static void collect_children(const struct options *o, const char *dir, uint64_t *ids, unsigned int *n)
{
	char path[PATH_MAX];
	_cleanup_(closedirp) DIR *d = NULL;
	struct dirent *de;

	snprintf(path, sizeof(path), "%s/%s", o->cgroup_root, dir);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		char child[PATH_MAX * 2];
		struct stat sb;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, de->d_name);
		if (stat(child, &sb) == 0 && *n < MAX_SUBS)
			ids[(*n)++] = sb.st_ino;
	}
}

/*
 * Does the kernel have sub-schedulers? Its BTF names sched_ext_ops's
 * sub_cgroup_id then. root/sub is no answer: it exists only while the root
 * scheduler can host children (has ops.sub_attach).
 */
static bool kernel_has_subs(void)
{
	static int known = -1;
	_cleanup_(fclosep) FILE *f = NULL;
	static char buf[1 << 16];
	size_t n, keep = 0;
	const char *key = "sub_cgroup_id";

	if (known >= 0)
		return known;
	known = 0;
	f = fopen("/sys/kernel/btf/vmlinux", "re");
	if (!f)
		return known;
	while ((n = fread(buf + keep, 1, sizeof(buf) - keep, f)) > 0) {
		n += keep;
		if (memmem(buf, n, key, strlen(key))) {
			known = 1;
			break;
		}
		keep = strlen(key) - 1;
		memmove(buf, buf + n - keep, keep);
	}
	return known;
}

/*
 * Is the kernel's tree what the policy wants right now? Root ops and
 * state, and with sub-schedulers the set of sub-<cgid> directories equal
 * to @baseline plus the children of --dir and --slice. @why says what
 * differs.
 */
static bool tree_matches(const struct options *o, const uint64_t *baseline, unsigned int n_baseline,
			 char *why, size_t why_len)
{
	static uint64_t want[MAX_SUBS], have[MAX_SUBS];
	unsigned int n_want = 0, n_have = 0;
	char ops[128] = "", state[64] = "";

	read_line(SCX_SYSFS "/state", state, sizeof(state));
	if (o->root_ops) {
		read_line(SCX_SYSFS "/root/ops", ops, sizeof(ops));
		if (strcmp(state, "enabled") || strcmp(ops, o->root_ops)) {
			snprintf(why, why_len, "root: state %s ops '%s', want enabled %s", state, ops,
				 o->root_ops);
			return false;
		}
	}
	if (!kernel_has_subs())
		return true;

	memcpy(want, baseline, n_baseline * sizeof(*want));
	n_want = n_baseline;
	collect_children(o, o->dir, want, &n_want);
	if (o->slice)
		collect_children(o, o->slice, want, &n_want);
	for (unsigned int i = 0; i < o->n_also; i++)
		collect_children(o, o->also[i], want, &n_want);
	collect_subs(SCX_SYSFS "/root/sub", have, &n_have);
	qsort(want, n_want, sizeof(*want), cmp_u64);
	qsort(have, n_have, sizeof(*have), cmp_u64);
	/* a leftover child of --slice can be in the baseline too */
	n_want = uniq_u64(want, n_want);
	for (unsigned int i = 0, j = 0; i < n_want || j < n_have;) {
		if (i < n_want && j < n_have && want[i] == have[j]) {
			i++, j++;
			continue;
		}
		if (j >= n_have || (i < n_want && want[i] < have[j]))
			snprintf(why, why_len, "cgroup id %" PRIu64 " has no sub-%" PRIu64 " (%u wanted, %u in sysfs)",
				 want[i], want[i], n_want, n_have);
		else
			snprintf(why, why_len, "sub-%" PRIu64 " in sysfs but no matching cgroup (%u wanted, %u in sysfs)",
				 have[j], n_want, n_have);
		return false;
	}
	return true;
}

/* Wait up to --settle-seconds for the tree to match; record how long it took. */
static bool check_tree(const struct options *o, struct churn_stats *st, const uint64_t *baseline,
		       unsigned int n_baseline, const char *when)
{
	double t0 = now_s(), dt;
	char why[400] = "";

	st->checks++;
	while (!tree_matches(o, baseline, n_baseline, why, sizeof(why))) {
		reap(st, false);
		if (now_s() - t0 > o->settle_seconds) {
			st->checks_failed++;
			if (!st->first_mismatch[0])
				snprintf(st->first_mismatch, sizeof(st->first_mismatch),
					 "%s: %s after %u s", when, why, o->settle_seconds);
			fprintf(stderr, "churn: tree check %s: %s\n", when, why);
			return false;
		}
		sleep_ms(20);
	}
	dt = now_s() - t0;
	st->settle_sum_s += dt;
	if (dt > st->settle_max_s)
		st->settle_max_s = dt;
	return true;
}

static int sample_proc(pid_t pid, struct proc_sample *s)
{
	char path[64], line[256], stat[1024];
	_cleanup_(fclosep) FILE *f = NULL;
	_cleanup_(closedirp) DIR *d = NULL;
	unsigned long long ut, stt;
	const char *p;

	*s = (struct proc_sample){ .rss_kb = -1, .fds = 0 };
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &s->rss_kb) == 1)
			break;
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	for (struct dirent *de; (de = readdir(d));)
		if (de->d_name[0] != '.')
			s->fds++;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_line(path, stat, sizeof(stat)) < 0 || !(p = strrchr(stat, ')')))
		return -EIO;
	/* after "pid (comm)": state is field 3, utime 14, stime 15 */
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &stt) != 2)
		return -EIO;
	s->cpu_ticks = ut + stt;
	return 0;
}

/* Does /proc/@pid/cgroup put it in @cg (a path below --cgroup-root)? */
static bool task_in(const struct options *o, pid_t pid, const char *cg)
{
	char path[64], line[PATH_MAX];

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	if (read_line(path, line, sizeof(line)) < 0 || strncmp(line, "0::", 3))
		return false;
	return !strcmp(cg + strlen(o->cgroup_root), line + 3);
}

static void mkdir_cycle(const struct options *o, struct churn_stats *st, unsigned long cycle)
{
	struct churn_cg *c = &window[cycle % o->window];
	struct churn_cg *mid = &window[(cycle + o->window / 2) % o->window];
	pid_t pid;

	if (c->path[0])
		retire_cg(st, c);
	snprintf(c->path, sizeof(c->path), "%s/%s/c%lu", o->cgroup_root, o->dir, cycle);
	if (mkdir(c->path, 0755) < 0) {
		fprintf(stderr, "churn: mkdir %s: %m\n", c->path);
		c->path[0] = 0;
		return;
	}
	st->mkdirs++;
	c->cycle = cycle;
	c->task = 0;
	pid = spawn_task(o->task_ms);
	if (pid < 0) {
		fprintf(stderr, "churn: fork for %s: %m\n", c->path);
		return;
	}
	st->started++;
	c->task = pid;
	/* in while scxd is still reacting to the mkdir */
	move_task(st, c->path, pid);
	if (task_in(o, pid, c->path))
		st->seen_in++;
	if (o->kill_every && cycle % o->kill_every == 0 && kill(pid, SIGKILL) == 0)
		st->killed++;
	/* and an older one bounced out and back in */
	if (mid->path[0] && mid->task) {
		move_task(st, NULL, mid->task);
		move_task(st, mid->path, mid->task);
	}
}

static void scope_cycle(const struct options *o, struct churn_stats *st, unsigned long cycle)
{
	pid_t pid;

	while (scopes_running >= o->max_scopes)
		reap(st, true);
	pid = spawn_scope(o, cycle);
	if (pid < 0) {
		fprintf(stderr, "churn: fork for scope churn-%lu: %m\n", cycle);
		return;
	}
	for (unsigned int i = 0; i < MAX_WINDOW; i++)
		if (!scope_pids[i]) {
			scope_pids[i] = pid;
			break;
		}
	scopes_running++;
	st->scopes++;
	st->started++;
}

static void result(bool ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static unsigned int failures;
static const char *label = "";

static void result(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%s - guest/churn/%s%s (", ok ? "ok" : "not ok", label, name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(")\n");
	fflush(stdout);
	if (!ok)
		failures++;
}

static int run(const struct options *o)
{
	static uint64_t baseline[MAX_SUBS];
	unsigned int n_baseline = 0, n_end = 0;
	static uint64_t end_ids[MAX_SUBS];
	struct churn_stats st = {};
	struct proc_sample before = { .rss_kb = -1 }, after = { .rss_kb = -1 };
	char dir[PATH_MAX], why[400] = "", seq0[32] = "", seq1[32] = "";
	double t0, t_run = 0, deadline;
	unsigned long cycle;
	bool subs = kernel_has_subs(), end_ok;
	long hz = sysconf(_SC_CLK_TCK);
	int r;

	r = find_home(o->cgroup_root);
	if (r < 0) {
		fprintf(stderr, "churn: cannot tell this process's cgroup from /proc/self/cgroup: %s\n",
			strerror(-r));
		return 1;
	}
	snprintf(dir, sizeof(dir), "%s/%s", o->cgroup_root, o->dir);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "churn: mkdir %s: %m\n", dir);
		return 1;
	}
	read_line(SCX_SYSFS "/enable_seq", seq0, sizeof(seq0));
	/* the baseline: what is attached before the churn starts */
	if (subs)
		collect_subs(SCX_SYSFS "/root/sub", baseline, &n_baseline);
	if (!tree_matches(o, baseline, n_baseline, why, sizeof(why))) {
		result(false, "baseline", "%s before any churn", why);
		return failures;
	}
	printf("churn: %lu cycles (at most %lu s), window %u, a scope every %u (0: none), tree check every %u; "
	       "kernel %s sub-schedulers; %u sub-scheduler(s) at baseline\n",
	       o->cycles, o->max_seconds, o->window, o->slice ? o->scope_every : 0, o->check_every,
	       subs ? "with" : "without", n_baseline);
	fflush(stdout);

	t0 = now_s();
	deadline = t0 + o->max_seconds;
	for (cycle = 0; cycle < o->cycles && now_s() < deadline; cycle++) {
		if (o->slice && o->scope_every && cycle % o->scope_every == o->scope_every - 1)
			scope_cycle(o, &st, cycle);
		else
			mkdir_cycle(o, &st, cycle);
		st.cycles++;
		reap(&st, false);
		if (o->scxd_pid > 0 && cycle + 1 == o->warmup && sample_proc(o->scxd_pid, &before) < 0)
			fprintf(stderr, "churn: scxd pid %d: cannot sample /proc: %m\n", o->scxd_pid);
		if (o->check_every && (cycle + 1) % o->check_every == 0) {
			char when[64];

			snprintf(when, sizeof(when), "at cycle %lu", cycle + 1);
			check_tree(o, &st, baseline, n_baseline, when);
		}
	}
	t_run = now_s() - t0;

	/* wind down: everything made is removed, every task is waited for */
	for (unsigned int i = 0; i < o->window; i++)
		if (window[i].path[0])
			retire_cg(&st, &window[i]);
	for (double end = now_s() + 60; st.finished_ok + st.finished_bad < st.started && now_s() < end;) {
		reap(&st, false);
		sleep_ms(10);
	}
	/* systemd removes a scope's cgroup shortly after its process exits */
	if (o->slice) {
		char slice[PATH_MAX];
		unsigned int n;

		snprintf(slice, sizeof(slice), "%s", o->slice);
		for (double end = now_s() + 30; now_s() < end; sleep_ms(50)) {
			n = 0;
			collect_children(o, slice, end_ids, &n);
			if (!n)
				break;
		}
	}
	end_ok = check_tree(o, &st, baseline, n_baseline, "at the end");
	if (subs)
		collect_subs(SCX_SYSFS "/root/sub", end_ids, &n_end);
	read_line(SCX_SYSFS "/enable_seq", seq1, sizeof(seq1));
	if (o->scxd_pid > 0) {
		/* let scxd finish the last reconcile before sampling */
		sleep_ms(1000);
		sample_proc(o->scxd_pid, &after);
	}

	result(st.cycles >= o->cycles, "cycles",
	       "%lu of %lu cycles in %.1f s: %lu mkdir/rmdir, %lu scopes, %lu task moves (%lu raced an exit), "
	       "%lu tasks seen in their new cgroup by /proc/PID/cgroup, %lu rmdir retries%s",
	       st.cycles, o->cycles, t_run, st.mkdirs, st.scopes, st.moves, st.move_races, st.seen_in,
	       st.rmdir_retries, st.killed ? ", self-test: some tasks SIGKILLed on purpose" : "");
	result(st.checks_failed == 0, "tree-matches-policy-at-intervals",
	       "%lu checks, %lu failed, settle max %.2f s mean %.2f s; %s%s%s",
	       st.checks, st.checks_failed, st.settle_max_s,
	       st.checks ? st.settle_sum_s / st.checks : 0.0,
	       subs ? "root ops and sub-<cgid> set" : "root ops only: kernel without sub-schedulers",
	       st.first_mismatch[0] ? "; first: " : "", st.first_mismatch);
	result(end_ok, "tree-back-at-baseline",
	       "root ops %s, %u sub-scheduler(s) at start, %u at the end, enable_seq %s->%s",
	       o->root_ops ? o->root_ops : "(not checked)", n_baseline, n_end, seq0, seq1);
	result(st.finished_ok == st.started, "no-lost-tasks",
	       "%lu started, %lu finished with status 0, %lu failed (%lu systemd-run failures), %lu lost",
	       st.started, st.finished_ok, st.finished_bad, st.scope_failed,
	       st.started - st.finished_ok - st.finished_bad);
	if (o->scxd_pid > 0) {
		bool ok = before.rss_kb >= 0 && after.rss_kb >= 0 &&
			  after.rss_kb <= before.rss_kb + (long)o->rss_margin_kb && after.fds <= before.fds;

		double cpu_s = (double)(after.cpu_ticks - before.cpu_ticks) / hz;
		unsigned long n = st.cycles > o->warmup ? st.cycles - o->warmup : 0;

		if (before.rss_kb < 0 || after.rss_kb < 0) {
			/* no CPU figure either: the shell reads "ms per cycle" */
			result(false, "scxd-rss-fds-steady", "pid %d: no %s sample, it is gone",
			       o->scxd_pid, before.rss_kb < 0 ? "warm-up" : "end");
		} else {
			result(ok, "scxd-rss-fds-steady",
			       "pid %d after %lu warm-up cycles -> end: VmRSS %ld -> %ld kB (margin %u), fds %d -> %d, "
			       "CPU %.2f s over the run, %.2f ms per cycle",
			       o->scxd_pid, o->warmup, before.rss_kb, after.rss_kb, o->rss_margin_kb,
			       before.fds, after.fds, cpu_s, n ? cpu_s * 1e3 / n : 0.0);
		}
	}
	rmdir(dir);
	return failures;
}

/*
 * The ids of the sub-schedulers below @dir that are enabled (their state
 * file says so; without one, being there is all there is) and, with @ops,
 * run it (their ops file names it).
 */
static void collect_enabled(const char *dir, const char *ops, uint64_t *ids, unsigned int *n)
{
	_cleanup_(closedirp) DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[PATH_MAX], file[PATH_MAX + 8], line[128];
		bool enabled;
		int r;

		if (strncmp(de->d_name, "sub-", 4))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		snprintf(file, sizeof(file), "%s/state", path);
		r = read_line(file, line, sizeof(line));
		enabled = r == -ENOENT || (r == 0 && !strcmp(line, "enabled"));

		snprintf(file, sizeof(file), "%s/ops", path);
		if (enabled && ops && read_line(file, line, sizeof(line)) == 0 && strcmp(line, ops))
			enabled = false;
		if (enabled && *n < MAX_SUBS)
			ids[(*n)++] = strtoull(de->d_name + 4, NULL, 10);
		snprintf(file, sizeof(file), "%s/sub", path);
		collect_enabled(file, ops, ids, n);
	}
}

/* How many of @want[0..@n) are in the sorted @have[0..@n_have). */
static unsigned int count_in(const uint64_t *want, unsigned int n, const uint64_t *have, unsigned int n_have)
{
	unsigned int hits = 0;

	for (unsigned int i = 0; i < n; i++)
		hits += bsearch(&want[i], have, n_have, sizeof(*have), cmp_u64) != NULL;
	return hits;
}

/*
 * Each poll reads the state and ops files of every sub-scheduler: under
 * TCG a poll of a thousand takes a vCPU for a while, so more live cgroups
 * are polled less often (that is also the figures' resolution).
 */
static unsigned int live_poll_ms(unsigned int n)
{
	return 10 + n / 5;
}

static void print_sample(const char *what, pid_t pid, const struct proc_sample *s)
{
	printf("churn: scxd pid %d %s: VmRSS %ld kB, %d fds, CPU %.2f s since start\n", pid, what,
	       s->rss_kb, s->fds, (double)s->cpu_ticks / sysconf(_SC_CLK_TCK));
}

/*
 * populate: @count cgroups l0..l<count-1> made at once under --dir, to
 * stay (the live cgroups of the churn with N live), then wait until every
 * one has an enabled sub-<cgid> running @ops, at most @timeout_s. One
 * ok/not ok line: time from the first mkdir until all were enabled, a
 * line at every tenth, scxd's footprint before and after (--scxd-pid).
 */
static int populate(const struct options *o, unsigned int count, const char *ops, unsigned int timeout_s)
{
	static uint64_t ids[MAX_SUBS], have[MAX_SUBS];
	unsigned int got = 0, n_have, step = count >= 100 ? count / 10 : count, next = step;
	struct proc_sample s0 = { .rss_kb = -1 }, s1 = { .rss_kb = -1 };
	char dir[PATH_MAX];
	double t0, dt;

	if (!count || count > MAX_SUBS / 2) {
		fprintf(stderr, "churn: populate --count must be 1..%d\n", MAX_SUBS / 2);
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/%s", o->cgroup_root, o->dir);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "churn: mkdir %s: %m\n", dir);
		return 1;
	}
	if (o->scxd_pid > 0 && sample_proc(o->scxd_pid, &s0) == 0)
		print_sample("before the live cgroups", o->scxd_pid, &s0);
	t0 = now_s();
	for (unsigned int i = 0; i < count; i++) {
		char cg[PATH_MAX + 16];
		struct stat sb;

		snprintf(cg, sizeof(cg), "%s/l%u", dir, i);
		if (mkdir(cg, 0755) < 0 || stat(cg, &sb) < 0) {
			result(false, "live-attach", "mkdir %s: %s", cg, strerror(errno));
			return failures;
		}
		ids[i] = sb.st_ino;
	}
	printf("churn: %u live cgroups made in %.2f s\n", count, now_s() - t0);
	while (now_s() - t0 < timeout_s) {
		n_have = 0;
		collect_enabled(SCX_SYSFS "/root/sub", ops, have, &n_have);
		qsort(have, n_have, sizeof(*have), cmp_u64);
		got = count_in(ids, count, have, n_have);
		if (got == count)
			break;
		if (got >= next) {
			printf("churn: %u of %u live cgroups enabled at %.1f s\n", got, count, now_s() - t0);
			while (next <= got)
				next += step;
		}
		sleep_ms(live_poll_ms(count));
	}
	dt = now_s() - t0;
	if (o->scxd_pid > 0 && sample_proc(o->scxd_pid, &s1) == 0)
		print_sample("with the live cgroups attached", o->scxd_pid, &s1);
	result(got == count, "live-attach",
	       "%u of %u cgroups in %s/ enabled with %s %.1f s after the first mkdir (%.0f ms each, polled every %u ms)%s; "
	       "scxd VmRSS %ld -> %ld kB, fds %d -> %d, CPU %.2f s",
	       got, count, o->dir, ops ? ops : "any scheduler", dt, dt * 1e3 / count, live_poll_ms(count),
	       got == count ? "" : ": gave up", s0.rss_kb, s1.rss_kb, s0.fds, s1.fds,
	       (double)(s1.cpu_ticks - s0.cpu_ticks) / sysconf(_SC_CLK_TCK));
	return failures;
}

/*
 * depopulate: remove every child of --dir and --dir itself, @batch at a
 * time (0: all at once), each batch waited for until none of its cgroups
 * has a sub-scheduler left, at most @timeout_s in all. A line per batch
 * (how long it took with how many still attached) and one ok/not ok line
 * with the total and scxd's footprint after it.
 */
static int depopulate(const struct options *o, unsigned int batch, unsigned int timeout_s)
{
	static uint64_t ids[MAX_SUBS], have[MAX_SUBS];
	static char names[MAX_SUBS][NAME_MAX + 1];
	unsigned int n = 0, n_have, left = 0;
	struct proc_sample s0 = { .rss_kb = -1 }, s1 = { .rss_kb = -1 };
	char dir[PATH_MAX];
	double t0, dt;

	snprintf(dir, sizeof(dir), "%s/%s", o->cgroup_root, o->dir);
	{
		_cleanup_(closedirp) DIR *d = opendir(dir);

		for (struct dirent *de; d && (de = readdir(d)) && n < MAX_SUBS;) {
			char cg[PATH_MAX * 2];
			struct stat sb;

			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			snprintf(cg, sizeof(cg), "%s/%s", dir, de->d_name);
			if (stat(cg, &sb) < 0)
				continue;
			snprintf(names[n], sizeof(names[n]), "%s", de->d_name);
			ids[n++] = sb.st_ino;
		}
	}
	if (!batch || batch > n)
		batch = n;
	if (o->scxd_pid > 0)
		sample_proc(o->scxd_pid, &s0);
	t0 = now_s();
	for (unsigned int first = 0; first < n && !left; first += batch) {
		unsigned int k = n - first < batch ? n - first : batch;
		double tb = now_s();

		for (unsigned int i = first; i < first + k; i++) {
			char cg[PATH_MAX * 2];

			snprintf(cg, sizeof(cg), "%s/%s", dir, names[i]);
			if (rmdir(cg) < 0)
				fprintf(stderr, "churn: rmdir %s: %m\n", cg);
		}
		while (now_s() - t0 < timeout_s) {
			n_have = 0;
			collect_subs(SCX_SYSFS "/root/sub", have, &n_have);
			qsort(have, n_have, sizeof(*have), cmp_u64);
			left = count_in(ids + first, k, have, n_have);
			if (!left)
				break;
			sleep_ms(live_poll_ms(n - first));
		}
		if (k < n)
			printf("churn: %u removed, %u others still there: detached in %.1f s%s\n", k,
			       n - first - k, now_s() - tb, left ? " (not all: gave up)" : "");
	}
	dt = now_s() - t0;
	rmdir(dir);
	if (o->scxd_pid > 0) {
		/* let scxd finish forgetting them */
		sleep_ms(1000);
		sample_proc(o->scxd_pid, &s1);
	}
	result(!left && n, "live-detach",
	       "%u cgroups in %s/ removed %u at a time, %u sub-scheduler(s) of them left %.1f s after the first rmdir; "
	       "scxd VmRSS %ld -> %ld kB, fds %d -> %d, CPU %.2f s",
	       n, o->dir, batch, left, dt, s0.rss_kb, s1.rss_kb, s0.fds, s1.fds,
	       (double)(s1.cpu_ticks - s0.cpu_ticks) / sysconf(_SC_CLK_TCK));
	return failures;
}

/* Print "<pin> id=<link id> prog_id=<id>" for every DIR/<node>/link. */
static int print_links(const char *pin_dir)
{
	_cleanup_(closedirp) DIR *d = opendir(pin_dir);
	struct dirent *de;
	int n = 0;

	if (!d) {
		fprintf(stderr, "churn: %s: %m\n", pin_dir);
		return 1;
	}
	while ((de = readdir(d))) {
		char path[PATH_MAX];
		union bpf_attr attr = {};
		struct bpf_link_info info = {};
		_cleanup_(closep) int fd = -1;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/link", pin_dir, de->d_name);
		attr.pathname = (uintptr_t)path;
		fd = syscall(__NR_bpf, BPF_OBJ_GET, &attr, sizeof(attr));
		if (fd < 0) {
			printf("%s error=%d\n", de->d_name, errno);
			continue;
		}
		memset(&attr, 0, sizeof(attr));
		attr.info.bpf_fd = fd;
		attr.info.info_len = sizeof(info);
		attr.info.info = (uintptr_t)&info;
		if (syscall(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)) < 0) {
			printf("%s error=%d\n", de->d_name, errno);
			continue;
		}
		printf("%s id=%u prog_id=%u\n", de->d_name, info.id, info.prog_id);
		n++;
	}
	return n ? 0 : 1;
}

/*
 * A well-formed "the root scheduler changed" uevent, but from a process:
 * scxd must not take it for the kernel's (its sender port id is not 0).
 */
static int forge_uevent(void)
{
	static const char msg[] = "change@/kernel/sched_ext/root\0ACTION=change\0"
				  "DEVPATH=/kernel/sched_ext/root\0SUBSYSTEM=sched_ext\0SEQNUM=1";
	struct sockaddr_nl to = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);

	if (fd < 0 || sendto(fd, msg, sizeof(msg), 0, (struct sockaddr *)&to, sizeof(to)) < 0) {
		fprintf(stderr, "churn: forge-uevent: %m\n");
		return 1;
	}
	close(fd);
	return 0;
}

static int usage(FILE *f)
{
	fputs("usage: churn run [--cycles N] [--max-seconds S] [--warmup N] [--window N]\n"
	      "                 [--scope-every N] [--max-scopes N] [--check-every N] [--settle-seconds S]\n"
	      "                 [--task-ms MS] [--cgroup-root DIR] [--dir NAME] [--slice NAME|--no-scopes]\n"
	      "                 [--also NAME]... [--root-ops OPS] [--scxd-pid PID] [--rss-margin-kb KB]\n"
	      "                 [--label PREFIX] [--kill-every N]   (self-test: SIGKILL every Nth task, must fail)\n"
	      "       churn populate --count N [--ops OPS] [--timeout S] [--dir NAME] [--scxd-pid PID] [--label PREFIX]\n"
	      "       churn depopulate [--batch N] [--timeout S] [--dir NAME] [--scxd-pid PID] [--label PREFIX]\n"
	      "       churn links [PIN_DIR]\n"
	      "       churn task MS\n"
	      "       churn forge-uevent\n", f);
	return f == stderr ? 2 : 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "cycles", required_argument, NULL, 'n' },
		{ "max-seconds", required_argument, NULL, 'T' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "window", required_argument, NULL, 'W' },
		{ "scope-every", required_argument, NULL, 'e' },
		{ "max-scopes", required_argument, NULL, 'm' },
		{ "check-every", required_argument, NULL, 'c' },
		{ "settle-seconds", required_argument, NULL, 's' },
		{ "task-ms", required_argument, NULL, 't' },
		{ "cgroup-root", required_argument, NULL, 'R' },
		{ "dir", required_argument, NULL, 'd' },
		{ "slice", required_argument, NULL, 'S' },
		{ "also", required_argument, NULL, 'A' },
		{ "no-scopes", no_argument, NULL, 'N' },
		{ "root-ops", required_argument, NULL, 'o' },
		{ "scxd-pid", required_argument, NULL, 'p' },
		{ "rss-margin-kb", required_argument, NULL, 'M' },
		{ "label", required_argument, NULL, 'L' },
		{ "kill-every", required_argument, NULL, 'K' },
		{ "count", required_argument, NULL, 'C' },
		{ "ops", required_argument, NULL, 'O' },
		{ "timeout", required_argument, NULL, 'X' },
		{ "batch", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct options o = {
		.cycles = 10000, .max_seconds = 600, .warmup = 200, .window = 8,
		.scope_every = 25, .max_scopes = 4, .check_every = 500, .settle_seconds = 60,
		.task_ms = 20, .cgroup_root = "/sys/fs/cgroup", .dir = "churn",
		.slice = "scxd-churn.slice", .rss_margin_kb = 512,
	};
	static char exe[PATH_MAX];
	unsigned int count = 0, timeout_s = 0, batch = 0;
	const char *mode, *ops = NULL;
	int c;

	if (argc >= 3 && !strcmp(argv[1], "task"))
		return task_body(atoi(argv[2]));
	if (argc >= 2 && !strcmp(argv[1], "forge-uevent"))
		return forge_uevent();
	if (argc >= 2 && !strcmp(argv[1], "links"))
		return print_links(argc >= 3 ? argv[2] : "/sys/fs/bpf/scxd");
	mode = argc >= 2 ? argv[1] : "";
	if (strcmp(mode, "run") && strcmp(mode, "populate") && strcmp(mode, "depopulate"))
		return usage(stderr);
	optind = 2;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o.cycles = strtoul(optarg, NULL, 10); break;
		case 'T': o.max_seconds = strtoul(optarg, NULL, 10); break;
		case 'w': o.warmup = strtoul(optarg, NULL, 10); break;
		case 'W': o.window = atoi(optarg); break;
		case 'e': o.scope_every = atoi(optarg); break;
		case 'm': o.max_scopes = atoi(optarg); break;
		case 'c': o.check_every = atoi(optarg); break;
		case 's': o.settle_seconds = atoi(optarg); break;
		case 't': o.task_ms = atoi(optarg); break;
		case 'R': o.cgroup_root = optarg; break;
		case 'd': o.dir = optarg; break;
		case 'S': o.slice = optarg; break;
		case 'A':
			if (o.n_also >= MAX_ALSO) {
				fprintf(stderr, "churn: at most %d --also\n", MAX_ALSO);
				return 2;
			}
			o.also[o.n_also++] = optarg;
			break;
		case 'N': o.slice = NULL; break;
		case 'o': o.root_ops = optarg; break;
		case 'p': o.scxd_pid = atoi(optarg); break;
		case 'M': o.rss_margin_kb = atoi(optarg); break;
		case 'L': label = optarg; break;
		case 'K': o.kill_every = atoi(optarg); break;
		case 'C': count = atoi(optarg); break;
		case 'O': ops = optarg; break;
		case 'X': timeout_s = atoi(optarg); break;
		case 'B': batch = atoi(optarg); break;
		case 'h': return usage(stdout);
		default: return usage(stderr);
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* 2 s per cgroup and a minute: a child takes about 0.25 s under TCG */
	if (!strcmp(mode, "populate"))
		return populate(&o, count, ops, timeout_s ? timeout_s : 60 + 2 * count);
	if (!strcmp(mode, "depopulate"))
		return depopulate(&o, batch, timeout_s ? timeout_s : 600 + count);
	if (o.window < 2 || o.window > MAX_WINDOW || !o.max_scopes || o.max_scopes > MAX_WINDOW) {
		fprintf(stderr, "churn: --window and --max-scopes must be 2..%d and 1..%d\n",
			MAX_WINDOW, MAX_WINDOW);
		return 2;
	}
	if (!realpath("/proc/self/exe", exe)) {
		fprintf(stderr, "churn: /proc/self/exe: %m\n");
		return 1;
	}
	self_exe = exe;
	setvbuf(stdout, NULL, _IOLBF, 0);
	return run(&o);
}
