/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bench-isolation: what users adopt sub-schedulers for, keeping one
 * cgroup's wake-up latency while a neighbour cgroup saturates the machine.
 *
 * Runs inside a QEMU guest only (tests/bench/isolation boots it).
 *
 *   bench-isolation [-d SECONDS] [-B BUDGET_S] [-m MIN] [-M MAX] [-T TARGET]
 *                   [-t PROBE_THREADS] [-i INTERVAL_US] [-n PER_CPU] [-S]
 *
 * The cgroups: /sys/fs/cgroup/iso/lat (cpu.weight 100) runs the probe, a
 * cyclictest-like wake-up latency meter: @t threads each sleeping to an
 * absolute deadline every @i microseconds (clock_nanosleep, CLOCK_MONOTONIC,
 * TIMER_ABSTIME) and recording how late it woke; deadlines that passed
 * while it waited are skipped, not sampled, as cyclictest does. /sys/fs/cgroup/iso/
 * noisy (cpu.weight 100) runs the noisy neighbour, in two kinds, each
 * with every row in every round: @n CPU-bound spinners per vCPU that never
 * sleep (no CPU is ever idle: a waking task must preempt or wait for a
 * slice to end), and @n pipe ping-pong pairs per vCPU, hackbench's
 * pattern (CPUs go idle and are woken all the time). Its throughput is
 * loops, or round trips, per second.
 *
 * Rows (one round runs each once per neighbour: quiet and EEVDF first,
 * EEVDF again last, the rest in an order shuffled per round):
 *   quiet          EEVDF, the probe alone, then the neighbour alone
 *   eevdf          the kernel's fair class with the cpu controller
 *   scx_flatcg     the in-tree flattened-hierarchy scheduler as root
 *   wparent        wparent as root, lat on iso/lat, fifo on iso/noisy
 *   wparent-main   the same with wparent-main.bpf.o and lat-main.bpf.o, when
 *                  given (builds of both before a change, for figures
 *                  before and after)
 *   cells          cells as root, lat on iso/lat, fifo on iso/noisy
 *
 * Each run gives the probe's p50, p99 and largest wake-up latency and the
 * spinners' loops per second; each is divided by the same figure of the
 * round's EEVDF (the mean of its two runs) and of the round's quiet run,
 * and the table gives the median over rounds with a bootstrap 95%
 * interval.
 *
 * The same pairs' shares (unless -S): every row but quiet runs once per
 * round with iso/lat at cpu.weight 200 and iso/noisy at 100, both
 * saturated (@n spinners per vCPU each, no probe); the share error is the
 * larger |got/expected - 1| of the two, expected being the weight's share
 * of the CPU time the two got between them (as tests/bench/cells-share). Every run's raw figures are printed as BENCH-RAW lines, which
 * tests/bench/isolation keeps under tests/bench/results/.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-lib.h"
#include "workload.h"

#define MAX_ROUNDS 64
#define CG "/sys/fs/cgroup/iso"
#define CG_LAT CG "/lat"
#define CG_NOISY CG "/noisy"
#define MAX_SAMPLES (1 << 20)
#define MAX_PROBE_THREADS 16

enum { P50, P99, PMAX, TPUT, N_FIG };
static const char *const fig_name[N_FIG] = { "p50", "p99", "max", "neighbour throughput" };
static const char *const fig_unit[N_FIG] = { "us", "us", "us", "loops/s" };

enum { NB_SPIN, NB_PINGPONG, N_NB };
static const char *const nb_name[N_NB] = { "spinners", "ping-pong" };

struct row {
	const char *name;
	struct bl_stack stack;
	double fig[N_NB][N_FIG][MAX_ROUNDS];	/* -1: failed */
	double share_err[MAX_ROUNDS];		/* %, -1: failed or not run */
	char why[560];
	char last_why[512];
	unsigned int fails;
};

static struct row rows[] = {
	{ .name = "quiet" },
	{ .name = "eevdf" },
	{ .name = "scx_flatcg", .stack = { .peer = "scx_flatcg" } },
	{ .name = "wparent (lat, fifo)", .stack = { .n_levels = 3,
	  .levels = { { "wparent" }, { "lat", CG_LAT }, { "fifo", CG_NOISY } } } },
	/* wparent and lat as they were, from SCXD_BENCH_EXTRA_OBJS=".../wparent-main.bpf.o .../lat-main.bpf.o" */
	{ .name = "wparent-main (lat-main, fifo)", .stack = { .n_levels = 3,
	  .levels = { { "wparent-main" }, { "lat-main", CG_LAT }, { "fifo", CG_NOISY } } } },
	{ .name = "cells (lat, fifo)", .stack = { .n_levels = 3,
	  .levels = { { "cells" }, { "lat", CG_LAT }, { "fifo", CG_NOISY } } } },
	{ .name = "eevdf (end of round)" },
};
#define N_ROWS (sizeof(rows) / sizeof(rows[0]))
#define QUIET 0
#define EEVDF 1

static double duration = 3.0;
static bool shares = true;
static unsigned int ncpus, probe_threads = 2, interval_us = 1000, spin_per_cpu = 1;

/* The probe's samples, shared with the forked probe process. */
struct probe_shm {
	unsigned long n;
	uint32_t lat_ns[MAX_SAMPLES];	/* saturates at ~4.3 s */
};
static struct probe_shm *shm;

struct probe_arg {
	double end;
};

static void ts_add_us(struct timespec *t, unsigned int us)
{
	t->tv_nsec += us * 1000L;
	while (t->tv_nsec >= 1000000000L) {
		t->tv_nsec -= 1000000000L;
		t->tv_sec++;
	}
}

static int64_t ts_diff_ns(const struct timespec *a, const struct timespec *b)
{
	return (a->tv_sec - b->tv_sec) * 1000000000LL + a->tv_nsec - b->tv_nsec;
}

static void *probe_thread(void *arg)
{
	const struct probe_arg *pa = arg;
	struct timespec next, now;
	unsigned long i;
	int64_t late;

	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		ts_add_us(&next, interval_us);
		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL))
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		late = ts_diff_ns(&now, &next);
		i = __atomic_fetch_add(&shm->n, 1, __ATOMIC_RELAXED);
		if (i < MAX_SAMPLES)
			shm->lat_ns[i] = late > UINT32_MAX ? UINT32_MAX : late < 0 ? 0 : late;
		if (now.tv_sec + now.tv_nsec / 1e9 >= pa->end)
			return NULL;
		/* as cyclictest: deadlines that passed meanwhile are skipped, not sampled */
		while (late >= (int64_t)interval_us * 1000) {
			ts_add_us(&next, interval_us);
			late -= interval_us * 1000L;
		}
	}
}

static int write_pid(const char *cgroup, pid_t pid)
{
	char f[256], v[32];
	FILE *fp;
	int ok;

	snprintf(f, sizeof(f), "%s/cgroup.procs", cgroup);
	snprintf(v, sizeof(v), "%d", (int)pid);
	fp = fopen(f, "w");
	if (!fp)
		return -errno;
	ok = fputs(v, fp) >= 0;
	ok = (fclose(fp) == 0) && ok;
	return ok ? 0 : -EIO;
}

/* Fork the probe into CG_LAT for @secs seconds; its pid, or -errno. */
static pid_t probe_start(double secs)
{
	pid_t pid;

	shm->n = 0;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		pthread_t th[MAX_PROBE_THREADS];
		struct probe_arg pa = { .end = bl_now() + secs };
		unsigned int i;

		if (write_pid(CG_LAT, getpid()) < 0)
			_exit(3);
		for (i = 0; i < probe_threads; i++)
			if (pthread_create(&th[i], NULL, probe_thread, &pa))
				_exit(4);
		for (i = 0; i < probe_threads; i++)
			pthread_join(th[i], NULL);
		_exit(0);
	}
	return pid;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Wait for the probe; its p50, p99 and max in microseconds. */
static int probe_finish(pid_t pid, double *p50, double *p99, double *pmax)
{
	unsigned long n;
	int status;

	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	n = shm->n < MAX_SAMPLES ? shm->n : MAX_SAMPLES;
	if (n < 10)
		return -1;
	qsort(shm->lat_ns, n, sizeof(shm->lat_ns[0]), cmp_u32);
	*p50 = shm->lat_ns[n / 2] / 1e3;
	*p99 = shm->lat_ns[(n * 99) / 100] / 1e3;
	*pmax = shm->lat_ns[n - 1] / 1e3;
	return 0;
}

static int neighbour(unsigned int nb, double secs, double *tput)
{
	struct wl_group g = { .kind = nb == NB_SPIN ? WL_SPIN : WL_PINGPONG,
			      .n = spin_per_cpu * ncpus, .cpu = -1,
			      .cgroup = CG_NOISY, .name = "noisy" };
	struct wl_result res;

	if (wl_run(&g, 1, secs, &res))
		return -1;
	*tput = wl_group_ops(&res, 0) / res.wall_s;
	wl_result_free(&res);
	return 0;
}

/* @what: why it failed; NULL when row->last_why says so already */
static void row_failed(struct row *row, const char *what)
{
	if (what)
		snprintf(row->last_why, sizeof(row->last_why), "%s", what);
	if (++row->fails == 3)
		snprintf(row->why, sizeof(row->why), "3 failures, last: %s", row->last_why);
}

/*
 * The counters each loader printed once its scheduler was detached
 * (sched-run's "stat" lines, see the schedulers' stat_* globals), as
 * BENCH-STAT lines beside the round's figures.
 */
static void print_stats(const struct row *row, unsigned int nb, unsigned int round)
{
	char log[PATH_MAX], line[1024];
	unsigned int i;
	FILE *f;

	for (i = 0; i < row->stack.n_levels; i++) {
		snprintf(log, sizeof(log), "/tmp/loader.%s.%u.log", row->stack.levels[i].obj, i);
		f = fopen(log, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			const char *at = strstr(line, ": stat ");

			if (at)
				printf("BENCH-STAT\t%u\t%s\t%s\t%s\t%s", round, nb_name[nb], row->name,
				       row->stack.levels[i].obj, at + 7);
		}
		fclose(f);
	}
}

static void run_row(const struct bl_dirs *d, struct row *row, unsigned int nb,
		    unsigned int round, unsigned int k)
{
	double *f[N_FIG];
	struct bl_running run;
	unsigned int j;
	pid_t pid;
	int ok;

	for (j = 0; j < N_FIG; j++) {
		f[j] = &row->fig[nb][j][k];
		*f[j] = -1;
	}
	if (row->why[0])
		return;
	if (row == &rows[QUIET]) {
		pid = probe_start(duration);
		ok = pid > 0 && probe_finish(pid, f[P50], f[P99], f[PMAX]) == 0;
		ok = neighbour(nb, duration, f[TPUT]) == 0 && ok;
		if (!ok) {
			row_failed(row, "probe or spinners failed");
			for (j = 0; j < N_FIG; j++)
				*f[j] = -1;
		}
		goto out;
	}
	if (bl_stack_start(d, &row->stack, &run, row->last_why, sizeof(row->last_why)) < 0) {
		fprintf(stderr, "bench-isolation: %s: %s\n", row->name, row->last_why);
		row_failed(row, NULL);
		return;
	}
	pid = probe_start(duration);
	ok = neighbour(nb, duration, f[TPUT]) == 0;
	ok = pid > 0 && probe_finish(pid, f[P50], f[P99], f[PMAX]) == 0 && ok;
	if (!ok || !bl_stack_alive(&run)) {
		row_failed(row, ok ? "scheduler left during a run (see the console)"
				   : "probe or spinners failed");
		for (j = 0; j < N_FIG; j++)
			*f[j] = -1;
	}
	bl_stack_stop(&run);
	print_stats(row, nb, round);
out:
	printf("BENCH-RAW\t%u\t%s\t%s\t%.1f\t%.1f\t%.1f\t%.0f\n", round, nb_name[nb],
	       row->name, *f[P50], *f[P99], *f[PMAX], *f[TPUT]);
	printf("  %s, %s: wake-up latency p50 %.1f us, p99 %.1f us, max %.1f us; neighbour %.0f loops/s\n",
	       nb_name[nb], row->name, *f[P50], *f[P99], *f[PMAX], *f[TPUT]);
	fflush(stdout);
}

static int set_weights(unsigned int lat, unsigned int noisy)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", lat);
	if (write_str(CG_LAT "/cpu.weight", v) < 0)
		return -EIO;
	snprintf(v, sizeof(v), "%u", noisy);
	return write_str(CG_NOISY "/cpu.weight", v) < 0 ? -EIO : 0;
}

/* One share run of @row (lat 200, noisy 100, both saturated) into round @k. */
static void run_share(const struct bl_dirs *d, struct row *row, unsigned int round,
		      unsigned int k)
{
	struct wl_group g[2] = {
		{ .kind = WL_SPIN, .n = spin_per_cpu * ncpus, .cpu = -1, .cgroup = CG_LAT,
		  .name = "lat" },
		{ .kind = WL_SPIN, .n = spin_per_cpu * ncpus, .cpu = -1, .cgroup = CG_NOISY,
		  .name = "noisy" },
	};
	struct bl_running run;
	struct wl_result res;
	double a, b;

	row->share_err[k] = -1;
	if (row->why[0])
		return;
	/* before the stack: parents read cpu.weight when a child attaches */
	if (set_weights(200, 100) < 0) {
		row_failed(row, "cannot set cpu.weight");
		return;
	}
	if (bl_stack_start(d, &row->stack, &run, row->last_why, sizeof(row->last_why)) < 0) {
		fprintf(stderr, "bench-isolation: %s: %s\n", row->name, row->last_why);
		row_failed(row, NULL);
		set_weights(100, 100);
		return;
	}
	if (wl_run(g, 2, duration, &res) == 0) {
		a = wl_group_cpu_ns(&res, 0);
		b = wl_group_cpu_ns(&res, 1);
		if (a + b > 0)
			row->share_err[k] = 100 * fmax(fabs(a / (a + b) / (2.0 / 3) - 1),
						       fabs(b / (a + b) / (1.0 / 3) - 1));
		wl_result_free(&res);
	}
	if (!bl_stack_alive(&run)) {
		row_failed(row, "scheduler left during a share run (see the console)");
		row->share_err[k] = -1;
	}
	bl_stack_stop(&run);
	set_weights(100, 100);
	printf("BENCH-SHARE\t%u\t%s\t%.2f\n", round, row->name, row->share_err[k]);
	printf("  shares 2:1, %s: error %.1f%%\n", row->name, row->share_err[k]);
	fflush(stdout);
}

/* @x over @ref per round, or over the mean of @ref and @ref2 when given. */
static bool ratio_stat(const double *x, const double *ref, const double *ref2,
		       unsigned int rounds, struct bl_stat *s)
{
	double r[MAX_ROUNDS], q;
	unsigned int k;

	for (k = 0; k < rounds; k++) {
		q = ref[k];
		if (ref2)
			q = ref[k] > 0 && ref2[k] > 0 ? (ref[k] + ref2[k]) / 2 : -1;
		r[k] = x[k] >= 0 && q > 0 ? x[k] / q : -1;
	}
	return bl_stat(r, rounds, s);
}

static double self_halfwidth(unsigned int rounds)
{
	struct bl_stat s;
	double worst = 0;
	unsigned int j, nb;

	for (nb = 0; nb < N_NB; nb++)
		for (j = 0; j < N_FIG; j++) {
			if (!ratio_stat(rows[N_ROWS - 1].fig[nb][j], rows[EEVDF].fig[nb][j], NULL,
					rounds, &s))
				return INFINITY;
			if (bl_halfwidth(&s) > worst)
				worst = bl_halfwidth(&s);
		}
	return worst;
}

static void report(unsigned int rounds)
{
	const struct row *ev = &rows[EEVDF], *ev2 = &rows[N_ROWS - 1], *q = &rows[QUIET];
	unsigned int i, j, nb;
	char col[96], name[160];

	for (nb = 0; nb < N_NB; nb++)
		for (i = 0; i < N_ROWS; i++) {
			const struct row *row = &rows[i];
			const char *why = row->why[0] ? row->why :
					  row->last_why[0] ? row->last_why : "no successful run";
			struct bl_stat s;

			snprintf(name, sizeof(name), "%s, %s", nb_name[nb], row->name);
			for (j = 0; j < N_FIG; j++) {
				snprintf(col, sizeof(col), "%s", fig_name[j]);
				if (bl_stat(row->fig[nb][j], rounds, &s))
					bl_emit("isolation-abs", name, col, &s, fig_unit[j]);
				else
					bl_emit_na("isolation-abs", name, col, why);
				if (i != QUIET) {
					snprintf(col, sizeof(col), "%s / quiet", fig_name[j]);
					if (ratio_stat(row->fig[nb][j], q->fig[nb][j], NULL, rounds, &s))
						bl_emit("isolation", name, col, &s, "x");
					else
						bl_emit_na("isolation", name, col, why);
				}
				if (i == QUIET)
					continue;
				snprintf(col, sizeof(col), "%s / eevdf", fig_name[j]);
				if (ratio_stat(row->fig[nb][j], ev->fig[nb][j], ev2->fig[nb][j], rounds, &s))
					bl_emit("isolation", name, col, &s, "x");
				else
					bl_emit_na("isolation", name, col, why);
			}
		}
	for (i = 0; shares && i < N_ROWS; i++) {
		const struct row *row = &rows[i];
		struct bl_stat s;

		if (i == QUIET)
			continue;
		if (bl_stat(row->share_err, rounds, &s))
			bl_emit("isolation-share", row->name, "2:1 share error", &s, "%");
		else
			bl_emit_na("isolation-share", row->name, "2:1 share error",
				   row->why[0] ? row->why : "no successful run");
	}
}

int main(int argc, char **argv)
{
	struct bl_rounds rr = { .min = 5, .max = MAX_ROUNDS, .target = 0.05, .budget_s = 900 };
	struct bl_dirs d;
	double round_s = 0;
	unsigned int k, i;
	int c;

	bl_dirs_default(&d);
	while ((c = getopt(argc, argv, "d:B:m:M:T:t:i:n:S")) != -1) {
		switch (c) {
		case 'S': shares = false; break;
		case 't': probe_threads = atoi(optarg); break;
		case 'i': interval_us = atoi(optarg); break;
		case 'n': spin_per_cpu = atoi(optarg); break;
		default:
			if (bl_rounds_option(&rr, &duration, c, optarg))
				break;
			fprintf(stderr, "usage: bench-isolation [-d S] [-B BUDGET_S] [-m MIN] [-M MAX] [-T TARGET] [-t THREADS] [-i US] [-n SPIN_PER_CPU] [-S]\n");
			return 2;
		}
	}
	if (duration <= 0 || rr.min < 2 || rr.max > MAX_ROUNDS || rr.min > rr.max ||
	    !probe_threads || probe_threads > MAX_PROBE_THREADS || !interval_us || !spin_per_cpu) {
		fprintf(stderr, "bench-isolation: bad arguments\n");
		return 2;
	}
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	{
		struct utsname u;

		if (uname(&u) == 0)
			printf("BENCH-KERNEL\t%s %s\n", u.release, u.version);
	}
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED) {
		perror("bench-isolation: mmap");
		return 1;
	}
	if (bl_cgroup_make(CG, 0) < 0 || bl_cgroup_make(CG_LAT, 100) < 0 ||
	    bl_cgroup_make(CG_NOISY, 100) < 0) {
		fprintf(stderr, "bench-isolation: cannot make %s and %s: %m\n", CG_LAT, CG_NOISY);
		return 1;
	}
	for (i = 0; i < N_ROWS; i++)
		if (!bl_stack_available(&d, &rows[i].stack, rows[i].why, sizeof(rows[i].why)))
			fprintf(stderr, "bench-isolation: %s: %s\n", rows[i].name, rows[i].why);

	printf("bench-isolation: %u vCPUs; probe: %u threads every %u us in %s; neighbour: %u spinners or ping-pong pairs in %s; %.1f s per run\n",
	       ncpus, probe_threads, interval_us, CG_LAT, spin_per_cpu * ncpus, CG_NOISY,
	       duration);
	printf("BENCH-RAW\tround\tneighbour\trow\tp50_us\tp99_us\tmax_us\tneighbour_loops_per_s\n");
	run_row(&d, &rows[EEVDF], NB_SPIN, 0, 0);
	printf("  (that was the warm-up)\n");
	rr.start = bl_now();
	bl_seed(3);
	for (k = 0; k < MAX_ROUNDS; k++) {
		unsigned int order[N_ROWS], nb;
		double t0 = bl_now(), hw;

		if (!bl_rounds_more(&rr, k, self_halfwidth(k), round_s))
			break;
		printf("round %u:\n", k + 1);
		for (nb = 0; nb < N_NB; nb++) {
			for (i = 0; i < N_ROWS - 3; i++)
				order[i] = i + 2;
			bl_shuffle(order, N_ROWS - 3);
			run_row(&d, &rows[QUIET], nb, k + 1, k);
			run_row(&d, &rows[EEVDF], nb, k + 1, k);
			for (i = 0; i < N_ROWS - 3; i++)
				run_row(&d, &rows[order[i]], nb, k + 1, k);
			run_row(&d, &rows[N_ROWS - 1], nb, k + 1, k);
		}
		if (shares) {
			for (i = 0; i < N_ROWS - 3; i++)
				order[i] = i + 2;
			bl_shuffle(order, N_ROWS - 3);
			run_share(&d, &rows[EEVDF], k + 1, k);
			for (i = 0; i < N_ROWS - 3; i++)
				run_share(&d, &rows[order[i]], k + 1, k);
			run_share(&d, &rows[N_ROWS - 1], k + 1, k);
		}
		round_s = bl_now() - t0;
		hw = self_halfwidth(k + 1);
		printf("round %u: %.0f s; eevdf vs itself within +-%.1f%% (worst figure)\n", k + 1,
		       round_s, isfinite(hw) ? 100 * hw : -1.0);
		fflush(stdout);
	}
	bl_note("%u rounds (%s) in %.0f s; EEVDF against itself within +-%.1f%% on its worst figure (target +-%.0f%%)",
		k, rr.why_stopped ? rr.why_stopped : "?", bl_now() - rr.start,
		100 * self_halfwidth(k), 100 * rr.target);
	bl_note("probe: %u threads waking every %u us in iso/lat; neighbour in iso/noisy: %u spinners, or %u ping-pong pairs; both cpu.weight 100; %.1f s per run",
		probe_threads, interval_us, spin_per_cpu * ncpus, spin_per_cpu * ncpus, duration);
	for (i = 0; i < N_ROWS; i++)
		if (rows[i].fails)
			bl_note("%s: %u failed run(s), last: %s", rows[i].name, rows[i].fails,
				rows[i].last_why);
	report(k);
	return 0;
}
