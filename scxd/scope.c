// SPDX-License-Identifier: GPL-2.0
/*
 * Reconcile scopes, the set of cgroups with a scheduler, and the inotify
 * watch table: sorted arrays and binary searches (scope.h).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "desired.h"
#include "scope.h"
#include "util.h"

int scope_path_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned x = (unsigned char)*a, y = (unsigned char)*b;

		if (x != y || !x) {
			/* '/' right after the end of a string, before anything else */
			x = x == '/' ? 1 : x ? x + 1 : 0;
			y = y == '/' ? 1 : y ? y + 1 : 0;
			return x < y ? -1 : x > y;
		}
	}
}

/* The first position in v[0..n) whose path is not below key in scope_path_cmp() order. */
static size_t lower_bound(char *const *v, size_t n, const char *key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (scope_path_cmp(v[mid], key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Insert a copy of path at position at of a growable array. */
static int insert_at(char ***v, size_t *n, size_t *cap, size_t at, const char *path)
{
	char *copy = strdup(path);

	if (!copy)
		return -ENOMEM;
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		char **nv = realloc(*v, c * sizeof(*nv));

		if (!nv) {
			free(copy);
			return -ENOMEM;
		}
		*v = nv;
		*cap = c;
	}
	memmove(*v + at + 1, *v + at, (*n - at) * sizeof(**v));
	(*v)[at] = copy;
	(*n)++;
	return 0;
}

/* ---- scopes ---- */

bool scope_covers(const struct reconcile_scope *s, const char *cgroup)
{
	size_t at;

	if (s->full)
		return true;
	/* the root at or below which cgroup is sorts last among those before it */
	at = lower_bound(s->roots, s->n_roots, cgroup);
	if (at < s->n_roots && streq(s->roots[at], cgroup))
		return true;
	return at > 0 && cgroup_is_below(cgroup, s->roots[at - 1]);
}

int scope_add(struct reconcile_scope *s, const char *cgroup)
{
	size_t at, end;

	if (s->full || scope_covers(s, cgroup))
		return 0;
	if (streq(cgroup, "/")) {
		scope_set_full(s);	/* the whole tree */
		return 0;
	}
	/* roots below the new one go: they follow it in this order */
	at = lower_bound(s->roots, s->n_roots, cgroup);
	for (end = at; end < s->n_roots && cgroup_is_below(s->roots[end], cgroup); end++)
		free(s->roots[end]);
	memmove(s->roots + at, s->roots + end, (s->n_roots - end) * sizeof(*s->roots));
	s->n_roots -= end - at;
	if (s->n_roots == SCOPE_MAX_ROOTS) {
		scope_set_full(s);
		return 0;
	}
	return insert_at(&s->roots, &s->n_roots, &s->cap, at, cgroup);
}

void scope_set_full(struct reconcile_scope *s)
{
	for (size_t i = 0; i < s->n_roots; i++)
		free(s->roots[i]);
	free(s->roots);
	*s = (struct reconcile_scope){ .full = true };
}

bool scope_empty(const struct reconcile_scope *s)
{
	return !s->full && s->n_roots == 0;
}

void scope_done(struct reconcile_scope *s)
{
	for (size_t i = 0; i < s->n_roots; i++)
		free(s->roots[i]);
	free(s->roots);
	*s = (struct reconcile_scope){};
}

/* ---- the set of cgroups with a scheduler ---- */

static size_t entry_lower_bound(const struct path_set *s, const char *key)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (scope_path_cmp(s->v[mid].path, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int path_set_add(struct path_set *s, const char *path, uint64_t id)
{
	size_t at = entry_lower_bound(s, path);
	char *copy;

	if (at < s->n && streq(s->v[at].path, path)) {
		if (id)
			s->v[at].id = id;
		return 0;
	}
	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct path_entry *v = realloc(s->v, cap * sizeof(*v));

		if (!v) {
			free(copy);
			return -ENOMEM;
		}
		s->v = v;
		s->cap = cap;
	}
	memmove(s->v + at + 1, s->v + at, (s->n - at) * sizeof(*s->v));
	s->v[at] = (struct path_entry){ copy, id };
	s->n++;
	return 0;
}

void path_set_remove(struct path_set *s, const char *path)
{
	size_t at = entry_lower_bound(s, path);

	if (at == s->n || !streq(s->v[at].path, path))
		return;
	free(s->v[at].path);
	memmove(s->v + at, s->v + at + 1, (s->n - at - 1) * sizeof(*s->v));
	s->n--;
}

void path_set_below(const struct path_set *s, const char *root, size_t *first, size_t *n)
{
	size_t at = entry_lower_bound(s, root), end;

	for (end = at; end < s->n && cgroup_is_below(s->v[end].path, root); end++)
		;
	*first = at;
	*n = end - at;
}

void path_set_remove_below(struct path_set *s, const char *root)
{
	size_t first, n;

	path_set_below(s, root, &first, &n);
	for (size_t i = first; i < first + n; i++)
		free(s->v[i].path);
	memmove(s->v + first, s->v + first + n, (s->n - first - n) * sizeof(*s->v));
	s->n -= n;
}

const char *path_set_find_id(const struct path_set *s, uint64_t id)
{
	for (size_t i = 0; id && i < s->n; i++)
		if (s->v[i].id == id)
			return s->v[i].path;
	return NULL;
}

void path_set_done(struct path_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].path);
	free(s->v);
	*s = (struct path_set){};
}

/* ---- watch descriptors ---- */

static size_t watch_lower_bound(const struct watch_table *t, int wd)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].wd < wd)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int watch_table_set(struct watch_table *t, int wd, const char *cgroup)
{
	size_t at = watch_lower_bound(t, wd);
	char *copy;

	if (at < t->n && t->v[at].wd == wd && streq(t->v[at].cgroup, cgroup))
		return 0;
	copy = strdup(cgroup);
	if (!copy)
		return -ENOMEM;
	if (at < t->n && t->v[at].wd == wd) {
		/* the same directory under a new name (moved) */
		free(t->v[at].cgroup);
		t->v[at].cgroup = copy;
		return 0;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct watch_entry *v = realloc(t->v, cap * sizeof(*v));

		if (!v) {
			free(copy);
			return -ENOMEM;
		}
		t->v = v;
		t->cap = cap;
	}
	memmove(t->v + at + 1, t->v + at, (t->n - at) * sizeof(*t->v));
	t->v[at] = (struct watch_entry){ wd, copy };
	t->n++;
	return 0;
}

const char *watch_table_get(const struct watch_table *t, int wd)
{
	size_t at = watch_lower_bound(t, wd);

	return at < t->n && t->v[at].wd == wd ? t->v[at].cgroup : NULL;
}

void watch_table_remove(struct watch_table *t, int wd)
{
	size_t at = watch_lower_bound(t, wd);

	if (at == t->n || t->v[at].wd != wd)
		return;
	free(t->v[at].cgroup);
	memmove(t->v + at, t->v + at + 1, (t->n - at - 1) * sizeof(*t->v));
	t->n--;
}

void watch_table_done(struct watch_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].cgroup);
	free(t->v);
	*t = (struct watch_table){};
}
