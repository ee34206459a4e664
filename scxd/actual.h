/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * What is there now: the cgroups that exist (cgroupfs), the schedulers the
 * kernel runs (/sys/kernel/sched_ext), and what scxd attached itself
 * (pinned links under bpffs plus a small record per node under /run,
 * record.c). Reading only; apply.c changes things.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "desired.h"
#include "paths.h"
#include "record.h"

struct cgroup_list {
	char **paths;		/* "/", "/a", ... relative to the cgroup root */
	uint64_t *ids;		/* cgroup ids (inode numbers) */
	size_t n;
	size_t *by_path, *by_id;	/* positions sorted, for lookups; NULL: scan */
};

/* cgroup-list.c: every cgroup below root. */
int cgroup_scan(const char *root, struct cgroup_list *ret);
/*
 * cgroup_scan() of a part of the tree: the subtrees of roots (those that
 * exist) and every ancestor of a root, which decide where the subtrees'
 * schedulers nest. For a reconcile scoped to what events named.
 */
int cgroup_scan_some(const char *root, const char *const *roots, size_t n_roots,
		     struct cgroup_list *ret);
/* Sort the lookup indices (cgroup_scan() does); lists built by hand may skip it. */
int cgroup_list_index(struct cgroup_list *l);
uint64_t cgroup_list_id(const struct cgroup_list *l, const char *path);
/* The position of path in the list, SIZE_MAX if it is not there. */
size_t cgroup_list_find(const struct cgroup_list *l, const char *path);
/* The list's positions, parents before their children (*ret allocated). */
int cgroup_list_by_depth(const struct cgroup_list *l, size_t **ret);
const char *cgroup_list_path(const struct cgroup_list *l, uint64_t id);
void cgroup_list_done(struct cgroup_list *l);

/* A scheduler the kernel runs, from sysfs. */
struct kernel_sched {
	uint64_t cgid;		/* 1 for the root */
	char *ops;		/* ops name as the kernel shows it */
	char *events;		/* contents of its events file, or NULL */
	char *caps;		/* contents of its caps file, or NULL (no CPU delegation) */
};

struct actual_state {
	struct sched_tree tree;		/* live: scxd's and foreign */
	struct pin_record *pins;	/* every record found, live or not */
	size_t n_pins;
	bool *pin_live;			/* parallel to pins */
	char **strays;			/* pins and records matched to no cgroup: reported only */
	size_t n_strays;
	struct kernel_sched *kernel;
	size_t n_kernel;
	bool settling;			/* the root is enabling or disabling */
};

/*
 * What a scoped read covers beyond the cgroups of a cgroup_scan_some()
 * list: the cgroups that had a scheduler and no longer exist, whose
 * records are looked up too.
 */
struct actual_scope {
	const char *const *gone;
	size_t n_gone;
};

/*
 * The schedulers of the listed cgroups in sysfs (found along their
 * ancestors' sysfs directories), their records and pins (by name). scope
 * NULL: the whole state, the list being every cgroup; then records and
 * pins that match no cgroup are strays. Otherwise the records of
 * scope->gone as well, and strays are not looked for.
 */
int actual_read(const struct scxd_paths *paths, const struct cgroup_list *cgroups,
		const struct actual_scope *scope, struct actual_state *ret);
void actual_state_done(struct actual_state *a);
const struct kernel_sched *actual_kernel_sched(const struct actual_state *a, uint64_t cgid);

/* For _cleanup_() */
static inline void cgroup_list_donep(struct cgroup_list *l)
{
	cgroup_list_done(l);
}

static inline void actual_state_donep(struct actual_state *a)
{
	actual_state_done(a);
}
