/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * File → validated policy. policy_parse() checks everything that can be
 * checked without a kernel: JSON syntax, keys and types, scheduler objects
 * and their tunables (via a sched_catalog), pattern ties, nesting under
 * schedulers that cannot host children and nesting depth.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "sched-info.h"

#define POLICY_VERSION 1
#define POLICY_MAX_ENTRIES 1024
#define SCX_SUB_MAX_DEPTH 4	/* schedulers nested, root included */

struct tunable_value {
	char *name;
	uint64_t raw;		/* two's complement for signed values */
	unsigned size;		/* bytes, from the scheduler's BTF */
};

struct policy_entry {
	size_t index;		/* position in "entries" */
	char *pattern;
	char *scheduler;
	bool can_host_children;
	size_t components;
	struct tunable_value *tunables;
	size_t n_tunables;
	unsigned line, column;	/* of the entry object */
};

struct policy {
	char *file;
	struct policy_entry *entries;
	size_t n_entries;
	const struct policy_entry *root;	/* the "/" entry, or NULL */
};

/* Parse and validate text; errors go to diags and make it return -EINVAL. */
int policy_parse(const char *file, const char *text, size_t len,
		 struct sched_catalog *catalog, struct diag_list *diags,
		 struct policy **ret);

/* Read file (no permission checks: see strict.h) and policy_parse() it. */
int policy_load(const char *file, struct sched_catalog *catalog,
		struct diag_list *diags, struct policy **ret);

/*
 * The entry that wins for a cgroup path, NULL if none matches. The
 * validator guarantees there are no ties.
 */
const struct policy_entry *policy_match(const struct policy *p, const char *cgroup);

/* entries[3] "/w/x" for messages; two rotating buffers per thread. */
const char *policy_entry_name(const struct policy_entry *e);

void policy_free(struct policy *p);

/* For _cleanup_() */
static inline void policy_freep(struct policy **p)
{
	policy_free(*p);
}
