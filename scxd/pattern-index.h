/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * An index over cgroup path patterns (match.h), so that finding the
 * patterns that match a path costs about the path's depth, not the number
 * of patterns.
 *
 * Patterns are kept in a trie of components: the trie node at depth k
 * stands for the first k components of one or more patterns, and holds
 * the ids of the patterns that end there. A node's literal children are
 * found by a hash of (node, component); its glob children are tried one by
 * one, so the cost of a lookup is the number of trie nodes it reaches plus
 * the glob children it tries on the way. Patterns that match at any depth
 * (an entry's any_depth, "/<unit glob>") are a second trie of depth one,
 * looked up with the path's last component.
 *
 * Ids are the caller's (a policy entry's index); the index owns copies of
 * the components only.
 */

#include <stdbool.h>
#include <stddef.h>

struct pattern_index;

/* Called once per pattern found; a negative return stops the walk and is returned. */
typedef int (*pattern_index_fn)(size_t id, void *userdata);

int pattern_index_new(struct pattern_index **ret);

/* A valid pattern (pattern_validate()); any_depth as policy_entry's. */
int pattern_index_add(struct pattern_index *x, const char *pattern, bool any_depth, size_t id);

/*
 * Every pattern that matches the cgroup path: the ones of its depth that
 * pattern_match() it and, below "/", the any-depth ones whose component
 * matches its last component. In no particular order.
 */
int pattern_index_match(const struct pattern_index *x, const char *path, pattern_index_fn fn,
			void *userdata);

/*
 * Every pattern (not any-depth) with fewer components than 'pattern' that
 * can match an ancestor of a path 'pattern' matches: the pairs
 * pattern_prefix_overlap() accepts. For the nesting check.
 */
int pattern_index_prefix_overlaps(const struct pattern_index *x, const char *pattern,
				  pattern_index_fn fn, void *userdata);

/*
 * Whether some pattern could match a cgroup below 'path' (a strict
 * descendant): a pattern with more components whose leading ones match
 * path, or any any-depth pattern. Where this is false, new cgroups need
 * not be watched for.
 */
bool pattern_index_may_match_below(const struct pattern_index *x, const char *path);

/* How many patterns were added. */
size_t pattern_index_size(const struct pattern_index *x);

void pattern_index_free(struct pattern_index *x);

static inline void pattern_index_freep(struct pattern_index **x)
{
	pattern_index_free(*x);
}
