/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sched-test: the scheduler collection's guest tests (root role).
 *
 * Runs inside a QEMU guest, never on a host: it loads BPF schedulers.
 *
 *   sched-test [-b BINDIR] [-o OBJDIR] [-d SECONDS] [NAME...]
 *
 * BINDIR holds sched-run, OBJDIR the .bpf.o files (default: the
 * directory of this program and OBJDIR=BINDIR/../schedulers). NAMEs
 * select tests by substring. Each test prints "ok - sched/NAME: figures"
 * or "not ok - sched/NAME: why"; the last line is "N passed, N failed".
 * Exit status 0 only when nothing failed.
 *
 * What is asserted, from the kernel's view:
 *  - a scheduler is running when /sys/kernel/sched_ext/state says
 *    "enabled" and root/ops names it, and is gone when state says
 *    "disabled" again; the exit kind the kernel hands to ops.exit() is
 *    "unregistered" (no error, no stall);
 *  - every task of a mixed workload made progress, and no CPU-bound task
 *    got less than a fifth of what its peers averaged;
 *  - weighted schedulers give two competing spinners CPU within 10% of
 *    their weights (nice, cpu.weight); fifo, which ignores weights, must
 *    miss that mark, which proves the check can fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sched-proc.h"
#include "workload.h"

struct config {
	char bindir[PATH_MAX];
	char objdir[PATH_MAX];
	double duration;
	char **filters;
	int n_filters;
};

static unsigned int n_passed, n_failed;

/* Start scheduler @name as root through sched-run. */
static int sched_start(const struct config *cfg, const char *name,
		       struct sched_proc *sp, char *why, size_t why_len)
{
	char run[PATH_MAX + 16], obj[PATH_MAX + 64], want[128];
	char *argv[] = { run, obj, NULL };

	snprintf(run, sizeof(run), "%s/sched-run", cfg->bindir);
	snprintf(obj, sizeof(obj), "%s/%s.bpf.o", cfg->objdir, name);
	snprintf(want, sizeof(want), "scxd_%s", name);
	return sched_proc_start(sp, argv, name, want, why, why_len);
}

static int sched_stop(struct sched_proc *sp, char *why, size_t why_len)
{
	return sched_proc_stop(sp, why, why_len);
}

static void result(bool ok, const char *test, const char *fmt, ...)
{
	va_list ap;

	printf("%s - sched/%s: ", ok ? "ok" : "not ok", test);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (ok)
		n_passed++;
	else
		n_failed++;
}

static bool selected(const struct config *cfg, const char *test)
{
	int i;

	if (!cfg->n_filters)
		return true;
	for (i = 0; i < cfg->n_filters; i++)
		if (strstr(test, cfg->filters[i]))
			return true;
	return false;
}

/* Every task progressed; no spinner below a fifth of the spinners' mean. */
static bool check_progress(const struct wl_group *groups, const struct wl_result *res,
			   char *why, size_t len)
{
	uint64_t spin_sum = 0, spin_min = UINT64_MAX;
	unsigned int i, n_spin = 0;

	for (i = 0; i < res->n_tasks; i++) {
		const struct wl_task_result *t = &res->tasks[i];

		if (t->failed || t->ops == 0) {
			snprintf(why, len, "task %u (%s) made no progress", i,
				 wl_kind_name(groups[t->group].kind));
			return false;
		}
		if (groups[t->group].kind == WL_SPIN) {
			spin_sum += t->cpu_ns;
			spin_min = t->cpu_ns < spin_min ? t->cpu_ns : spin_min;
			n_spin++;
		}
	}
	if (n_spin && spin_min * 5 < spin_sum / n_spin) {
		snprintf(why, len, "a spinner got %.0f ms of CPU, spinners averaged %.0f ms",
			 spin_min / 1e6, spin_sum / 1e6 / n_spin);
		return false;
	}
	snprintf(why, len, "%u tasks all progressed, spinner CPU min %.0f ms / mean %.0f ms, ops/s spin %.0f sleep %.0f pingpong %.0f",
		 res->n_tasks, spin_min / 1e6, n_spin ? spin_sum / 1e6 / n_spin : 0.0,
		 wl_group_ops(res, 0) / res->wall_s, wl_group_ops(res, 1) / res->wall_s,
		 wl_group_ops(res, 2) / res->wall_s);
	return true;
}

static void test_root_mixed(const struct config *cfg, const char *name)
{
	struct wl_group groups[] = {
		{ .kind = WL_SPIN, .n = 4, .cpu = -1 },
		{ .kind = WL_SLEEP, .n = 4, .cpu = -1, .work_us = 500, .sleep_us = 2000 },
		{ .kind = WL_PINGPONG, .n = 4, .cpu = -1 },
	};
	char test[128], why[2048], stop_why[1600];
	struct sched_proc sp;
	struct wl_result res;
	bool ok;
	int r;

	snprintf(test, sizeof(test), "%s_root_mixed_workload_all_progress", name);
	if (!selected(cfg, test))
		return;
	if (sched_start(cfg, name, &sp, why, sizeof(why)) < 0)
		return result(false, test, "%s", why);

	r = wl_run(groups, 3, cfg->duration, &res);
	if (r < 0) {
		sched_stop(&sp, stop_why, sizeof(stop_why));
		return result(false, test, "workload: %s", strerror(-r));
	}
	ok = check_progress(groups, &res, why, sizeof(why));
	wl_result_free(&res);
	if (ok && !scx_state_is("enabled")) {
		ok = false;
		snprintf(why, sizeof(why), "scheduler left during the workload");
	}
	if (sched_stop(&sp, stop_why, sizeof(stop_why)) < 0)
		return result(false, test, "%s", stop_why);
	result(ok, test, "%s; %s", why, stop_why);
}

/*
 * Two spinners sharing one CPU, at weights @w0 and @w1 (set through nice
 * or through the cpu.weight of cgroups @cg0/@cg1). Returns the largest
 * relative error of their CPU share against the weights' share.
 */
static int measure_shares(const struct config *cfg, int nice0, int nice1,
			  const char *cg0, const char *cg1, double w0, double w1,
			  double *err, char *fig, size_t len)
{
	struct wl_group groups[] = {
		{ .kind = WL_SPIN, .n = 1, .cpu = 1, .nice = nice0, .cgroup = cg0 },
		{ .kind = WL_SPIN, .n = 1, .cpu = 1, .nice = nice1, .cgroup = cg1 },
	};
	struct wl_result res;
	double c0, c1, s0, s1, e0, e1;
	int r;

	r = wl_run(groups, 2, cfg->duration, &res);
	if (r < 0)
		return r;
	c0 = wl_group_cpu_ns(&res, 0);
	c1 = wl_group_cpu_ns(&res, 1);
	wl_result_free(&res);
	if (c0 + c1 <= 0)
		return -EIO;
	s0 = c0 / (c0 + c1);
	s1 = c1 / (c0 + c1);
	e0 = fabs(s0 / (w0 / (w0 + w1)) - 1);
	e1 = fabs(s1 / (w1 / (w0 + w1)) - 1);
	*err = e0 > e1 ? e0 : e1;
	snprintf(fig, len, "shares %.1f%%:%.1f%% for weights %.0f:%.0f (expected %.1f%%:%.1f%%), worst error %.1f%%",
		 100 * s0, 100 * s1, w0, w1, 100 * w0 / (w0 + w1),
		 100 * w1 / (w0 + w1), 100 * *err);
	return 0;
}

/* nice 0 and nice -3 weigh 1024 and 1991 in the kernel's table */
#define NICE0_W 1024.0
#define NICEM3_W 1991.0

static void test_nice_shares(const struct config *cfg, const char *name,
			     bool expect_weighted)
{
	char test[128], why[1600], fig[256];
	struct sched_proc sp = { 0 };
	double err = 0;
	bool ok;
	int r;

	snprintf(test, sizeof(test), "%s_root_nice_%s", name ? name : "eevdf",
		 expect_weighted ? "shares_within_10pct" : "ignored_shares_off_by_over_10pct");
	if (!selected(cfg, test))
		return;
	if (name && sched_start(cfg, name, &sp, why, sizeof(why)) < 0)
		return result(false, test, "%s", why);

	r = measure_shares(cfg, 0, -3, NULL, NULL, NICE0_W, NICEM3_W, &err, fig, sizeof(fig));
	if (name && sched_stop(&sp, why, sizeof(why)) < 0)
		return result(false, test, "%s", why);
	if (r < 0)
		return result(false, test, "workload: %s", strerror(-r));
	ok = expect_weighted ? err <= 0.10 : err > 0.10;
	result(ok, test, "%s", fig);
}

static int make_cgroup(const char *path, const char *weight)
{
	char f[PATH_MAX];

	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(f, sizeof(f), "%s/cpu.weight", path);
	return write_str(f, weight);
}

static void test_cgroup_shares(const struct config *cfg, const char *name)
{
	const char *a = "/sys/fs/cgroup/sched-test-w100", *b = "/sys/fs/cgroup/sched-test-w300";
	char test[128], why[1600], fig[256];
	struct sched_proc sp = { 0 };
	double err = 0;
	int r;

	snprintf(test, sizeof(test), "%s_root_cgroup_weight_shares_within_10pct",
		 name ? name : "eevdf");
	if (!selected(cfg, test))
		return;
	write_str("/sys/fs/cgroup/cgroup.subtree_control", "+cpu");
	if (make_cgroup(a, "100") < 0 || make_cgroup(b, "300") < 0)
		return result(false, test, "cannot make cgroups with cpu.weight: %s",
			      strerror(errno));
	if (name && sched_start(cfg, name, &sp, why, sizeof(why)) < 0)
		return result(false, test, "%s", why);

	r = measure_shares(cfg, 0, 0, a, b, 100, 300, &err, fig, sizeof(fig));
	if (name && sched_stop(&sp, why, sizeof(why)) < 0)
		return result(false, test, "%s", why);
	rmdir(a);
	rmdir(b);
	if (r < 0)
		return result(false, test, "workload: %s", strerror(-r));
	result(err <= 0.10, test, "%s", fig);
}

static void default_dirs(struct config *cfg, const char *argv0)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		snprintf(self, sizeof(self), "%s", argv0);
	else
		self[n] = '\0';
	snprintf(cfg->bindir, sizeof(cfg->bindir), "%s", dirname(self));
	snprintf(cfg->objdir, sizeof(cfg->objdir), "%s/../schedulers", cfg->bindir);
}

int main(int argc, char **argv)
{
	static const char *const all[] = { "fifo", "vtime", "lat", "wparent" };
	static const char *const weighted[] = { "vtime", "lat", "wparent" };
	struct config cfg = { .duration = 3.0 };
	bool have_objdir = false;
	unsigned int i;
	int c;

	default_dirs(&cfg, argv[0]);
	while ((c = getopt(argc, argv, "b:o:d:")) != -1) {
		switch (c) {
		case 'b':
			snprintf(cfg.bindir, sizeof(cfg.bindir), "%s", optarg);
			break;
		case 'o':
			snprintf(cfg.objdir, sizeof(cfg.objdir), "%s", optarg);
			have_objdir = true;
			break;
		case 'd':
			cfg.duration = atof(optarg);
			break;
		default:
			fprintf(stderr, "usage: sched-test [-b BINDIR] [-o OBJDIR] [-d SECONDS] [NAME...]\n");
			return 2;
		}
	}
	if (!have_objdir && access(cfg.objdir, F_OK) < 0)
		snprintf(cfg.objdir, sizeof(cfg.objdir), "%s", cfg.bindir);
	cfg.filters = argv + optind;
	cfg.n_filters = argc - optind;

	printf("sched-test: sched-run from %s, schedulers from %s, %.1f s per workload\n",
	       cfg.bindir, cfg.objdir, cfg.duration);

	test_nice_shares(&cfg, NULL, true);
	test_cgroup_shares(&cfg, NULL);
	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		test_root_mixed(&cfg, all[i]);
	for (i = 0; i < sizeof(weighted) / sizeof(weighted[0]); i++)
		test_nice_shares(&cfg, weighted[i], true);
	test_nice_shares(&cfg, "fifo", false);
	test_cgroup_shares(&cfg, "vtime");

	printf("%u passed, %u failed\n", n_passed, n_failed);
	return n_failed ? 1 : 0;
}
