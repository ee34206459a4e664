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

struct scxd_paths {
	const char *cgroup_root;	/* /sys/fs/cgroup */
	const char *sysfs;		/* /sys/kernel/sched_ext */
	const char *pin_dir;		/* /sys/fs/bpf/scxd */
	const char *state_dir;		/* /run/scxd */
	const char *sched_dir;		/* <libdir>/scxd */
};

struct cgroup_list {
	char **paths;		/* "/", "/a", ... relative to the cgroup root */
	uint64_t *ids;		/* cgroup ids (inode numbers) */
	size_t n;
};

int cgroup_scan(const char *root, struct cgroup_list *ret);
uint64_t cgroup_list_id(const struct cgroup_list *l, const char *path);
const char *cgroup_list_path(const struct cgroup_list *l, uint64_t id);
void cgroup_list_done(struct cgroup_list *l);

/* A scheduler the kernel runs, from sysfs. */
struct kernel_sched {
	uint64_t cgid;		/* 1 for the root */
	char *ops;		/* ops name as the kernel shows it */
	char *events;		/* contents of its events file, or NULL */
};

/* What scxd recorded when it attached a node. */
struct pin_record {
	char *cgroup;
	char *scheduler;
	char *ops;
	uint64_t cgid;
	size_t uei_offset;	/* of 'uei' in the pinned .data map, SIZE_MAX if none */
	struct tunable_value *tunables;
	size_t n_tunables;
};

struct actual_state {
	struct sched_tree tree;		/* live: scxd's and foreign */
	struct pin_record *pins;	/* every record found, live or not */
	size_t n_pins;
	bool *pin_live;			/* parallel to pins */
	struct kernel_sched *kernel;
	size_t n_kernel;
	bool settling;			/* the root is enabling or disabling */
};

int actual_read(const struct scxd_paths *paths, const struct cgroup_list *cgroups,
		struct actual_state *ret);
void actual_state_done(struct actual_state *a);
const struct kernel_sched *actual_kernel_sched(const struct actual_state *a, uint64_t cgid);

/*
 * The file name a cgroup path is stored under in bpffs and the state
 * directory: "-" for "/", else escaped so that bpffs takes it (no '.').
 */
#define CGROUP_ESCAPE_MAX 240
char *cgroup_escape(const char *path);
char *cgroup_unescape(const char *name);

int pin_record_write(const struct scxd_paths *paths, const struct pin_record *rec);
int pin_record_remove(const struct scxd_paths *paths, const char *cgroup);
void pin_record_done(struct pin_record *rec);

/* For _cleanup_() */
static inline void cgroup_list_donep(struct cgroup_list *l)
{
	cgroup_list_done(l);
}

static inline void actual_state_donep(struct actual_state *a)
{
	actual_state_done(a);
}
