/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * Policy × cgroups that exist now → the tree of schedulers scxd wants. A
 * pure function: the cgroup list comes from the caller (the daemon walks
 * cgroupfs, tests hand in arrays).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel-api.h"
#include "policy.h"

#define NODE_NO_PARENT SIZE_MAX

/* One scheduler instance on one cgroup; owns its strings. */
struct sched_node {
	char *cgroup;
	char *scheduler;
	struct tunable_value *tunables;	/* sorted by name */
	size_t n_tunables;
	size_t entry_index;	/* policy entry it came from, SIZE_MAX if none */
	size_t parent;		/* index in the same array, NODE_NO_PARENT */
	size_t depth;		/* 1 for the root scheduler */
	bool foreign;		/* actual state only: not attached by scxd */
};

struct sched_tree {
	struct sched_node *nodes;	/* parents before children */
	size_t n;
};

struct desired_note {
	char *cgroup;
	char *message;
};

struct desired_result {
	struct sched_tree tree;
	struct desired_note *notes;	/* cgroups left out, and why */
	size_t n_notes;
	size_t unsupported_children;	/* matched, but the kernel has no sub-scheds */
};

struct desired_opts {
	enum kernel_api api;	/* what the kernel offers (kernel-api.h) */
};

/*
 * Whether the kernel can give what the policy asks: on a kernel with
 * sched_ext but no sub-schedulers (KERNEL_API_ROOT_ONLY) every entry but
 * the root's is a sub-scheduler it cannot run, and each is an error in
 * diags at its "cgroup" or "unit", naming the kernel's limit; -EINVAL
 * then. A policy refused here is refused as a whole (scxd --check, start,
 * reload), as an invalid one is. Any other API: 0 (with no sched_ext at
 * all nothing runs, and desired_build() counts the children it leaves
 * out).
 */
int desired_check_kernel(const struct policy *p, enum kernel_api api, struct diag_list *diags);

int desired_build(const struct policy *p, const char *const *cgroups, size_t n_cgroups,
		  const struct desired_opts *opts, struct desired_result *ret);

void desired_result_done(struct desired_result *r);

/* Helpers shared with plan.c, the actual-state reader and tests. */
int sched_node_init(struct sched_node *n, const char *cgroup, const char *scheduler,
		    const struct tunable_value *tunables, size_t n_tunables);
void sched_node_done(struct sched_node *n);
bool sched_node_same_config(const struct sched_node *a, const struct sched_node *b);
/* Sort nodes parents-first and fill in parent and depth from the paths. */
int sched_tree_link(struct sched_tree *t);
const struct sched_node *sched_tree_find(const struct sched_tree *t, const char *cgroup);
void sched_tree_done(struct sched_tree *t);

/* Whether 'path' is 'ancestor' or below it. */
bool cgroup_is_below(const char *path, const char *ancestor);

/* For _cleanup_() */
static inline void desired_result_donep(struct desired_result *r)
{
	desired_result_done(r);
}
