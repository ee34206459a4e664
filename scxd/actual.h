/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * What is there now: the cgroups that exist (cgroupfs), the schedulers the
 * kernel runs (/sys/kernel/sched_ext), and what scxd attached itself
 * (pinned links under bpffs plus a small record per node under /run).
 * Reading only; apply.c changes things.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "desired.h"
#include "record.h"

struct scxd_paths {
	const char *cgroup_root;	/* /sys/fs/cgroup */
	const char *sysfs;		/* /sys/kernel/sched_ext */
	const char *pin_dir;		/* /sys/fs/bpf/scxd */
	const char *state_dir;		/* /run/scxd */
	const char *sched_dir;		/* <libdir>/scxd, or its cid/ on a cid kernel */
	const char *kernel_btf;		/* the kernel's BTF; NULL: /sys/kernel/btf/vmlinux */
};

struct cgroup_list {
	char **paths;		/* "/", "/a", ... relative to the cgroup root */
	uint64_t *ids;		/* cgroup ids (inode numbers) */
	size_t n;
	size_t *by_path, *by_id;	/* positions sorted, for lookups; NULL: scan */
};

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

int actual_read(const struct scxd_paths *paths, const struct cgroup_list *cgroups,
		struct actual_state *ret);
/*
 * actual_read() for the cgroups of a cgroup_scan_some() list only: their
 * schedulers in sysfs (found along their ancestors' sysfs directories),
 * their records and pins (by name), and the records of 'gone' cgroups,
 * which had a scheduler and no longer exist. Strays are not looked for.
 */
int actual_read_some(const struct scxd_paths *paths, const struct cgroup_list *cgroups,
		     const char *const *gone, size_t n_gone, struct actual_state *ret);
void actual_state_done(struct actual_state *a);
const struct kernel_sched *actual_kernel_sched(const struct actual_state *a, uint64_t cgid);

/*
 * The record goes to <state_dir>/nodes/<pin name>.json: written to a
 * temporary file, synced, renamed over the old one.
 */
int pin_record_write(const struct scxd_paths *paths, const struct pin_record *rec);
/* Both the record and one an older scxd left for the cgroup. */
int pin_record_remove(const struct scxd_paths *paths, const char *cgroup);
/*
 * The pin directory name of what is attached on cgroup: its pin_name(),
 * or the legacy name an older scxd pinned it under if only that exists.
 */
int pin_dir_find(const struct scxd_paths *paths, const char *cgroup, char **ret);

/* For _cleanup_() */
static inline void cgroup_list_donep(struct cgroup_list *l)
{
	cgroup_list_done(l);
}

static inline void actual_state_donep(struct actual_state *a)
{
	actual_state_done(a);
}
