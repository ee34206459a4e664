// SPDX-License-Identifier: GPL-2.0
/*
 * Applying steps with libbpf. No skeletons: scxd loads any scheduler
 * generically, so everything is found by name in the object's BTF —
 * tunables in the .rodata DATASEC, sub_cgroup_id and name in the
 * struct_ops type, uei in .data.
 */

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apply.h"
#include "file.h"
#include "kernel-api.h"
#include "prog-assoc.h"
#include "util.h"

/*
 * What libbpf said during one attach, for the error reason: warnings and
 * errors joined on one line, and of a verifier log only its first line
 * (which says what went wrong); the whole log goes to debug output.
 */
static __thread char libbpf_tail[1024];	/* per thread: loads run in parallel */

static void tail_append(const char *s, size_t n)
{
	size_t have = strlen(libbpf_tail);

	if (have && have + 2 < sizeof(libbpf_tail)) {
		memcpy(libbpf_tail + have, "; ", 3);
		have += 2;
	}
	if (have + n >= sizeof(libbpf_tail))
		n = sizeof(libbpf_tail) - have - 1;
	memcpy(libbpf_tail + have, s, n);
	libbpf_tail[have + n] = '\0';
}

static int libbpf_capture(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char msg[8192];
	const char *log, *p;

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	log = strstr(msg, "-- BEGIN PROG LOAD LOG --");
	if (log) {
		log += strlen("-- BEGIN PROG LOAD LOG --");
		log += strspn(log, "\n");
		tail_append(log, strcspn(log, "\n"));
		return 0;
	}
	p = msg;
	if (startswith(p, "libbpf: "))
		p += strlen("libbpf: ");
	tail_append(p, strcspn(p, "\n"));
	return 0;
}

/*
 * The kernel's BTF, for the values of its enumerators: read once, when the
 * first object that needs it is opened (the running kernel does not change
 * under us), and kept. Loads run in parallel; lookups only read it.
 */
static pthread_mutex_t kernel_btf_lock = PTHREAD_MUTEX_INITIALIZER;
static struct btf *kernel_btf_cache;

static int kernel_btf(const char *path, const struct btf **ret)
{
	int r = 0;

	pthread_mutex_lock(&kernel_btf_lock);
	if (!kernel_btf_cache) {
		errno = 0;
		kernel_btf_cache = path ? btf__parse(path, NULL) : btf__load_vmlinux_btf();
		if (!kernel_btf_cache)
			r = errno ? -errno : -ENODATA;
	}
	*ret = kernel_btf_cache;
	pthread_mutex_unlock(&kernel_btf_lock);
	return r;
}

static struct bpf_map *find_map(struct bpf_object *obj, const char *suffix, bool struct_ops)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		const char *name = bpf_map__name(m);
		size_t n = strlen(name), s = suffix ? strlen(suffix) : 0;

		if (struct_ops && bpf_map__type(m) == BPF_MAP_TYPE_STRUCT_OPS)
			return m;
		if (!struct_ops && bpf_map__is_internal(m) && n >= s &&
		    streq(name + n - s, suffix))
			return m;
	}
	return NULL;
}

/* Offset and size of a variable in a DATASEC of obj's BTF. */
static int datasec_var(const struct btf *btf, const char *sec, const char *var,
		       size_t *off, size_t *size)
{
	__s32 id = btf__find_by_name_kind(btf, sec, BTF_KIND_DATASEC);
	const struct btf_type *t;
	const struct btf_var_secinfo *vsi;

	if (id < 0)
		return -ENOENT;
	t = btf__type_by_id(btf, id);
	vsi = btf_var_secinfos(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, vsi++) {
		const struct btf_type *v = btf__type_by_id(btf, vsi->type);

		if (v && streq(btf__name_by_offset(btf, v->name_off), var)) {
			*off = vsi->offset;
			*size = vsi->size;
			return 0;
		}
	}
	return -ENOENT;
}

static int struct_member(const struct btf *btf, __u32 type_id, const char *name,
			 size_t *off, size_t *size)
{
	const struct btf_type *t = btf__type_by_id(btf, type_id);
	const struct btf_member *m;

	if (!t || !btf_is_struct(t))
		return -EINVAL;
	m = btf_members(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, m++) {
		if (!streq(btf__name_by_offset(btf, m->name_off), name))
			continue;
		*off = btf_member_bit_offset(t, i) / 8;
		*size = btf__resolve_size(btf, m->type);
		return 0;
	}
	return -ENOENT;
}

static void write_le(unsigned char *p, uint64_t v, size_t size)
{
	for (size_t i = 0; i < size; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

__attribute__((format(printf, 3, 4)))
static int fail(int r, char **reason, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (asprintf(reason, "%s%s%s", msg ?: "?", *libbpf_tail ? "; libbpf: " : "",
		     libbpf_tail) < 0)
		*reason = NULL;
	return r < 0 ? r : -EINVAL;
}

/* Tunables and sub_cgroup_id into .rodata. */
static int set_rodata(struct bpf_object *obj, const struct sched_node *node, uint64_t cgid,
		      char **reason)
{
	const struct btf *btf = bpf_object__btf(obj);
	struct bpf_map *rodata = find_map(obj, ".rodata", false);
	unsigned char *data;
	size_t size = 0, off, vsize;

	if (!rodata)
		return node->n_tunables ? fail(-ENOENT, reason, "object has no .rodata") : 0;
	data = (unsigned char *)bpf_map__initial_value(rodata, &size);
	if (!data)
		return fail(-EINVAL, reason, "cannot access .rodata");
	for (size_t i = 0; i < node->n_tunables; i++) {
		const struct tunable_value *tv = &node->tunables[i];

		if (datasec_var(btf, ".rodata", tv->name, &off, &vsize) < 0 ||
		    vsize != tv->size || off + vsize > size)
			return fail(-ENOENT, reason, "tunable %s not in .rodata as a %u-byte variable",
				    tv->name, tv->size);
		write_le(data + off, tv->raw, vsize);
	}
	if (datasec_var(btf, ".rodata", "sub_cgroup_id", &off, &vsize) == 0 &&
	    vsize == 8 && off + 8 <= size)
		write_le(data + off, cgid == 1 ? 0 : cgid, 8);
	return 0;
}

int apply_set_kernel_enums(struct bpf_object *obj, const char *obj_path, char *image,
			   size_t image_size, const char *kernel_btf_path, char **reason)
{
	const struct btf *kbtf = NULL;
	int r;

	if (!kernel_api_has_enum_vars(obj))
		return 0;
	r = kernel_btf(kernel_btf_path, &kbtf);
	if (r < 0)
		return fail(r, reason, "%s: cannot read the kernel's BTF (%s) for its SCX_* values: %s",
			    obj_path, kernel_btf_path ?: "/sys/kernel/btf/vmlinux", strerror(-r));
	return kernel_api_set_enums(obj, obj_path, image, image_size, kbtf, reason);
}

/* sub_cgroup_id into the struct_ops value; the ops name out of it. */
static int set_struct_ops(struct bpf_object *obj, struct bpf_map *st, const char *cgroup,
			  uint64_t cgid, char **ops_name, char **reason)
{
	const struct btf *btf = bpf_object__btf(obj);
	__u32 type_id = bpf_map__btf_value_type_id(st);
	unsigned char *data;
	size_t size = 0, off, msize;

	data = (unsigned char *)bpf_map__initial_value(st, &size);
	if (!data)
		return fail(-EOPNOTSUPP, reason,
			    "libbpf cannot set struct_ops fields (built with a libbpf older than 1.4?)");
	if (struct_member(btf, type_id, "name", &off, &msize) == 0 && off + msize <= size)
		*ops_name = strndup((const char *)data + off, msize);
	if (cgid == 1)
		return 0;
	if (struct_member(btf, type_id, "sub_cgroup_id", &off, &msize) < 0 || msize != 8 ||
	    off + 8 > size)
		return fail(-EOPNOTSUPP, reason,
			    "object's sched_ext_ops has no sub_cgroup_id: built without sub-scheduler support, cannot attach to %s",
			    cgroup);
	write_le(data + off, cgid, 8);
	return 0;
}

/* The node's pin directory: by its pin name, or where an older scxd pinned it. */
static int pin_paths(const struct scxd_paths *paths, const char *cgroup, char *dir,
		     size_t len)
{
	_cleanup_free_ char *name = NULL;
	int r = pin_dir_find(paths, cgroup, &name);

	if (r < 0)
		return r;
	snprintf(dir, len, "%s/%s", paths->pin_dir, name);
	return 0;
}

void apply_object_done(struct apply_object *o)
{
	if (o->obj)
		bpf_object__close(o->obj);
	free(o->ops_name);
	*o = (struct apply_object){ .uei_offset = SIZE_MAX };
}

static void apply_object_donep(struct apply_object *o)
{
	apply_object_done(o);
}

int apply_open(const char *obj_path, const char *kernel_btf_path, const struct sched_node *node,
	       uint64_t cgid, struct apply_object *ret, char **reason)
{
	_cleanup_(apply_object_donep) struct apply_object o = { .uei_offset = SIZE_MAX };
	_cleanup_free_ char *why = NULL, *image = NULL;
	size_t off, size;
	int r;

	*reason = NULL;
	*ret = (struct apply_object){ .uei_offset = SIZE_MAX };
	libbpf_tail[0] = '\0';
	libbpf_set_print(libbpf_capture);

	/* Checked and read once; libbpf parses those bytes (file.h). */
	r = file_read(obj_path, FILE_OBJECT_MAX, FILE_TRUSTED, &image, &size, &why);
	if (r < 0)
		return fail(r, reason, "%s", why ?: strerror(-r));
	o.obj = bpf_object__open_mem(image, size, &(struct bpf_object_open_opts){
		.sz = sizeof(struct bpf_object_open_opts), .object_name = node->scheduler,
	});
	if (!o.obj)
		return fail(-errno, reason, "cannot open %s: %s", obj_path, strerror(errno));
	o.st = find_map(o.obj, NULL, true);
	if (!o.st)
		return fail(-ENOENT, reason, "%s has no struct_ops map", obj_path);
	r = set_rodata(o.obj, node, cgid, reason);
	if (r < 0)
		return r;
	r = apply_set_kernel_enums(o.obj, obj_path, image, size, kernel_btf_path, reason);
	if (r < 0)
		return r;
	r = set_struct_ops(o.obj, o.st, node->cgroup, cgid, &o.ops_name, reason);
	if (r < 0)
		return r;
	if (cgid == 1) {
		const struct btf *kbtf;

		/* no kernel BTF: nothing for children to need either */
		if (kernel_btf(kernel_btf_path, &kbtf) == 0 &&
		    kernel_api_set_root_flags(o.st, bpf_object__btf(o.obj), kbtf) < 0)
			return fail(-EINVAL, reason, "%s: no 8-byte flags in its struct_ops",
				    obj_path);
	}
	o.data = find_map(o.obj, ".data", false);
	if (o.data && datasec_var(bpf_object__btf(o.obj), ".data", "uei", &off, &size) == 0)
		o.uei_offset = off;
	*ret = o;
	o = (struct apply_object){};
	return 0;
}

/*
 * Does BTF type @id hold a field the kernel cancels with the map's last
 * user reference: a struct bpf_timer, bpf_wq or bpf_task_work, at any
 * depth of structs, unions and arrays?
 */
static bool btf_holds_async(const struct btf *btf, __u32 id, unsigned depth)
{
	static const char *const async[] = { "bpf_timer", "bpf_wq", "bpf_task_work" };
	const struct btf_type *t;
	const char *name;

	if (depth > 8)
		return false;
	t = btf__type_by_id(btf, id);
	while (t && (btf_is_mod(t) || btf_is_typedef(t)))
		t = btf__type_by_id(btf, t->type);
	if (!t)
		return false;
	if (btf_is_array(t))
		return btf_holds_async(btf, btf_array(t)->type, depth + 1);
	if (!btf_is_composite(t))
		return false;
	name = btf__name_by_offset(btf, t->name_off);
	for (size_t i = 0; name && i < ELEMENTSOF(async); i++)
		if (!strcmp(name, async[i]))
			return true;
	for (unsigned i = 0; i < btf_vlen(t); i++)
		if (btf_holds_async(btf, btf_members(t)[i].type, depth + 1))
			return true;
	return false;
}

/*
 * Maps whose contents the kernel drops with their last user reference (an
 * fd or a pin) rather than with the programs using them: a timer, wq or
 * task_work in a value is cancelled then, a program array emptied. The
 * link's pin keeps the scheduler's programs and through them its maps, but
 * not those references: cells' layout timer stopped for good the moment
 * scxd closed its object. Such maps are pinned beside the link.
 */
bool apply_map_needs_pin(const struct bpf_object *obj, const struct bpf_map *map)
{
	const struct btf *btf = bpf_object__btf(obj);
	__u32 id = bpf_map__btf_value_type_id(map);

	if (bpf_map__type(map) == BPF_MAP_TYPE_PROG_ARRAY)
		return true;
	return btf && id && btf_holds_async(btf, id, 0);
}

/*
 * Pin the link, the .data map and the maps that need a user reference
 * (apply_map_needs_pin(), as "map-NAME": bpffs refuses names with a dot) under the node's directory.
 */
static int pin_link(const struct scxd_paths *paths, const char *cgroup, struct bpf_link *link,
		    struct apply_object *o, char **reason)
{
	char dir[4096], pin[4200], name[PIN_NAME_LEN + 1];
	struct bpf_map *map;
	int r = 0;

	pin_name(cgroup, name);
	snprintf(dir, sizeof(dir), "%s/%s", paths->pin_dir, name);
	if (mkdir(paths->pin_dir, 0700) < 0 && errno != EEXIST)
		r = -errno;
	if (r == 0 && mkdir(dir, 0700) < 0 && errno != EEXIST)
		r = -errno;
	snprintf(pin, sizeof(pin), "%s/link", dir);
	if (r == 0)
		r = bpf_link__pin(link, pin);
	if (r < 0)
		return fail(r, reason, "cannot pin link at %s: %s", pin, strerror(-r));
	if (o->data) {
		snprintf(pin, sizeof(pin), "%s/data", dir);
		unlink(pin);
		if (bpf_map__pin(o->data, pin) < 0)
			o->uei_offset = SIZE_MAX;
	}
	bpf_object__for_each_map(map, o->obj) {
		if (!apply_map_needs_pin(o->obj, map))
			continue;
		snprintf(pin, sizeof(pin), "%s/map-%s", dir, bpf_map__name(map));
		unlink(pin);
		r = bpf_map__pin(map, pin);
		if (r < 0)
			return fail(r, reason, "cannot pin map %s (it holds timers) at %s: %s",
				    bpf_map__name(map), pin, strerror(-r));
	}
	return 0;
}

int apply_load(const struct scxd_paths *paths, const struct sched_node *node, uint64_t cgid,
	       struct apply_object *ret, char **reason)
{
	_cleanup_(apply_object_donep) struct apply_object o = { .uei_offset = SIZE_MAX };
	_cleanup_free_ char *obj_path = NULL;
	int r;

	*ret = (struct apply_object){ .uei_offset = SIZE_MAX };
	if (asprintf(&obj_path, "%s/%s.bpf.o", paths->sched_dir, node->scheduler) < 0)
		return -ENOMEM;
	r = apply_open(obj_path, paths->kernel_btf, node, cgid, &o, reason);
	if (r < 0)
		return r;
	r = bpf_object__load(o.obj);
	if (r < 0)
		return fail(r, reason, "loading %s failed: %s", obj_path, strerror(-r));
	*ret = o;
	o = (struct apply_object){};
	return 0;
}

int apply_commit(const struct scxd_paths *paths, const struct sched_node *node, uint64_t cgid,
		 struct apply_object *o, char **reason)
{
	const char *prog_name;
	struct pin_record rec;
	struct bpf_link *link;
	uint64_t start;
	int r;

	*reason = NULL;
	libbpf_tail[0] = '\0';
	r = prog_assoc_struct_ops(o->obj, o->st, &prog_name);
	if (r < 0)
		return fail(r, reason, "cannot associate program %s of %s with its scheduler: %s",
			    prog_name, node->scheduler, strerror(-r));
	start = now_usec();
	link = bpf_map__attach_struct_ops(o->st);
	o->enable_usec = now_usec() - start;
	if (!link)
		return fail(-errno, reason, "kernel refused to attach %s: %s", node->scheduler,
			    strerror(errno));
	r = pin_link(paths, node->cgroup, link, o, reason);
	if (r < 0) {
		bpf_link__destroy(link); /* detaches: nothing unpinned stays behind */
		return r;
	}
	/*
	 * The pin holds the link now: closing our fd leaves it attached. (A
	 * bpf_link__disconnect() here would leak the fd: libbpf closes a
	 * struct_ops link's fd only in its detach callback.)
	 */
	bpf_link__destroy(link);

	rec = (struct pin_record){
		.cgroup = node->cgroup, .scheduler = node->scheduler, .ops = o->ops_name,
		.cgid = cgid, .uei_offset = o->uei_offset,
		.tunables = node->tunables, .n_tunables = node->n_tunables,
	};
	r = pin_record_write(paths, &rec);
	if (r < 0)
		return fail(r, reason, "attached, but cannot record it in %s: %s",
			    paths->state_dir, strerror(-r));
	return 0;
}

/* ---- loading several objects at once ---- */

struct load_pool {
	const struct scxd_paths *paths;
	struct apply_load_job *jobs;
	size_t n;
	size_t next;			/* the next job to take, under lock */
	unsigned running;		/* workers not finished, under lock */
	pthread_mutex_t lock;
	pthread_cond_t finished;	/* a worker finished */
};

static struct apply_load_job *load_pool_take(struct load_pool *p)
{
	struct apply_load_job *job = NULL;

	pthread_mutex_lock(&p->lock);
	if (p->next < p->n)
		job = &p->jobs[p->next++];
	pthread_mutex_unlock(&p->lock);
	return job;
}

static void load_job_run(struct load_pool *p, struct apply_load_job *job)
{
	uint64_t start = now_usec();

	job->r = apply_load(p->paths, job->node, job->cgid, &job->obj, &job->reason);
	job->load_usec = now_usec() - start;
}

static void *load_worker(void *userdata)
{
	struct load_pool *p = userdata;
	struct apply_load_job *job;

	while ((job = load_pool_take(p)))
		load_job_run(p, job);
	pthread_mutex_lock(&p->lock);
	p->running--;
	pthread_cond_signal(&p->finished);
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Wait for the workers, calling tick at least once a second meanwhile. */
static void load_pool_wait(struct load_pool *p, void (*tick)(void *), void *userdata)
{
	pthread_mutex_lock(&p->lock);
	while (p->running > 0) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		(void) pthread_cond_timedwait(&p->finished, &p->lock, &until);
		if (tick) {
			pthread_mutex_unlock(&p->lock);
			tick(userdata);
			pthread_mutex_lock(&p->lock);
		}
	}
	pthread_mutex_unlock(&p->lock);
}

int apply_load_many(const struct scxd_paths *paths, struct apply_load_job *jobs, size_t n,
		    unsigned workers, void (*tick)(void *), void *userdata)
{
	struct load_pool p = { .paths = paths, .jobs = jobs, .n = n,
			       .lock = PTHREAD_MUTEX_INITIALIZER,
			       .finished = PTHREAD_COND_INITIALIZER };
	pthread_t threads[APPLY_LOAD_WORKERS_MAX];
	unsigned started = 0;
	struct apply_load_job *job;

	/* libbpf's print hook is global: set it before anyone loads */
	libbpf_set_print(libbpf_capture);
	for (size_t i = 0; i < n; i++)
		jobs[i].obj = (struct apply_object){ .uei_offset = SIZE_MAX };
	workers = workers < 1 ? 1 : workers > APPLY_LOAD_WORKERS_MAX ? APPLY_LOAD_WORKERS_MAX : workers;
	/*
	 * The caller's thread only waits and ticks: the verifier can take
	 * longer over one object than the watchdog allows (seconds under
	 * emulation for a cid-form object), and the ticks must go on.
	 */
	p.running = workers < n ? workers : (unsigned)n;
	for (; started < p.running; started++)
		if (pthread_create(&threads[started], NULL, load_worker, &p) != 0)
			break;
	p.running = started;
	if (started > 0)
		load_pool_wait(&p, tick, userdata);
	/* no thread could start: load here, ticking between objects */
	while ((job = load_pool_take(&p))) {
		load_job_run(&p, job);
		if (tick)
			tick(userdata);
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	pthread_cond_destroy(&p.finished);
	pthread_mutex_destroy(&p.lock);
	return 0;
}

/* Remove what else is pinned in a detached node's directory, and it. */
static void unpin_rest(const char *dir)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			(void) unlinkat(dirfd(d), de->d_name, 0);
	(void) rmdir(dir);
}

int apply_detach(const struct scxd_paths *paths, const char *cgroup)
{
	char dir[4096], pin[4200];
	int fd, r;

	r = pin_paths(paths, cgroup, dir, sizeof(dir));
	if (r < 0)
		return r;
	snprintf(pin, sizeof(pin), "%s/link", dir);
	fd = bpf_obj_get(pin);
	if (fd >= 0) {
		/* Detach now, even if someone else holds the link open. */
		bpf_link_detach(fd);
		close(fd);
	}
	if (unlink(pin) < 0 && errno != ENOENT)
		return -errno;
	unpin_rest(dir);
	return pin_record_remove(paths, cgroup);
}

int apply_read_exit(const struct scxd_paths *paths, const struct pin_record *rec,
		    struct sched_exit *ret)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info), zero = 0;
	_cleanup_free_ unsigned char *value = NULL;
	_cleanup_close_ int fd = -1;
	char dir[4096], pin[4200];

	*ret = (struct sched_exit){};
	if (rec->uei_offset == SIZE_MAX)
		return -ENODATA;
	if (rec->pin)
		snprintf(dir, sizeof(dir), "%s/%s", paths->pin_dir, rec->pin);
	else if (pin_paths(paths, rec->cgroup, dir, sizeof(dir)) < 0)
		return -ENODATA;
	snprintf(pin, sizeof(pin), "%s/data", dir);
	fd = bpf_obj_get(pin);
	if (fd < 0)
		return -ENODATA;
	if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0 ||
	    rec->uei_offset > info.value_size ||
	    info.value_size - rec->uei_offset < 16 + SCHED_EXIT_REASON_LEN + SCHED_EXIT_MSG_LEN)
		return -ENODATA;
	value = calloc(1, info.value_size);
	if (!value)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &zero, value) < 0)
		return -ENODATA;
	sched_exit_from_uei(value + rec->uei_offset, ret);
	return ret->kind ? 0 : -ENODATA;
}
