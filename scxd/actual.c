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
#include "match.h"
#include "scope.h"
#include "util.h"

/* ---- cgroups ---- */

static int cgroup_list_add(struct cgroup_list *l, char *path, uint64_t id)
{
	char **paths = realloc(l->paths, (l->n + 1) * sizeof(*paths));
	uint64_t *ids;

	if (paths)
		l->paths = paths;
	ids = realloc(l->ids, (l->n + 1) * sizeof(*ids));
	if (ids)
		l->ids = ids;
	if (!paths || !ids) {
		free(path);
		return -ENOMEM;
	}
	l->paths[l->n] = path;
	l->ids[l->n++] = id;
	return 0;
}

/* The directories below l->paths[i], appended to the list. */
static int scan_dir(int root_fd, dev_t dev, struct cgroup_list *l, size_t i)
{
	const char *rel = streq(l->paths[i], "/") ? "." : l->paths[i] + 1;
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int fd, r;

	fd = openat(root_fd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno; /* removed meanwhile */
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		struct stat st;
		char *child;

		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode) || st.st_dev != dev)
			continue;
		if (asprintf(&child, "%s/%s", i == 0 ? "" : l->paths[i], de->d_name) < 0)
			return -ENOMEM;
		if (strlen(child) >= CGROUP_PATH_MAX) {
			free(child); /* longer than any path the kernel hands out */
			continue;
		}
		r = cgroup_list_add(l, child, st.st_ino);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Breadth first, by paths relative to one open root directory: a path is
 * under 4 KiB, so it fits one openat() whatever the root's own path is,
 * and no directory stays open while its children are scanned.
 */
/* Open the cgroup mount and start the list with "/". */
static int cgroup_list_start(const char *root, int *root_fd, struct stat *st,
			     struct cgroup_list *l)
{
	char *slash;

	*root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*root_fd < 0 || fstat(*root_fd, st) < 0)
		return -errno;
	slash = strdup("/");
	if (!slash)
		return -ENOMEM;
	return cgroup_list_add(l, slash, st->st_ino);
}

int cgroup_scan(const char *root, struct cgroup_list *ret)
{
	_cleanup_(cgroup_list_done) struct cgroup_list l = {};
	_cleanup_close_ int root_fd = -1;
	struct stat st;
	int r;

	*ret = (struct cgroup_list){};
	r = cgroup_list_start(root, &root_fd, &st, &l);
	for (size_t i = 0; r == 0 && i < l.n; i++)
		r = scan_dir(root_fd, st.st_dev, &l, i);
	if (r == 0)
		r = cgroup_list_index(&l);
	if (r < 0)
		return r;
	*ret = l;
	l = (struct cgroup_list){};
	return 0;
}

/*
 * Add path (below the root) if it is a directory on the cgroup mount;
 * *added says whether it was.
 */
static int cgroup_list_add_at(int root_fd, dev_t dev, struct cgroup_list *l, const char *path,
			      bool *added)
{
	struct stat st;
	char *copy;

	*added = false;
	if (fstatat(root_fd, path + 1, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	if (!S_ISDIR(st.st_mode) || st.st_dev != dev)
		return 0;
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	*added = true;
	return cgroup_list_add(l, copy, st.st_ino);
}

int cgroup_scan_some(const char *root, const char *const *roots, size_t n_roots,
		     struct cgroup_list *ret)
{
	_cleanup_(cgroup_list_done) struct cgroup_list l = {};
	_cleanup_(path_set_done) struct path_set seen = {};
	_cleanup_close_ int root_fd = -1;
	struct stat st;
	int r;

	*ret = (struct cgroup_list){};
	r = cgroup_list_start(root, &root_fd, &st, &l);
	for (size_t k = 0; r == 0 && k < n_roots; k++) {
		_cleanup_free_ char *up = strdup(roots[k]);
		size_t first;
		bool added;

		if (!up)
			return -ENOMEM;
		/* the ancestors, each once, top down */
		for (char *p = strchr(up + 1, '/'); r == 0 && p; p = strchr(p + 1, '/')) {
			size_t at, n;

			*p = '\0';
			path_set_below(&seen, up, &at, &n);
			if (!n || !streq(seen.v[at].path, up)) {
				r = path_set_add(&seen, up, 0);
				if (r == 0)
					r = cgroup_list_add_at(root_fd, st.st_dev, &l, up, &added);
			}
			*p = '/';
		}
		if (r < 0 || streq(roots[k], "/"))
			break;
		/* the root, and breadth first below it */
		first = l.n;
		r = cgroup_list_add_at(root_fd, st.st_dev, &l, roots[k], &added);
		for (size_t i = first; r == 0 && added && i < l.n; i++)
			r = scan_dir(root_fd, st.st_dev, &l, i);
	}
	if (r == 0)
		r = cgroup_list_index(&l);
	if (r < 0)
		return r;
	*ret = l;
	l = (struct cgroup_list){};
	return 0;
}

/* qsort_r() orders positions by the list's paths or ids. */
static int by_path_cmp(const void *x, const void *y, void *userdata)
{
	const struct cgroup_list *l = userdata;

	return strcmp(l->paths[*(const size_t *)x], l->paths[*(const size_t *)y]);
}

static int by_depth_cmp(const void *x, const void *y, void *userdata)
{
	const struct cgroup_list *l = userdata;
	size_t a = path_depth(l->paths[*(const size_t *)x]), b = path_depth(l->paths[*(const size_t *)y]);

	return a < b ? -1 : a > b;
}

static int by_id_cmp(const void *x, const void *y, void *userdata)
{
	const struct cgroup_list *l = userdata;
	uint64_t a = l->ids[*(const size_t *)x], b = l->ids[*(const size_t *)y];

	return a < b ? -1 : a > b;
}

int cgroup_list_index(struct cgroup_list *l)
{
	free(l->by_path);
	free(l->by_id);
	l->by_path = calloc(l->n + 1, sizeof(size_t));
	l->by_id = calloc(l->n + 1, sizeof(size_t));
	if (!l->by_path || !l->by_id)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++)
		l->by_path[i] = l->by_id[i] = i;
	qsort_r(l->by_path, l->n, sizeof(size_t), by_path_cmp, l);
	qsort_r(l->by_id, l->n, sizeof(size_t), by_id_cmp, l);
	return 0;
}

/* The position of path in the list, SIZE_MAX if it is not there. */
static size_t cgroup_list_find(const struct cgroup_list *l, const char *path)
{
	size_t lo = 0, hi = l->n;

	if (!l->by_path) {
		for (size_t i = 0; i < l->n; i++)
			if (streq(l->paths[i], path))
				return i;
		return SIZE_MAX;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(l->paths[l->by_path[mid]], path);

		if (r == 0)
			return l->by_path[mid];
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

uint64_t cgroup_list_id(const struct cgroup_list *l, const char *path)
{
	size_t i = cgroup_list_find(l, path);

	return i == SIZE_MAX ? 0 : l->ids[i];
}

const char *cgroup_list_path(const struct cgroup_list *l, uint64_t id)
{
	size_t lo = 0, hi = l->n;

	if (!l->by_id) {
		for (size_t i = 0; i < l->n; i++)
			if (l->ids[i] == id)
				return l->paths[i];
		return NULL;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v = l->ids[l->by_id[mid]];

		if (v == id)
			return l->paths[l->by_id[mid]];
		if (v < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void cgroup_list_done(struct cgroup_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->paths[i]);
	free(l->paths);
	free(l->ids);
	free(l->by_path);
	free(l->by_id);
	*l = (struct cgroup_list){};
}

/* ---- sysfs ---- */

/*
 * A sysfs file of up to 8 KiB, in a buffer of its own size: thousands of
 * nodes each keep their ops and events, so no fixed-size buffer per file.
 */
static char *read_small_file(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char buf[8192];
	size_t n = 0;

	if (fd < 0)
		return NULL;
	while (n < sizeof(buf) - 1) {
		ssize_t r = read(fd, buf + n, sizeof(buf) - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return NULL;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	return strndup(buf, n);
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

/* Children: <dir>/sub/sub-<cgid>/..., nested per level. */
static int scan_sub_scheds(struct actual_state *a, const char *dir, unsigned depth)
{
	char sub[4096];
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (depth > 8)
		return 0;
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	d = opendir(sub);
	if (!d)
		return 0;
	while (r == 0 && (de = readdir(d))) {
		char child[4096];
		uint64_t cgid;

		if (sscanf(de->d_name, "sub-%" SCNu64, &cgid) != 1)
			continue;
		snprintf(child, sizeof(child), "%s/%s", sub, de->d_name);
		r = add_kernel_sched(a, cgid, child);
		if (r == 0)
			r = scan_sub_scheds(a, child, depth + 1);
	}
	closedir(d);
	return r;
}

static int scan_kernel(const char *sysfs, struct actual_state *a)
{
	char path[4096];
	_cleanup_free_ char *state = NULL;
	int r;

	snprintf(path, sizeof(path), "%s/state", sysfs);
	state = read_line_file(path);
	if (state && !streq(state, "enabled")) {
		/*
		 * "disabling": ops.exit() may not have recorded why yet, and
		 * nothing can be attached until it is done.
		 */
		a->settling = streq(state, "enabling") || streq(state, "disabling");
		return 0;
	}
	snprintf(path, sizeof(path), "%s/root", sysfs);
	r = add_kernel_sched(a, 1, path);
	if (r < 0)
		return r;
	return scan_sub_scheds(a, path, 0);
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

/* ---- records ---- */

static int nodes_dir(const struct scxd_paths *paths, char **ret)
{
	return asprintf(ret, "%s/nodes", paths->state_dir) < 0 ? -ENOMEM : 0;
}

static int fsync_dir(const char *dir)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || fsync(fd) < 0)
		return -errno;
	return 0;
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

int pin_record_write(const struct scxd_paths *paths, const struct pin_record *rec)
{
	_cleanup_free_ char *dir = NULL, *text = NULL, *tmp = NULL, *path = NULL;
	_cleanup_close_ int fd = -1;
	char name[PIN_NAME_LEN + 1];
	int r;

	pin_name(rec->cgroup, name);
	r = pin_record_format(rec, &text);
	if (r == 0)
		r = nodes_dir(paths, &dir);
	if (r < 0)
		return r;
	if (mkdir(paths->state_dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (asprintf(&path, "%s/%s.json", dir, name) < 0 ||
	    asprintf(&tmp, "%s/.%s.XXXXXX", dir, name) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = write_all(fd, text, strlen(text));
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return r;
	}
	return fsync_dir(dir);
}

int pin_record_remove(const struct scxd_paths *paths, const char *cgroup)
{
	_cleanup_free_ char *dir = NULL, *legacy = pin_name_legacy(cgroup), *path = NULL;
	char name[PIN_NAME_LEN + 1];
	int r;

	pin_name(cgroup, name);
	if (!legacy || nodes_dir(paths, &dir) < 0 || asprintf(&path, "%s/%s.json", dir, name) < 0)
		return -ENOMEM;
	r = unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	free(path);
	if (asprintf(&path, "%s/%s", dir, legacy) < 0)
		return -ENOMEM;
	if (unlink(path) < 0 && errno != ENOENT && r == 0)
		r = -errno;
	return r;
}

static bool pin_exists(const struct scxd_paths *paths, const char *name)
{
	_cleanup_free_ char *link = NULL;

	return asprintf(&link, "%s/%s/link", paths->pin_dir, name) >= 0 &&
	       access(link, F_OK) == 0;
}

int pin_dir_find(const struct scxd_paths *paths, const char *cgroup, char **ret)
{
	char name[PIN_NAME_LEN + 1];
	char *legacy;

	pin_name(cgroup, name);
	if (!pin_exists(paths, name)) {
		legacy = pin_name_legacy(cgroup);
		if (!legacy)
			return -ENOMEM;
		if (pin_exists(paths, legacy)) {
			*ret = legacy;
			return 0;
		}
		free(legacy);
	}
	*ret = strdup(name);
	return *ret ? 0 : -ENOMEM;
}

/* The whole file, up to PIN_RECORD_MAX bytes (-EFBIG beyond). */
static int read_record_file(int dir_fd, const char *name, char **ret, size_t *len)
{
	_cleanup_close_ int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	size_t n = 0, cap;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EBADF;
	/* sized by what fstat() says, grown if the file is longer than that */
	cap = st.st_size > 0 && st.st_size < PIN_RECORD_MAX ? (size_t)st.st_size + 1 : 4096;
	buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *v;

			cap = cap * 2 > PIN_RECORD_MAX + 1 ? PIN_RECORD_MAX + 1 : cap * 2;
			v = realloc(buf, cap + 1);
			if (!v)
				return -ENOMEM;
			buf = v;
		}
		r = read(fd, buf + n, cap - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > PIN_RECORD_MAX)
			return -EFBIG;
	}
	buf[n] = '\0';
	*ret = TAKE_PTR(buf);
	*len = n;
	return 0;
}

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
 * One file of the records directory: "<pin name>.json", or a text record
 * an older scxd left, named by its legacy pin name. Its cgroup must be
 * the one its name is made from; a record that does not parse or does not
 * match is reported and otherwise left alone.
 */
static int read_record(const struct scxd_paths *paths, int dir_fd, const char *dir,
		       const char *file, struct actual_state *a)
{
	_cleanup_free_ char *buf = NULL, *want = NULL;
	struct pin_record rec = { .uei_offset = SIZE_MAX };
	const char *why = NULL, *dot = strrchr(file, '.');
	bool json = dot && streq(dot, ".json");
	char name[PIN_NAME_LEN + 1];
	size_t len = 0;
	int r;

	if (file[0] == '.' || (dot && !json))
		return 0; /* temporary files, and names no scxd writes */
	r = read_record_file(dir_fd, file, &buf, &len);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return add_stray(a, "record %s/%s: cannot read it: %s; ignored", dir, file,
				 strerror(-r));
	r = json ? pin_record_parse(buf, len, &rec, &why) :
		   pin_record_parse_legacy(buf, len, &rec, &why);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return add_stray(a, "record %s/%s: %s; ignored", dir, file, why);
	rec.pin = json ? strndup(file, (size_t)(dot - file)) : strdup(file);
	if (!rec.pin) {
		pin_record_done(&rec);
		return -ENOMEM;
	}
	if (json) {
		pin_name(rec.cgroup, name);
		want = strdup(name);
	} else {
		want = pin_name_legacy(rec.cgroup);
	}
	if (!want) {
		pin_record_done(&rec);
		return -ENOMEM;
	}
	if (!streq(want, rec.pin)) {
		r = add_stray(a, "record %s/%s names cgroup %s, whose record would be %s%s; ignored",
			      dir, file, rec.cgroup, want, json ? ".json" : "");
		pin_record_done(&rec);
		return r;
	}
	if (!pin_exists(paths, rec.pin)) {
		/* A record without its pin describes nothing attached. */
		unlinkat(dir_fd, file, 0);
		pin_record_done(&rec);
		return 0;
	}
	return add_pin(a, &rec);
}

static int read_records(const struct scxd_paths *paths, struct actual_state *a)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int r = 0;

	if (nodes_dir(paths, &dir) < 0)
		return -ENOMEM;
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (r == 0 && (de = readdir(d)))
		r = read_record(paths, dirfd(d), dir, de->d_name, a);
	return r;
}

/*
 * The cgroup a pin without a record belongs to: the one whose pin name
 * (or legacy pin name) it is. Hashing forward from the cgroups that
 * exist; NULL if none.
 */
static const char *unrecorded_pin_cgroup(const struct cgroup_list *cg, char (*names)[PIN_NAME_LEN + 1],
					 const char *pin)
{
	for (size_t i = 0; i < cg->n; i++) {
		_cleanup_free_ char *legacy = NULL;

		if (streq(names[i], pin))
			return cg->paths[i];
		legacy = pin_name_legacy(cg->paths[i]);
		if (legacy && streq(legacy, pin))
			return cg->paths[i];
	}
	return NULL;
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
 * Pins without a record (the runtime directory was lost): still scxd's.
 * They are adopted under the name "(unrecorded)", so the plan replaces
 * them with what the policy says, or detaches them. A pin no existing
 * cgroup hashes to is reported and left alone: its cgroup is gone (and
 * with it the scheduler), or it is not scxd's.
 */
static int adopt_unrecorded_pins(const struct scxd_paths *paths, const struct cgroup_list *cg,
				 struct actual_state *a)
{
	_cleanup_free_ char (*names)[PIN_NAME_LEN + 1] = NULL;
	_cleanup_closedir_ DIR *d = opendir(paths->pin_dir);
	size_t n_recorded = a->n_pins;
	struct dirent *de;
	int r = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	if (n_recorded)
		qsort(a->pins, n_recorded, sizeof(*a->pins), pin_record_pin_cmp);
	while (r == 0 && (de = readdir(d))) {
		struct pin_record rec = { .uei_offset = SIZE_MAX };
		const char *cgroup;

		if (de->d_name[0] == '.' || pin_recorded(a, n_recorded, de->d_name) ||
		    !pin_exists(paths, de->d_name))
			continue;
		if (!names) {
			names = calloc(cg->n + 1, sizeof(*names));
			if (!names)
				return -ENOMEM;
			for (size_t i = 0; i < cg->n; i++)
				pin_name(cg->paths[i], names[i]);
		}
		cgroup = unrecorded_pin_cgroup(cg, names, de->d_name);
		if (!cgroup) {
			r = add_stray(a, "pin %s/%s: no record, and no cgroup is named by it; left alone",
				      paths->pin_dir, de->d_name);
			continue;
		}
		rec.cgid = streq(cgroup, "/") ? 1 : cgroup_list_id(cg, cgroup);
		rec.cgroup = strdup(cgroup);
		rec.scheduler = strdup("(unrecorded)");
		rec.pin = strdup(de->d_name);
		if (!rec.cgroup || !rec.scheduler || !rec.pin) {
			pin_record_done(&rec);
			return -ENOMEM;
		}
		r = add_pin(a, &rec);
	}
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

int actual_read(const struct scxd_paths *paths, const struct cgroup_list *cgroups,
		struct actual_state *ret)
{
	_cleanup_(actual_state_done) struct actual_state a = {};
	int r;

	*ret = (struct actual_state){};
	r = scan_kernel(paths->sysfs, &a);
	if (r < 0)
		return r;
	r = read_records(paths, &a);
	if (r < 0)
		return r;
	r = adopt_unrecorded_pins(paths, cgroups, &a);
	if (r < 0)
		return r;
	r = actual_finish(cgroups, &a);
	if (r < 0)
		return r;
	*ret = a;
	a = (struct actual_state){};
	return 0;
}

/*
 * The schedulers of the listed cgroups: the kernel nests a cgroup's
 * scheduler under its nearest ancestor's that has one, so each one is
 * looked for under the sysfs directory found for that ancestor, parents
 * first. dirs[] holds, by list position, the directory found or NULL.
 */
static int scan_kernel_some(const char *sysfs, const struct cgroup_list *cg,
			    struct actual_state *a)
{
	_cleanup_free_ size_t *order = calloc(cg->n + 1, sizeof(*order));
	_cleanup_free_ char **dirs = calloc(cg->n + 1, sizeof(*dirs));
	_cleanup_free_ char *state = NULL, *path = NULL;
	int r = 0;

	if (!order || !dirs || asprintf(&path, "%s/state", sysfs) < 0)
		return -ENOMEM;
	state = read_line_file(path);
	if (state && !streq(state, "enabled")) {
		a->settling = streq(state, "enabling") || streq(state, "disabling");
		return 0;
	}
	for (size_t i = 0; i < cg->n; i++)
		order[i] = i;
	qsort_r(order, cg->n, sizeof(*order), by_depth_cmp, (void *)cg);
	for (size_t k = 0; r == 0 && k < cg->n; k++) {
		size_t i = order[k], up;
		const char *parent_dir = NULL;
		char *dir;

		if (streq(cg->paths[i], "/")) {
			if (asprintf(&dir, "%s/root", sysfs) < 0)
				return -ENOMEM;
		} else {
			_cleanup_free_ char *anc = strdup(cg->paths[i]);

			if (!anc)
				return -ENOMEM;
			while (!parent_dir && !streq(anc, "/")) {
				char *slash = strrchr(anc, '/');

				if (slash == anc)
					slash[1] = '\0';
				else
					*slash = '\0';
				up = cgroup_list_find(cg, anc);
				if (up != SIZE_MAX)
					parent_dir = dirs[up];
			}
			if (!parent_dir)
				continue;
			if (asprintf(&dir, "%s/sub/sub-%" PRIu64, parent_dir, cg->ids[i]) < 0)
				return -ENOMEM;
		}
		if (access(dir, F_OK) < 0) {
			free(dir);
			continue;
		}
		dirs[i] = dir;
		r = add_kernel_sched(a, streq(cg->paths[i], "/") ? 1 : cg->ids[i], dir);
	}
	for (size_t i = 0; i < cg->n; i++)
		free(dirs[i]);
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

/* Pins of the listed cgroups that have no record: adopted as adopt_unrecorded_pins() does. */
static int adopt_unrecorded_pins_of(const struct scxd_paths *paths, const struct cgroup_list *cg,
				    struct actual_state *a)
{
	size_t n_recorded = a->n_pins;
	int r = 0;

	if (n_recorded)
		qsort(a->pins, n_recorded, sizeof(*a->pins), pin_record_pin_cmp);
	for (size_t i = 0; r == 0 && i < cg->n; i++) {
		_cleanup_free_ char *legacy = pin_name_legacy(cg->paths[i]);
		char name[PIN_NAME_LEN + 1];
		const char *pin = NULL;
		struct pin_record rec = { .uei_offset = SIZE_MAX };

		if (!legacy)
			return -ENOMEM;
		pin_name(cg->paths[i], name);
		if (!pin_recorded(a, n_recorded, name) && pin_exists(paths, name))
			pin = name;
		else if (!pin_recorded(a, n_recorded, legacy) && pin_exists(paths, legacy))
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

int actual_read_some(const struct scxd_paths *paths, const struct cgroup_list *cgroups,
		     const char *const *gone, size_t n_gone, struct actual_state *ret)
{
	_cleanup_(actual_state_done) struct actual_state a = {};
	_cleanup_free_ char *dir = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	int r;

	*ret = (struct actual_state){};
	r = scan_kernel_some(paths->sysfs, cgroups, &a);
	if (r < 0)
		return r;
	if (nodes_dir(paths, &dir) < 0)
		return -ENOMEM;
	d = opendir(dir);
	if (!d && errno != ENOENT)
		return -errno;
	for (size_t i = 0; d && r == 0 && i < cgroups->n; i++)
		r = read_record_of(paths, dirfd(d), dir, cgroups->paths[i], &a);
	for (size_t i = 0; d && r == 0 && i < n_gone; i++)
		r = read_record_of(paths, dirfd(d), dir, gone[i], &a);
	if (r == 0)
		r = adopt_unrecorded_pins_of(paths, cgroups, &a);
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
