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
#include "pattern-index.h"
#include "sched-tunable.h"

#define POLICY_VERSION 1
#define POLICY_MAX_ENTRIES 100000	/* per file, and in the merged policy */
#define POLICY_MAX_DROPINS 128
#define SCX_SUB_MAX_DEPTH 4	/* schedulers nested, root included */

struct tunable_value {
	char *name;
	uint64_t raw;		/* two's complement for signed values */
	unsigned size;		/* bytes, from the scheduler's BTF */
};

struct policy_entry {
	size_t index;		/* position in policy->entries */
	size_t file_index;	/* position in its file's "entries" */
	const char *file;	/* the file it came from (owned by the policy) */
	bool dropin;		/* that file is a drop-in, not the main file */
	/*
	 * The cgroup pattern: "cgroup" as written, or what "unit" (and
	 * "slice") resolve to. With any_depth (a scope or service without
	 * "slice") it is "/<unit glob>" and matches the last component of a
	 * cgroup path at any depth.
	 */
	char *pattern;
	char *unit;		/* "unit" as written, NULL for a "cgroup" entry */
	bool any_depth;
	char *scheduler;
	bool can_host_children;
	size_t components;
	struct tunable_value *tunables;
	size_t n_tunables;
	unsigned line, column;	/* of the entry object */
	unsigned target_line, target_column;	/* of its "cgroup" or "unit" value */
};

struct policy {
	char *file;		/* the main file */
	char **files;		/* the main file, then the drop-ins applied, in order */
	size_t n_files;
	struct policy_entry *entries;
	size_t n_entries;
	const struct policy_entry *root;	/* the "/" entry, or NULL */
	struct pattern_index *index;	/* the entries' patterns, by entry index */
};

/* One file's text, for policy_parse_files(). */
struct policy_source {
	const char *file;
	const char *text;
	size_t len;
};

/*
 * Parse and validate a main file and its drop-ins (sources[1..], in the
 * order given) as one policy. An entry in a later file replaces an entry
 * of an earlier file for the same cgroup pattern (or the same unit); the
 * merged set is then validated as one file would be, and an error about
 * two entries of different files names the file:line:column of both.
 * Errors go to diags and make it return -EINVAL.
 */
int policy_parse_files(const struct policy_source *sources, size_t n_sources,
		       struct sched_catalog *catalog, struct diag_list *diags,
		       struct policy **ret);

/* One file alone. */
int policy_parse(const char *file, const char *text, size_t len,
		 struct sched_catalog *catalog, struct diag_list *diags,
		 struct policy **ret);

/*
 * The drop-in directory of a main policy file: "policy.d" beside it
 * (/etc/scxd/policy.d for /etc/scxd/policy.json).
 */
char *policy_dropin_dir(const char *file);

/*
 * Read file and the *.json files of its drop-in directory (names sorted
 * bytewise, hidden files skipped; a missing directory is no drop-ins),
 * each with file_read() (file.h: regular files only, owner and mode
 * checked unless strict_modes is off, at most FILE_POLICY_MAX bytes), and
 * policy_parse_files() them. Any file that cannot be read or parsed fails
 * the whole load.
 */
int policy_load(const char *file, struct sched_catalog *catalog,
		struct diag_list *diags, struct policy **ret);

/*
 * policy_load() with the main file's text given (scxdctl diff sends it),
 * errors in it named 'name': the drop-ins are file's, as a reload of file
 * reads them.
 */
int policy_load_text(const char *file, const char *name, const char *text, size_t len,
		     struct sched_catalog *catalog, struct diag_list *diags, struct policy **ret);

/*
 * The entry that wins for a cgroup path, NULL if none matches. The
 * validator guarantees there are no ties (were there one, the entry
 * listed first would win). Looked up in p->index: the cost follows the
 * path's depth and the globs tried on the way, not the number of entries.
 */
const struct policy_entry *policy_match(const struct policy *p, const char *cgroup);

/*
 * Whether a cgroup created below 'cgroup' could match an entry: where
 * not, scxd need not watch for new cgroups.
 */
bool policy_may_match_below(const struct policy *p, const char *cgroup);

/*
 * entries[3] "/w/x" or entries[3] unit "batch.slice" for messages, with
 * the drop-in's name in front for an entry from a drop-in; two rotating
 * buffers per thread.
 */
const char *policy_entry_name(const struct policy_entry *e);

void policy_free(struct policy *p);

/* For _cleanup_() */
static inline void policy_freep(struct policy **p)
{
	policy_free(*p);
}
