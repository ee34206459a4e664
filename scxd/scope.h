/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * What one reconcile reads. A cgroup event names one cgroup: a directory
 * made or removed below a watched one. A reconcile after such events
 * reads only the subtrees they name (the scope's roots) and the ancestors
 * of those roots, which decide where the subtrees' nodes nest; a full
 * reconcile reads everything (the first one, a policy reload, events that
 * were lost, the safety resync, kernel events). Bookkeeping only: no I/O.
 *
 * Paths are compared with '/' ordered before every other byte, so that a
 * cgroup's descendants sort right after it ("/a", "/a/b", "/a-b").
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* More roots than this in one reconcile: reading everything is cheaper. */
#define SCOPE_MAX_ROOTS 1024

struct reconcile_scope {
	bool full;
	char **roots;		/* sorted (scope_path_cmp); none at or below another */
	size_t n_roots, cap;
};

int scope_path_cmp(const char *a, const char *b);

/* Add a cgroup's subtree; "/" or more than SCOPE_MAX_ROOTS make the scope full. */
int scope_add(struct reconcile_scope *s, const char *cgroup);
void scope_set_full(struct reconcile_scope *s);
/* Nothing to read: no root, not full. */
bool scope_empty(const struct reconcile_scope *s);
/* Whether the cgroup is at or below a root (any cgroup, for a full scope). */
bool scope_covers(const struct reconcile_scope *s, const char *cgroup);
void scope_done(struct reconcile_scope *s);

/*
 * A sorted set of cgroup paths with their cgroup ids: the cgroups that had
 * a scheduler after the last reconcile, so that a reconcile scoped to a
 * removed cgroup knows which records to look at, and a kernel event about
 * a scheduler (named by cgroup id) knows its cgroup.
 */
struct path_entry {
	char *path;
	uint64_t id;		/* 0 if not known */
};

struct path_set {
	struct path_entry *v;
	size_t n, cap;
};

/* Add path, or update its id. */
int path_set_add(struct path_set *s, const char *path, uint64_t id);
void path_set_remove(struct path_set *s, const char *path);
/* The paths at or below root: s->v[*first .. *first + *n). */
void path_set_below(const struct path_set *s, const char *root, size_t *first, size_t *n);
void path_set_remove_below(struct path_set *s, const char *root);
/* The path with that cgroup id, NULL if none (a scan: ids are looked up per kernel event). */
const char *path_set_find_id(const struct path_set *s, uint64_t id);
void path_set_done(struct path_set *s);

/* inotify watch descriptors → the cgroup each one watches. */
struct watch_entry {
	int wd;
	char *cgroup;
};

struct watch_table {
	struct watch_entry *v;	/* sorted by wd */
	size_t n, cap;
};

int watch_table_set(struct watch_table *t, int wd, const char *cgroup);
const char *watch_table_get(const struct watch_table *t, int wd);
void watch_table_remove(struct watch_table *t, int wd);
void watch_table_done(struct watch_table *t);

static inline void scope_donep(struct reconcile_scope *s)
{
	scope_done(s);
}
