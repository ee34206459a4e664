// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the actual state. The kernel's sysfs tree is the truth about
 * what runs; scxd's records say which of those it attached (and with what
 * tunables), so that a restarted scxd adopts them instead of reloading.
 * A record whose scheduler the kernel no longer runs is reported as not
 * live: the scheduler exited, and the daemon logs why and retries.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "actual.h"
#include "file.h"
#include "match.h"
#include "scope.h"
#include "util.h"

/* ---- sysfs ---- */

#define SYSFS_FILE_MAX (64 * 1024)	/* ops, events, caps, state: a few lines each */

/*
 * A sysfs file, in a buffer of its own size: thousands of nodes each keep
 * their ops and events, so no fixed-size buffer per file. NULL if it
 * cannot be read.
 */
static char *read_small_file(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf = NULL;
	size_t n;

	if (fd < 0 || file_read_fd(fd, 0, SYSFS_FILE_MAX, &buf, &n) < 0)
		return NULL;
	return buf;
}

static char *read_line_file(const char *path)
{
	char *s = read_small_file(path);

	if (s)
		s[strcspn(s, "\n")] = '\0';
	return s;
}

static int add_kernel_sched(struct actual_state *a, uint64_t cgid, const char *dir)
{
	char path[4096];
	struct kernel_sched *v, *k;

	v = realloc(a->kernel, (a->n_kernel + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	a->kernel = v;
	k = &a->kernel[a->n_kernel];
	snprintf(path, sizeof(path), "%s/ops", dir);
	*k = (struct kernel_sched){ .cgid = cgid, .ops = read_line_file(path) };
	if (!k->ops)
		return 0; /* no ops file: not running */
	snprintf(path, sizeof(path), "%s/events", dir);
	k->events = read_small_file(path);
	snprintf(path, sizeof(path), "%s/caps", dir);
	k->caps = read_small_file(path);
	a->n_kernel++;
	return 0;
}

/* The sysfs directory of cgroup i's nearest listed ancestor with a scheduler, or NULL. */
static const char *ancestor_dir(const struct cgroup_list *cg, char *const *dirs, size_t i)
{
	_cleanup_free_ char *anc = strdup(cg->paths[i]);

	while (anc && !streq(anc, "/")) {
		char *slash = strrchr(anc, '/');
		size_t up;

		if (slash == anc)
			slash[1] = '\0';
		else
			*slash = '\0';
		up = cgroup_list_find(cg, anc);
		if (up != SIZE_MAX && dirs[up])
			return dirs[up];
	}
	return NULL;
}

/*
 * The schedulers of the listed cgroups: the kernel nests a cgroup's
 * scheduler under its nearest ancestor's that has one (sub/sub-<cgid>),
 * so each one is looked for under the sysfs directory found for that
 * ancestor, parents first. dirs[] holds, by list position, the directory
 * found or NULL. A full list finds every scheduler the kernel runs on a
 * cgroup that exists.
 */
static int scan_kernel(const char *sysfs, const struct cgroup_list *cg, struct actual_state *a)
{
	_cleanup_free_ size_t *order = NULL;
	_cleanup_free_ char **dirs = calloc(cg->n + 1, sizeof(*dirs));
	_cleanup_free_ char *state = NULL, *path = NULL;
	int r = 0;

	if (!dirs || asprintf(&path, "%s/state", sysfs) < 0)
		return -ENOMEM;
	state = read_line_file(path);
	if (state && !streq(state, "enabled")) {
		/*
		 * "disabling": ops.exit() may not have recorded why yet, and
		 * nothing can be attached until it is done.
		 */
		a->settling = streq(state, "enabling") || streq(state, "disabling");
		return 0;
	}
	if (cgroup_list_by_depth(cg, &order) < 0)
		return -ENOMEM;
	for (size_t k = 0; r == 0 && k < cg->n; k++) {
		size_t i = order[k];
		bool root = streq(cg->paths[i], "/");
		const char *parent_dir = root ? NULL : ancestor_dir(cg, dirs, i);
		char *dir = NULL;

		if (!root && !parent_dir)
			continue;
		if (root ? asprintf(&dir, "%s/root", sysfs) < 0 :
			   asprintf(&dir, "%s/sub/sub-%" PRIu64, parent_dir, cg->ids[i]) < 0)
			r = -ENOMEM;
		else if (access(dir, F_OK) < 0)
			free(dir);
		else
			r = add_kernel_sched(a, root ? 1 : cg->ids[i], dirs[i] = dir);
	}
	for (size_t i = 0; i < cg->n; i++)
		free(dirs[i]);
	return r;
}

static int kernel_sched_cmp(const void *x, const void *y)
{
	uint64_t a = ((const struct kernel_sched *)x)->cgid, b = ((const struct kernel_sched *)y)->cgid;

	return a < b ? -1 : a > b;
}

/* a->kernel is sorted by cgid once read (actual_finish()). */
const struct kernel_sched *actual_kernel_sched(const struct actual_state *a, uint64_t cgid)
{
	struct kernel_sched key = { .cgid = cgid };

	if (!a->n_kernel)
		return NULL;
	return bsearch(&key, a->kernel, a->n_kernel, sizeof(*a->kernel), kernel_sched_cmp);
}

/* ---- records and pins ---- */

static int add_stray(struct actual_state *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int add_stray(struct actual_state *a, const char *fmt, ...)
{
	char **v = realloc(a->strays, (a->n_strays + 1) * sizeof(*v));
	va_list ap;
	int r;

	if (!v)
		return -ENOMEM;
	a->strays = v;
	va_start(ap, fmt);
	r = vasprintf(&v[a->n_strays], fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	a->n_strays++;
	return 0;
}

static int add_pin(struct actual_state *a, struct pin_record *rec)
{
	struct pin_record *v = realloc(a->pins, (a->n_pins + 1) * sizeof(*v));

	if (!v) {
		pin_record_done(rec);
		return -ENOMEM;
	}
	a->pins = v;
	a->pins[a->n_pins++] = *rec;
	*rec = (struct pin_record){ .uei_offset = SIZE_MAX };
	return 0;
}

/*
 * One file of the records directory (record.c reads and judges it): a
 * record that cannot be read, does not parse or names another cgroup is
 * reported and otherwise left alone; a record without its pin describes
 * nothing attached and is removed.
 */
static int read_record(const struct scxd_paths *paths, int dir_fd, const char *dir,
		       const char *file, struct actual_state *a)
{
	_cleanup_free_ char *why = NULL;
	struct pin_record rec = { .uei_offset = SIZE_MAX };
	int r = pin_record_read_at(dir_fd, file, &rec, &why);

	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return add_stray(a, "record %s/%s: %s; ignored", dir, file, why ?: strerror(-r));
	if (r == 0)
		return 0;	/* not a record's name */
	if (!pin_exists(paths, rec.pin)) {
		unlinkat(dir_fd, file, 0);
		pin_record_done(&rec);
		return 0;
	}
	return add_pin(a, &rec);
}

/* Every record, for a full read: those that match no cgroup are strays. */
static int read_records(const struct scxd_paths *paths, DIR *d, const char *dir,
			struct actual_state *a)
{
	struct dirent *de;
	int r = 0;

	while (r == 0 && (de = readdir(d)))
		r = read_record(paths, dirfd(d), dir, de->d_name, a);
	return r;
}

/* The record of one cgroup, under its name or its legacy name, if there is one. */
static int read_record_of(const struct scxd_paths *paths, int dir_fd, const char *dir,
			  const char *cgroup, struct actual_state *a)
{
	_cleanup_free_ char *legacy = pin_name_legacy(cgroup);
	char file[PIN_NAME_LEN + 8];
	int r = 0;

	if (!legacy)
		return -ENOMEM;
	pin_name(cgroup, file);
	strcat(file, ".json");
	if (faccessat(dir_fd, file, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		r = read_record(paths, dir_fd, dir, file, a);
	if (r == 0 && faccessat(dir_fd, legacy, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		r = read_record(paths, dir_fd, dir, legacy, a);
	return r;
}

static int pin_record_pin_cmp(const void *x, const void *y)
{
	return strcmp(((const struct pin_record *)x)->pin, ((const struct pin_record *)y)->pin);
}

/* Among the first n pins, sorted by pin name. */
static bool pin_recorded(const struct actual_state *a, size_t n, const char *pin)
{
	struct pin_record key = { .pin = (char *)pin };

	return n && bsearch(&key, a->pins, n, sizeof(*a->pins), pin_record_pin_cmp);
}

/*
 * The names in the pin directory, for a full read: one readdir() instead
 * of a lookup of two names for every cgroup (status reads in full, and a
 * tree may have tens of thousands of cgroups). legacy: some name is not a
 * pin_name(), so an older scxd's names are looked for too.
 */
struct pin_dir_names {
	char **v;		/* sorted */
	size_t n;
	bool legacy;
};

static void pin_dir_names_done(struct pin_dir_names *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	free(p->v);
}

static int name_cmp(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static bool is_pin_name(const char *s)
{
	return strlen(s) == PIN_NAME_LEN && strspn(s, "0123456789abcdef") == PIN_NAME_LEN;
}

static int pin_dir_names_read(const char *dir, struct pin_dir_names *ret)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *de;
	size_t cap = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (ret->n == cap) {
			char **v = realloc(ret->v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!v)
				return -ENOMEM;
			ret->v = v;
		}
		ret->v[ret->n] = strdup(de->d_name);
		if (!ret->v[ret->n])
			return -ENOMEM;
		ret->legacy = ret->legacy || !is_pin_name(de->d_name);
		ret->n++;
	}
	if (ret->n)
		qsort(ret->v, ret->n, sizeof(*ret->v), name_cmp);
	return 0;
}

/* Whether a pin of this name is there: from names when read, else asked. */
static bool pin_there(const struct scxd_paths *paths, const struct pin_dir_names *names,
		      const char *name)
{
	if (names && !(names->n && bsearch(&name, names->v, names->n, sizeof(*names->v), name_cmp)))
		return false;
	return pin_exists(paths, name);
}

/*
 * Pins of the listed cgroups without a record (the runtime directory was
 * lost): still scxd's. They are adopted under the name "(unrecorded)", so
 * the plan replaces them with what the policy says, or detaches them.
 */
static int adopt_unrecorded_pins(const struct scxd_paths *paths, const struct cgroup_list *cg,
				 const struct pin_dir_names *names, struct actual_state *a)
{
	size_t n_recorded = a->n_pins;
	bool legacy_too = !names || names->legacy;
	int r = 0;

	if (names && !names->n)
		return 0;	/* no pins at all */
	if (n_recorded)
		qsort(a->pins, n_recorded, sizeof(*a->pins), pin_record_pin_cmp);
	for (size_t i = 0; r == 0 && i < cg->n; i++) {
		_cleanup_free_ char *legacy = legacy_too ? pin_name_legacy(cg->paths[i]) : NULL;
		char name[PIN_NAME_LEN + 1];
		const char *pin = NULL;
		struct pin_record rec = { .uei_offset = SIZE_MAX };

		if (legacy_too && !legacy)
			return -ENOMEM;
		pin_name(cg->paths[i], name);
		if (!pin_recorded(a, n_recorded, name) && pin_there(paths, names, name))
			pin = name;
		else if (legacy && !pin_recorded(a, n_recorded, legacy) && pin_there(paths, names, legacy))
			pin = legacy;
		if (!pin)
			continue;
		rec.cgid = streq(cg->paths[i], "/") ? 1 : cg->ids[i];
		rec.cgroup = strdup(cg->paths[i]);
		rec.scheduler = strdup("(unrecorded)");
		rec.pin = strdup(pin);
		if (!rec.cgroup || !rec.scheduler || !rec.pin) {
			pin_record_done(&rec);
			return -ENOMEM;
		}
		r = add_pin(a, &rec);
	}
	return r;
}

/*
 * For a full read: pins that neither a record nor an existing cgroup
 * names. Their cgroup is gone (and with it the scheduler), or they are not
 * scxd's: reported and left alone.
 */
static int find_stray_pins(const struct scxd_paths *paths, const struct pin_dir_names *names,
			   struct actual_state *a)
{
	int r = 0;

	if (a->n_pins)
		qsort(a->pins, a->n_pins, sizeof(*a->pins), pin_record_pin_cmp);
	for (size_t i = 0; r == 0 && i < names->n; i++)
		if (!pin_recorded(a, a->n_pins, names->v[i]) && pin_exists(paths, names->v[i]))
			r = add_stray(a, "pin %s/%s: no record, and no cgroup is named by it; left alone",
				      paths->pin_dir, names->v[i]);
	return r;
}

static bool pin_is_live(const struct actual_state *a, const struct pin_record *rec,
			const struct cgroup_list *cgroups)
{
	uint64_t cgid = streq(rec->cgroup, "/") ? 1 : cgroup_list_id(cgroups, rec->cgroup);
	const struct kernel_sched *k;

	if (!cgid || (cgid != 1 && cgid != rec->cgid))
		return false; /* cgroup gone, or a new cgroup with the same name */
	k = actual_kernel_sched(a, cgid);
	return k && (!rec->ops || !*rec->ops || streq(k->ops, rec->ops));
}

static int push_node(struct sched_tree *t, size_t *cap, const char *cgroup,
		     const char *scheduler, const struct tunable_value *tv, size_t ntv,
		     bool foreign)
{
	int r;

	if (t->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct sched_node *v = realloc(t->nodes, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->nodes = v;
		*cap = ncap;
	}
	r = sched_node_init(&t->nodes[t->n], cgroup, scheduler, tv, ntv);
	t->nodes[t->n++].foreign = foreign;
	return r;
}

static int path_cmp(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/*
 * From the schedulers and pins read: which pins are live, scxd's nodes
 * and the foreign ones, linked into a tree.
 */
static int actual_finish(const struct cgroup_list *cgroups, struct actual_state *a)
{
	_cleanup_free_ const char **ours = NULL;
	size_t cap = 0, n_ours = 0;
	int r;

	if (a->n_kernel)
		qsort(a->kernel, a->n_kernel, sizeof(*a->kernel), kernel_sched_cmp);
	a->pin_live = calloc(a->n_pins + 1, sizeof(bool));
	ours = calloc(a->n_pins + 1, sizeof(*ours));
	if (!a->pin_live || !ours)
		return -ENOMEM;

	for (size_t i = 0; i < a->n_pins; i++) {
		const struct pin_record *rec = &a->pins[i];

		a->pin_live[i] = pin_is_live(a, rec, cgroups);
		if (!a->pin_live[i])
			continue;
		ours[n_ours++] = rec->cgroup;
		r = push_node(&a->tree, &cap, rec->cgroup, rec->scheduler, rec->tunables,
			      rec->n_tunables, false);
		if (r < 0)
			return r;
	}
	if (n_ours)
		qsort(ours, n_ours, sizeof(*ours), path_cmp);
	/* Schedulers the kernel runs that scxd did not attach. */
	for (size_t k = 0; k < a->n_kernel; k++) {
		const char *cg = a->kernel[k].cgid == 1 ? "/" :
				 cgroup_list_path(cgroups, a->kernel[k].cgid);

		if (!cg || (n_ours && bsearch(&cg, ours, n_ours, sizeof(*ours), path_cmp)))
			continue;
		r = push_node(&a->tree, &cap, cg, a->kernel[k].ops, NULL, 0, true);
		if (r < 0)
			return r;
	}
	return sched_tree_link(&a->tree);
}

/*
 * The records: every one in a full read (scope NULL), else those of the
 * listed cgroups and of the gone ones.
 */
static int read_records_in(const struct scxd_paths *paths, const struct cgroup_list *cgroups,
			   const struct actual_scope *scope, struct actual_state *a)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	int r = 0;

	if (record_dir(paths->state_dir, &dir) < 0)
		return -ENOMEM;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	if (!scope)
		return read_records(paths, d, dir, a);
	for (size_t i = 0; r == 0 && i < cgroups->n; i++)
		r = read_record_of(paths, dirfd(d), dir, cgroups->paths[i], a);
	for (size_t i = 0; r == 0 && i < scope->n_gone; i++)
		r = read_record_of(paths, dirfd(d), dir, scope->gone[i], a);
	return r;
}

int actual_read(const struct scxd_paths *paths, const struct cgroup_list *cgroups,
		const struct actual_scope *scope, struct actual_state *ret)
{
	_cleanup_(actual_state_done) struct actual_state a = {};
	_cleanup_(pin_dir_names_done) struct pin_dir_names names = {};
	int r;

	*ret = (struct actual_state){};
	r = scan_kernel(paths->sysfs, cgroups, &a);
	if (r == 0)
		r = read_records_in(paths, cgroups, scope, &a);
	if (r == 0 && !scope)
		r = pin_dir_names_read(paths->pin_dir, &names);
	if (r == 0)
		r = adopt_unrecorded_pins(paths, cgroups, scope ? NULL : &names, &a);
	if (r == 0 && !scope)
		r = find_stray_pins(paths, &names, &a);
	if (r == 0)
		r = actual_finish(cgroups, &a);
	if (r < 0)
		return r;
	*ret = a;
	a = (struct actual_state){};
	return 0;
}

void actual_state_done(struct actual_state *a)
{
	sched_tree_done(&a->tree);
	for (size_t i = 0; i < a->n_pins; i++)
		pin_record_done(&a->pins[i]);
	free(a->pins);
	free(a->pin_live);
	for (size_t i = 0; i < a->n_strays; i++)
		free(a->strays[i]);
	free(a->strays);
	for (size_t i = 0; i < a->n_kernel; i++) {
		free(a->kernel[i].ops);
		free(a->kernel[i].events);
		free(a->kernel[i].caps);
	}
	free(a->kernel);
	*a = (struct actual_state){};
}
