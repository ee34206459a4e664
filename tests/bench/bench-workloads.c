/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench-workloads: well-known scheduler workloads from Debian's packages
 * (perf bench sched messaging and pipe, stress-ng's context-switch and CPU
 * stressors) under EEVDF, each scxd scheduler as root, the in-tree
 * scx_simple and scx_flatcg, and wparent hosting the workload two and four
 * schedulers deep; every figure a ratio to EEVDF in the same round.
 *
 * Runs inside a QEMU guest only (tests/bench/workloads boots it).
 *
 *   bench-workloads [-P PERF] [-S STRESS_NG] [-d SECONDS] [-B BUDGET_S]
 *                   [-m MIN_ROUNDS] [-M MAX_ROUNDS] [-T TARGET]
 *
 * A round starts and ends with EEVDF and runs every other row once in
 * between, in an order shuffled per round; a row's schedulers are started
 * once per round and run the four workloads in turn (also shuffled). A
 * row's ratio in a round is its figure over the mean of the round's two
 * EEVDF figures, so host load drifting over a round moves the reference
 * with it; the end-of-round EEVDF over the start-of-round one is EEVDF
 * against itself, the noise floor. Rounds go on until that ratio's
 * bootstrap 95% interval is within +-TARGET for every workload, or the
 * time budget is spent. Every workload runs in the same cgroup three
 * levels deep, so the cost of the cgroup hierarchy is the same for all
 * rows. The first run of each workload (under EEVDF) is a discarded
 * warm-up that also sizes perf's loop counts to about SECONDS each.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-lib.h"

#define MAX_ROUNDS 64
#define WB_CGROUP "/sys/fs/cgroup/wb1/wb2/wb3"

enum wk_id { WK_MESSAGING, WK_PIPE, WK_SWITCH, WK_CPU, N_WK };

struct workload {
	const char *name;
	const char *unit;
	unsigned long loops;	/* perf: sized by the warm-up */
};

static struct workload wks[N_WK] = {
	[WK_MESSAGING] = { "perf-messaging", "msgs/s", 3 },
	[WK_PIPE] = { "perf-pipe", "ops/s", 200 },
	[WK_SWITCH] = { "stress-switch", "bogo-ops/s" },
	[WK_CPU] = { "stress-cpu", "bogo-ops/s" },
};

struct row {
	const char *name;
	struct bl_stack stack;
	double v[N_WK][MAX_ROUNDS];	/* figure per round; -1: failed */
	char why[560];		/* why it cannot run at all */
	char last_why[512];	/* why it last failed */
	unsigned int fails;	/* 3 failed starts or runs: given up */
};

static struct row rows[] = {
	{ .name = "eevdf" },
	{ .name = "fifo", .stack = { .levels = { { "fifo" } }, .n_levels = 1 } },
	{ .name = "vtime", .stack = { .levels = { { "vtime" } }, .n_levels = 1 } },
	{ .name = "lat", .stack = { .levels = { { "lat" } }, .n_levels = 1 } },
	{ .name = "pin", .stack = { .levels = { { "pin" } }, .n_levels = 1 } },
	{ .name = "wparent", .stack = { .levels = { { "wparent" } }, .n_levels = 1 } },
	{ .name = "scx_simple", .stack = { .peer = "scx_simple" } },
	{ .name = "scx_flatcg", .stack = { .peer = "scx_flatcg" } },
	{ .name = "wparent>fifo", .stack = { .n_levels = 2,
	  .levels = { { "wparent" }, { "fifo", WB_CGROUP } } } },
	{ .name = "wparent>wparent>wparent>fifo", .stack = { .n_levels = 4,
	  .levels = { { "wparent" }, { "wparent", "/sys/fs/cgroup/wb1" },
		      { "wparent", "/sys/fs/cgroup/wb1/wb2" }, { "fifo", WB_CGROUP } } } },
	{ .name = "eevdf (end of round)" },
};
#define N_ROWS (sizeof(rows) / sizeof(rows[0]))

static char perf_bin[PATH_MAX] = "/payload/tools/perf";
static char stress_bin[PATH_MAX] = "/payload/tools/stress-ng";
static double duration = 2.0;
static unsigned int ncpus;

/* the number after the last occurrence of @key in @out, or -1 */
static double number_after(const char *out, const char *key)
{
	const char *p = NULL, *q = out;

	while ((q = strstr(q, key))) {
		p = q;
		q += strlen(key);
	}
	return p ? strtod(p + strlen(key), NULL) : -1;
}

/* the number before @key on its line ("  417972 ops/sec"), or -1 */
static double number_before(const char *out, const char *key)
{
	const char *p = strstr(out, key), *s;

	if (!p)
		return -1;
	s = p;
	while (s > out && s[-1] != '\n')
		s--;
	return strtod(s, NULL);
}

static double run_perf(enum wk_id w, double *wall)
{
	char loops[32], out[8192];
	char *argv[] = { perf_bin, "bench", "sched",
			 w == WK_MESSAGING ? "messaging" : "pipe",
			 w == WK_MESSAGING ? "-g" : "-l",
			 w == WK_MESSAGING ? "1" : loops,
			 w == WK_MESSAGING ? "-l" : NULL, loops, NULL };
	double t;
	int r;

	snprintf(loops, sizeof(loops), "%lu", wks[w].loops);
	r = bl_run_cmd(argv, WB_CGROUP, 20 * duration + 30, out, sizeof(out), wall);
	if (r != 0) {
		fprintf(stderr, "bench-workloads: %s exited %d: %.300s\n", wks[w].name, r, out);
		return -1;
	}
	if (w == WK_PIPE)
		return number_before(out, "ops/sec");
	/* messaging: 1 group of 20 senders each writing loops messages to
	 * each of 20 receivers */
	t = number_after(out, "Total time:");
	return t > 0 ? 20.0 * 20 * wks[w].loops / t : -1;
}

static double run_stress(enum wk_id w, double *wall)
{
	char n[16], t[16], out[8192], yaml[8192];
	const char *path = "/tmp/bench-stress.yaml";
	char *argv[] = { stress_bin, w == WK_SWITCH ? "--switch" : "--cpu", n,
			 "--cpu-method", "int64", "-t", t, "--metrics-brief",
			 "--yaml", (char *)path, "--temp-path", "/tmp", NULL };
	FILE *f;
	size_t len;
	int r;

	if (w == WK_SWITCH)	/* --cpu-method is the CPU stressor's */
		memmove(&argv[3], &argv[5], sizeof(argv[0]) * 8);
	/* switch: pairs of processes, one per CPU as for the CPU stressor */
	snprintf(n, sizeof(n), "%u", ncpus);
	snprintf(t, sizeof(t), "%.0fs", duration < 1 ? 1 : round(duration));
	unlink(path);
	r = bl_run_cmd(argv, WB_CGROUP, duration + 60, out, sizeof(out), wall);
	if (r != 0) {
		fprintf(stderr, "bench-workloads: %s exited %d: %.300s\n", wks[w].name, r, out);
		return -1;
	}
	f = fopen(path, "re");
	if (!f)
		return -1;
	len = fread(yaml, 1, sizeof(yaml) - 1, f);
	yaml[len] = '\0';
	fclose(f);
	return number_after(yaml, "bogo-ops-per-second-real-time:");
}

static double run_workload(enum wk_id w, double *wall)
{
	return w == WK_MESSAGING || w == WK_PIPE ? run_perf(w, wall) : run_stress(w, wall);
}

/* Start the row's schedulers, run every workload once into round @k. */
static void run_row(const struct bl_dirs *d, struct row *row, unsigned int k)
{
	struct bl_running run;
	unsigned int order[N_WK] = { 0, 1, 2, 3 }, i;
	double wall;

	for (i = 0; i < N_WK; i++)
		row->v[i][k] = -1;
	if (row->why[0])
		return;
	if (bl_stack_start(d, &row->stack, &run, row->last_why, sizeof(row->last_why)) < 0) {
		/* under load a start can time out: try again next round */
		fprintf(stderr, "bench-workloads: %s: %s\n", row->name, row->last_why);
		if (++row->fails == 3)
			snprintf(row->why, sizeof(row->why), "3 failures, last: %s",
				 row->last_why);
		return;
	}
	bl_shuffle(order, N_WK);
	for (i = 0; i < N_WK; i++) {
		row->v[order[i]][k] = run_workload(order[i], &wall);
		printf("  %s %s=%.0f\n", row->name, wks[order[i]].name, row->v[order[i]][k]);
		fflush(stdout);
	}
	if (!bl_stack_alive(&run)) {
		/* its runs this round do not count; it is tried again next round */
		snprintf(row->last_why, sizeof(row->last_why),
			 "scheduler left during a run (see the console)");
		if (++row->fails == 3)
			snprintf(row->why, sizeof(row->why), "3 failures, last: %s",
				 row->last_why);
		for (i = 0; i < N_WK; i++)
			row->v[i][k] = -1;
	}
	bl_stack_stop(&run);
}

/* Size perf's loops so one run takes about @duration under EEVDF. */
static void warm_up(void)
{
	unsigned int w;
	double wall;

	for (w = 0; w < N_WK; w++) {
		double v = run_workload(w, &wall);

		if ((w == WK_MESSAGING || w == WK_PIPE) && v > 0 && wall > 0.05) {
			double scale = duration / wall;

			if (scale > 50)
				scale = 50;
			wks[w].loops = (unsigned long)(wks[w].loops * scale) ?: 1;
		}
		printf("warm-up: %s=%.0f in %.2f s%s\n", wks[w].name, v, wall,
		       w <= WK_PIPE ? "" : " (time-bounded)");
	}
	printf("warm-up: loops messaging=%lu pipe=%lu\n", wks[WK_MESSAGING].loops,
	       wks[WK_PIPE].loops);
}

/* EEVDF against itself: each round's end-of-round figure over its start */
static double self_halfwidth(unsigned int rounds, struct bl_stat *st)
{
	const struct row *a = &rows[0], *b = &rows[N_ROWS - 1];
	double r[MAX_ROUNDS], worst = 0;
	unsigned int w, k;

	for (w = 0; w < N_WK; w++) {
		for (k = 0; k < rounds; k++)
			r[k] = a->v[w][k] > 0 && b->v[w][k] > 0 ? b->v[w][k] / a->v[w][k] : -1;
		if (!bl_stat(r, rounds, &st[w]))
			return INFINITY;
		if (bl_halfwidth(&st[w]) > worst)
			worst = bl_halfwidth(&st[w]);
	}
	return worst;
}

static void note_failures(void)
{
	unsigned int i;

	for (i = 0; i < N_ROWS; i++)
		if (rows[i].fails)
			bl_note("%s: %u failed round(s), last: %s", rows[i].name, rows[i].fails,
				rows[i].last_why);
}

static void report(unsigned int rounds)
{
	struct bl_stat self[N_WK];
	unsigned int i, w, k;

	self_halfwidth(rounds, self);
	for (w = 0; w < N_WK; w++)
		bl_emit("workloads", "eevdf vs itself", wks[w].name, &self[w], "x");
	for (i = 1; i < N_ROWS - 1; i++) {
		const struct row *row = &rows[i];

		for (w = 0; w < N_WK; w++) {
			double r[MAX_ROUNDS];
			struct bl_stat s;

			for (k = 0; k < rounds; k++) {
				double a = rows[0].v[w][k], b = rows[N_ROWS - 1].v[w][k];

				r[k] = row->v[w][k] > 0 && a > 0 && b > 0 ?
					row->v[w][k] / ((a + b) / 2) : -1;
			}
			if (bl_stat(r, rounds, &s))
				bl_emit("workloads", row->name, wks[w].name, &s, "x eevdf");
			else
				bl_emit_na("workloads", row->name, wks[w].name,
					   row->why[0] ? row->why :
					   row->last_why[0] ? row->last_why : "no successful run");
		}
	}
	/* absolute figures, for the README */
	for (i = 0; i < N_ROWS; i++) {
		for (w = 0; w < N_WK; w++) {
			struct bl_stat s;

			if (bl_stat(rows[i].v[w], rounds, &s))
				bl_emit("workloads-abs", rows[i].name, wks[w].name, &s, wks[w].unit);
		}
	}
}

int main(int argc, char **argv)
{
	struct bl_rounds rr = { .min = 5, .max = MAX_ROUNDS, .target = 0.03, .budget_s = 1500 };
	struct bl_dirs d;
	double round_s = 0;
	unsigned int k, i;
	int c;

	bl_dirs_default(&d);
	while ((c = getopt(argc, argv, "P:S:d:B:m:M:T:")) != -1) {
		switch (c) {
		case 'P': snprintf(perf_bin, sizeof(perf_bin), "%s", optarg); break;
		case 'S': snprintf(stress_bin, sizeof(stress_bin), "%s", optarg); break;
		default:
			if (bl_rounds_option(&rr, &duration, c, optarg))
				break;
			fprintf(stderr, "usage: bench-workloads [-P PERF] [-S STRESS_NG] [-d S] [-B BUDGET_S] [-m MIN] [-M MAX] [-T TARGET]\n");
			return 2;
		}
	}
	if (duration <= 0 || rr.min < 2 || rr.max > MAX_ROUNDS || rr.min > rr.max) {
		fprintf(stderr, "bench-workloads: positive duration, 2 <= min <= max <= %d\n",
			MAX_ROUNDS);
		return 2;
	}
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (bl_cgroup_make("/sys/fs/cgroup/wb1", 0) < 0 ||
	    bl_cgroup_make("/sys/fs/cgroup/wb1/wb2", 0) < 0 || bl_cgroup_make(WB_CGROUP, 0) < 0) {
		fprintf(stderr, "bench-workloads: cannot make %s: %m\n", WB_CGROUP);
		return 1;
	}
	for (i = 0; i < N_ROWS; i++)
		if (!bl_stack_available(&d, &rows[i].stack, rows[i].why, sizeof(rows[i].why)))
			fprintf(stderr, "bench-workloads: %s: %s\n", rows[i].name, rows[i].why);

	printf("bench-workloads: %u vCPUs, workloads in %s, %.1f s each, budget %.0f s\n",
	       ncpus, WB_CGROUP, duration, rr.budget_s);
	warm_up();
	rr.start = bl_now();
	bl_seed(1);
	for (k = 0; k < MAX_ROUNDS; k++) {
		unsigned int order[N_ROWS];
		struct bl_stat self[N_WK];
		double t0 = bl_now(), hw;

		if (!bl_rounds_more(&rr, k, self_halfwidth(k, self), round_s))
			break;
		for (i = 0; i < N_ROWS - 2; i++)
			order[i] = i + 1;
		bl_shuffle(order, N_ROWS - 2);
		printf("round %u:\n", k + 1);
		run_row(&d, &rows[0], k);
		for (i = 0; i < N_ROWS - 2; i++)
			run_row(&d, &rows[order[i]], k);
		run_row(&d, &rows[N_ROWS - 1], k);
		round_s = bl_now() - t0;
		hw = self_halfwidth(k + 1, self);
		printf("round %u: %.0f s; eevdf vs itself +-%.1f%%\n", k + 1, round_s,
		       isfinite(hw) ? 100 * hw : -1.0);
		fflush(stdout);
	}
	{
		struct bl_stat self[N_WK];
		double hw = self_halfwidth(k, self);

		bl_note("%u rounds (%s) in %.0f s; EEVDF against itself within +-%.1f%% (target +-%.0f%%)",
			k, rr.why_stopped ? rr.why_stopped : "?", bl_now() - rr.start,
			100 * hw, 100 * rr.target);
		bl_note("perf messaging: 1 group (40 tasks), %lu loops; perf pipe: %lu loops; stress-ng: %u workers, %.0f s",
			wks[WK_MESSAGING].loops, wks[WK_PIPE].loops, ncpus,
			duration < 1 ? 1 : round(duration));
	}
	note_failures();
	report(k);
	return 0;
}
