/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench-hierarchy: two CPU-bound workloads at 2:1 cpu.weight, four cgroup
 * levels deep, under scx_flatcg, under wparent at every level the kernel
 * allows, and under wparent above cells; the share each gets and the
 * throughput of both, against scx_flatcg in the same round.
 *
 * Runs inside a QEMU guest only (tests/bench/hierarchy boots it).
 *
 *   bench-hierarchy [-d SECONDS] [-B BUDGET_S] [-m MIN] [-M MAX] [-T TARGET]
 *
 * The cgroups:  /hb/l2/l3/a (cpu.weight 200)  and  /hb/l2/l3/b (100),
 * each running one spinner per vCPU, so both are saturated and a fair
 * hierarchy gives a 2/3 and b 1/3 of the machine.
 *
 * Rows (one round runs each once, EEVDF first and last, the rest in an
 * order shuffled per round):
 *   eevdf         the kernel's fair class with the cpu controller
 *   scx_flatcg    the in-tree flattened-hierarchy scheduler, as root
 *   wparent       wparent as root, on hb and on l3, with wparent leaves
 *                 on a and b: SCX_SUB_MAX_DEPTH (4 levels counting the
 *                 root) leaves no room for a scheduler on l2 as well
 *   wparent>cells wparent as root and on hb, cells on l3, wparent leaves
 *                 on a and b (when cells.bpf.o was built)
 *
 * Share error of a run: the larger of |achieved - target| / target over
 * a and b (b's, since b's target is the smaller), where achieved is the
 * share of the CPU time the guest gave a and b: what the scheduler
 * decided. The share of the loops done also counts the time the host
 * took a vCPU away, which no guest scheduler sees, and is given beside
 * it. Throughput: spinner
 * loops per second of a and b together. Both as ratios to scx_flatcg's
 * run in the same round, median and bootstrap 95% interval over rounds;
 * the share errors are also given as such.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-lib.h"
#include "workload.h"

#define MAX_ROUNDS 64
#define CG "/sys/fs/cgroup/hb"
#define CG_L3 CG "/l2/l3"
#define CG_A CG_L3 "/a"
#define CG_B CG_L3 "/b"
#define WEIGHT_A 200
#define WEIGHT_B 100

struct row {
	const char *name;
	struct bl_stack stack;
	double err[MAX_ROUNDS];		/* share error; -1: failed */
	double share_a[MAX_ROUNDS];	/* of the CPU time a and b got */
	double ops_share_a[MAX_ROUNDS];	/* of the loops a and b did */
	double tput[MAX_ROUNDS];	/* loops/s of a and b */
	char why[560];		/* why it cannot run at all */
	char last_why[512];	/* why it last failed */
	unsigned int fails;	/* 3 failed starts or runs: given up */
};

static struct row rows[] = {
	{ .name = "eevdf" },
	{ .name = "scx_flatcg", .stack = { .peer = "scx_flatcg" } },
	{ .name = "wparent (root, hb, l3; leaves a, b)", .stack = { .n_levels = 5,
	  .levels = { { "wparent" }, { "wparent", CG }, { "wparent", CG_L3 },
		      { "wparent", CG_A }, { "wparent", CG_B } } } },
	{ .name = "wparent>cells (root, hb; cells on l3; leaves a, b)", .stack = { .n_levels = 5,
	  .levels = { { "wparent" }, { "wparent", CG }, { "cells", CG_L3 },
		      { "wparent", CG_A }, { "wparent", CG_B } } } },
	{ .name = "eevdf (end of round)" },
};
#define N_ROWS (sizeof(rows) / sizeof(rows[0]))
#define FLATCG 1

static double duration = 3.0;
static unsigned int ncpus;

static void run_row(const struct bl_dirs *d, struct row *row, unsigned int k)
{
	struct wl_group g[2] = {
		{ .kind = WL_SPIN, .n = ncpus, .cpu = -1, .cgroup = CG_A, .name = "a" },
		{ .kind = WL_SPIN, .n = ncpus, .cpu = -1, .cgroup = CG_B, .name = "b" },
	};
	struct bl_running run;
	struct wl_result res;
	double a, b, ca, cb, ta = (double)WEIGHT_A / (WEIGHT_A + WEIGHT_B);

	row->err[k] = row->share_a[k] = row->ops_share_a[k] = row->tput[k] = -1;
	if (row->why[0])
		return;
	if (bl_stack_start(d, &row->stack, &run, row->last_why, sizeof(row->last_why)) < 0) {
		/* under load a start can time out: try again next round */
		fprintf(stderr, "bench-hierarchy: %s: %s\n", row->name, row->last_why);
		if (++row->fails == 3)
			snprintf(row->why, sizeof(row->why), "3 failures, last: %s",
				 row->last_why);
		return;
	}
	if (wl_run(g, 2, duration, &res) == 0) {
		a = wl_group_ops(&res, 0);
		b = wl_group_ops(&res, 1);
		ca = wl_group_cpu_ns(&res, 0);
		cb = wl_group_cpu_ns(&res, 1);
		if (a + b > 0 && ca + cb > 0) {
			row->share_a[k] = ca / (ca + cb);
			row->ops_share_a[k] = a / (a + b);
			/* b's relative error, the larger of the two */
			row->err[k] = fabs(row->share_a[k] - ta) / (1 - ta);
			row->tput[k] = (a + b) / res.wall_s;
		}
		wl_result_free(&res);
	}
	if (!bl_stack_alive(&run)) {
		/* its runs this round do not count; it is tried again next round */
		snprintf(row->last_why, sizeof(row->last_why),
			 "scheduler left during a run (see the console)");
		if (++row->fails == 3)
			snprintf(row->why, sizeof(row->why), "3 failures, last: %s",
				 row->last_why);
		row->err[k] = row->share_a[k] = row->ops_share_a[k] = row->tput[k] = -1;
	}
	bl_stack_stop(&run);
	printf("  %s: share error %.1f%%, %.0f loops/s\n", row->name, 100 * row->err[k],
	       row->tput[k]);
	fflush(stdout);
}

static double ratio_stat(const double *x, const double *ref, unsigned int rounds,
			 struct bl_stat *s)
{
	double r[MAX_ROUNDS];
	unsigned int k;

	for (k = 0; k < rounds; k++)
		r[k] = x[k] >= 0 && ref[k] > 0 ? x[k] / ref[k] : -1;
	return bl_stat(r, rounds, s) ? bl_halfwidth(s) : INFINITY;
}

static double self_halfwidth(unsigned int rounds)
{
	struct bl_stat s;

	return ratio_stat(rows[N_ROWS - 1].tput, rows[0].tput, rounds, &s);
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
	const struct row *fc = &rows[FLATCG];
	unsigned int i;

	for (i = 0; i < N_ROWS; i++) {
		const struct row *row = &rows[i];
		struct bl_stat s;
		double pct[MAX_ROUNDS];
		unsigned int k;

		for (k = 0; k < rounds; k++)
			pct[k] = row->err[k] >= 0 ? 100 * row->err[k] : -1;
		if (!bl_stat(pct, rounds, &s)) {
			const char *why = row->why[0] ? row->why :
					   row->last_why[0] ? row->last_why : "no successful run";

			bl_emit_na("hierarchy", row->name, "share error %", why);
			bl_emit_na("hierarchy", row->name, "share error / flatcg's", why);
			bl_emit_na("hierarchy", row->name, "throughput / flatcg's", why);
			continue;
		}
		bl_emit("hierarchy", row->name, "share error %", &s, "%");
		for (k = 0; k < rounds; k++)
			pct[k] = row->share_a[k] >= 0 ? 100 * row->share_a[k] : -1;
		if (bl_stat(pct, rounds, &s))
			bl_emit("hierarchy-abs", row->name, "a's CPU-time share % (target 66.7)", &s, "%");
		for (k = 0; k < rounds; k++)
			pct[k] = row->ops_share_a[k] >= 0 ? 100 * row->ops_share_a[k] : -1;
		if (bl_stat(pct, rounds, &s))
			bl_emit("hierarchy-abs", row->name, "a's share % of the loops", &s, "%");
		if (bl_stat(row->tput, rounds, &s))
			bl_emit("hierarchy-abs", row->name, "throughput", &s, "loops/s");
		if (i == FLATCG)
			continue;
		if (isfinite(ratio_stat(row->err, fc->err, rounds, &s)))
			bl_emit("hierarchy", row->name, "share error / flatcg's", &s, "x");
		else
			bl_emit_na("hierarchy", row->name, "share error / flatcg's",
				   "scx_flatcg did not run");
		if (isfinite(ratio_stat(row->tput, fc->tput, rounds, &s)))
			bl_emit("hierarchy", row->name, "throughput / flatcg's", &s, "x");
		else
			bl_emit_na("hierarchy", row->name, "throughput / flatcg's",
				   "scx_flatcg did not run");
	}
}

static int make_cgroups(void)
{
	const char *dirs[] = { CG, CG "/l2", CG_L3 };
	unsigned int i;
	int r;

	for (i = 0; i < 3; i++) {
		r = bl_cgroup_make(dirs[i], 0);
		if (r < 0)
			return r;
	}
	r = bl_cgroup_make(CG_A, WEIGHT_A);
	return r < 0 ? r : bl_cgroup_make(CG_B, WEIGHT_B);
}

int main(int argc, char **argv)
{
	struct bl_rounds rr = { .min = 5, .max = MAX_ROUNDS, .target = 0.03, .budget_s = 900 };
	struct bl_dirs d;
	double round_s = 0;
	unsigned int k, i;
	int c;

	bl_dirs_default(&d);
	while ((c = getopt(argc, argv, "d:B:m:M:T:")) != -1) {
		switch (c) {
		default:
			if (bl_rounds_option(&rr, &duration, c, optarg))
				break;
			fprintf(stderr, "usage: bench-hierarchy [-d S] [-B BUDGET_S] [-m MIN] [-M MAX] [-T TARGET]\n");
			return 2;
		}
	}
	if (duration <= 0 || rr.min < 2 || rr.max > MAX_ROUNDS || rr.min > rr.max) {
		fprintf(stderr, "bench-hierarchy: positive duration, 2 <= min <= max <= %d\n",
			MAX_ROUNDS);
		return 2;
	}
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (make_cgroups() < 0) {
		fprintf(stderr, "bench-hierarchy: cannot make %s and %s: %m\n", CG_A, CG_B);
		return 1;
	}
	for (i = 0; i < N_ROWS; i++)
		if (!bl_stack_available(&d, &rows[i].stack, rows[i].why, sizeof(rows[i].why)))
			fprintf(stderr, "bench-hierarchy: %s: %s\n", rows[i].name, rows[i].why);

	printf("bench-hierarchy: %u vCPUs; %u spinners in %s (cpu.weight %d) and %u in %s (%d); %.1f s per run\n",
	       ncpus, ncpus, CG_A, WEIGHT_A, ncpus, CG_B, WEIGHT_B, duration);
	/* warm-up, discarded */
	run_row(&d, &rows[0], 0);
	printf("  (that was the warm-up)\n");
	rr.start = bl_now();
	bl_seed(2);
	for (k = 0; k < MAX_ROUNDS; k++) {
		unsigned int order[N_ROWS];
		double t0 = bl_now(), hw;

		if (!bl_rounds_more(&rr, k, self_halfwidth(k), round_s))
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
		hw = self_halfwidth(k + 1);
		printf("round %u: %.0f s; eevdf throughput vs itself +-%.1f%%\n", k + 1, round_s,
		       isfinite(hw) ? 100 * hw : -1.0);
		fflush(stdout);
	}
	bl_note("%u rounds (%s) in %.0f s; EEVDF throughput against itself within +-%.1f%% (target +-%.0f%%)",
		k, rr.why_stopped ? rr.why_stopped : "?", bl_now() - rr.start,
		100 * self_halfwidth(k), 100 * rr.target);
	bl_note("%u spinners each in a (cpu.weight %d) and b (%d), %.1f s per run; share error = |achieved - target| / target of b's share of CPU time",
		ncpus, WEIGHT_A, WEIGHT_B, duration);
	note_failures();
	report(k);
	return 0;
}
