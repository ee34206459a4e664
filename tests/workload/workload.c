/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/futex.h>

#include "workload.h"

struct wl_shared {
	uint64_t deadline_ns;	/* CLOCK_MONOTONIC */
	uint32_t go;		/* futex: every task may start */
	struct wl_task_result tasks[WL_MAX_TASKS];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

const char *wl_kind_name(enum wl_kind kind)
{
	switch (kind) {
	case WL_SPIN: return "spin";
	case WL_SLEEP: return "sleep";
	case WL_PINGPONG: return "pingpong";
	}
	return "?";
}

static int parse_uint(const char *s, unsigned int *v)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(s, &end, 10);
	if (errno || end == s || *end || x > 1000000000UL)
		return -EINVAL;
	*v = x;
	return 0;
}

static int parse_int(const char *s, int *v)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(s, &end, 10);
	if (errno || end == s || *end || x < -100000 || x > 100000)
		return -EINVAL;
	*v = x;
	return 0;
}

int wl_group_parse(char *spec, struct wl_group *g)
{
	char *save = NULL, *kv;

	*g = (struct wl_group){ .kind = WL_SPIN, .n = 1, .cpu = -1,
				.work_us = 500, .sleep_us = 2000 };
	for (kv = strtok_r(spec, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');
		int r = 0;

		if (!v)
			return -EINVAL;
		*v++ = '\0';
		if (!strcmp(kv, "kind")) {
			if (!strcmp(v, "spin"))
				g->kind = WL_SPIN;
			else if (!strcmp(v, "sleep"))
				g->kind = WL_SLEEP;
			else if (!strcmp(v, "pingpong"))
				g->kind = WL_PINGPONG;
			else
				r = -EINVAL;
		} else if (!strcmp(kv, "n")) {
			r = parse_uint(v, &g->n);
		} else if (!strcmp(kv, "nice")) {
			r = parse_int(v, &g->nice);
		} else if (!strcmp(kv, "cpu")) {
			r = parse_int(v, &g->cpu);
		} else if (!strcmp(kv, "cgroup")) {
			g->cgroup = v;
		} else if (!strcmp(kv, "work_us")) {
			r = parse_uint(v, &g->work_us);
		} else if (!strcmp(kv, "sleep_us")) {
			r = parse_uint(v, &g->sleep_us);
		} else if (!strcmp(kv, "name")) {
			g->name = v;
		} else {
			r = -EINVAL;
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static unsigned int group_tasks(const struct wl_group *g)
{
	return g->kind == WL_PINGPONG ? 2 * g->n : g->n;
}

/* Put the calling process where group @g wants it. */
static int task_setup(const struct wl_group *g)
{
	if (g->cgroup) {
		char path[4096];
		int fd, r;

		snprintf(path, sizeof(path), "%s/cgroup.procs", g->cgroup);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		r = write(fd, "0", 1) == 1 ? 0 : -errno;
		close(fd);
		if (r < 0)
			return r;
	}
	if (g->nice && setpriority(PRIO_PROCESS, 0, g->nice) < 0)
		return -errno;
	if (g->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(g->cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			return -errno;
	}
	return 0;
}

static void note_cpu(struct wl_task_result *t)
{
	int cpu = sched_getcpu();

	if (cpu >= 0 && cpu < 64)
		t->cpus_seen |= 1ULL << cpu;
}

static void burn(unsigned int loops)
{
	volatile unsigned int x = 0;
	unsigned int i;

	for (i = 0; i < loops; i++)
		x += i;
}

static void run_spin(const struct wl_shared *sh, struct wl_task_result *t)
{
	uint64_t deadline = sh->deadline_ns;

	for (;;) {
		unsigned int i;

		for (i = 0; i < 16; i++)
			burn(1000);
		t->ops += 16;
		note_cpu(t);
		if (mono_ns() >= deadline)
			break;
	}
}

static void run_sleep(const struct wl_shared *sh, const struct wl_group *g,
		      struct wl_task_result *t)
{
	uint64_t deadline = sh->deadline_ns;
	struct timespec req = {
		.tv_sec = g->sleep_us / 1000000,
		.tv_nsec = (g->sleep_us % 1000000) * 1000L,
	};

	while (mono_ns() < deadline) {
		uint64_t until = mono_ns() + g->work_us * 1000ULL, before, late;

		while (mono_ns() < until)
			burn(100);
		before = mono_ns();
		nanosleep(&req, NULL);
		late = mono_ns() - before;
		late = late > g->sleep_us * 1000ULL ? late - g->sleep_us * 1000ULL : 0;
		t->lat_sum_ns += late;
		t->lat_n++;
		if (late > t->lat_max_ns)
			t->lat_max_ns = late;
		t->ops++;
		note_cpu(t);
	}
}

/* @first sends first; both stop at the deadline or when the other left. */
static void run_pingpong(const struct wl_shared *sh, int rfd, int wfd,
			 bool first, struct wl_task_result *t)
{
	uint64_t deadline = sh->deadline_ns;
	char c = 0;

	if (first && write(wfd, &c, 1) != 1)
		return;
	for (;;) {
		if (read(rfd, &c, 1) != 1)
			return;
		t->ops++;
		if ((t->ops & 63) == 0) {
			note_cpu(t);
			if (mono_ns() >= deadline)
				return;
		}
		if (write(wfd, &c, 1) != 1)
			return;
	}
}

struct task_plan {
	const struct wl_group *g;
	unsigned int group;
	int rfd, wfd;		/* pingpong */
	bool first;
};

static void task_main(struct wl_shared *sh, unsigned int idx,
		      const struct task_plan *tp, int ready_fd)
{
	struct wl_task_result *t = &sh->tasks[idx];
	uint64_t cpu0;

	t->group = tp->group;
	t->pid = getpid();
	if (task_setup(tp->g) < 0)
		t->failed = 1;
	if (write(ready_fd, "r", 1) != 1)
		_exit(1);
	/*
	 * One FUTEX_WAKE releases every task at once. A pipe closed under
	 * 129 readers would hand its mutex from one reader to the next, each
	 * waiting for its scheduler's turn: on the debug kernel the last ones
	 * got past it after the deadline (issue 21).
	 */
	while (!__atomic_load_n(&sh->go, __ATOMIC_ACQUIRE))
		syscall(SYS_futex, &sh->go, FUTEX_WAIT, 0, NULL, NULL, 0);
	if (t->failed)
		_exit(1);

	cpu0 = cpu_ns();
	switch (tp->g->kind) {
	case WL_SPIN:
		run_spin(sh, t);
		break;
	case WL_SLEEP:
		run_sleep(sh, tp->g, t);
		break;
	case WL_PINGPONG:
		run_pingpong(sh, tp->rfd, tp->wfd, tp->first, t);
		break;
	}
	t->cpu_ns = cpu_ns() - cpu0;
	_exit(0);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * A pingpong task must hold only its own pipe ends, or its partner never
 * sees end-of-file when it leaves.
 */
static void close_other_fds(struct task_plan *plan, unsigned int n,
			    unsigned int self)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (i == self)
			continue;
		close_fd(&plan[i].rfd);
		close_fd(&plan[i].wfd);
	}
}

/* Build one plan entry per task; pingpong pairs get their pipes here. */
static int plan_tasks(const struct wl_group *groups, unsigned int n_groups,
		      struct task_plan *plan, unsigned int *n)
{
	unsigned int gi, i, k = 0;

	for (gi = 0; gi < n_groups; gi++) {
		const struct wl_group *g = &groups[gi];

		if (k + group_tasks(g) > WL_MAX_TASKS)
			return -E2BIG;
		for (i = 0; i < g->n; i++) {
			int a2b[2], b2a[2];

			plan[k] = (struct task_plan){ g, gi, -1, -1, false };
			if (g->kind != WL_PINGPONG) {
				k++;
				continue;
			}
			if (pipe2(a2b, O_CLOEXEC) < 0 || pipe2(b2a, O_CLOEXEC) < 0)
				return -errno;
			plan[k++] = (struct task_plan){ g, gi, b2a[0], a2b[1], true };
			plan[k++] = (struct task_plan){ g, gi, a2b[0], b2a[1], false };
		}
	}
	*n = k;
	return 0;
}

/*
 * se.sum_exec_runtime of /proc/@pid/sched ("<ms>.<6 digits of ns>"),
 * the kernel's own count of the task's CPU time; false if unreadable.
 */
bool wl_task_cpu_ns(pid_t pid, uint64_t *ns)
{
	char path[64], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/sched", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long ms, frac;
		char *colon;

		if (strncmp(line, "se.sum_exec_runtime", 19))
			continue;
		colon = strchr(line, ':');
		if (colon && sscanf(colon + 1, " %llu.%6llu", &ms, &frac) == 2) {
			*ns = ms * 1000000ULL + frac;
			found = true;
		}
	}
	fclose(f);
	return found;
}

int wl_run(const struct wl_group *groups, unsigned int n_groups,
	   double duration_s, struct wl_result *res)
{
	struct task_plan plan[WL_MAX_TASKS];
	int ready[2] = { -1, -1 };
	pid_t pids[WL_MAX_TASKS];
	static uint64_t ran0[WL_MAX_TASKS], ran1[WL_MAX_TASKS];
	struct wl_shared *sh;
	bool window;
	unsigned int n = 0, i, started = 0;
	uint64_t t0;
	int r;

	memset(res, 0, sizeof(*res));
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -errno;
	memset(sh, 0, sizeof(*sh));

	r = plan_tasks(groups, n_groups, plan, &n);
	if (r == 0 && pipe2(ready, O_CLOEXEC) < 0)
		r = -errno;

	for (i = 0; r == 0 && i < n; i++) {
		pid_t parent = getpid(), pid = fork();

		if (pid < 0) {
			r = -errno;
			break;
		}
		if (pid == 0) {
			/* a runner killed before sh->go must not leave us waiting */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
				_exit(1);
			close(ready[0]);
			close_other_fds(plan, n, i);
			task_main(sh, i, &plan[i], ready[1]);
		}
		pids[started++] = pid;
	}
	for (i = 0; i < n; i++) {
		close_fd(&plan[i].rfd);
		close_fd(&plan[i].wfd);
	}
	close_fd(&ready[1]);

	/* wait until every task is in place, then set the common deadline */
	for (i = 0; r == 0 && i < started; i++) {
		char c;

		if (read(ready[0], &c, 1) != 1)
			r = -EIO;
	}
	/* every task waits on sh->go: their runtime so far, then go */
	window = r == 0;
	for (i = 0; window && i < started; i++)
		window = wl_task_cpu_ns(pids[i], &ran0[i]);
	t0 = mono_ns();
	sh->deadline_ns = t0 + (uint64_t)(duration_s * 1e9);
	__atomic_store_n(&sh->go, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &sh->go, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	close_fd(&ready[0]);
	if (window) {
		struct timespec until = {
			.tv_sec = sh->deadline_ns / 1000000000ULL,
			.tv_nsec = sh->deadline_ns % 1000000000ULL,
		};

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
			;
		for (i = 0; window && i < started; i++)
			window = wl_task_cpu_ns(pids[i], &ran1[i]);
	}

	for (i = 0; i < started; i++) {
		if (r < 0)
			kill(pids[i], SIGKILL);
		while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (r < 0) {
		munmap(sh, sizeof(*sh));
		return r;
	}

	res->wall_s = (mono_ns() - t0) / 1e9;
	res->n_tasks = n;
	res->tasks = calloc(n, sizeof(*res->tasks));
	if (!res->tasks) {
		munmap(sh, sizeof(*sh));
		return -ENOMEM;
	}
	memcpy(res->tasks, sh->tasks, n * sizeof(*res->tasks));
	munmap(sh, sizeof(*sh));
	res->window = window;
	for (i = 0; window && i < n; i++)
		res->tasks[i].window_cpu_ns = ran1[i] > ran0[i] ? ran1[i] - ran0[i] : 0;
	return 0;
}

void wl_result_free(struct wl_result *res)
{
	free(res->tasks);
	res->tasks = NULL;
}

uint64_t wl_group_ops(const struct wl_result *res, unsigned int g)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < res->n_tasks; i++)
		if (res->tasks[i].group == g)
			sum += res->tasks[i].ops;
	return sum;
}

uint64_t wl_group_cpu_ns(const struct wl_result *res, unsigned int g)
{
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < res->n_tasks; i++)
		if (res->tasks[i].group == g)
			sum += res->tasks[i].cpu_ns;
	return sum;
}

void wl_report(FILE *f, const struct wl_group *groups, unsigned int n_groups,
	       const struct wl_result *res)
{
	uint64_t total = 0;
	unsigned int i;

	for (i = 0; i < res->n_tasks; i++) {
		const struct wl_task_result *t = &res->tasks[i];
		const struct wl_group *g = &groups[t->group];

		fprintf(f, "task id=%u group=%s kind=%s pid=%d ops=%" PRIu64
			" cpu_ms=%.1f lat_avg_us=%.1f lat_max_us=%.1f cpus_seen=0x%" PRIx64
			" failed=%d\n",
			i, g->name ?: wl_kind_name(g->kind), wl_kind_name(g->kind),
			t->pid, t->ops, t->cpu_ns / 1e6,
			t->lat_n ? t->lat_sum_ns / 1e3 / t->lat_n : 0.0,
			t->lat_max_ns / 1e3, t->cpus_seen, t->failed);
	}
	for (i = 0; i < n_groups; i++) {
		uint64_t ops = wl_group_ops(res, i);

		total += ops;
		fprintf(f, "group id=%u name=%s kind=%s tasks=%u ops=%" PRIu64
			" ops_per_s=%.1f cpu_ms=%.1f\n",
			i, groups[i].name ?: wl_kind_name(groups[i].kind),
			wl_kind_name(groups[i].kind), group_tasks(&groups[i]),
			ops, ops / res->wall_s, wl_group_cpu_ns(res, i) / 1e6);
	}
	fprintf(f, "total ops=%" PRIu64 " ops_per_s=%.1f wall_s=%.3f\n",
		total, total / res->wall_s, res->wall_s);
}
