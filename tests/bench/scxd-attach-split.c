/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scxd-attach-split: where a child scheduler's attach goes when scxd does
 * it and when a bare libbpf loader does (tests/sched/sched-run -T), in
 * rounds that alternate which of the two goes first. Guest only;
 * tests/bench/scxd-attach --split runs it in the systemd guest.
 *
 *   scxd-attach-split child --rounds R --per-round K --dir D --raw-dir D2 --frozen CG
 *                           -- LOADER ARGS... ({} = the cgroup)
 *   scxd-attach-split burst --rounds R --sizes N[,N...] (same options)
 *
 * child: per round and loader, K cgroups made one at a time, each timed
 * from its mkdir until its sub-<cgid> says "enabled" (the wall time), then
 * removed. The split of that time:
 *   load    opening and loading the object, the kernel's verifier included;
 *   enable  the kernel attaching it (creating the struct_ops link);
 *   own     scxd: its reconciles less the two above (reading cgroups and
 *           the kernel's state, desired tree, plan, pinning, recording);
 *   rest    the wall time less the above: for scxd the wait for events
 *           (inotify, its 50 ms debounce), for the loader starting the
 *           process (exec, libbpf's setup), for both the 1 ms poll.
 * scxd's figures are its own counters (scxd_attach_load_seconds_total,
 * _enable_, scxd_reconcile_seconds_total from `scxdctl metrics`), read
 * before the mkdir and once they have stopped moving after the attach;
 * the loader's are what sched-run -T prints.
 * burst: per round, each size in turn (ascending in odd rounds, descending
 * in even ones), by each loader in turn: N cgroups made at once until all
 * are enabled, the same split per child; the bare loader attaches them one
 * after the other (as scxd does with --load-workers 1), each loader
 * frozen in CG once it has attached, so that N idle loaders do not poll.
 *
 * Prints every run, then BENCH-ROW lines (tests/bench/results-table): per
 * figure, the median over rounds of each round's median (child) or value
 * (burst), and the rounds' interquartile range (p25, p75) in the interval
 * columns; ratios are taken within a round.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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
#include <unistd.h>

#include "scxd-attach-sysfs.h"
#include "util.h"

#define MAX_ROUNDS 32
#define MAX_PER_ROUND 32
#define MAX_SIZES 4
#define MAX_BURST 1000
#define TIMEOUT_MS 120000.0

enum { SCXD, BARE, N_LOADERS };
static const char *const loader_name[N_LOADERS] = { "scxd", "bare loader" };

/* one attach (child) or one burst, per child: milliseconds */
struct split {
	double wall, load, own, enable, rest;
	double cpu;		/* scxd's CPU time (burst), ms per child */
};

struct options {
	const char *mode, *dir[N_LOADERS], *frozen;
	unsigned int rounds, per_round;
	unsigned int sizes[MAX_SIZES], n_sizes;
	char **loader;
};

/* ---- scxd's counters ------------------------------------------------------ */

static void pclosep(FILE **f)
{
	if (*f)
		pclose(*f);
}

struct scxd_counters {
	double load, enable, reconcile;	/* seconds */
	double attaches;
};

static int scxd_counters_read(struct scxd_counters *c)
{
	_cleanup_(pclosep) FILE *f = popen("scxdctl metrics 2>/dev/null", "r");
	char line[512];
	unsigned int found = 0;

	*c = (struct scxd_counters){};
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		found += sscanf(line, "scxd_attach_load_seconds_total %lf", &c->load) == 1;
		found += sscanf(line, "scxd_attach_enable_seconds_total %lf", &c->enable) == 1;
		found += sscanf(line, "scxd_reconcile_seconds_total %lf", &c->reconcile) == 1;
		found += sscanf(line, "scxd_attaches_total %lf", &c->attaches) == 1;
	}
	return found == 4 ? 0 : -ENODATA;
}

/*
 * scxd's counters once it has attached at least @attaches in all and
 * no reconcile has run for 500 ms (the kernel's events about what it
 * attached bring reconciles of their own, which are part of its work).
 */
static int scxd_counters_settled(double attaches, struct scxd_counters *c)
{
	double t0 = now_ms(), still_since = now_ms(), last = -1;

	for (;;) {
		int r = scxd_counters_read(c);

		if (r < 0)
			return r;
		if (c->reconcile != last || c->attaches < attaches)
			still_since = now_ms();
		last = c->reconcile;
		if (now_ms() - still_since >= 500)
			return 0;
		if (now_ms() - t0 > TIMEOUT_MS)
			return -ETIMEDOUT;
		sleep_ms(100);
	}
}

static pid_t scxd_pid(void)
{
	_cleanup_(pclosep) FILE *f = popen("systemctl show -p MainPID --value scxd.service", "r");
	int pid = 0;

	if (f && fscanf(f, "%d", &pid) != 1)
		pid = 0;
	return pid;
}

/* ---- the bare loader ------------------------------------------------------- */

struct loader_proc {
	pid_t pid;
	FILE *out;		/* its stdout */
};

static int loader_start(char **argv, const char *cgroup, struct loader_proc *p)
{
	char *args[64];
	unsigned int i;
	int fds[2];

	for (i = 0; argv[i] && i < 63; i++)
		args[i] = !strcmp(argv[i], "{}") ? (char *)cgroup : argv[i];
	args[i] = NULL;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	p->pid = fork();
	if (p->pid < 0)
		return -errno;
	if (p->pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		execvp(args[0], args);
		_exit(127);
	}
	close(fds[1]);
	p->out = fdopen(fds[0], "r");
	return p->out ? 0 : -errno;
}

/* Its "times:" line (sched-run -T): open + load, attach; -ENODATA if it died. */
static int loader_times(struct loader_proc *p, double *load, double *attach)
{
	char line[1024];
	double open_ms, load_ms;
	const char *t;

	while (fgets(line, sizeof(line), p->out))
		if ((t = strstr(line, ": times: ")) &&
		    sscanf(t, ": times: open %lf load %lf attach %lf", &open_ms, &load_ms, attach) == 3) {
			*load = open_ms + load_ms;
			return 0;
		}
	return -ENODATA;
}

static void loader_stop(struct loader_proc *p)
{
	char buf[4096];

	if (p->pid <= 0)
		return;
	kill(p->pid, SIGINT);
	while (p->out && fread(buf, 1, sizeof(buf), p->out) > 0)
		;
	waitpid(p->pid, NULL, 0);
	if (p->out)
		fclose(p->out);
	*p = (struct loader_proc){};
}

/* write @value to @dir/@file */
static int write_cgroup_file(const char *dir, const char *file, const char *value)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fputs(value, f);
	return fclose(f) == 0 ? 0 : -errno;
}

static int write_pid(const char *cgroup_dir, pid_t pid)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d\n", pid);
	return write_cgroup_file(cgroup_dir, "cgroup.procs", buf);
}

static int write_freeze(const char *cgroup_dir, bool on)
{
	return write_cgroup_file(cgroup_dir, "cgroup.freeze", on ? "1\n" : "0\n");
}

/* ---- cgroups --------------------------------------------------------------- */

static int make_cgroup(const char *dir, unsigned int i, uint64_t *id)
{
	char cg[PATH_MAX];
	struct stat sb;

	snprintf(cg, sizeof(cg), "%s/c%u", dir, i);
	if (mkdir(cg, 0755) < 0 || stat(cg, &sb) < 0) {
		fprintf(stderr, "scxd-attach-split: mkdir %s: %m\n", cg);
		return -errno;
	}
	*id = sb.st_ino;
	return 0;
}

static void remove_cgroup(const char *dir, unsigned int i)
{
	char cg[PATH_MAX];

	snprintf(cg, sizeof(cg), "%s/c%u", dir, i);
	for (double t = now_ms(); rmdir(cg) < 0 && errno == EBUSY && now_ms() - t < 10e3;)
		sleep_ms(5);
}

static void remove_cgroups(const char *dir, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		remove_cgroup(dir, i);
}

/* Poll until @n of @ids are enabled (@present) or all gone; ms from @t0, -1 on timeout. */
static double wait_subs(const uint64_t *ids, unsigned int n, bool present, double t0)
{
	unsigned int every = n > 1 ? 10 + n / 5 : 1;

	while (count_subs(ids, n, present) < n) {
		if (now_ms() - t0 > TIMEOUT_MS + 1500.0 * n)
			return -1;
		sleep_ms(every);
	}
	return now_ms() - t0;
}

/* ---- one attach, one burst --------------------------------------------------- */

static void split_from_counters(const struct scxd_counters *a, const struct scxd_counters *b,
				unsigned int n, double wall, struct split *s)
{
	s->wall = wall / n;
	s->load = (b->load - a->load) * 1e3 / n;
	s->enable = (b->enable - a->enable) * 1e3 / n;
	s->own = (b->reconcile - a->reconcile) * 1e3 / n - s->load - s->enable;
	s->rest = s->wall - s->load - s->enable - s->own;
}

static int child_scxd(const struct options *o, unsigned int i, struct split *s)
{
	struct scxd_counters a, b;
	uint64_t id;
	double t0, wall;

	if (scxd_counters_settled(0, &a) < 0)
		return -EIO;
	t0 = now_ms();
	if (make_cgroup(o->dir[SCXD], i, &id) < 0)
		return -EIO;
	wall = wait_subs(&id, 1, true, t0);
	if (wall < 0 || scxd_counters_settled(a.attaches + 1, &b) < 0)
		return -ETIMEDOUT;
	split_from_counters(&a, &b, 1, wall, s);
	remove_cgroup(o->dir[SCXD], i);
	return wait_subs(&id, 1, false, now_ms()) < 0 ? -ETIMEDOUT : 0;
}

static int child_bare(const struct options *o, unsigned int i, struct split *s)
{
	struct loader_proc p = {};
	char cg[PATH_MAX];
	uint64_t id;
	double t0, wall;
	int r;

	t0 = now_ms();
	if (make_cgroup(o->dir[BARE], i, &id) < 0)
		return -EIO;
	snprintf(cg, sizeof(cg), "%s/c%u", o->dir[BARE], i);
	r = loader_start(o->loader, cg, &p);
	if (r < 0)
		return r;
	wall = wait_subs(&id, 1, true, t0);
	r = loader_times(&p, &s->load, &s->enable);
	loader_stop(&p);
	if (wall < 0 || r < 0)
		return wall < 0 ? -ETIMEDOUT : r;
	s->wall = wall;
	s->own = 0;
	s->rest = wall - s->load - s->enable;
	remove_cgroup(o->dir[BARE], i);
	return wait_subs(&id, 1, false, now_ms()) < 0 ? -ETIMEDOUT : 0;
}

static int burst_scxd(const struct options *o, unsigned int n, struct split *s)
{
	static uint64_t ids[MAX_BURST];
	long hz = sysconf(_SC_CLK_TCK);
	struct scxd_counters a, b;
	unsigned long long c0, c1;
	pid_t pid = scxd_pid();
	double t0, wall;

	if (scxd_counters_settled(0, &a) < 0)
		return -EIO;
	c0 = cpu_ticks(pid);
	t0 = now_ms();
	for (unsigned int i = 0; i < n; i++)
		if (make_cgroup(o->dir[SCXD], i, &ids[i]) < 0)
			return -EIO;
	wall = wait_subs(ids, n, true, t0);
	if (wall < 0 || scxd_counters_settled(a.attaches + n, &b) < 0)
		return -ETIMEDOUT;
	c1 = cpu_ticks(pid);
	split_from_counters(&a, &b, n, wall, s);
	s->cpu = 1e3 * (double)(c1 - c0) / hz / n;
	remove_cgroups(o->dir[SCXD], n);
	return wait_subs(ids, n, false, now_ms()) < 0 ? -ETIMEDOUT : 0;
}

static int burst_bare(const struct options *o, unsigned int n, struct split *s)
{
	static uint64_t ids[MAX_BURST];
	static struct loader_proc procs[MAX_BURST];
	double t0, wall, load = 0, enable = 0;
	int r = 0;

	t0 = now_ms();
	for (unsigned int i = 0; i < n; i++)
		if (make_cgroup(o->dir[BARE], i, &ids[i]) < 0)
			return -EIO;
	/* one after the other, as scxd loads them with --load-workers 1 */
	for (unsigned int i = 0; i < n && r == 0; i++) {
		char cg[PATH_MAX];
		double l = 0, e = 0;

		snprintf(cg, sizeof(cg), "%s/c%u", o->dir[BARE], i);
		r = loader_start(o->loader, cg, &procs[i]);
		if (r == 0)
			r = loader_times(&procs[i], &l, &e);
		if (r == 0)
			r = write_pid(o->frozen, procs[i].pid);
		load += l;
		enable += e;
	}
	wall = r == 0 ? wait_subs(ids, n, true, t0) : -1;
	write_freeze(o->frozen, false);
	for (unsigned int i = 0; i < n; i++)	/* all at once, then each reaped */
		if (procs[i].pid > 0)
			kill(procs[i].pid, SIGINT);
	for (unsigned int i = 0; i < n; i++)
		loader_stop(&procs[i]);
	write_freeze(o->frozen, true);
	remove_cgroups(o->dir[BARE], n);
	if (wait_subs(ids, n, false, now_ms()) < 0 || wall < 0)
		return r < 0 ? r : -ETIMEDOUT;
	*s = (struct split){ .wall = wall / n, .load = load / n, .enable = enable / n };
	s->rest = s->wall - s->load - s->enable;
	return 0;
}

/* ---- statistics and output ------------------------------------------------- */

struct quartiles {
	double med, p25, p75;
};

/* the same index rule as scxd-attach-time's summary: v[n/4], v[n/2], v[3n/4] */
static struct quartiles quartiles(const double *v, unsigned int n)
{
	double s[MAX_ROUNDS * MAX_PER_ROUND];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return (struct quartiles){ s[n / 2], s[n / 4], s[(3 * n) / 4] };
}

enum field { F_WALL, F_LOAD, F_OWN, F_ENABLE, F_REST, F_CPU, N_FIELDS };
static const char *const field_name[N_FIELDS] = {
	"wall, mkdir to enabled", "load (open, verify)", "own work", "enable (link)",
	"rest (events, exec, poll)", "scxd CPU",
};

static double field(const struct split *s, enum field f)
{
	switch (f) {
	case F_WALL: return s->wall;
	case F_LOAD: return s->load;
	case F_OWN: return s->own;
	case F_ENABLE: return s->enable;
	case F_REST: return s->rest;
	default: return s->cpu;
	}
}

static void emit(const char *table, const char *row, const char *col, const double *v,
		 unsigned int n, const char *unit)
{
	struct quartiles q;

	if (!n) {
		printf("BENCH-ROW\t%s\t%s\t%s\t0\t-\t-\t-\tn/a: no successful round\n", table, row, col);
		return;
	}
	q = quartiles(v, n);
	printf("BENCH-ROW\t%s\t%s\t%s\t%u\t%.6g\t%.6g\t%.6g\t%s\n", table, row, col, n, q.med, q.p25,
	       q.p75, unit);
}

/*
 * Rows of @table from per-round figures @r[loader][round] (@ok[round]: both
 * loaders measured): each loader's fields in ms, and scxd / bare.
 */
static void emit_rows(const char *table, const char *prefix, struct split r[N_LOADERS][MAX_ROUNDS],
		      const bool *ok, unsigned int rounds, bool cpu)
{
	char row[128];

	for (int l = 0; l < N_LOADERS; l++)
		for (int f = 0; f < N_FIELDS; f++) {
			double v[MAX_ROUNDS];
			unsigned int n = 0;

			if ((f == F_OWN || f == F_CPU) && l == BARE)
				continue;
			if (f == F_CPU && !cpu)
				continue;
			for (unsigned int k = 0; k < rounds; k++)
				if (ok[k])
					v[n++] = field(&r[l][k], f);
			snprintf(row, sizeof(row), "%s%s", prefix, loader_name[l]);
			emit(table, row, field_name[f], v, n, "ms");
		}
	for (int f = 0; f <= F_ENABLE; f++) {
		double v[MAX_ROUNDS];
		unsigned int n = 0;

		if (f == F_OWN)
			continue;
		for (unsigned int k = 0; k < rounds; k++)
			if (ok[k] && field(&r[BARE][k], f) > 0)
				v[n++] = field(&r[SCXD][k], f) / field(&r[BARE][k], f);
		snprintf(row, sizeof(row), "%sscxd / bare loader", prefix);
		emit(table, row, field_name[f], v, n, "x");
	}
	fflush(stdout);
}

static void print_split(const char *what, unsigned int round, const char *loader,
			const struct split *s)
{
	printf("%s round %u %s: wall %.2f load %.2f own %.2f enable %.3f rest %.2f", what, round,
	       loader, s->wall, s->load, s->own, s->enable, s->rest);
	if (s->cpu > 0)
		printf(" cpu %.2f", s->cpu);
	printf(" ms per child\n");
	fflush(stdout);
}

static int bench_child(const struct options *o)
{
	static struct split r[N_LOADERS][MAX_ROUNDS];
	bool ok[MAX_ROUNDS] = {};
	unsigned int i = 0;

	for (unsigned int k = 0; k < o->rounds; k++) {
		ok[k] = true;
		for (int j = 0; j < N_LOADERS; j++) {
			int l = (k + j) % 2 ? BARE : SCXD;	/* even rounds scxd first */
			struct split s[MAX_PER_ROUND];
			double v[MAX_PER_ROUND];
			unsigned int n = 0;

			for (unsigned int c = 0; c < o->per_round; c++, i++) {
				int e = l == SCXD ? child_scxd(o, i, &s[n]) : child_bare(o, i, &s[n]);

				if (e < 0) {
					printf("child round %u %s c%u: failed: %s\n", k + 1, loader_name[l], i,
					       strerror(-e));
					continue;
				}
				print_split("child", k + 1, loader_name[l], &s[n]);
				n++;
			}
			if (n < o->per_round) {
				ok[k] = false;
				continue;
			}
			/* the round's figure: each field's median over its children */
			for (int f = 0; f < N_FIELDS; f++) {
				double m;

				for (unsigned int c = 0; c < n; c++)
					v[c] = field(&s[c], f);
				m = quartiles(v, n).med;
				switch (f) {
				case F_WALL: r[l][k].wall = m; break;
				case F_LOAD: r[l][k].load = m; break;
				case F_OWN: r[l][k].own = m; break;
				case F_ENABLE: r[l][k].enable = m; break;
				case F_REST: r[l][k].rest = m; break;
				default: break;
				}
			}
		}
	}
	printf("BENCH-NOTE\tchild: %u rounds of %u children per loader, the loader going first alternating; a round's figure is the median of its children, the table's the median over rounds [p25, p75]\n",
	       o->rounds, o->per_round);
	emit_rows("attach-child", "", r, ok, o->rounds, false);
	return 0;
}

static void burst_report(const struct options *o, struct split r[][N_LOADERS][MAX_ROUNDS],
			 bool ok[][MAX_ROUNDS], unsigned int rounds)
{
	printf("BENCH-REPORT\t%u rounds\n", rounds);
	for (unsigned int z = 0; z < o->n_sizes; z++) {
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "%u children: ", o->sizes[z]);
		emit_rows("attach-burst", prefix, r[z], ok[z], rounds, true);
	}
}

static int bench_burst(const struct options *o)
{
	static struct split r[MAX_SIZES][N_LOADERS][MAX_ROUNDS];
	static bool ok[MAX_SIZES][MAX_ROUNDS];

	for (unsigned int k = 0; k < o->rounds; k++) {
		for (unsigned int z = 0; z < o->n_sizes; z++) {
			unsigned int zi = k % 2 ? o->n_sizes - 1 - z : z;
			unsigned int n = o->sizes[zi];

			ok[zi][k] = true;
			for (int j = 0; j < N_LOADERS; j++) {
				int l = (k + z + j) % 2 ? BARE : SCXD;
				struct split *s = &r[zi][l][k];
				char what[32];
				int e = l == SCXD ? burst_scxd(o, n, s) : burst_bare(o, n, s);

				snprintf(what, sizeof(what), "burst %u", n);
				if (e < 0) {
					printf("%s round %u %s: failed: %s\n", what, k + 1, loader_name[l],
					       strerror(-e));
					ok[zi][k] = false;
					continue;
				}
				print_split(what, k + 1, loader_name[l], s);
			}
		}
		/* rounds are long: a guest stopped later still leaves figures */
		burst_report(o, r, ok, k + 1);
	}
	printf("BENCH-NOTE\tburst: %u rounds; the sizes in ascending order in odd rounds, descending in even ones, the loader going first alternating; figures per child (the burst's time over its size), median over rounds [p25, p75]\n",
	       o->rounds);
	return 0;
}

static int parse_sizes(const char *arg, struct options *o)
{
	_cleanup_free_ char *copy = strdup(arg);
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		unsigned int n = strtoul(t, NULL, 10);

		if (o->n_sizes == MAX_SIZES || n < 1 || n > MAX_BURST)
			return -EINVAL;
		o->sizes[o->n_sizes++] = n;
	}
	return o->n_sizes ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "per-round", required_argument, NULL, 'k' },
		{ "sizes", required_argument, NULL, 'n' },
		{ "dir", required_argument, NULL, 'd' },
		{ "raw-dir", required_argument, NULL, 'D' },
		{ "frozen", required_argument, NULL, 'f' },
		{}
	};
	struct options o = { .rounds = 6, .per_round = 5 };
	int c;

	if (argc < 2) {
		fprintf(stderr, "usage: scxd-attach-split child|burst OPTIONS -- LOADER ARGS (see the source's head)\n");
		return 2;
	}
	o.mode = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': o.rounds = atoi(optarg); break;
		case 'k': o.per_round = atoi(optarg); break;
		case 'n':
			if (parse_sizes(optarg, &o) < 0) {
				fprintf(stderr, "scxd-attach-split: --sizes: up to %d sizes of 1 to %d\n",
					MAX_SIZES, MAX_BURST);
				return 2;
			}
			break;
		case 'd': o.dir[SCXD] = optarg; break;
		case 'D': o.dir[BARE] = optarg; break;
		case 'f': o.frozen = optarg; break;
		default: return 2;
		}
	}
	if (optind >= argc || !o.dir[SCXD] || !o.dir[BARE] || !o.frozen || o.rounds < 1 ||
	    o.rounds > MAX_ROUNDS || o.per_round < 1 || o.per_round > MAX_PER_ROUND) {
		fprintf(stderr, "scxd-attach-split: --dir, --raw-dir, --frozen and -- LOADER ARGS are needed; 1-%d rounds, 1-%d per round\n",
			MAX_ROUNDS, MAX_PER_ROUND);
		return 2;
	}
	o.loader = argv + optind;
	mkdir(o.dir[SCXD], 0755);
	mkdir(o.dir[BARE], 0755);
	mkdir(o.frozen, 0755);
	if (write_freeze(o.frozen, true) < 0) {
		fprintf(stderr, "scxd-attach-split: cannot freeze %s: %m\n", o.frozen);
		return 1;
	}
	if (!strcmp(o.mode, "child"))
		return bench_child(&o);
	if (!strcmp(o.mode, "burst") && o.n_sizes)
		return bench_burst(&o);
	fprintf(stderr, "scxd-attach-split: %s: unknown mode or missing --sizes\n", o.mode);
	return 2;
}
