/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * The checks of policy-check.c, over the entries that are left once the
 * drop-ins replaced theirs. Errors go to diags, each at the entry's
 * "cgroup" or "unit" value; the return is 0 or -ENOMEM.
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
