/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scxd-attach-time: time how long a scheduler takes to be in charge, as
 * the kernel's sysfs shows it, when scxd attaches it and when a minimal
 * libbpf loader (tests/sched/sched-run) does. Guest only; the benchmark
 * tests/bench/scxd-attach runs it.
 *
 *   scxd-attach-time root --runs N --ops OPS [--scxd PID --policy FILE --on FILE --off FILE]
 *                         [--raw -- LOADER ARGS...]
 *   scxd-attach-time child --runs N --dir CGROUP_DIR [--raw -- LOADER ARGS... ({} = the cgroup)]
 *   scxd-attach-time burst --count N --dir CGROUP_DIR [--pid SCXD_PID]
 *   scxd-attach-time idle --pid PID --seconds S
 *
 * root: from exec of the loader, or from SIGHUP to scxd after swapping in
 * a policy with a root entry, until state is "enabled" and root/ops is
 * OPS; then the scheduler is removed again (SIGINT, or the --off policy)
 * and the next run waits for "disabled". Given both, raw and scxd runs
 * alternate.
 * child: from mkdir of DIR/c<i> (scxd: the policy matches it; raw: the
 * loader is started on it right after) until a sub-<cgid> directory for it
 * under root/sub says "enabled" in its state file.
 * burst: N cgroups made in DIR at once, until all have an enabled
 * sub-<cgid> (with a line at every tenth of N), then removed, until none
 * has a sub-<cgid> at all; with --pid, scxd's RSS, fds and CPU time before,
 * with all attached and after. On a kernel without sub-schedulers: until
 * scxd's CPU time stops moving, and how much it used.
 * idle: scxd's context switches (its wakeups), CPU time and RSS over S
 * seconds.
 * Prints one line per run and a summary: median, min, max, interquartile
 * range, in milliseconds.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scxd-attach-sysfs.h"
#include "util.h"

#define MAX_RUNS 1000
#define TIMEOUT_S 120.0

struct options {
	const char *mode;
	unsigned int runs;
	const char *ops;
	pid_t scxd;
	const char *policy, *on, *off, *dir;
	unsigned int count;
	unsigned int seconds;
	char **raw;		/* loader argv, NULL: scxd */
};

static int copy_file(const char *from, const char *to)
{
	char tmp[PATH_MAX], buf[8192];
	_cleanup_(fclosep) FILE *in = fopen(from, "re");
	FILE *out;
	size_t n;

	if (!in)
		return -errno;
	snprintf(tmp, sizeof(tmp), "%s.bench", to);
	out = fopen(tmp, "we");
	if (!out)
		return -errno;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	if (fclose(out) != 0 || chmod(tmp, 0644) < 0 || rename(tmp, to) < 0)
		return -errno;
	return 0;
}

static bool root_is(const char *ops)
{
	char state[32] = "", have[128] = "";

	read_line(SCX_SYSFS "/state", state, sizeof(state));
	if (!ops)
		return !strcmp(state, "disabled");
	read_line(SCX_SYSFS "/root/ops", have, sizeof(have));
	return !strcmp(state, "enabled") && !strcmp(have, ops);
}

/* Wait for root_is(@ops); elapsed ms, or -1 on timeout. */
static double wait_root(const char *ops, double t0)
{
	while (!root_is(ops)) {
		if (now_ms() - t0 > TIMEOUT_S * 1e3)
			return -1;
		sleep_ms(1);
	}
	return now_ms() - t0;
}

static pid_t spawn(char **argv, const char *cgroup)
{
	char *args[64];
	unsigned int i;
	pid_t pid;

	for (i = 0; argv[i] && i < 63; i++)
		args[i] = cgroup && !strcmp(argv[i], "{}") ? (char *)cgroup : argv[i];
	args[i] = NULL;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		execvp(args[0], args);
		_exit(127);
	}
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGINT);
	waitpid(pid, NULL, 0);
}

static void summary(const char *what, double *v, unsigned int n)
{
	if (!n) {
		printf("%s: no successful run\n", what);
		return;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	printf("%s: n=%u median %.2f ms, min %.2f, max %.2f, IQR %.2f (p25 %.2f, p75 %.2f)\n",
	       what, n, v[n / 2], v[0], v[n - 1], v[(3 * n) / 4] - v[n / 4], v[n / 4], v[(3 * n) / 4]);
}

/* One root attach and removal by @raw (a loader) or, when NULL, by scxd. */
static double root_once(const struct options *o, char **raw)
{
	double t0, dt;
	pid_t pid = 0;

	if (wait_root(NULL, now_ms()) < 0) {
		fprintf(stderr, "scxd-attach-time: sched_ext did not become disabled\n");
		return -1;
	}
	if (!raw && copy_file(o->on, o->policy) < 0) {
		fprintf(stderr, "scxd-attach-time: copying %s to %s: %m\n", o->on, o->policy);
		return -1;
	}
	t0 = now_ms();
	if (raw)
		pid = spawn(raw, NULL);
	else
		kill(o->scxd, SIGHUP);
	dt = wait_root(o->ops, t0);
	if (raw) {
		stop(pid);
	} else {
		copy_file(o->off, o->policy);
		kill(o->scxd, SIGHUP);
	}
	return dt;
}

/*
 * With both --raw and --scxd, runs alternate (raw, scxd, raw, ...) so that
 * drift in the host's load hits both alike; the ratio is of the medians.
 */
static int bench_root(const struct options *o)
{
	static double v_raw[MAX_RUNS], v_scxd[MAX_RUNS];
	unsigned int n_raw = 0, n_scxd = 0;
	bool scxd = o->scxd && o->policy && o->on && o->off;

	for (unsigned int i = 0; i < o->runs; i++) {
		double dt;

		if (o->raw) {
			dt = root_once(o, o->raw);
			printf("root raw libbpf loader run %u: %.2f ms\n", i, dt);
			if (dt >= 0)
				v_raw[n_raw++] = dt;
		}
		if (scxd) {
			dt = root_once(o, NULL);
			printf("root scxd run %u: %.2f ms\n", i, dt);
			if (dt >= 0)
				v_scxd[n_scxd++] = dt;
		}
	}
	wait_root(NULL, now_ms());
	if (o->raw)
		summary("root-attach raw", v_raw, n_raw);
	if (scxd)
		summary("root-attach scxd", v_scxd, n_scxd);
	if (o->raw && scxd && n_raw && n_scxd)
		printf("root-attach: scxd/raw median ratio %.2f\n", v_scxd[n_scxd / 2] / v_raw[n_raw / 2]);
	return (!o->raw || n_raw == o->runs) && (!scxd || n_scxd == o->runs) ? 0 : 1;
}

static int bench_child(const struct options *o)
{
	static double v[MAX_RUNS];
	unsigned int n = 0;

	mkdir(o->dir, 0755);
	for (unsigned int i = 0; i < o->runs; i++) {
		char cg[PATH_MAX];
		struct stat sb;
		uint64_t id;
		double t0, dt = -1;
		pid_t pid = 0;

		snprintf(cg, sizeof(cg), "%s/c%u", o->dir, i);
		t0 = now_ms();
		if (mkdir(cg, 0755) < 0 || stat(cg, &sb) < 0) {
			fprintf(stderr, "scxd-attach-time: mkdir %s: %m\n", cg);
			return 1;
		}
		id = sb.st_ino;
		if (o->raw)
			pid = spawn(o->raw, cg);
		while (count_subs(&id, 1, true) < 1 && now_ms() - t0 < TIMEOUT_S * 1e3)
			sleep_ms(1);
		if (count_subs(&id, 1, true) == 1)
			dt = now_ms() - t0;
		printf("child %s run %u (%s, sub-%" PRIu64 "): %.2f ms\n",
		       o->raw ? "raw libbpf loader" : "scxd", i, cg, id, dt);
		if (dt >= 0)
			v[n++] = dt;
		if (pid)
			stop(pid);
		for (double t1 = now_ms(); rmdir(cg) < 0 && errno == EBUSY && now_ms() - t1 < 10e3;)
			sleep_ms(5);
		while (count_subs(&id, 1, false) < 1 && now_ms() - t0 < 2 * TIMEOUT_S * 1e3)
			sleep_ms(2);
	}
	rmdir(o->dir);
	summary(o->raw ? "child-attach raw" : "child-attach scxd", v, n);
	return n == o->runs ? 0 : 1;
}

struct proc_figures {
	unsigned long long ctxt, ticks;
	long rss_kb, hwm_kb;
	int fds;
};

static int read_proc(pid_t pid, struct proc_figures *f)
{
	char path[64], line[256], stat[1024];
	_cleanup_(fclosep) FILE *s = NULL;
	_cleanup_(closedirp) DIR *d = NULL;
	unsigned long long v, ut, st;
	const char *p;

	*f = (struct proc_figures){};
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	s = fopen(path, "re");
	if (!s)
		return -errno;
	while (fgets(line, sizeof(line), s)) {
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
			f->ctxt += v;
		sscanf(line, "VmRSS: %ld", &f->rss_kb);
		sscanf(line, "VmHWM: %ld", &f->hwm_kb);
	}
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	for (struct dirent *de; d && (de = readdir(d));)
		f->fds += de->d_name[0] != '.';
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_line(path, stat, sizeof(stat)) < 0 || !(p = strrchr(stat, ')')))
		return -EIO;
	if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -EIO;
	f->ticks = ut + st;
	return 0;
}

/* Wait until @pid's CPU time has not moved for 1 s; ms from @t0 to its last move. */
static double wait_quiet(pid_t pid, double t0)
{
	unsigned long long last = cpu_ticks(pid);
	double t_last = now_ms();

	while (now_ms() - t_last < 1000 && now_ms() - t0 < 5 * TIMEOUT_S * 1e3) {
		unsigned long long t;

		sleep_ms(20);
		t = cpu_ticks(pid);
		if (t != last) {
			last = t;
			t_last = now_ms();
		}
	}
	return t_last - t0;
}

/*
 * Without sub-schedulers nothing can be attached: time how long scxd takes
 * to process the burst (until its CPU time stops moving) and what it costs.
 */
static int burst_quiet(const struct options *o, unsigned int n, double t0)
{
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long long c0, c1;
	double dt;

	if (!o->scxd) {
		printf("burst: no root/sub and no --pid: nothing to wait for\n");
		return 1;
	}
	c0 = cpu_ticks(o->scxd);
	dt = wait_quiet(o->scxd, t0);
	c1 = cpu_ticks(o->scxd);
	printf("burst: no root/sub (nothing attachable): scxd quiet again %.1f ms after the first mkdir, "
	       "%.2f s CPU after the mkdirs\n", dt, (double)(c1 - c0) / hz);
	t0 = now_ms();
	c0 = c1;
	for (unsigned int i = 0; i < n; i++) {
		char cg[PATH_MAX];

		snprintf(cg, sizeof(cg), "%s/b%u", o->dir, i);
		rmdir(cg);
	}
	dt = wait_quiet(o->scxd, t0);
	c1 = cpu_ticks(o->scxd);
	printf("burst: %u rmdirs: scxd quiet again %.1f ms after the first rmdir, %.2f s CPU\n",
	       n, dt, (double)(c1 - c0) / hz);
	rmdir(o->dir);
	return 0;
}

/*
 * Each poll reads the state file of every sub-<cgid>: under TCG a poll of
 * a thousand takes a vCPU for a while, so larger bursts are polled less
 * often (10 ms + 1 ms per 5 cgroups; that is also the figures' resolution).
 */
static unsigned int poll_ms(unsigned int n)
{
	return 10 + n / 5;
}

/* scxd's footprint now (with --pid), and its CPU time since @ref. */
static void burst_scxd(const struct options *o, const char *when, struct proc_figures *now,
		       const struct proc_figures *ref)
{
	long hz = sysconf(_SC_CLK_TCK);

	if (!o->scxd || read_proc(o->scxd, now) < 0)
		return;
	printf("burst: scxd %s: VmRSS %ld kB (peak %ld kB), %d fds", when, now->rss_kb, now->hwm_kb, now->fds);
	if (ref)
		printf(", %.2f s CPU since the previous line", (double)(now->ticks - ref->ticks) / hz);
	printf("\n");
}

static int bench_burst(const struct options *o)
{
	static uint64_t ids[MAX_IDS];
	unsigned int n = o->count, got, step = n >= 100 ? n / 10 : n, next = step;
	/* 600 s, or 1.5 s per cgroup for more than 400 (200 took 46 s under TCG) */
	double limit_ms = (n * 1.5 > 5 * TIMEOUT_S ? n * 1.5 : 5 * TIMEOUT_S) * 1e3;
	struct proc_figures f0 = {}, f1 = {}, f2 = {};
	double t0, t_all, t_gone;

	mkdir(o->dir, 0755);
	burst_scxd(o, "before the burst", &f0, NULL);
	t0 = now_ms();
	for (unsigned int i = 0; i < n; i++) {
		char cg[PATH_MAX];
		struct stat sb;

		snprintf(cg, sizeof(cg), "%s/b%u", o->dir, i);
		if (mkdir(cg, 0755) < 0 || stat(cg, &sb) < 0) {
			fprintf(stderr, "scxd-attach-time: mkdir %s: %m\n", cg);
			return 1;
		}
		ids[i] = sb.st_ino;
	}
	printf("burst: %u mkdirs took %.1f ms\n", n, now_ms() - t0);
	if (access(SCX_SYSFS "/root/sub", F_OK) < 0)
		return burst_quiet(o, n, t0);
	while ((got = count_subs(ids, n, true)) < n && now_ms() - t0 < limit_ms) {
		if (got >= next) {
			printf("burst: %u of %u attached at %.1f ms\n", got, n, now_ms() - t0);
			fflush(stdout);
			while (next <= got)
				next += step;
		}
		sleep_ms(poll_ms(n));
	}
	t_all = now_ms() - t0;
	printf("burst: %u of %u cgroups attached %.1f ms after the first mkdir (polled every %u ms)\n",
	       got, n, t_all, poll_ms(n));
	burst_scxd(o, "with all attached", &f1, &f0);
	t0 = now_ms();
	for (unsigned int i = 0; i < n; i++) {
		char cg[PATH_MAX];

		snprintf(cg, sizeof(cg), "%s/b%u", o->dir, i);
		rmdir(cg);
	}
	while (count_subs(ids, n, false) < n && now_ms() - t0 < limit_ms)
		sleep_ms(poll_ms(n));
	t_gone = now_ms() - t0;
	printf("burst: all %u detached %.1f ms after the first rmdir\n", n, t_gone);
	/* let scxd finish forgetting them before its footprint is read */
	if (o->scxd)
		wait_quiet(o->scxd, now_ms());
	burst_scxd(o, "after all detached", &f2, &f1);
	rmdir(o->dir);
	return got == n ? 0 : 1;
}

static int bench_idle(const struct options *o)
{
	struct proc_figures a, b;
	long hz = sysconf(_SC_CLK_TCK);

	if (read_proc(o->scxd, &a) < 0) {
		fprintf(stderr, "scxd-attach-time: scxd pid %d: %m\n", o->scxd);
		return 1;
	}
	sleep(o->seconds);
	if (read_proc(o->scxd, &b) < 0)
		return 1;
	printf("idle: scxd pid %d over %u s: %.2f wakeups/s (context switches), CPU %.3f s (%.2f%%), VmRSS %ld kB\n",
	       o->scxd, o->seconds, (double)(b.ctxt - a.ctxt) / o->seconds,
	       (double)(b.ticks - a.ticks) / hz, 100.0 * (b.ticks - a.ticks) / hz / o->seconds, b.rss_kb);
	printf("scxd: total CPU %.2f s since start\n", (double)b.ticks / hz);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "runs", required_argument, NULL, 'n' },
		{ "ops", required_argument, NULL, 'o' },
		{ "scxd", required_argument, NULL, 'p' },
		{ "pid", required_argument, NULL, 'p' },
		{ "policy", required_argument, NULL, 'P' },
		{ "on", required_argument, NULL, '1' },
		{ "off", required_argument, NULL, '0' },
		{ "dir", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'c' },
		{ "seconds", required_argument, NULL, 's' },
		{ "raw", no_argument, NULL, 'r' },
		{}
	};
	struct options o = { .runs = 20, .count = 200, .seconds = 10 };
	bool raw = false;
	int c;

	if (argc < 2) {
		fprintf(stderr, "usage: scxd-attach-time root|child|burst|idle OPTIONS (see the source's head)\n");
		return 2;
	}
	o.mode = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o.runs = atoi(optarg); break;
		case 'o': o.ops = optarg; break;
		case 'p': o.scxd = atoi(optarg); break;
		case 'P': o.policy = optarg; break;
		case '1': o.on = optarg; break;
		case '0': o.off = optarg; break;
		case 'd': o.dir = optarg; break;
		case 'c': o.count = atoi(optarg); break;
		case 's': o.seconds = atoi(optarg); break;
		case 'r': raw = true; break;
		default: return 2;
		}
	}
	if (raw) {
		if (optind >= argc) {
			fprintf(stderr, "scxd-attach-time: --raw needs -- LOADER ARGS...\n");
			return 2;
		}
		o.raw = argv + optind;
	}
	if (o.runs > MAX_RUNS || o.count > MAX_IDS)
		return 2;
	if (!strcmp(o.mode, "root") && o.ops && (o.raw || (o.scxd && o.policy && o.on && o.off)))
		return bench_root(&o);
	if (!strcmp(o.mode, "child") && o.dir)
		return bench_child(&o);
	if (!strcmp(o.mode, "burst") && o.dir)
		return bench_burst(&o);
	if (!strcmp(o.mode, "idle") && o.scxd)
		return bench_idle(&o);
	fprintf(stderr, "scxd-attach-time: %s: missing or unknown options\n", o.mode);
	return 2;
}
