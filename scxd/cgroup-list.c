// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroups that exist: cgroupfs walked from its root (all of it, or
 * the subtrees a scoped reconcile names and their ancestors), one
 * directory descriptor at a time, staying on the cgroup filesystem;
 * looked up by path and by id.
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

/* A walk's end: the list indexed and handed over, unless it failed (r < 0). */
static int cgroup_list_finish(struct cgroup_list *l, int r, struct cgroup_list *ret)
{
	if (r == 0)
		r = cgroup_list_index(l);
	if (r < 0)
		return r;
	*ret = *l;
	*l = (struct cgroup_list){};
	return 0;
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
	return cgroup_list_finish(&l, r, ret);
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
	return cgroup_list_finish(&l, r, ret);
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

int cgroup_list_by_depth(const struct cgroup_list *l, size_t **ret)
{
	size_t *order = calloc(l->n + 1, sizeof(*order));

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++)
		order[i] = i;
	qsort_r(order, l->n, sizeof(*order), by_depth_cmp, (void *)l);
	*ret = order;
	return 0;
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

size_t cgroup_list_find(const struct cgroup_list *l, const char *path)
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

