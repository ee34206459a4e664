/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sched-bench: throughput of one workload under EEVDF, under each scxd
 * scheduler as root, under in-tree peers, and under wparent with the
 * workload in a child two and four schedulers deep, measured side by
 * side in one guest.
 *
 * Runs inside a QEMU guest only (it loads BPF schedulers).
 *
 *   sched-bench [-b BINDIR] [-o OBJDIR] [-p PEERDIR] [-r ROUNDS] [-d SECONDS]
 *               [-D 0|3] [-g WORKLOAD-SPEC]...
 *
 * One TCG run is noisy (EEVDF against itself: +-4.5% over 2 s), so rows
 * are interleaved: every round runs every row once, in the same order,
 * between an EEVDF run at its start and one at its end, and each row's
 * ratio is taken to the mean of those two. We print the
 * median ratio over rounds and its spread (min..max). Every row runs the
 * workload in the same cgroup, three levels deep (or, with -D 0, in the
 * root cgroup, without the nested rows), so the hierarchy cost is the
 * same for all; the nested rows are also given as a ratio to
 * the wparent root-only row. A scheduler counts as running once
 * /sys/kernel/sched_ext/state says "enabled" (root) or its
 * sub-<cgroup id> directory exists under /sys/kernel/sched_ext (child).
 *
 * Default workload: 8 pipe ping-pong pairs (16 tasks, 4 vCPUs).
 * Output: a table, then one "bench row=... " line per row.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sched-proc.h"
#include "workload.h"

#define MAX_ROUNDS 64
#define MAX_GROUPS 16
#define MAX_LEVELS 4
#define SB_ROOT "/sys/fs/cgroup/sb1"
#define SB_CGROUP SB_ROOT "/sb2/sb3"

/* where every row's workload runs: SB_CGROUP, or the root cgroup (-D 0) */
static const char *workload_cgroup = SB_CGROUP;

/* One scheduler of a row: what to run and on which cgroup (NULL: root). */
struct level {
	const char *obj;	/* scxd scheduler name, run by sched-run */
	const char *cgroup;
};

struct row {
	const char *name;
	const char *peer;	/* in-tree scheduler binary in PEERDIR */
	struct level levels[MAX_LEVELS];
	unsigned int n_levels;
	bool nested;
	double ops[MAX_ROUNDS];	/* ops/s per round; < 0: failed */
	char why[512];		/* why it could not run */
};

struct config {
	char bindir[PATH_MAX];
	char objdir[PATH_MAX];
	char peerdir[PATH_MAX];
	unsigned int rounds;
	double duration;
	struct wl_group groups[MAX_GROUPS];
	unsigned int n_groups;
};

static struct row rows[] = {
	{ .name = "eevdf" },
	{ .name = "fifo", .levels = { { "fifo" } }, .n_levels = 1 },
	{ .name = "vtime", .levels = { { "vtime" } }, .n_levels = 1 },
	{ .name = "lat", .levels = { { "lat" } }, .n_levels = 1 },
	{ .name = "wparent", .levels = { { "wparent" } }, .n_levels = 1 },
	{ .name = "scx_simple", .peer = "scx_simple" },
	{ .name = "scx_flatcg", .peer = "scx_flatcg" },
	{ .name = "wparent>fifo (depth 2)", .nested = true, .n_levels = 2,
	  .levels = { { "wparent" }, { "fifo", SB_CGROUP } } },
	{ .name = "wparent>wparent>wparent>fifo (depth 4)", .nested = true, .n_levels = 4,
	  .levels = { { "wparent" }, { "wparent", SB_ROOT },
		      { "wparent", SB_ROOT "/sb2" }, { "fifo", SB_CGROUP } } },
	{ .name = "eevdf (end of round)" },
};
#define N_ROWS (sizeof(rows) / sizeof(rows[0]))
#define ROOT_ONLY_ROW 4		/* wparent as root */
#define EEVDF_END_ROW (N_ROWS - 1)

/*
 * Each round's reference: the mean of its first and last EEVDF runs, so
 * that host load drifting during a round moves the reference with it.
 * The two EEVDF rows' own ratios to it show the noise floor.
 */
static struct row reference = { .name = "eevdf (mean of both)" };

static int make_hierarchy(void)
{
	const char *dirs[] = { SB_ROOT, SB_ROOT "/sb2", SB_CGROUP };
	char f[PATH_MAX];
	unsigned int i;

	write_str("/sys/fs/cgroup/cgroup.subtree_control", "+cpu");
	for (i = 0; i < 3; i++) {
		if (mkdir(dirs[i], 0755) < 0 && errno != EEXIST)
			return -errno;
		if (i < 2) {
			snprintf(f, sizeof(f), "%s/cgroup.subtree_control", dirs[i]);
			write_str(f, "+cpu");
		}
	}
	return 0;
}

static void stop_all(struct sched_proc *procs, unsigned int n)
{
	char why[1600];

	/* children first, as scxd does */
	while (n--)
		if (sched_proc_stop(&procs[n], why, sizeof(why)) < 0)
			fprintf(stderr, "sched-bench: %s\n", why);
}

/* Start the row's schedulers, run the workload once; ops/s or -1. */
static double run_row(const struct config *cfg, struct row *row)
{
	struct sched_proc procs[MAX_LEVELS] = { 0 };
	unsigned int started = 0, i;
	struct wl_result res;
	double ops = -1;
	char why[1600];

	if (row->nested && !workload_cgroup) {
		snprintf(row->why, sizeof(row->why), "needs the workload in %s (-D 3)", SB_CGROUP);
		return -1;
	}
	if (row->peer) {
		char bin[PATH_MAX + 64];
		char *argv[] = { bin, NULL };

		snprintf(bin, sizeof(bin), "%s/%s", cfg->peerdir, row->peer);
		if (access(bin, X_OK) < 0) {
			snprintf(row->why, sizeof(row->why), "%s not built", bin);
			return -1;
		}
		if (sched_proc_start(&procs[0], argv, row->peer, NULL, why, sizeof(why)) < 0) {
			snprintf(row->why, sizeof(row->why), "%s", why);
			return -1;
		}
		started = 1;
	}
	for (i = 0; i < row->n_levels; i++) {
		const struct level *l = &row->levels[i];
		char run[PATH_MAX + 16], obj[PATH_MAX + 64], label[64], want[64];
		char *argv[] = { run, obj, NULL, NULL, NULL };
		int r;

		snprintf(run, sizeof(run), "%s/sched-run", cfg->bindir);
		snprintf(obj, sizeof(obj), "%s/%s.bpf.o", cfg->objdir, l->obj);
		snprintf(label, sizeof(label), "%s.%u", l->obj, i);
		snprintf(want, sizeof(want), "scxd_%s", l->obj);
		if (!l->cgroup) {
			r = sched_proc_start(&procs[i], argv, label, want, why, sizeof(why));
		} else {
			argv[1] = "-c";
			argv[2] = (char *)l->cgroup;
			argv[3] = obj;
			r = sched_proc_start_child(&procs[i], argv, l->cgroup, label, why,
						   sizeof(why));
			if (r == 0 && !scx_wait_sub_sched(l->cgroup, 20000)) {
				snprintf(why, sizeof(why), "%s: no sub-<cgid> directory for %s after 20 s",
					 label, l->cgroup);
				r = -ETIMEDOUT;
				started++;
			}
		}
		if (r < 0) {
			snprintf(row->why, sizeof(row->why), "%s", why);
			stop_all(procs, started);
			return -1;
		}
		started++;
	}

	if (wl_run(cfg->groups, cfg->n_groups, cfg->duration, &res) == 0) {
		uint64_t total = 0;

		for (i = 0; i < cfg->n_groups; i++)
			total += wl_group_ops(&res, i);
		ops = total / res.wall_s;
		wl_result_free(&res);
	}
	if (started && !scx_state_is("enabled")) {
		snprintf(row->why, sizeof(row->why), "scheduler left during the run");
		ops = -1;
	}
	stop_all(procs, started);
	return ops;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median, min and max of @row's per-round ratio to row @ref. */
static bool ratios(const struct config *cfg, const struct row *row, const struct row *ref,
		   double *med, double *lo, double *hi, double *med_ops)
{
	double r[MAX_ROUNDS], o[MAX_ROUNDS];
	unsigned int i, n = 0;

	for (i = 0; i < cfg->rounds; i++) {
		if (row->ops[i] < 0 || ref->ops[i] <= 0)
			continue;
		o[n] = row->ops[i];
		r[n++] = row->ops[i] / ref->ops[i];
	}
	if (!n)
		return false;
	qsort(r, n, sizeof(r[0]), cmp_double);
	qsort(o, n, sizeof(o[0]), cmp_double);
	*med = n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
	*med_ops = n % 2 ? o[n / 2] : (o[n / 2 - 1] + o[n / 2]) / 2;
	*lo = r[0];
	*hi = r[n - 1];
	return true;
}

static void report(const struct config *cfg)
{
	unsigned int i;

	printf("\n%-40s %12s %9s %15s %12s\n", "row", "ops/s(med)", "vs eevdf",
	       "spread", "vs root-only");
	for (i = 0; i < N_ROWS; i++) {
		const struct row *row = &rows[i];
		double med, lo, hi, mops, rmed, rlo, rhi, rmops;

		if (!ratios(cfg, row, &reference, &med, &lo, &hi, &mops)) {
			printf("%-40s %12s   n/a: %s\n", row->name, "-", row->why);
			printf("bench row=\"%s\" status=n/a why=\"%s\"\n", row->name, row->why);
			continue;
		}
		if (row->nested && ratios(cfg, row, &rows[ROOT_ONLY_ROW], &rmed, &rlo, &rhi, &rmops))
			printf("%-40s %12.0f %8.2fx %6.2f..%-6.2f %11.2fx\n", row->name, mops,
			       med, lo, hi, rmed);
		else
			printf("%-40s %12.0f %8.2fx %6.2f..%-6.2f %12s\n", row->name, mops,
			       med, lo, hi, "");
		printf("bench row=\"%s\" status=ok median_ops_per_s=%.0f vs_eevdf=%.3f min=%.3f max=%.3f",
		       row->name, mops, med, lo, hi);
		if (row->nested && ratios(cfg, row, &rows[ROOT_ONLY_ROW], &rmed, &rlo, &rhi, &rmops))
			printf(" vs_root_only=%.3f", rmed);
		printf("\n");
	}
}

int main(int argc, char **argv)
{
	struct config cfg = { .rounds = 10, .duration = 2.0 };
	unsigned int i, k;
	int c;

	snprintf(cfg.bindir, sizeof(cfg.bindir), "/payload/bin");
	snprintf(cfg.objdir, sizeof(cfg.objdir), "/payload/schedulers");
	snprintf(cfg.peerdir, sizeof(cfg.peerdir), "/payload/peers");
	while ((c = getopt(argc, argv, "b:o:p:r:d:g:D:")) != -1) {
		switch (c) {
		case 'D':
			if (!strcmp(optarg, "0"))
				workload_cgroup = NULL;
			else if (strcmp(optarg, "3"))
				return fprintf(stderr, "sched-bench: -D is 0 or 3\n"), 2;
			break;
		case 'b': snprintf(cfg.bindir, sizeof(cfg.bindir), "%s", optarg); break;
		case 'o': snprintf(cfg.objdir, sizeof(cfg.objdir), "%s", optarg); break;
		case 'p': snprintf(cfg.peerdir, sizeof(cfg.peerdir), "%s", optarg); break;
		case 'r': cfg.rounds = atoi(optarg); break;
		case 'd': cfg.duration = atof(optarg); break;
		case 'g':
			if (cfg.n_groups == MAX_GROUPS ||
			    wl_group_parse(optarg, &cfg.groups[cfg.n_groups]) < 0) {
				fprintf(stderr, "sched-bench: bad workload spec %s\n", optarg);
				return 2;
			}
			cfg.n_groups++;
			break;
		default:
			fprintf(stderr, "usage: sched-bench [-b BINDIR] [-o OBJDIR] [-p PEERDIR] [-r ROUNDS] [-d SECONDS] [-g SPEC]...\n");
			return 2;
		}
	}
	if (cfg.rounds < 1 || cfg.rounds > MAX_ROUNDS || cfg.duration <= 0) {
		fprintf(stderr, "sched-bench: rounds 1..%d and a positive duration\n", MAX_ROUNDS);
		return 2;
	}
	if (!cfg.n_groups) {
		cfg.groups[0] = (struct wl_group){ .kind = WL_PINGPONG, .n = 8, .cpu = -1 };
		cfg.n_groups = 1;
	}
	if (make_hierarchy() < 0) {
		fprintf(stderr, "sched-bench: cannot create %s: %m\n", SB_CGROUP);
		return 1;
	}
	for (i = 0; i < cfg.n_groups; i++)
		cfg.groups[i].cgroup = workload_cgroup;

	printf("sched-bench: %u rounds x %.1f s, workload in %s:", cfg.rounds, cfg.duration,
	       workload_cgroup ?: "the root cgroup");
	for (i = 0; i < cfg.n_groups; i++)
		printf(" %s x%u", wl_kind_name(cfg.groups[i].kind), cfg.groups[i].n);
	printf("\n");
	fflush(stdout);

	/* the first run after boot is slow (cold caches, first faults): discard it */
	printf("warm-up: eevdf=%.0f\n", run_row(&cfg, &rows[0]));
	for (k = 0; k < cfg.rounds; k++) {
		printf("round %u:", k + 1);
		for (i = 0; i < N_ROWS; i++) {
			struct row *row = &rows[i];

			/* a row that could not start once will not start later */
			if (row->why[0]) {
				row->ops[k] = -1;
				continue;
			}
			row->ops[k] = run_row(&cfg, row);
			printf(" %s=%.0f", row->name, row->ops[k]);
			fflush(stdout);
		}
		printf("\n");
		reference.ops[k] = rows[0].ops[k] > 0 && rows[EEVDF_END_ROW].ops[k] > 0 ?
			(rows[0].ops[k] + rows[EEVDF_END_ROW].ops[k]) / 2 : -1;
	}
	report(&cfg);
	return 0;
}
