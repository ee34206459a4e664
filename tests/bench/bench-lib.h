/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the guest-side benchmark drivers (bench-workloads, bench-hierarchy,
 * bench-fanout) share: statistics (median and its bootstrap 95% interval),
 * rounds chosen within a time budget, stacks of schedulers started and
 * stopped as one row, commands run inside a cgroup, BPF program run-time
 * statistics, and the result lines the host scripts turn into a table and
 * a plot (tests/bench/bench-lib.sh).
 *
 * Runs inside a QEMU guest only (it loads BPF schedulers).
 */
#ifndef SCXD_BENCH_LIB_H
#define SCXD_BENCH_LIB_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched-proc.h"

/* ---- statistics --------------------------------------------------------- */

/* A sample's median and the bootstrap 95% interval of that median. */
struct bl_stat {
	unsigned int n;
	double med, lo, hi;
};

/*
 * Median of the @n values of @v that are finite and >= 0 (failed runs are
 * recorded as -1 and left out), with a percentile bootstrap interval:
 * 2000 resamples with replacement, a fixed seed so that a run's figures
 * can be recomputed. False when no value is usable.
 */
bool bl_stat(const double *v, unsigned int n, struct bl_stat *s);

/* Largest distance from the median to an end of the interval, relative. */
double bl_halfwidth(const struct bl_stat *s);

/* Deterministic pseudo-random numbers (xorshift64*), seeded once. */
void bl_seed(uint64_t seed);
uint64_t bl_rand(void);
/* Fisher-Yates shuffle of @n indices. */
void bl_shuffle(unsigned int *idx, unsigned int n);

double bl_now(void);		/* CLOCK_MONOTONIC, seconds */

/* ---- rounds --------------------------------------------------------------- */

/*
 * How many interleaved rounds to run: at least @min, at most @max, and
 * after the minimum, stop as soon as the interval of EEVDF against itself
 * is within @target (0.03: +-3%) or the next round would not fit in the
 * @budget_s seconds since @start.
 */
struct bl_rounds {
	unsigned int min, max;
	double target, budget_s, start;
	const char *why_stopped;
};

bool bl_rounds_more(struct bl_rounds *r, unsigned int done, double self_halfwidth,
		    double round_s);

/*
 * The options every bench takes for its rounds: -d S (a run's seconds,
 * into *duration), -B BUDGET_S, -m MIN, -M MAX, -T TARGET. True if @opt
 * was one of them.
 */
bool bl_rounds_option(struct bl_rounds *r, double *duration, int opt, const char *arg);

/* ---- scheduler stacks ------------------------------------------------------ */

#define BL_MAX_LEVELS 8
#define BL_MAX_TUNABLES 4

/* One scheduler of a stack: an scxd object run by sched-run, on @cgroup
 * (NULL: as root), with sched-run -t tunables. */
struct bl_level {
	const char *obj;
	const char *cgroup;
	const char *tunables[BL_MAX_TUNABLES];
};

/* What a row runs: nothing (EEVDF), an in-tree peer binary, or levels. */
struct bl_stack {
	const char *peer;
	struct bl_level levels[BL_MAX_LEVELS];
	unsigned int n_levels;
};

struct bl_dirs {
	char bin[PATH_MAX];	/* sched-run */
	char obj[PATH_MAX];	/* *.bpf.o */
	char peer[PATH_MAX];	/* scx_simple, scx_flatcg */
};

struct bl_running {
	struct sched_proc procs[BL_MAX_LEVELS];
	unsigned int started;
};

/* Is every object the stack needs there? @why says which is not. */
bool bl_stack_available(const struct bl_dirs *d, const struct bl_stack *st, char *why,
			size_t len);
/* Start the stack root first; on failure nothing is left running. */
int bl_stack_start(const struct bl_dirs *d, const struct bl_stack *st, struct bl_running *run,
		   char *why, size_t len);
/* Is the stack's root still in charge (sched_ext enabled, if any)? */
bool bl_stack_alive(const struct bl_running *run);
/* Children first, as scxd does. Prints what went wrong to stderr. */
void bl_stack_stop(struct bl_running *run);

/* Start one child scheduler @obj on @cgroup (stop with sched_proc_stop). */
int bl_child_start(const struct bl_dirs *d, struct sched_proc *sp, const char *obj,
		   const char *cgroup, const char *label, char *why, size_t len);

/* ---- cgroups and commands ---------------------------------------------------- */

/* mkdir @path (and its cpu controller in its parent); set cpu.weight
 * when @weight is not 0. */
int bl_cgroup_make(const char *path, unsigned int weight);

/*
 * Run @argv with its stdout and stderr in @out (NUL-terminated, cut at
 * @len), inside @cgroup (NULL: ours), killed after @timeout_s seconds.
 * Returns its exit status, or -errno; @wall_s gets the time it took.
 */
int bl_run_cmd(char *const argv[], const char *cgroup, double timeout_s, char *out,
	       size_t len, double *wall_s);

/* ---- BPF program statistics -------------------------------------------------- */

/* Turn kernel.bpf_stats_enabled on for as long as the fd stays open. */
int bl_bpf_stats_enable(void);

/*
 * Sum of run_time_ns and run_cnt over the loaded BPF programs whose name
 * starts with @prefix (the kernel keeps 15 characters of a name).
 * Returns how many programs matched, or -errno.
 */
int bl_prog_stats(const char *prefix, uint64_t *run_ns, uint64_t *run_cnt);

/* ---- results ---------------------------------------------------------------- */

/*
 * One result line for the host scripts:
 *   BENCH-ROW<TAB>table<TAB>row<TAB>column<TAB>n<TAB>median<TAB>lo<TAB>hi<TAB>unit
 * or, for a row that could not run,
 *   BENCH-ROW<TAB>table<TAB>row<TAB>column<TAB>0<TAB>-<TAB>-<TAB>-<TAB>n/a: why
 */
void bl_emit(const char *table, const char *row, const char *col, const struct bl_stat *s,
	     const char *unit);
void bl_emit_na(const char *table, const char *row, const char *col, const char *why);
/* A free-form note the host copies under the table: BENCH-NOTE<TAB>text */
void bl_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parse -b/-o/-p style directory options' defaults (/payload/...). */
void bl_dirs_default(struct bl_dirs *d);

#endif
