/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "bench-lib.h"

/* ---- statistics --------------------------------------------------------- */

#define BOOTSTRAP_RESAMPLES 2000
#define MAX_SAMPLE 256

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

void bl_seed(uint64_t seed)
{
	rng_state = seed ? seed : 0x9e3779b97f4a7c15ULL;
}

uint64_t bl_rand(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

void bl_shuffle(unsigned int *idx, unsigned int n)
{
	unsigned int i, j, t;

	for (i = n; i > 1; i--) {
		j = bl_rand() % i;
		t = idx[i - 1];
		idx[i - 1] = idx[j];
		idx[j] = t;
	}
}

double bl_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median_sorted(const double *v, unsigned int n)
{
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool bl_stat(const double *v, unsigned int n, struct bl_stat *s)
{
	static double meds[BOOTSTRAP_RESAMPLES];
	double x[MAX_SAMPLE], r[MAX_SAMPLE];
	uint64_t saved = rng_state;
	unsigned int i, j, m = 0;

	for (i = 0; i < n && m < MAX_SAMPLE; i++)
		if (isfinite(v[i]) && v[i] >= 0)
			x[m++] = v[i];
	memset(s, 0, sizeof(*s));
	if (!m)
		return false;
	qsort(x, m, sizeof(x[0]), cmp_double);
	s->n = m;
	s->med = median_sorted(x, m);

	/* its own seed, so the interval does not depend on what ran before */
	bl_seed(0x5eed0000ULL + m);
	for (i = 0; i < BOOTSTRAP_RESAMPLES; i++) {
		for (j = 0; j < m; j++)
			r[j] = x[bl_rand() % m];
		qsort(r, m, sizeof(r[0]), cmp_double);
		meds[i] = median_sorted(r, m);
	}
	rng_state = saved;
	qsort(meds, BOOTSTRAP_RESAMPLES, sizeof(meds[0]), cmp_double);
	s->lo = meds[(int)(0.025 * BOOTSTRAP_RESAMPLES)];
	s->hi = meds[(int)(0.975 * BOOTSTRAP_RESAMPLES) - 1];
	return true;
}

double bl_halfwidth(const struct bl_stat *s)
{
	double a, b;

	if (!s->n || s->med <= 0)
		return INFINITY;
	a = s->med - s->lo;
	b = s->hi - s->med;
	return (a > b ? a : b) / s->med;
}

/* ---- rounds --------------------------------------------------------------- */

bool bl_rounds_option(struct bl_rounds *r, double *duration, int opt, const char *arg)
{
	switch (opt) {
	case 'd': *duration = atof(arg); return true;
	case 'B': r->budget_s = atof(arg); return true;
	case 'm': r->min = atoi(arg); return true;
	case 'M': r->max = atoi(arg); return true;
	case 'T': r->target = atof(arg); return true;
	default: return false;
	}
}

bool bl_rounds_more(struct bl_rounds *r, unsigned int done, double self_halfwidth,
		    double round_s)
{
	double left = r->budget_s - (bl_now() - r->start);

	if (done < r->min)
		return true;
	if (done >= r->max) {
		r->why_stopped = "maximum number of rounds";
		return false;
	}
	if (self_halfwidth <= r->target) {
		r->why_stopped = "EEVDF-vs-itself interval within target";
		return false;
	}
	if (left < round_s) {
		r->why_stopped = "time budget spent";
		return false;
	}
	return true;
}

/* ---- scheduler stacks ------------------------------------------------------ */

void bl_dirs_default(struct bl_dirs *d)
{
	snprintf(d->bin, sizeof(d->bin), "/payload/bin");
	snprintf(d->obj, sizeof(d->obj), "/payload/schedulers");
	snprintf(d->peer, sizeof(d->peer), "/payload/peers");
	sched_proc_timeout_ms = 60000;
}

bool bl_stack_available(const struct bl_dirs *d, const struct bl_stack *st, char *why,
			size_t len)
{
	char path[PATH_MAX + 64];
	unsigned int i;

	if (st->peer) {
		snprintf(path, sizeof(path), "%s/%s", d->peer, st->peer);
		if (access(path, X_OK) < 0) {
			snprintf(why, len, "%s not built", st->peer);
			return false;
		}
	}
	for (i = 0; i < st->n_levels; i++) {
		snprintf(path, sizeof(path), "%s/%s.bpf.o", d->obj, st->levels[i].obj);
		if (access(path, R_OK) < 0) {
			snprintf(why, len, "%s.bpf.o not built", st->levels[i].obj);
			return false;
		}
		if (st->levels[i].cgroup && !scx_kernel_has_sub_sched()) {
			snprintf(why, len, "kernel without sub-schedulers");
			return false;
		}
	}
	return true;
}

static int level_start(const struct bl_dirs *d, const struct bl_level *l, struct sched_proc *sp,
		       const char *label, char *why, size_t len)
{
	char run[PATH_MAX + 16], obj[PATH_MAX + 64], want[64];
	char *argv[4 + 2 * BL_MAX_TUNABLES + 1];
	unsigned int a = 0, t;
	int r;

	snprintf(run, sizeof(run), "%s/sched-run", d->bin);
	snprintf(obj, sizeof(obj), "%s/%s.bpf.o", d->obj, l->obj);
	argv[a++] = run;
	for (t = 0; t < BL_MAX_TUNABLES && l->tunables[t]; t++) {
		argv[a++] = "-t";
		argv[a++] = (char *)l->tunables[t];
	}
	if (l->cgroup) {
		argv[a++] = "-c";
		argv[a++] = (char *)l->cgroup;
	}
	argv[a++] = obj;
	argv[a] = NULL;

	if (!l->cgroup) {
		/* "wparent-main" (SCXD_BENCH_EXTRA_OBJS) is still scxd_wparent */
		snprintf(want, sizeof(want), "scxd_%.*s", (int)strcspn(l->obj, "-"), l->obj);
		return sched_proc_start(sp, argv, label, want, why, len);
	}
	r = sched_proc_start_child(sp, argv, l->cgroup, label, why, len);
	if (r == 0 && !scx_wait_sub_sched(l->cgroup, sched_proc_timeout_ms)) {
		snprintf(why, len, "%s: no sub-<cgid> directory for %s after %u s", label,
			 l->cgroup, sched_proc_timeout_ms / 1000);
		sched_proc_stop(sp, why + strlen(why), 0);
		return -ETIMEDOUT;
	}
	return r;
}

int bl_child_start(const struct bl_dirs *d, struct sched_proc *sp, const char *obj,
		   const char *cgroup, const char *label, char *why, size_t len)
{
	struct bl_level l = { .obj = obj, .cgroup = cgroup };

	return level_start(d, &l, sp, label, why, len);
}

int bl_stack_start(const struct bl_dirs *d, const struct bl_stack *st, struct bl_running *run,
		   char *why, size_t len)
{
	unsigned int i;
	int r;

	memset(run, 0, sizeof(*run));
	if (st->peer) {
		char bin[PATH_MAX + 64];
		char *argv[] = { bin, NULL };

		snprintf(bin, sizeof(bin), "%s/%s", d->peer, st->peer);
		r = sched_proc_start(&run->procs[0], argv, st->peer, NULL, why, len);
		if (r < 0)
			return r;
		run->started = 1;
		return 0;
	}
	for (i = 0; i < st->n_levels; i++) {
		char label[64];

		snprintf(label, sizeof(label), "%s.%u", st->levels[i].obj, i);
		r = level_start(d, &st->levels[i], &run->procs[i], label, why, len);
		if (r < 0) {
			bl_stack_stop(run);
			return r;
		}
		run->started++;
	}
	return 0;
}

bool bl_stack_alive(const struct bl_running *run)
{
	return !run->started || scx_state_is("enabled");
}

void bl_stack_stop(struct bl_running *run)
{
	char why[1600];

	while (run->started) {
		run->started--;
		if (sched_proc_stop(&run->procs[run->started], why, sizeof(why)) < 0)
			fprintf(stderr, "bench: %s\n", why);
	}
}

/* ---- cgroups and commands ---------------------------------------------------- */

int bl_cgroup_make(const char *path, unsigned int weight)
{
	char f[PATH_MAX + 32], parent[PATH_MAX], *slash;

	snprintf(parent, sizeof(parent), "%s", path);
	slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = '\0';
		snprintf(f, sizeof(f), "%s/cgroup.subtree_control", parent);
		write_str(f, "+cpu");
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (weight) {
		char w[16];

		snprintf(f, sizeof(f), "%s/cpu.weight", path);
		snprintf(w, sizeof(w), "%u", weight);
		if (write_str(f, w) < 0)
			return -errno;
	}
	return 0;
}

int bl_run_cmd(char *const argv[], const char *cgroup, double timeout_s, char *out,
	       size_t len, double *wall_s)
{
	double start = bl_now(), deadline = start + timeout_s;
	bool exited = false, killed = false;
	int pipefd[2], status = 0;
	size_t used = 0;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -errno;
	}
	if (pid == 0) {
		/* its own process group: a timeout ends its helpers too */
		setpgid(0, 0);
		if (cgroup) {
			char f[PATH_MAX + 16];

			snprintf(f, sizeof(f), "%s/cgroup.procs", cgroup);
			if (write_str(f, "0") < 0)
				_exit(126);
		}
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		execv(argv[0], argv);
		_exit(127);
	}
	setpgid(pid, pid);
	close(pipefd[1]);
	for (;;) {
		struct pollfd pfd = { .fd = pipefd[0], .events = POLLIN };
		char sink[4096];
		int left_ms;
		ssize_t n;

		if (!exited && waitpid(pid, &status, WNOHANG) == pid) {
			exited = true;
			/* what it left behind holding the pipe gets 2 s */
			if (deadline > bl_now() + 2)
				deadline = bl_now() + 2;
		}
		left_ms = (int)((deadline - bl_now()) * 1000);
		if (left_ms <= 0) {
			kill(-pid, SIGKILL);
			killed |= !exited;
			left_ms = 1000;
		}
		if (poll(&pfd, 1, left_ms < 200 ? left_ms : 200) == 0)
			continue;
		if (used + 1 < len)
			n = read(pipefd[0], out + used, len - 1 - used);
		else
			n = read(pipefd[0], sink, sizeof(sink));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (used + 1 < len)
			used += n;
	}
	close(pipefd[0]);
	if (len)
		out[used < len ? used : len - 1] = '\0';
	kill(-pid, SIGKILL);
	while (!exited && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (wall_s)
		*wall_s = bl_now() - start;
	if (killed)
		return -ETIMEDOUT;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- BPF program statistics -------------------------------------------------- */

static long sys_bpf(int cmd, union bpf_attr *attr, unsigned int size)
{
	return syscall(__NR_bpf, cmd, attr, size);
}

int bl_bpf_stats_enable(void)
{
	union bpf_attr attr = { 0 };
	int fd;

	attr.enable_stats.type = BPF_STATS_RUN_TIME;
	fd = sys_bpf(BPF_ENABLE_STATS, &attr, sizeof(attr));
	if (fd >= 0)
		return fd;
	/* older interface: the sysctl */
	return write_str("/proc/sys/kernel/bpf_stats_enabled", "1") < 0 ? -errno : INT_MAX;
}

int bl_prog_stats(const char *prefix, uint64_t *run_ns, uint64_t *run_cnt)
{
	uint32_t id = 0;
	int matched = 0;

	*run_ns = *run_cnt = 0;
	for (;;) {
		union bpf_attr attr = { 0 };
		struct bpf_prog_info info = { 0 };
		int fd;

		attr.start_id = id;
		if (sys_bpf(BPF_PROG_GET_NEXT_ID, &attr, sizeof(attr)) < 0)
			break;
		id = attr.next_id;

		memset(&attr, 0, sizeof(attr));
		attr.prog_id = id;
		fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &attr, sizeof(attr));
		if (fd < 0)
			continue;
		memset(&attr, 0, sizeof(attr));
		attr.info.bpf_fd = fd;
		attr.info.info_len = sizeof(info);
		attr.info.info = (uint64_t)(unsigned long)&info;
		if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)) == 0 &&
		    !strncmp(info.name, prefix, strlen(prefix))) {
			*run_ns += info.run_time_ns;
			*run_cnt += info.run_cnt;
			matched++;
		}
		close(fd);
	}
	return matched;
}

/* ---- results ---------------------------------------------------------------- */

void bl_emit(const char *table, const char *row, const char *col, const struct bl_stat *s,
	     const char *unit)
{
	printf("BENCH-ROW\t%s\t%s\t%s\t%u\t%.6g\t%.6g\t%.6g\t%s\n", table, row, col, s->n,
	       s->med, s->lo, s->hi, unit);
	fflush(stdout);
}

void bl_emit_na(const char *table, const char *row, const char *col, const char *why)
{
	printf("BENCH-ROW\t%s\t%s\t%s\t0\t-\t-\t-\tn/a: %s\n", table, row, col, why);
	fflush(stdout);
}

void bl_note(const char *fmt, ...)
{
	va_list ap;

	printf("BENCH-NOTE\t");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}
