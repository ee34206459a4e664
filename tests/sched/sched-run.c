/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sched-run: load one scxd scheduler object, attach it, wait, report how
 * the kernel says it ended.
 *
 * For tests and benchmarks only (scxd has its own loader). Generic: it
 * knows nothing about a particular scheduler beyond the conventions in
 * schedulers/include/scxd/common.bpf.h (tunables in .rodata, exit info in
 * a .data global "uei"), and fills a cid-form object's SCX_* values from
 * the running kernel's BTF as scxd does (scxd/kernel-api.c).
 *
 *   sched-run [-t NAME=VALUE]... [-c CGROUP_DIR] [-d SECONDS] [-T] OBJ.bpf.o
 *   sched-run -l OBJ.bpf.o          list tunables: name, type, default
 *
 * Prints "sched-run: OBJ: attached ..." once the struct_ops link exists
 * (with -T, then "sched-run: OBJ: times: open A load B attach C ms": opening
 * the object and setting its values, loading it, the kernel verifying
 * it, and creating the struct_ops link, for tests/bench/scxd-attach),
 * then, when it is stopped (SIGINT/SIGTERM, -d elapsed) or the scheduler
 * exits by itself, one line
 *   sched-run: OBJ: exit kind=N (NAME) code=C reason="..." msg="..."
 * Exit status: 0 when the kernel reports a clean exit (unregistered, done
 * or none), 2 when it reports an error exit, 1 when loading failed.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kernel-api.h"

#define MAX_TUNABLES 32

/* Same layout as tools/sched_ext/include/scx/user_exit_info.h. */
struct uei_view {
	int kind;
	int64_t exit_code;
	char reason[128];
	char msg[1024];
};

struct options {
	const char *obj_path;
	const char *cgroup_dir;
	const char *tunables[MAX_TUNABLES];
	unsigned int n_tunables;
	double duration;
	bool list;
	bool times;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	stop_requested = 1;
}

static void close_objp(struct bpf_object **objp)
{
	if (*objp)
		bpf_object__close(*objp);
}

static void destroy_linkp(struct bpf_link **linkp)
{
	if (*linkp)
		bpf_link__destroy(*linkp);
}

#define _cleanup_(f) __attribute__((cleanup(f)))

static const char *exit_kind_name(int kind)
{
	switch (kind) {
	case 0: return "none";
	case 1: return "done";
	case 64: return "unregistered";
	case 65: return "unregistered by bpf";
	case 66: return "unregistered by kernel";
	case 67: return "sysrq";
	case 68: return "parent exiting";
	case 69: return "killed by the parent";
	case 1024: return "error";
	case 1025: return "error by bpf";
	case 1026: return "error: stall";
	case 1027: return "error: reenqueue limit";
	case 1028: return "error: rescue overrun";
	default: return kind >= 1024 ? "error (unknown kind)" : "unknown";
	}
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* The internal map whose section is @sec (".rodata", ".data"). */
static struct bpf_map *find_internal_map(struct bpf_object *obj, const char *sec)
{
	struct bpf_map *map;
	size_t n = strlen(sec);

	bpf_object__for_each_map(map, obj) {
		const char *name = bpf_map__name(map);
		size_t len = strlen(name);

		if (bpf_map__is_internal(map) && len >= n &&
		    !strcmp(name + len - n, sec))
			return map;
	}
	return NULL;
}

static struct bpf_map *find_struct_ops_map(struct bpf_object *obj)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj)
		if (bpf_map__type(map) == BPF_MAP_TYPE_STRUCT_OPS)
			return map;
	return NULL;
}

/* Strip const/volatile/typedef down to the type that says what a value is. */
static const struct btf_type *resolve_type(const struct btf *btf, uint32_t id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (t && (btf_is_mod(t) || btf_is_typedef(t)))
		t = btf__type_by_id(btf, t->type);
	return t;
}

struct var_ref {
	const char *name;
	const struct btf_type *type;	/* resolved */
	uint32_t offset;
	uint32_t size;
};

/* Find global @name in section @sec of @obj's BTF. -ENOENT if absent. */
static int find_var(const struct btf *btf, const char *sec, const char *name,
		    struct var_ref *ref)
{
	const struct btf_var_secinfo *vsi;
	const struct btf_type *ds;
	int id, i;

	id = btf__find_by_name_kind(btf, sec, BTF_KIND_DATASEC);
	if (id < 0)
		return -ENOENT;
	ds = btf__type_by_id(btf, id);
	vsi = btf_var_secinfos(ds);
	for (i = 0; i < btf_vlen(ds); i++, vsi++) {
		const struct btf_type *var = btf__type_by_id(btf, vsi->type);
		const char *vname = btf__name_by_offset(btf, var->name_off);

		if (name && strcmp(vname, name))
			continue;
		ref->name = vname;
		ref->type = resolve_type(btf, var->type);
		ref->offset = vsi->offset;
		ref->size = vsi->size;
		return 0;
	}
	return -ENOENT;
}

static const char *type_desc(const struct btf *btf, const struct var_ref *ref,
			     char *buf, size_t len)
{
	const struct btf_type *t = ref->type;

	if (!t)
		return "?";
	if (btf_is_int(t)) {
		uint8_t enc = btf_int_encoding(t);

		if (enc & BTF_INT_BOOL)
			return "bool";
		snprintf(buf, len, "%s%u", enc & BTF_INT_SIGNED ? "s" : "u",
			 t->size * 8);
		return buf;
	}
	if (btf_is_enum(t))
		return "enum";
	if (btf_is_array(t))
		return "array";
	return "other";
}

static int read_int(const void *p, uint32_t size, bool is_signed, int64_t *v)
{
	switch (size) {
	case 1: *v = is_signed ? (int64_t)*(const int8_t *)p : (int64_t)*(const uint8_t *)p; return 0;
	case 2: *v = is_signed ? (int64_t)*(const int16_t *)p : (int64_t)*(const uint16_t *)p; return 0;
	case 4: *v = is_signed ? (int64_t)*(const int32_t *)p : (int64_t)*(const uint32_t *)p; return 0;
	case 8: *v = *(const int64_t *)p; return 0;
	}
	return -EINVAL;
}

static int write_int(void *p, uint32_t size, int64_t v)
{
	switch (size) {
	case 1: *(uint8_t *)p = v; return 0;
	case 2: *(uint16_t *)p = v; return 0;
	case 4: *(uint32_t *)p = v; return 0;
	case 8: *(uint64_t *)p = v; return 0;
	}
	return -EINVAL;
}

static int list_tunables(struct bpf_object *obj, const char *obj_path)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *vsi;
	const struct btf_type *ds;
	struct bpf_map *rodata;
	const char *data;
	size_t data_size;
	int id, i;

	rodata = find_internal_map(obj, ".rodata");
	id = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -ENOENT;
	if (!rodata || id < 0) {
		fprintf(stderr, "sched-run: %s: no .rodata, no tunables\n", obj_path);
		return 0;
	}
	data = bpf_map__initial_value(rodata, &data_size);
	ds = btf__type_by_id(btf, id);
	vsi = btf_var_secinfos(ds);
	for (i = 0; i < btf_vlen(ds); i++, vsi++) {
		const struct btf_type *var = btf__type_by_id(btf, vsi->type);
		struct var_ref ref = {
			.name = btf__name_by_offset(btf, var->name_off),
			.type = resolve_type(btf, var->type),
			.offset = vsi->offset,
			.size = vsi->size,
		};
		char buf[16];
		int64_t v;

		if (!ref.type || !btf_is_int(ref.type) ||
		    ref.offset + ref.size > data_size)
			continue;	/* strings, format buffers and the like */
		if (read_int(data + ref.offset, ref.size,
			     btf_int_encoding(ref.type) & BTF_INT_SIGNED, &v) < 0)
			continue;
		printf("%s %s %" PRId64 "\n", ref.name,
		       type_desc(btf, &ref, buf, sizeof(buf)), v);
	}
	return 0;
}

static int parse_value(const struct var_ref *ref, const char *s, int64_t *v)
{
	char *end;

	if (btf_int_encoding(ref->type) & BTF_INT_BOOL) {
		if (!strcmp(s, "true") || !strcmp(s, "1"))
			*v = 1;
		else if (!strcmp(s, "false") || !strcmp(s, "0"))
			*v = 0;
		else
			return -EINVAL;
		return 0;
	}
	errno = 0;
	if (btf_int_encoding(ref->type) & BTF_INT_SIGNED)
		*v = strtoll(s, &end, 0);
	else
		*v = (int64_t)strtoull(s, &end, 0);
	if (errno || end == s || *end)
		return -EINVAL;
	return 0;
}

static int set_tunable(struct bpf_object *obj, const char *obj_path,
		       const char *assignment)
{
	const struct btf *btf = bpf_object__btf(obj);
	char name[128];
	const char *eq = strchr(assignment, '=');
	struct bpf_map *rodata;
	struct var_ref ref;
	size_t data_size;
	void *data;
	int64_t v;
	int r;

	if (!eq || eq == assignment || (size_t)(eq - assignment) >= sizeof(name)) {
		fprintf(stderr, "sched-run: %s: tunable \"%s\" is not NAME=VALUE\n",
			obj_path, assignment);
		return -EINVAL;
	}
	memcpy(name, assignment, eq - assignment);
	name[eq - assignment] = '\0';

	rodata = find_internal_map(obj, ".rodata");
	if (!rodata || !btf || find_var(btf, ".rodata", name, &ref) < 0) {
		fprintf(stderr, "sched-run: %s: no tunable \"%s\" (see -l)\n",
			obj_path, name);
		return -ENOENT;
	}
	if (!ref.type || !btf_is_int(ref.type)) {
		fprintf(stderr, "sched-run: %s: tunable \"%s\" is not a number or bool\n",
			obj_path, name);
		return -EINVAL;
	}
	r = parse_value(&ref, eq + 1, &v);
	if (r < 0) {
		fprintf(stderr, "sched-run: %s: bad value \"%s\" for tunable %s\n",
			obj_path, eq + 1, name);
		return r;
	}
	data = bpf_map__initial_value(rodata, &data_size);
	if (!data || ref.offset + ref.size > data_size)
		return -EINVAL;
	return write_int((char *)data + ref.offset, ref.size, v);
}

/*
 * Run as a child scheduler on @cgroup_dir: sub_cgroup_id in the ops (and
 * in .rodata, for schedulers that want to know their role).
 */
static int set_sub_cgroup(struct bpf_object *obj, struct bpf_map *ops_map,
			  const char *obj_path, const char *cgroup_dir)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_member *m;
	const struct btf_type *st;
	struct var_ref ref;
	struct stat stbuf;
	size_t ops_size;
	void *ops;
	int i;

	if (stat(cgroup_dir, &stbuf) < 0) {
		fprintf(stderr, "sched-run: %s: cgroup %s: %m\n", obj_path, cgroup_dir);
		return -errno;
	}

	st = btf__type_by_id(btf, bpf_map__btf_value_type_id(ops_map));
	ops = bpf_map__initial_value(ops_map, &ops_size);
	if (!st || !ops)
		return -EINVAL;
	m = btf_members(st);
	for (i = 0; i < btf_vlen(st); i++, m++) {
		if (strcmp(btf__name_by_offset(btf, m->name_off), "sub_cgroup_id"))
			continue;
		*(uint64_t *)((char *)ops + btf_member_bit_offset(st, i) / 8) =
			stbuf.st_ino;
		break;
	}
	if (i == btf_vlen(st)) {
		fprintf(stderr, "sched-run: %s: built without sub-scheduler support, cannot attach to cgroup %s\n",
			obj_path, cgroup_dir);
		return -EOPNOTSUPP;
	}

	if (find_var(btf, ".rodata", "sub_cgroup_id", &ref) == 0) {
		struct bpf_map *rodata = find_internal_map(obj, ".rodata");
		size_t data_size;
		char *data = rodata ? bpf_map__initial_value(rodata, &data_size) : NULL;

		if (data && ref.size == 8 && ref.offset + 8 <= data_size)
			*(uint64_t *)(data + ref.offset) = stbuf.st_ino;
	}
	return 0;
}

static const struct uei_view *find_uei(struct bpf_object *obj)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *data_map = find_internal_map(obj, ".data");
	struct var_ref ref;
	size_t size;
	char *data;

	if (!data_map || !btf || find_var(btf, ".data", "uei", &ref) < 0)
		return NULL;
	data = bpf_map__initial_value(data_map, &size);
	if (!data || ref.offset + sizeof(struct uei_view) > size)
		return NULL;
	return (const struct uei_view *)(data + ref.offset);
}

/*
 * Print the scheduler's counters: every global in .bss whose name starts
 * with "stat_", read from the live mapping once the scheduler is
 * detached, as u64 words (an array prints all of them), one line each:
 * "sched-run: OBJ: stat NAME V...". Benchmarks copy these lines beside
 * their figures; a scheduler without such globals prints nothing.
 */
static void report_stats(struct bpf_object *obj, const char *obj_path)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *bss = find_internal_map(obj, ".bss");
	const struct btf_var_secinfo *vsi;
	const struct btf_type *ds;
	const char *data;
	size_t size;
	int id, i;

	if (!btf || !bss)
		return;
	id = btf__find_by_name_kind(btf, ".bss", BTF_KIND_DATASEC);
	data = bpf_map__initial_value(bss, &size);
	if (id < 0 || !data)
		return;
	ds = btf__type_by_id(btf, id);
	vsi = btf_var_secinfos(ds);
	for (i = 0; i < btf_vlen(ds); i++, vsi++) {
		const struct btf_type *var = btf__type_by_id(btf, vsi->type);
		const char *name = btf__name_by_offset(btf, var->name_off);
		uint64_t v;
		size_t at;

		if (strncmp(name, "stat_", 5) || vsi->size % sizeof(v) ||
		    vsi->offset + vsi->size > size)
			continue;
		printf("sched-run: %s: stat %s", obj_path, name + 5);
		for (at = 0; at < vsi->size; at += sizeof(v)) {
			memcpy(&v, data + vsi->offset + at, sizeof(v));
			printf(" %llu", (unsigned long long)v);
		}
		putchar('\n');
	}
	fflush(stdout);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int wait_for_end(const struct uei_view *uei, double duration)
{
	double deadline = duration > 0 ? now_s() + duration : 0;

	while (!stop_requested) {
		if (uei && __atomic_load_n(&uei->kind, __ATOMIC_ACQUIRE))
			return 1;	/* it exited by itself */
		if (deadline && now_s() >= deadline)
			return 0;
		/*
		 * A signal cuts the sleep short; a scheduler that exits by
		 * itself is seen within 250 ms. Shorter costs a test with 64
		 * loaders most of the CPU share of the tasks beside them.
		 */
		usleep(250 * 1000);
	}
	return 0;
}

static int report_exit(const char *obj_path, const struct uei_view *uei)
{
	int kind;

	if (!uei) {
		printf("sched-run: %s: exit kind=? (no uei in object)\n", obj_path);
		return 0;
	}
	kind = __atomic_load_n(&uei->kind, __ATOMIC_ACQUIRE);
	printf("sched-run: %s: exit kind=%d (%s) code=%" PRId64 " reason=\"%.*s\" msg=\"%.*s\"\n",
	       obj_path, kind, exit_kind_name(kind), uei->exit_code,
	       (int)sizeof(uei->reason), uei->reason,
	       (int)sizeof(uei->msg), uei->msg);
	fflush(stdout);
	return kind >= 1024 ? 2 : 0;
}

/* The object file's bytes, for kernel_api_set_enums(). */
static char *read_object(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	char *image = NULL;
	long n;

	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (image = malloc(n)) && fread(image, 1, n, f) != (size_t)n) {
		free(image);
		image = NULL;
	}
	if (image)
		*size = n;
	if (f)
		fclose(f);
	return image;
}

/* SCX_ENUM_INIT, as scxd's loader does it. */
static int set_kernel_enums(struct bpf_object *obj, const char *obj_path)
{
	struct btf *kbtf;
	char *image, *reason = NULL;
	size_t size = 0;
	int r;

	if (!kernel_api_has_enum_vars(obj))
		return 0;
	kbtf = btf__load_vmlinux_btf();
	image = read_object(obj_path, &size);
	if (!kbtf || !image) {
		fprintf(stderr, "sched-run: %s: cannot read the kernel's BTF or the object\n", obj_path);
		btf__free(kbtf);
		free(image);
		return -EIO;
	}
	r = kernel_api_set_enums(obj, obj_path, image, size, kbtf, &reason);
	if (r < 0)
		fprintf(stderr, "sched-run: %s\n", reason ?: strerror(-r));
	free(reason);
	free(image);
	btf__free(kbtf);
	return r;
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int run(const struct options *o)
{
	double t_open = mono_ms(), t_load, t_attach, t_done;
	_cleanup_(close_objp) struct bpf_object *obj = NULL;
	_cleanup_(destroy_linkp) struct bpf_link *link = NULL;
	const struct uei_view *uei;
	struct bpf_map *ops_map;
	unsigned int i;
	int r;

	obj = bpf_object__open_file(o->obj_path, NULL);
	if (!obj) {
		r = -errno;
		fprintf(stderr, "sched-run: %s: cannot open: %s\n", o->obj_path, strerror(-r));
		return 1;
	}
	if (o->list)
		return list_tunables(obj, o->obj_path) < 0;

	ops_map = find_struct_ops_map(obj);
	if (!ops_map) {
		fprintf(stderr, "sched-run: %s: no struct_ops map, not a scheduler\n", o->obj_path);
		return 1;
	}
	for (i = 0; i < o->n_tunables; i++)
		if (set_tunable(obj, o->obj_path, o->tunables[i]) < 0)
			return 1;
	if (o->cgroup_dir && set_sub_cgroup(obj, ops_map, o->obj_path, o->cgroup_dir) < 0)
		return 1;
	if (set_kernel_enums(obj, o->obj_path) < 0)
		return 1;
	if (!o->cgroup_dir) {
		struct btf *kbtf = btf__load_vmlinux_btf();

		/* a root upstream lets children with SCX_OPS_TID_TO_TASK attach */
		r = kbtf ? kernel_api_set_root_flags(ops_map, bpf_object__btf(obj), kbtf) : 0;
		btf__free(kbtf);
		if (r < 0) {
			fprintf(stderr, "sched-run: %s: no 8-byte flags in its struct_ops\n",
				o->obj_path);
			return 1;
		}
	}

	t_load = mono_ms();
	r = bpf_object__load(obj);
	if (r < 0) {
		fprintf(stderr, "sched-run: %s: load failed: %s\n", o->obj_path, strerror(-r));
		return 1;
	}
	t_attach = mono_ms();
	link = bpf_map__attach_struct_ops(ops_map);
	t_done = mono_ms();
	if (!link) {
		r = -errno;
		fprintf(stderr, "sched-run: %s: attach failed: %s\n", o->obj_path, strerror(-r));
		return 1;
	}
	printf("sched-run: %s: attached %s%s\n", o->obj_path,
	       o->cgroup_dir ? "on cgroup " : "as root",
	       o->cgroup_dir ? o->cgroup_dir : "");
	if (o->times)
		printf("sched-run: %s: times: open %.3f load %.3f attach %.3f ms\n", o->obj_path,
		       t_load - t_open, t_attach - t_load, t_done - t_attach);
	fflush(stdout);

	uei = find_uei(obj);
	wait_for_end(uei, o->duration);
	bpf_link__destroy(link);	/* returns once the kernel disabled it */
	link = NULL;
	report_stats(obj, o->obj_path);
	return report_exit(o->obj_path, uei);
}

static int usage(FILE *f)
{
	fputs("usage: sched-run [-t NAME=VALUE]... [-c CGROUP_DIR] [-d SECONDS] [-T] OBJ.bpf.o\n"
	      "       sched-run -l OBJ.bpf.o\n", f);
	return f == stderr ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct options o = {};
	struct sigaction sa = { .sa_handler = on_signal };
	int c;

	while ((c = getopt(argc, argv, "t:c:d:lTh")) != -1) {
		switch (c) {
		case 't':
			if (o.n_tunables == MAX_TUNABLES) {
				fprintf(stderr, "sched-run: more than %d tunables\n", MAX_TUNABLES);
				return 1;
			}
			o.tunables[o.n_tunables++] = optarg;
			break;
		case 'c':
			o.cgroup_dir = optarg;
			break;
		case 'd':
			o.duration = atof(optarg);
			break;
		case 'l':
			o.list = true;
			break;
		case 'T':
			o.times = true;
			break;
		case 'h':
			return usage(stdout);
		default:
			return usage(stderr);
		}
	}
	if (optind != argc - 1)
		return usage(stderr);
	o.obj_path = argv[optind];

	libbpf_set_print(libbpf_quiet);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return run(&o);
}
