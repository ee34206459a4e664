/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench-idle: how often an idle machine wakes up, so that a kernel with the
 * sub-scheduler series can be compared with the pristine one: work the
 * series does periodically (rescue, watchdog, caps) would show here even
 * while no sub-scheduler is attached.
 *
 * Guest side (tests/bench/idle boots it, once per kernel and round):
 *
 *   bench-idle -k KERNEL -r ROUND [-d SECONDS]
 *
 * measures each row for SECONDS of an otherwise idle guest and prints
 *
 *   IDLE<TAB>kernel<TAB>round<TAB>row<TAB>wakeups/s<TAB>LOC/s<TAB>RES/s<TAB>CAL/s<TAB>ctxt/s
 *
 * where a wake-up is an interrupt that can end a CPU's idle: local timer
 * interrupts (LOC), rescheduling IPIs (RES) and function call IPIs (CAL),
 * summed over the CPUs; ctxt is /proc/stat's context switches. The rows
 * are EEVDF (no BPF scheduler) and the kernel tree's scx_simple as the
 * root, alone: the series' root-only case. Their order alternates with
 * the round.
 *
 * Host side, plain userspace:
 *
 *   bench-idle --report [-b BASE] FILE
 *
 * reads the IDLE lines of FILE, pairs each round's row on every kernel
 * with the same round's row on BASE (default "pristine"), and prints
 * BENCH-ROW lines: the median over rounds of those ratios with its
 * bootstrap interval (tests/bench/bench-lib.sh makes the table).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-lib.h"

#define MAX_ROUNDS	64
#define MAX_KERNELS	4

enum { C_WAKE, C_LOC, C_RES, C_CAL, C_CTXT, NR_C };
static const char *const c_names[NR_C] = { "wake-ups", "LOC", "RES", "CAL", "ctxt" };

struct row {
	const char *name;
	struct bl_stack stack;
};

static const struct row rows[] = {
	{ "EEVDF", { 0 } },
	{ "scx_simple as root", { .peer = "scx_simple" } },
};
#define NR_ROWS (sizeof(rows) / sizeof(rows[0]))

/* ---- guest side --------------------------------------------------------- */

/* Sum of the per-CPU columns of /proc/interrupts' line @tag ("LOC:"). */
static double irq_sum(const char *tag)
{
	char line[4096], *p, *end;
	double sum = 0;
	FILE *f = fopen("/proc/interrupts", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (strncmp(p, tag, strlen(tag)))
			continue;
		for (p += strlen(tag);; p = end) {
			double v = strtod(p, &end);

			if (end == p)
				break;
			sum += v;
		}
		break;
	}
	fclose(f);
	return sum;
}

static double ctxt_count(void)
{
	char line[256];
	double v = -1;
	FILE *f = fopen("/proc/stat", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "ctxt %lf", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void counters(double c[NR_C])
{
	c[C_LOC] = irq_sum("LOC:");
	c[C_RES] = irq_sum("RES:");
	c[C_CAL] = irq_sum("CAL:");
	c[C_WAKE] = c[C_LOC] + c[C_RES] + c[C_CAL];
	c[C_CTXT] = ctxt_count();
}

static int measure(const char *kernel, unsigned int round, const struct row *row,
		   const struct bl_dirs *d, double duration)
{
	struct bl_running run = { 0 };
	double c0[NR_C], c1[NR_C], t0, dt;
	char why[1600];
	unsigned int i;

	if (bl_stack_start(d, &row->stack, &run, why, sizeof(why)) < 0) {
		fprintf(stderr, "bench-idle: %s: %s\n", row->name, why);
		return -1;
	}
	sleep_ms(2000);		/* the attach's own work settles */
	counters(c0);
	t0 = bl_now();
	sleep_ms(duration * 1000);
	counters(c1);
	dt = bl_now() - t0;
	if (row->stack.peer && !bl_stack_alive(&run)) {
		fprintf(stderr, "bench-idle: %s ended during the measurement\n", row->name);
		bl_stack_stop(&run);
		return -1;
	}
	bl_stack_stop(&run);
	printf("IDLE\t%s\t%u\t%s", kernel, round, row->name);
	for (i = 0; i < NR_C; i++)
		printf("\t%.2f", c0[i] < 0 || c1[i] < 0 ? -1.0 : (c1[i] - c0[i]) / dt);
	printf("\n");
	fflush(stdout);
	return 0;
}

static int guest_main(const char *kernel, unsigned int round, double duration)
{
	struct bl_dirs d;
	unsigned int i;

	bl_dirs_default(&d);
	printf("BENCH-KERNEL\t%s\n", kernel);
	for (i = 0; i < NR_ROWS; i++) {
		const struct row *row = &rows[round % 2 ? NR_ROWS - 1 - i : i];
		char why[256];

		if (!bl_stack_available(&d, &row->stack, why, sizeof(why))) {
			fprintf(stderr, "bench-idle: %s: %s\n", row->name, why);
			continue;
		}
		measure(kernel, round, row, &d, duration);
	}
	return 0;
}

/* ---- host side: the report ----------------------------------------------- */

struct sample {
	char kernel[32];
	unsigned int round, row;
	double v[NR_C];
};

static struct sample samples[MAX_ROUNDS * MAX_KERNELS * NR_ROWS];
static unsigned int n_samples;

static int row_index(const char *name)
{
	unsigned int i;

	for (i = 0; i < NR_ROWS; i++)
		if (!strcmp(rows[i].name, name))
			return i;
	return -1;
}

static int read_samples(const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "re");

	if (!f)
		return fprintf(stderr, "bench-idle: %s: %m\n", path), -errno;
	while (fgets(line, sizeof(line), f) && n_samples < sizeof(samples) / sizeof(samples[0])) {
		struct sample *s = &samples[n_samples];
		char row[64];
		int r;

		if (sscanf(line, "IDLE\t%31[^\t]\t%u\t%63[^\t]\t%lf\t%lf\t%lf\t%lf\t%lf", s->kernel,
			   &s->round, row, &s->v[0], &s->v[1], &s->v[2], &s->v[3], &s->v[4]) != 3 + NR_C)
			continue;
		r = row_index(row);
		if (r < 0 || s->round >= MAX_ROUNDS)
			continue;
		s->row = r;
		n_samples++;
	}
	fclose(f);
	return 0;
}

static const struct sample *find(const char *kernel, unsigned int round, unsigned int row)
{
	unsigned int i;

	for (i = 0; i < n_samples; i++)
		if (samples[i].round == round && samples[i].row == row &&
		    !strcmp(samples[i].kernel, kernel))
			return &samples[i];
	return NULL;
}

/* Ratios to @base for each row of @kernel, and the absolute figures. */
static void report_kernel(const char *kernel, const char *base)
{
	bool is_base = !strcmp(kernel, base);
	unsigned int row, c, k;

	for (row = 0; row < NR_ROWS; row++) {
		char rname[96];

		snprintf(rname, sizeof(rname), "%s: %s", kernel, rows[row].name);
		for (c = 0; c < NR_C; c++) {
			double ratio[MAX_ROUNDS], abs_v[MAX_ROUNDS];
			unsigned int n = 0, na = 0;
			struct bl_stat s;
			char col[64];

			for (k = 0; k < MAX_ROUNDS; k++) {
				const struct sample *a = find(kernel, k, row), *b = find(base, k, row);

				if (a)
					abs_v[na++] = a->v[c];
				if (a && b)
					ratio[n++] = a->v[c] >= 0 && b->v[c] > 0 ? a->v[c] / b->v[c] : -1;
			}
			snprintf(col, sizeof(col), "%s/s / %s's", c_names[c], base);
			if (is_base)
				;
			else if (n && bl_stat(ratio, n, &s))
				bl_emit("idle", rname, col, &s, "x");
			else if (c == C_WAKE)
				bl_emit_na("idle", rname, col, "no round with both kernels");
			snprintf(col, sizeof(col), "%s per s", c_names[c]);
			if (na && bl_stat(abs_v, na, &s))
				bl_emit("idle-abs", rname, col, &s, "1/s");
		}
	}
}

static int report_main(const char *path, const char *base)
{
	const char *kernels[MAX_KERNELS];
	unsigned int nk = 0, i, j;
	int r;

	r = read_samples(path);
	if (r < 0)
		return 1;
	for (i = 0; i < n_samples; i++) {
		for (j = 0; j < nk && strcmp(kernels[j], samples[i].kernel); j++)
			;
		if (j == nk && nk < MAX_KERNELS)
			kernels[nk++] = samples[i].kernel;
	}
	for (j = 0; j < nk; j++)
		if (strcmp(kernels[j], base))
			report_kernel(kernels[j], base);
	for (j = 0; j < nk; j++)
		if (!strcmp(kernels[j], base))
			report_kernel(kernels[j], base);
	bl_note("%u samples; wake-ups = LOC + RES + CAL interrupts summed over the vCPUs, per second of guest time",
		n_samples);
	return 0;
}

int main(int argc, char **argv)
{
	const char *kernel = NULL, *base = "pristine";
	unsigned int round = 0;
	double duration = 20;
	bool report = false;
	int c;

	if (argc > 1 && !strcmp(argv[1], "--report")) {
		report = true;
		argv++;
		argc--;
	}
	while ((c = getopt(argc, argv, "k:r:d:b:")) != -1) {
		switch (c) {
		case 'k': kernel = optarg; break;
		case 'r': round = strtoul(optarg, NULL, 10); break;
		case 'd': duration = strtod(optarg, NULL); break;
		case 'b': base = optarg; break;
		default: goto usage;
		}
	}
	if (report && optind == argc - 1)
		return report_main(argv[optind], base);
	if (!report && kernel && optind == argc && duration > 0 && round < MAX_ROUNDS)
		return guest_main(kernel, round, duration);
usage:
	fprintf(stderr, "usage: bench-idle -k KERNEL -r ROUND [-d SECONDS]\n"
			"       bench-idle --report [-b BASE] FILE\n");
	return 2;
}
