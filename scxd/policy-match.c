// SPDX-License-Identifier: GPL-2.0
/*
 * The policy at run time: which entry a cgroup path gets, through the
 * policy's pattern index.
 */

#include <stdbool.h>
#include <stddef.h>

#include "match.h"
#include "pattern-index.h"
#include "policy.h"

/* For the same cgroup: whether entry a wins over entry b. */
static bool entry_wins(const struct policy_entry *a, const struct policy_entry *b)
{
	if (a->any_depth != b->any_depth)
		return !a->any_depth;
	return pattern_specificity_cmp(a->pattern, b->pattern) > 0;
}

struct match_state {
	const struct policy *p;
	const struct policy_entry *best;
};

static int match_candidate(size_t id, void *userdata)
{
	struct match_state *m = userdata;
	const struct policy_entry *e = &m->p->entries[id];

	/* the old linear order: on a tie the entry listed first stays */
	if (!m->best || entry_wins(e, m->best) ||
	    (!entry_wins(m->best, e) && e->index < m->best->index))
		m->best = e;
	return 0;
}

const struct policy_entry *policy_match(const struct policy *p, const char *cgroup)
{
	struct match_state m = { .p = p };

	if (!p->index)
		return NULL;
	pattern_index_match(p->index, cgroup, match_candidate, &m);
	return m.best;
}

bool policy_may_match_below(const struct policy *p, const char *cgroup)
{
	return !p->index || pattern_index_may_match_below(p->index, cgroup);
}

