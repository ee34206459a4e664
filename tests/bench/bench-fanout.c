/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench-fanout: what a parent pays per dispatch as its number of children
 * grows. wparent runs as root and hosts 1, 8, 64, 256 and 512 fifo
 * children (-n picks other counts), one per cgroup /fo/cN; only c0 has tasks (ping-pong pairs, one pair per
 * vCPU: many short runs, so many dispatches). Figures, as ratios to the
 * 1-child case of the same round:
 *   - c0's throughput (round trips per second);
 *   - the parent's dispatch cost per call: run_time_ns / run_cnt of
 *     wparent's ops.dispatch program over the run, from the kernel's BPF
 *     run-time statistics (BPF_ENABLE_STATS, as kernel.bpf_stats_enabled);
 *   - the parent's dispatch time per round trip of c0.
 *
 * Runs inside a QEMU guest only (tests/bench/fanout boots it).
 *
 *   bench-fanout [-d SECONDS] [-B BUDGET_S] [-m MIN] [-M MAX] [-T TARGET]
 *                [-c CHILD_OBJ] [-n COUNT,COUNT,...]
 *
 * The first count is the reference every ratio is taken against; the
 * rounds stop on the interval of the count nearest to 64.
 *
 * The children's loaders (sched-run) are frozen (cgroup.freeze) while
 * attached: their exit polling would otherwise wake the parent's own
 * tasks 20 times a second per child.
 *
 * Rounds alternate direction: odd rounds attach children on the way up
 * (1, 8, ..., 512), even ones detach them on the way down (512, ..., 1),
 * measuring at each count, so every count is measured once per round
 * and early or late in a round equally often. Rounds go on until the
 * 64-children cost ratio's bootstrap 95% interval is within +-TARGET or
 * the time budget is spent.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-lib.h"
#include "workload.h"

#define MAX_ROUNDS 32
#define MAX_CHILDREN 512
#define MAX_COUNTS 8
#define CG "/sys/fs/cgroup/fo"
#define LOADERS "/sys/fs/cgroup/fo-loaders"	/* frozen while attached */
#define DISPATCH_PROG "wparent_dispat"	/* wparent_dispatch, cut to 15 */

static unsigned int counts[MAX_COUNTS] = { 1, 8, 64, 256, 512 };
static unsigned int n_counts = 5;
static unsigned int stop_on;	/* index of the count whose interval ends rounds */

static double tput[MAX_COUNTS][MAX_ROUNDS];
static double per_call[MAX_COUNTS][MAX_ROUNDS];
static double per_op[MAX_COUNTS][MAX_ROUNDS];
static double calls_per_s[MAX_COUNTS][MAX_ROUNDS];

static struct sched_proc children[MAX_CHILDREN];
static unsigned int attached;
static double attach_s, detach_s;
static unsigned int n_attach, n_detach;
static const char *child_obj = "fifo";
static double duration = 3.0;
static unsigned int ncpus;

static void cgroup_path(char *buf, size_t len, unsigned int i)
{
	snprintf(buf, len, CG "/c%u", i);
}

static int set_children(const struct bl_dirs *d, unsigned int want)
{
	char path[64], label[32], why[1600];
	double t0 = bl_now();
	int r;

	while (attached < want) {
		cgroup_path(path, sizeof(path), attached);
		snprintf(label, sizeof(label), "%s.c%u", child_obj, attached);
		r = bl_child_start(d, &children[attached], child_obj, path, label, why,
				   sizeof(why));
		if (r < 0) {
			fprintf(stderr, "bench-fanout: child %u: %s\n", attached, why);
			return r;
		}
		/*
		 * sched-run polls for its scheduler's exit 20 times a second:
		 * 256 loaders would be 5000 wake-ups a second of the parent's
		 * own tasks competing with the busy child. scxd holds every
		 * link in one process; a frozen loader is the nearest thing.
		 */
		snprintf(label, sizeof(label), "%d", children[attached].pid);
		if (write_str(LOADERS "/cgroup.procs", label) < 0)
			fprintf(stderr, "bench-fanout: cannot freeze loader %s\n", label);
		attached++;
		n_attach++;
	}
	attach_s += bl_now() - t0;
	t0 = bl_now();
	while (attached > want) {
		attached--;
		/* thawed, so that it sees SIGINT */
		snprintf(label, sizeof(label), "%d", children[attached].pid);
		write_str("/sys/fs/cgroup/cgroup.procs", label);
		if (sched_proc_stop(&children[attached], why, sizeof(why)) < 0)
			fprintf(stderr, "bench-fanout: child %u: %s\n", attached, why);
		n_detach++;
	}
	detach_s += bl_now() - t0;
	return 0;
}

/*
 * -n 1,64,512: increasing counts of children, from 1 to MAX_CHILDREN; the
 * first is the reference of every ratio.
 */
static int parse_counts(const char *arg)
{
	char *end;

	for (n_counts = 0; *arg && n_counts < MAX_COUNTS; arg = *end ? end + 1 : end) {
		unsigned long v = strtoul(arg, &end, 10);

		if (end == arg || (*end && *end != ',') || v < 1 || v > MAX_CHILDREN ||
		    (n_counts && v <= counts[n_counts - 1]))
			break;
		counts[n_counts++] = v;
	}
	if (*arg || n_counts < 2) {
		fprintf(stderr, "bench-fanout: -n wants 2 to %d increasing counts of children from 1 to %d, e.g. 1,64,512\n",
			MAX_COUNTS, MAX_CHILDREN);
		return -EINVAL;
	}
	return 0;
}

/* One measurement at the current number of children into [c][k]. */
static void measure(unsigned int c, unsigned int k)
{
	struct wl_group g = { .kind = WL_PINGPONG, .n = ncpus, .cpu = -1, .cgroup = CG "/c0" };
	uint64_t ns0, cnt0, ns1, cnt1;
	struct wl_result res;
	uint64_t ops;

	tput[c][k] = per_call[c][k] = per_op[c][k] = calls_per_s[c][k] = -1;
	sleep_ms(300);	/* let the attach settle */
	if (bl_prog_stats(DISPATCH_PROG, &ns0, &cnt0) != 1) {
		fprintf(stderr, "bench-fanout: not exactly one %s* program\n", DISPATCH_PROG);
		return;
	}
	if (wl_run(&g, 1, duration, &res) < 0)
		return;
	ops = wl_group_ops(&res, 0);
	if (bl_prog_stats(DISPATCH_PROG, &ns1, &cnt1) == 1 && cnt1 > cnt0 && ops) {
		tput[c][k] = ops / res.wall_s;
		per_call[c][k] = (double)(ns1 - ns0) / (cnt1 - cnt0);
		per_op[c][k] = (double)(ns1 - ns0) / ops;
		calls_per_s[c][k] = (cnt1 - cnt0) / res.wall_s;
	}
	wl_result_free(&res);
	printf("  %u children: %.0f round trips/s, %.0f ns/call, %.0f ns/round trip\n", counts[c], tput[c][k], per_call[c][k],
	       per_op[c][k]);
	fflush(stdout);
}

static double ratio_stat(double v[MAX_COUNTS][MAX_ROUNDS], unsigned int c, unsigned int rounds,
			 struct bl_stat *s)
{
	double r[MAX_ROUNDS];
	unsigned int k;

	for (k = 0; k < rounds; k++)
		r[k] = v[c][k] > 0 && v[0][k] > 0 ? v[c][k] / v[0][k] : -1;
	return bl_stat(r, rounds, s) ? bl_halfwidth(s) : INFINITY;
}

static void report(unsigned int rounds)
{
	unsigned int c;

	for (c = 0; c < n_counts; c++) {
		char row[32];
		struct bl_stat s;

		snprintf(row, sizeof(row), "%u children", counts[c]);
		if (c && isfinite(ratio_stat(per_call, c, rounds, &s)))
			bl_emit("fanout", row, "dispatch cost per call / 1 child's", &s, "x");
		if (c && isfinite(ratio_stat(per_op, c, rounds, &s)))
			bl_emit("fanout", row, "dispatch time per round trip / 1 child's", &s, "x");
		if (c && isfinite(ratio_stat(tput, c, rounds, &s)))
			bl_emit("fanout", row, "busy child's throughput / 1 child's", &s, "x");
		if (bl_stat(per_call[c], rounds, &s))
			bl_emit("fanout-abs", row, "dispatch ns per call", &s, "ns");
		if (bl_stat(per_op[c], rounds, &s))
			bl_emit("fanout-abs", row, "dispatch ns per round trip", &s, "ns");
		if (bl_stat(calls_per_s[c], rounds, &s))
			bl_emit("fanout-abs", row, "dispatch calls per s", &s, "1/s");
		if (bl_stat(tput[c], rounds, &s))
			bl_emit("fanout-abs", row, "busy child's round trips per s", &s, "1/s");
	}
}

int main(int argc, char **argv)
{
	struct bl_rounds rr = { .min = 5, .max = MAX_ROUNDS, .target = 0.03, .budget_s = 1200 };
	struct bl_stack root = { .levels = { { "wparent" } }, .n_levels = 1 };
	struct bl_running run;
	struct bl_dirs d;
	char why[1600], path[64];
	double round_s = 0;
	unsigned int k, i;
	int c, stats_fd;

	bl_dirs_default(&d);
	while ((c = getopt(argc, argv, "d:B:m:M:T:c:n:")) != -1) {
		switch (c) {
		case 'c': child_obj = optarg; break;
		case 'n':
			if (parse_counts(optarg) < 0)
				return 2;
			break;
		default:
			if (bl_rounds_option(&rr, &duration, c, optarg))
				break;
			fprintf(stderr, "usage: bench-fanout [-d S] [-B BUDGET_S] [-m MIN] [-M MAX] [-T TARGET] [-c CHILD_OBJ] [-n COUNTS]\n");
			return 2;
		}
	}
	for (stop_on = 1, i = 2; i < n_counts; i++)
		if (abs((int)counts[i] - 64) < abs((int)counts[stop_on] - 64))
			stop_on = i;
	if (duration <= 0 || rr.min < 2 || rr.max > MAX_ROUNDS || rr.min > rr.max) {
		fprintf(stderr, "bench-fanout: positive duration, 2 <= min <= max <= %d\n",
			MAX_ROUNDS);
		return 2;
	}
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (!scx_kernel_has_sub_sched()) {
		for (c = 0; c < (int)n_counts; c++) {
			snprintf(path, sizeof(path), "%u children", counts[c]);
			bl_emit_na("fanout", path, "dispatch cost per call / 1 child's",
				   "kernel without sub-schedulers");
		}
		return 0;
	}
	if (bl_cgroup_make(CG, 0) < 0 || bl_cgroup_make(LOADERS, 0) < 0 ||
	    write_str(LOADERS "/cgroup.freeze", "1") < 0)
		return fprintf(stderr, "bench-fanout: cannot make %s and a frozen %s: %m\n", CG,
			       LOADERS), 1;
	for (i = 0; i < counts[n_counts - 1]; i++) {
		cgroup_path(path, sizeof(path), i);
		if (bl_cgroup_make(path, 0) < 0)
			return fprintf(stderr, "bench-fanout: cannot make %s: %m\n", path), 1;
	}
	stats_fd = bl_bpf_stats_enable();
	if (stats_fd < 0) {
		fprintf(stderr, "bench-fanout: cannot enable BPF run-time statistics: %s\n",
			strerror(-stats_fd));
		return 1;
	}
	if (bl_stack_start(&d, &root, &run, why, sizeof(why)) < 0) {
		fprintf(stderr, "bench-fanout: wparent as root: %s\n", why);
		return 1;
	}
	printf("bench-fanout: %u vCPUs; wparent root, %s children on %s/cN, %u ping-pong pairs in c0, %.1f s per run\n",
	       ncpus, child_obj, CG, ncpus, duration);

	/* warm-up, discarded */
	if (set_children(&d, 1) < 0)
		goto out;
	measure(0, 0);
	printf("  (that was the warm-up)\n");

	rr.start = bl_now();
	for (k = 0; k < MAX_ROUNDS; k++) {
		double t0 = bl_now(), hw;
		struct bl_stat s;
		bool up = k % 2 == 0;

		if (!bl_rounds_more(&rr, k, ratio_stat(per_call, stop_on, k, &s), round_s))
			break;
		printf("round %u (%s):\n", k + 1, up ? "attaching" : "detaching");
		for (i = 0; i < n_counts; i++) {
			unsigned int ci = up ? i : n_counts - 1 - i;

			if (set_children(&d, counts[ci]) < 0) {
				fprintf(stderr, "bench-fanout: could not reach %u children\n",
					counts[ci]);
				goto done;
			}
			measure(ci, k);
		}
		round_s = bl_now() - t0;
		hw = ratio_stat(per_call, stop_on, k + 1, &s);
		/* rounds are long: a guest killed later still leaves figures */
		printf("BENCH-REPORT\t%u rounds\n", k + 1);
		report(k + 1);
		printf("round %u: %.0f s; %u-children cost ratio +-%.1f%%\n", k + 1, round_s,
		       counts[stop_on], isfinite(hw) ? 100 * hw : -1.0);
		fflush(stdout);
	}
done:
	{
		struct bl_stat s;

		bl_note("%u rounds (%s) in %.0f s; %u-children cost ratio within +-%.1f%% (target +-%.0f%%)",
			k, rr.why_stopped ? rr.why_stopped : "stopped early", bl_now() - rr.start,
			counts[stop_on], 100 * ratio_stat(per_call, stop_on, k, &s), 100 * rr.target);
		bl_note("attach %.0f ms and detach %.0f ms per child on average (%u and %u), root wparent with %s children",
			n_attach ? 1000 * attach_s / n_attach : 0.0,
			n_detach ? 1000 * detach_s / n_detach : 0.0, n_attach, n_detach, child_obj);
	}
	printf("BENCH-REPORT\t%u rounds\n", k);
	report(k);
out:
	set_children(&d, 0);
	bl_stack_stop(&run);
	if (stats_fd != INT_MAX)
		close(stats_fd);
	return 0;
}
