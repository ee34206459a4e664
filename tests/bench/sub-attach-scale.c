/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sub-attach-scale: does attaching one child scheduler cost more when the
 * machine has more tasks elsewhere? Guest only; tests/bench/sub-attach-scale
 * boots it.
 *
 *   sub-attach-scale [-r ROUNDS] [-l LOW] [-H HIGH] [-c CHILD_TASKS] ROOT.bpf.o CHILD.bpf.o
 *
 * Attaches ROOT as the root scheduler, then alternates phases with LOW and
 * with HIGH idle threads in another cgroup (low, high, low, high). Each
 * phase times ROUNDS cycles of the child scheduler on a cgroup holding
 * CHILD_TASKS sleeping tasks, split into what a loader does:
 *
 *   load    open the object, set sub_cgroup_id, bpf_object__load() (the
 *           verifier, maps, the struct_ops map's trampolines)
 *   attach  the BPF_LINK_CREATE that runs the kernel's enabling of the
 *           child: it returns once the child is enabled
 *   detach  bpf_link__destroy(), which returns once the child is disabled
 *   close   bpf_object__close() (programs and maps freed)
 *   total   the sum
 *
 * Prints each row's median over all its phases (the first cycle of every
 * phase is a discarded warm-up), min and max, and the HIGH/LOW ratio of the
 * medians. Prints figures; judges nothing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define CG_IDLE		"/sys/fs/cgroup/bench-idle"
#define CG_CHILD	"/sys/fs/cgroup/bench-child"
#define MAX_ROUNDS	200
#define NR_PHASES	4

enum { T_LOAD, T_ATTACH, T_DETACH, T_CLOSE, T_TOTAL, NR_T };
static const char *const t_names[NR_T] = { "load", "attach", "detach", "close", "total" };

struct samples {
	double v[NR_PHASES / 2 * MAX_ROUNDS];
	int n;
};

/* [0] low, [1] high */
static struct samples samples[2][NR_T];

/*
 * Time spent in the bpf() syscall by command during the load step, to tell
 * the kernel's part (verifier, map creation, struct_ops trampolines) from
 * libbpf's own. libbpf calls syscall(__NR_bpf, ...); this definition in the
 * executable takes the place of libc's.
 */
#define NR_BPF_CMDS 40
static bool in_load;
static double bpf_ms[2][NR_BPF_CMDS], bpf_cur[NR_BPF_CMDS];
static const char *const bpf_cmd_names[NR_BPF_CMDS] = {
	[0] = "MAP_CREATE", [2] = "MAP_UPDATE_ELEM", [5] = "PROG_LOAD",
	[18] = "BTF_LOAD", [28] = "LINK_CREATE", [33] = "PROG_BIND_MAP",
};

static double now_ms(void);

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6], ret;
	double t0 = 0;
	va_list ap;
	int i;

	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == __NR_bpf && in_load)
		t0 = now_ms();
	ret = real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (nr == __NR_bpf && in_load && a[0] >= 0 && a[0] < NR_BPF_CMDS)
		bpf_cur[a[0]] += now_ms() - t0;
	return ret;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int write_pid(const char *cgrp, pid_t pid)
{
	char path[PATH_MAX];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cgrp);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	if (fprintf(f, "%d", pid) < 0)
		ret = -EIO;
	if (fclose(f))
		ret = -errno;
	return ret;
}

static int count_threads(const char *cgrp)
{
	char path[PATH_MAX], line[32];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/cgroup.threads", cgrp);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

static void *sleeper(void *arg)
{
	for (;;)
		pause();
	return NULL;
}

/*
 * A process in @cgrp with @n tasks in all: itself and @n - 1 threads with
 * small stacks, all asleep until it is killed. Returns its pid once all
 * are listed in the cgroup.
 */
static pid_t spawn_sleepers(const char *cgrp, int n)
{
	pid_t pid = fork();
	int i, have = -1;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		pthread_attr_t attr;
		pthread_t t;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		raise(SIGSTOP);
		pthread_attr_init(&attr);
		pthread_attr_setstacksize(&attr, 64 * 1024);
		for (i = 1; i < n; i++) {
			if (pthread_create(&t, &attr, sleeper, NULL)) {
				fprintf(stderr, "sub-attach-scale: thread %d of %d: %m\n", i, n);
				_exit(1);
			}
		}
		for (;;)
			pause();
	}
	if (waitpid(pid, NULL, WUNTRACED) < 0 || write_pid(cgrp, pid) < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -EIO;
	}
	kill(pid, SIGCONT);
	for (i = 0; i < 12000 && have != n; i++) {
		usleep(10000);
		have = count_threads(cgrp);
	}
	if (have != n) {
		fprintf(stderr, "sub-attach-scale: %s has %d tasks, not %d\n", cgrp, have, n);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -ETIMEDOUT;
	}
	return pid;
}

static void stop_sleepers(pid_t pid, const char *cgrp)
{
	int i;

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	for (i = 0; i < 6000 && count_threads(cgrp) > 0; i++)
		usleep(10000);
}

static struct bpf_map *struct_ops_map(struct bpf_object *obj)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj)
		if (bpf_map__type(map) == BPF_MAP_TYPE_STRUCT_OPS)
			return map;
	return NULL;
}

/* set @member of @map's initial struct_ops value, or the .rodata variable @member */
static int set_u64(struct bpf_object *obj, struct bpf_map *ops_map,
		   const char *member, uint64_t v)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vsi;
	const struct btf_member *m;
	const struct btf_type *t;
	struct bpf_map *map;
	size_t size;
	char *data;
	int i, id;

	if (ops_map) {
		t = btf__type_by_id(btf, bpf_map__btf_value_type_id(ops_map));
		data = bpf_map__initial_value(ops_map, &size);
		if (!t || !data)
			return -EINVAL;
		m = btf_members(t);
		for (i = 0; i < btf_vlen(t); i++, m++) {
			if (strcmp(btf__name_by_offset(btf, m->name_off), member))
				continue;
			*(uint64_t *)(data + btf_member_bit_offset(t, i) / 8) = v;
			return 0;
		}
		return -ENOENT;
	}

	id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	if (id < 0)
		return id;
	bpf_object__for_each_map(map, obj) {
		const char *name = bpf_map__name(map);
		size_t len = strlen(name);

		if (len >= 7 && !strcmp(name + len - 7, ".rodata"))
			break;
	}
	if (!map)
		return -ENOENT;
	data = bpf_map__initial_value(map, &size);
	t = btf__type_by_id(btf, id);
	vsi = btf_var_secinfos(t);
	for (i = 0; i < btf_vlen(t); i++, vsi++) {
		const struct btf_type *var = btf__type_by_id(btf, vsi->type);

		if (strcmp(btf__name_by_offset(btf, var->name_off), member))
			continue;
		if (vsi->size != 8 || vsi->offset + 8 > size)
			return -EINVAL;
		*(uint64_t *)(data + vsi->offset) = v;
		return 0;
	}
	return -ENOENT;
}

static struct bpf_object *load(const char *path, uint64_t cgid,
			       struct bpf_map **ops_map)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	int ret;

	if (!obj) {
		fprintf(stderr, "sub-attach-scale: %s: %m\n", path);
		return NULL;
	}
	*ops_map = struct_ops_map(obj);
	if (!*ops_map) {
		fprintf(stderr, "sub-attach-scale: %s: no struct_ops map\n", path);
		goto err;
	}
	if (cgid && (set_u64(obj, *ops_map, "sub_cgroup_id", cgid) ||
		     set_u64(obj, NULL, "sub_cgroup_id", cgid))) {
		fprintf(stderr, "sub-attach-scale: %s: can't set sub_cgroup_id\n", path);
		goto err;
	}
	ret = bpf_object__load(obj);
	if (ret) {
		fprintf(stderr, "sub-attach-scale: %s: load: %s\n", path, strerror(-ret));
		goto err;
	}
	return obj;
err:
	bpf_object__close(obj);
	return NULL;
}

/* one cycle of the child: load, attach, detach, close */
static int cycle(const char *path, uint64_t cgid, double t[NR_T])
{
	struct bpf_map *ops_map;
	struct bpf_object *obj;
	struct bpf_link *link;
	double t0, t1, t2, t3, t4;

	memset(bpf_cur, 0, sizeof(bpf_cur));
	t0 = now_ms();
	in_load = true;
	obj = load(path, cgid, &ops_map);
	in_load = false;
	if (!obj)
		return -1;
	t1 = now_ms();
	link = bpf_map__attach_struct_ops(ops_map);
	if (!link) {
		fprintf(stderr, "sub-attach-scale: %s: attach: %m\n", path);
		bpf_object__close(obj);
		return -1;
	}
	t2 = now_ms();
	bpf_link__destroy(link);
	t3 = now_ms();
	bpf_object__close(obj);
	t4 = now_ms();

	t[T_LOAD] = t1 - t0;
	t[T_ATTACH] = t2 - t1;
	t[T_DETACH] = t3 - t2;
	t[T_CLOSE] = t4 - t3;
	t[T_TOTAL] = t4 - t0;
	return 0;
}

/* all tasks on the machine, from /proc/loadavg's running/total */
static int machine_tasks(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	int running, total = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%*s %*s %*s %d/%d", &running, &total) != 2)
		total = -1;
	fclose(f);
	return total;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(struct samples *s)
{
	qsort(s->v, s->n, sizeof(s->v[0]), cmp_double);
	if (!s->n)
		return 0;
	return s->n % 2 ? s->v[s->n / 2] : (s->v[s->n / 2 - 1] + s->v[s->n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int rounds = 10, low = 100, high = 10000, child_tasks = 8;
	pid_t idle = 0, child_pid;
	struct bpf_map *root_map;
	struct bpf_object *root;
	struct bpf_link *root_link;
	struct stat st;
	int opt, phase, r, k;

	while ((opt = getopt(argc, argv, "r:l:H:c:")) != -1) {
		switch (opt) {
		case 'r': rounds = atoi(optarg); break;
		case 'l': low = atoi(optarg); break;
		case 'H': high = atoi(optarg); break;
		case 'c': child_tasks = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (argc - optind != 2 || rounds < 2 || rounds > MAX_ROUNDS || low < 1 ||
	    high < low || child_tasks < 1)
		goto usage;

	libbpf_set_print(NULL);
	mkdir(CG_IDLE, 0755);
	mkdir(CG_CHILD, 0755);
	if (stat(CG_CHILD, &st) < 0) {
		perror("sub-attach-scale: " CG_CHILD);
		return 1;
	}

	root = load(argv[optind], 0, &root_map);
	if (!root)
		return 1;
	root_link = bpf_map__attach_struct_ops(root_map);
	if (!root_link) {
		fprintf(stderr, "sub-attach-scale: %s: attach as root: %m\n", argv[optind]);
		return 1;
	}
	child_pid = spawn_sleepers(CG_CHILD, child_tasks);
	if (child_pid < 0)
		return 1;

	printf("sub-attach-scale: root %s, child %s on %s with %d tasks, %d rounds per phase, idle threads in %s: %d and %d\n",
	       argv[optind], argv[optind + 1], CG_CHILD, child_tasks, rounds,
	       CG_IDLE, low, high);
	for (phase = 0; phase < NR_PHASES; phase++) {
		int hi = phase % 2, n = hi ? high : low, tasks;
		double t0 = now_ms(), t[NR_T];

		if (idle)
			stop_sleepers(idle, CG_IDLE);
		idle = spawn_sleepers(CG_IDLE, n);
		if (idle < 0)
			return 1;
		tasks = machine_tasks();
		t0 = (now_ms() - t0) / 1e3;
		sleep(1);
		for (r = 0; r < rounds; r++) {
			if (cycle(argv[optind + 1], st.st_ino, t))
				return 1;
			if (!r)
				continue;	/* warm-up */
			for (k = 0; k < NR_BPF_CMDS; k++)
				bpf_ms[hi][k] += bpf_cur[k];
			for (k = 0; k < NR_T; k++) {
				struct samples *s = &samples[hi][k];

				s->v[s->n++] = t[k];
			}
		}
		printf("phase %d: %d idle threads, %d tasks on the machine (%.1f s to start them), attach median so far %.2f ms\n",
		       phase, n, tasks, t0, median(&samples[hi][T_ATTACH]));
		fflush(stdout);
	}
	stop_sleepers(idle, CG_IDLE);
	stop_sleepers(child_pid, CG_CHILD);
	bpf_link__destroy(root_link);
	bpf_object__close(root);

	printf("%-7s %9s %-15s %9s %-15s %9s %9s\n", "row", "low ms", "(min..max)",
	       "high ms", "(min..max)", "high/low", "(of mins)");
	for (k = 0; k < NR_T; k++) {
		double ml = median(&samples[0][k]), mh = median(&samples[1][k]);
		struct samples *sl = &samples[0][k], *sh = &samples[1][k];
		char rl[32], rh[32];

		snprintf(rl, sizeof(rl), "(%.1f..%.1f)", sl->v[0], sl->v[sl->n - 1]);
		snprintf(rh, sizeof(rh), "(%.1f..%.1f)", sh->v[0], sh->v[sh->n - 1]);
		printf("%-7s %9.2f %-15s %9.2f %-15s %9.2f %9.2f\n", t_names[k],
		       ml, rl, mh, rh, ml > 0 ? mh / ml : 0,
		       sl->v[0] > 0 ? sh->v[0] / sl->v[0] : 0);
	}
	printf("load step, kernel time in bpf() by command, mean per cycle (ms): low, high, high/low\n");
	for (k = 0; k < NR_BPF_CMDS; k++) {
		double l = bpf_ms[0][k] / samples[0][T_LOAD].n;
		double h = bpf_ms[1][k] / samples[1][T_LOAD].n;

		if (l < 0.05 && h < 0.05)
			continue;
		printf("  %-16s %9.2f %9.2f %9.2f\n",
		       bpf_cmd_names[k] ? bpf_cmd_names[k] : "?", l, h, l > 0 ? h / l : 0);
	}
	return 0;
usage:
	fprintf(stderr, "usage: sub-attach-scale [-r ROUNDS] [-l LOW] [-H HIGH] [-c CHILD_TASKS] ROOT.bpf.o CHILD.bpf.o\n");
	return 2;
}
