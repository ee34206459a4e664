/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cells-share: how exactly two sibling cgroups get CPU by cpu.weight, and
 * at what throughput, under cells, wparent and the in-tree scx_flatcg,
 * measured side by side in one guest.
 *
 * Runs inside a QEMU guest only (it loads BPF schedulers).
 *
 *   cells-share [-b BINDIR] [-o OBJDIR] [-p PEERDIR] [-r ROUNDS] [-d SECONDS]
 *               [-n SPINNERS]
 *
 * The hierarchy is the same for every row: /sys/fs/cgroup/cs/a and
 * /sys/fs/cgroup/cs/b, each running @n CPU-bound spinners (default 4 each,
 * 8 on 4 vCPUs, so both stay saturated), at cpu.weight 100:100 and then
 * 200:100. Rows:
 *  - eevdf: no sched_ext (the kernel's own cgroup weights);
 *  - scx_flatcg: the in-tree flattened cgroup hierarchy scheduler as root;
 *  - wparent: wparent as root, a and b each a fifo child of it;
 *  - cells: cells as root, a and b each a fifo child of it.
 * Per row and round: the share error (largest |got/expected - 1| of a and
 * b, expected = weight share of the CPU time the two got between them)
 * and the throughput (spinner loops per second of both). Every round runs
 * every row once, in the same order, so host load drifting under TCG
 * moves all rows of a round alike; we print each row's median over rounds
 * and, for throughput, the median of its per-round ratio to scx_flatcg.
 * Output: a table, then one "bench row=..." line per row and weighting.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sched-proc.h"
#include "workload.h"

#define MAX_ROUNDS 32
#define CS_TOP "/sys/fs/cgroup/cs"
#define CS_A CS_TOP "/a"
#define CS_B CS_TOP "/b"

struct config {
	char bindir[PATH_MAX];
	char objdir[PATH_MAX];
	char peerdir[PATH_MAX];
	unsigned int rounds;
	double duration;
	unsigned int spinners;
};

struct row {
	const char *name;
	const char *peer;	/* in-tree binary in PEERDIR */
	const char *parent;	/* scxd parent as root, a and b its fifo children */
	double err[2][MAX_ROUNDS];	/* per weighting; < 0: failed */
	double ops[2][MAX_ROUNDS];
	char why[512];
};

static struct row rows[] = {
	{ .name = "eevdf" },
	{ .name = "scx_flatcg", .peer = "scx_flatcg" },
	{ .name = "wparent", .parent = "wparent" },
	{ .name = "cells", .parent = "cells" },
};
#define N_ROWS (sizeof(rows) / sizeof(rows[0]))
#define FLATCG_ROW 1

static const unsigned int weights[2][2] = { { 100, 100 }, { 200, 100 } };
static const char *const weighting[2] = { "1:1", "2:1" };

static int set_weights(unsigned int w)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", weights[w][0]);
	if (write_str(CS_A "/cpu.weight", v) < 0)
		return -EIO;
	snprintf(v, sizeof(v), "%u", weights[w][1]);
	return write_str(CS_B "/cpu.weight", v) < 0 ? -EIO : 0;
}

static int make_hierarchy(void)
{
	const char *dirs[] = { CS_TOP, CS_A, CS_B };
	unsigned int i;

	write_str("/sys/fs/cgroup/cgroup.subtree_control", "+cpu");
	for (i = 0; i < 3; i++)
		if (mkdir(dirs[i], 0755) < 0 && errno != EEXIST)
			return -errno;
	return write_str(CS_TOP "/cgroup.subtree_control", "+cpu") < 0 ? -EIO : 0;
}

static void stop_all(struct sched_proc *procs, unsigned int n)
{
	char why[1600];

	while (n--)
		if (sched_proc_stop(&procs[n], why, sizeof(why)) < 0)
			fprintf(stderr, "cells-share: %s\n", why);
}

static int start_child(const struct config *cfg, const char *cgroup, struct sched_proc *sp,
		       char *why, size_t len)
{
	char run[PATH_MAX + 16], obj[PATH_MAX + 64];
	char *argv[] = { run, "-c", (char *)cgroup, obj, NULL };

	snprintf(run, sizeof(run), "%s/sched-run", cfg->bindir);
	snprintf(obj, sizeof(obj), "%s/fifo.bpf.o", cfg->objdir);
	if (sched_proc_start_child(sp, argv, cgroup, "fifo", why, len) < 0)
		return -EIO;
	if (!scx_wait_sub_sched(cgroup, 20000)) {
		snprintf(why, len, "fifo on %s: no sub-<cgid> directory after 20 s", cgroup);
		return -ETIMEDOUT;
	}
	return 0;
}

/* Start the row's schedulers; how many were started, or -1. */
static int start_row(const struct config *cfg, struct row *row, struct sched_proc *procs)
{
	char run[PATH_MAX + 16], obj[PATH_MAX + 64], bin[PATH_MAX + 64], want[64], why[1600];
	char *argv[] = { run, obj, NULL };
	char *peer_argv[] = { bin, NULL };
	int n = 0;

	if (row->peer) {
		snprintf(bin, sizeof(bin), "%s/%s", cfg->peerdir, row->peer);
		if (access(bin, X_OK) < 0) {
			snprintf(row->why, sizeof(row->why), "%s not built", bin);
			return -1;
		}
		if (sched_proc_start(&procs[0], peer_argv, row->peer, NULL, why, sizeof(why)) < 0) {
			snprintf(row->why, sizeof(row->why), "%s", why);
			return -1;
		}
		return 1;
	}
	if (!row->parent)
		return 0;
	snprintf(run, sizeof(run), "%s/sched-run", cfg->bindir);
	snprintf(obj, sizeof(obj), "%s/%s.bpf.o", cfg->objdir, row->parent);
	snprintf(want, sizeof(want), "scxd_%s", row->parent);
	if (sched_proc_start(&procs[n], argv, row->parent, want, why, sizeof(why)) < 0)
		goto fail;
	n++;
	if (start_child(cfg, CS_A, &procs[n], why, sizeof(why)) < 0)
		goto fail;
	n++;
	if (start_child(cfg, CS_B, &procs[n], why, sizeof(why)) < 0)
		goto fail;
	n++;
	sleep_ms(300);		/* cells lays its CPUs out again after an attach */
	return n;
fail:
	snprintf(row->why, sizeof(row->why), "%s", why);
	stop_all(procs, n);
	return -1;
}

/* One run of @row at weighting @w into round @k. */
static void run_row(const struct config *cfg, struct row *row, unsigned int w, unsigned int k)
{
	struct wl_group groups[2] = {
		{ .kind = WL_SPIN, .n = cfg->spinners, .cpu = -1, .cgroup = CS_A },
		{ .kind = WL_SPIN, .n = cfg->spinners, .cpu = -1, .cgroup = CS_B },
	};
	struct sched_proc procs[3] = { 0 };
	double a, b, ea, eb, wa, wb;
	struct wl_result res;
	int n;

	row->err[w][k] = row->ops[w][k] = -1;
	if (set_weights(w) < 0) {
		snprintf(row->why, sizeof(row->why), "cannot set cpu.weight");
		return;
	}
	n = start_row(cfg, row, procs);
	if (n < 0)
		return;
	if (wl_run(groups, 2, cfg->duration, &res) == 0) {
		a = wl_group_cpu_ns(&res, 0);
		b = wl_group_cpu_ns(&res, 1);
		wa = weights[w][0];
		wb = weights[w][1];
		if (a + b > 0) {
			ea = fabs(a / (a + b) / (wa / (wa + wb)) - 1);
			eb = fabs(b / (a + b) / (wb / (wa + wb)) - 1);
			row->err[w][k] = ea > eb ? ea : eb;
			row->ops[w][k] = (wl_group_ops(&res, 0) + wl_group_ops(&res, 1)) / res.wall_s;
		}
		wl_result_free(&res);
	}
	if (n && !scx_state_is("enabled")) {
		snprintf(row->why, sizeof(row->why), "scheduler left during the run");
		row->err[w][k] = row->ops[w][k] = -1;
	}
	stop_all(procs, n);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

static double median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(v[0]), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void report(const struct config *cfg)
{
	unsigned int i, w, k;

	printf("\n%-12s %-5s %10s %10s %12s %10s\n", "row", "w", "err(med)", "err(max)",
	       "ops/s(med)", "vs flatcg");
	for (w = 0; w < 2; w++) {
		for (i = 0; i < N_ROWS; i++) {
			struct row *row = &rows[i], *ref = &rows[FLATCG_ROW];
			double e[MAX_ROUNDS], o[MAX_ROUNDS], r[MAX_ROUNDS], emax = 0;
			unsigned int n = 0, nr = 0;

			for (k = 0; k < cfg->rounds; k++) {
				if (row->err[w][k] < 0)
					continue;
				e[n] = row->err[w][k];
				emax = e[n] > emax ? e[n] : emax;
				o[n++] = row->ops[w][k];
				if (ref->ops[w][k] > 0)
					r[nr++] = row->ops[w][k] / ref->ops[w][k];
			}
			if (!n) {
				printf("%-12s %-5s n/a: %s\n", row->name, weighting[w], row->why);
				printf("bench row=\"%s\" weights=%s status=n/a why=\"%s\"\n",
				       row->name, weighting[w], row->why);
				continue;
			}
			printf("%-12s %-5s %9.1f%% %9.1f%% %12.0f", row->name, weighting[w],
			       100 * median(e, n), 100 * emax, median(o, n));
			if (nr)
				printf(" %9.2fx\n", median(r, nr));
			else
				printf(" %10s\n", "n/a");
			printf("bench row=\"%s\" weights=%s status=ok share_err_median=%.4f share_err_max=%.4f median_ops_per_s=%.0f",
			       row->name, weighting[w], median(e, n), emax, median(o, n));
			if (nr)
				printf(" ops_vs_flatcg=%.3f", median(r, nr));
			printf("\n");
		}
	}
}

int main(int argc, char **argv)
{
	struct config cfg = { .rounds = 3, .duration = 4.0, .spinners = 4 };
	unsigned int i, w, k;
	int c;

	snprintf(cfg.bindir, sizeof(cfg.bindir), "/payload/bin");
	snprintf(cfg.objdir, sizeof(cfg.objdir), "/payload/schedulers");
	snprintf(cfg.peerdir, sizeof(cfg.peerdir), "/payload/peers");
	while ((c = getopt(argc, argv, "b:o:p:r:d:n:")) != -1) {
		switch (c) {
		case 'b': snprintf(cfg.bindir, sizeof(cfg.bindir), "%s", optarg); break;
		case 'o': snprintf(cfg.objdir, sizeof(cfg.objdir), "%s", optarg); break;
		case 'p': snprintf(cfg.peerdir, sizeof(cfg.peerdir), "%s", optarg); break;
		case 'r': cfg.rounds = atoi(optarg); break;
		case 'd': cfg.duration = atof(optarg); break;
		case 'n': cfg.spinners = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: cells-share [-b BINDIR] [-o OBJDIR] [-p PEERDIR] [-r ROUNDS] [-d SECONDS] [-n SPINNERS]\n");
			return 2;
		}
	}
	if (cfg.rounds < 1 || cfg.rounds > MAX_ROUNDS || cfg.duration <= 0 ||
	    cfg.spinners < 1 || 2 * cfg.spinners > WL_MAX_TASKS) {
		fprintf(stderr, "cells-share: rounds 1..%d, a positive duration and spinners\n",
			MAX_ROUNDS);
		return 2;
	}
	if (make_hierarchy() < 0) {
		fprintf(stderr, "cells-share: cannot create %s: %m\n", CS_TOP);
		return 1;
	}
	printf("cells-share: %u rounds x %.1f s, %u spinners in each of %s and %s\n",
	       cfg.rounds, cfg.duration, cfg.spinners, CS_A, CS_B);
	fflush(stdout);

	for (k = 0; k < cfg.rounds; k++) {
		for (w = 0; w < 2; w++) {
			printf("round %u, %s:", k + 1, weighting[w]);
			for (i = 0; i < N_ROWS; i++) {
				struct row *row = &rows[i];

				/* a row that could not start once will not start later */
				if (row->why[0]) {
					row->err[w][k] = row->ops[w][k] = -1;
					continue;
				}
				run_row(&cfg, row, w, k);
				printf(" %s=%.1f%%/%.0f", row->name, 100 * row->err[w][k],
				       row->ops[w][k]);
				fflush(stdout);
			}
			printf("\n");
		}
	}
	report(&cfg);
	return 0;
}
