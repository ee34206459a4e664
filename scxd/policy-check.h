/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * Between the rooms of a policy (policy.c parses each file, policy-merge.c
 * merges them, policy-check.c checks what is left once the drop-ins
 * replaced theirs). Check errors go to diags, each at the entry's
 * "cgroup" or "unit" value; the returns are 0 or -ENOMEM.
 */

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"
#include "util.h"

/* Whether a and b name the same cgroups: an entry of a later file replaces. */
static inline bool policy_entry_same_target(const struct policy_entry *a,
					    const struct policy_entry *b)
{
	return a->any_depth == b->any_depth && streq(a->pattern, b->pattern);
}

/* Duplicates and ties between equally specific, overlapping patterns. */
int policy_check_ties(struct policy_entry **v, size_t n, struct diag_list *diags);

/* Parents that cannot host children, and nesting deeper than the kernel allows; sorts v. */
int policy_check_nesting(struct policy_entry **v, size_t n, struct diag_list *diags);

/* ---- policy-merge.c: the files' entries into one policy ---- */

/* The policy's own copies of the file names, the main file first. */
int policy_set_files(struct policy *p, const struct policy_source *sources, size_t n);
/*
 * Drop-ins over the main file: an entry is replaced by an entry of a
 * later file with the same target; replaced[] (by entry index) marks
 * those, *left counts the others.
 */
int policy_apply_replacements(struct policy_entry **valid, size_t n, bool *replaced, size_t *left);
/* Ties and nesting over the entries that survived the drop-ins. */
int policy_check_merged(struct policy_entry **valid, size_t n_valid, const bool *replaced,
			size_t left, struct diag_list *diags);
/* Keep the entries that survived, in order, renumbered, and index them. */
int policy_keep(struct policy *p, struct policy_entry **valid, size_t n_valid,
		const bool *replaced, size_t n_left);
