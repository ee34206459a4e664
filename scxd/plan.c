// SPDX-License-Identifier: GPL-2.0
/*
 * The planner: see plan.h for the rules. Both trees are sorted parents
 * first (sched_tree_link()), which gives attach order directly and detach
 * order when walked backwards.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "match.h"
#include "plan.h"
#include "util.h"

const char *plan_op_name(enum plan_op op)
{
	return op == PLAN_ATTACH ? "attach" : "detach";
}

const char *plan_reason_name(enum plan_reason r)
{
	switch (r) {
	case PLAN_NEW:
		return "new";
	case PLAN_GONE:
		return "gone";
	case PLAN_CHANGED:
		return "changed";
	case PLAN_REPARENT:
	default:
		return "reparent";
	}
}

static int push(struct plan *p, enum plan_op op, enum plan_reason reason,
		const struct sched_node *node)
{
	struct plan_step *v = realloc(p->steps, (p->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	p->steps = v;
	p->steps[p->n++] = (struct plan_step){ op, reason, node };
	return 0;
}

/*
 * The topmost foreign node in actual at or above cgroup that blocks it:
 * one the policy does not want as it is (see plan.h). Only the foreign
 * nodes are looked at (foreign[], in actual's parents-first order), so
 * the first match is the topmost.
 */
static const struct sched_node *blocker_of(const struct sched_tree *desired,
					   const struct sched_node *const *foreign, size_t n_foreign,
					   const char *cgroup)
{
	for (size_t i = 0; i < n_foreign; i++) {
		const struct sched_node *a = foreign[i], *d;

		if (!cgroup_is_below(cgroup, a->cgroup))
			continue;
		d = sched_tree_find(desired, a->cgroup);
		if (!d || !sched_node_same_config(a, d))
			return a;
	}
	return NULL;
}

static int push_blocked(struct plan *p, const struct sched_node *d, const struct sched_node *by)
{
	const struct sched_node **b = realloc(p->blocked, (p->n_blocked + 1) * sizeof(*b));

	if (!b)
		return -ENOMEM;
	p->blocked = b;
	b = realloc(p->blocked_by, (p->n_blocked + 1) * sizeof(*b));
	if (!b)
		return -ENOMEM;
	p->blocked_by = b;
	p->blocked[p->n_blocked] = d;
	p->blocked_by[p->n_blocked++] = by;
	return 0;
}

/*
 * Reset roots: cgroups whose node appears, disappears or changes. Foreign
 * actual nodes are never reset; a desired node at or below a foreign one
 * is blocked instead, and scxd's own nodes there are reset only when the
 * policy no longer wants them.
 */
static int find_resets(const struct sched_tree *desired, const struct sched_tree *actual,
		       struct plan *p, bool *blocked, const char ***resets, size_t *n_resets)
{
	_cleanup_free_ const char **v = calloc(desired->n + actual->n + 1, sizeof(*v));
	_cleanup_free_ const struct sched_node **foreign = calloc(actual->n + 1, sizeof(*foreign));
	size_t n = 0, n_foreign = 0;
	int r;

	if (!v || !foreign)
		return -ENOMEM;
	for (size_t i = 0; i < actual->n; i++)
		if (actual->nodes[i].foreign)
			foreign[n_foreign++] = &actual->nodes[i];
	for (size_t i = 0; i < actual->n; i++) {
		const struct sched_node *a = &actual->nodes[i];
		const struct sched_node *d = sched_tree_find(desired, a->cgroup);

		if (a->foreign)
			continue;
		if (!d || (!sched_node_same_config(a, d) &&
			   !blocker_of(desired, foreign, n_foreign, a->cgroup)))
			v[n++] = a->cgroup;
	}
	for (size_t i = 0; i < desired->n; i++) {
		const struct sched_node *d = &desired->nodes[i];
		const struct sched_node *a = sched_tree_find(actual, d->cgroup);
		const struct sched_node *by = blocker_of(desired, foreign, n_foreign, d->cgroup);

		if (by) {
			r = push_blocked(p, d, by);
			if (r < 0)
				return r;
			blocked[i] = true;
		} else if (!a) {
			v[n++] = d->cgroup;
		}
	}
	*resets = TAKE_PTR(v);
	*n_resets = n;
	return 0;
}

/* Whether cgroup is a reset root (exact) or below one (strict). */
static bool under_reset(const char *const *resets, size_t n, const char *cgroup, bool strict)
{
	for (size_t i = 0; i < n; i++) {
		bool same = streq(resets[i], cgroup);

		if (strict ? (!same && cgroup_is_below(cgroup, resets[i])) : same)
			return true;
	}
	return false;
}

int plan_build(const struct sched_tree *desired, const struct sched_tree *actual,
	       struct plan *ret)
{
	_cleanup_(plan_donep) struct plan p = {};
	_cleanup_free_ const char **resets = NULL;
	_cleanup_free_ bool *detached = NULL, *blocked = calloc(desired->n + 1, sizeof(bool));
	size_t n_resets;
	int r;

	*ret = (struct plan){};
	if (!blocked)
		return -ENOMEM;
	/* blocked[i]: desired node i is in p.blocked (by position, not by a search) */
	r = find_resets(desired, actual, &p, blocked, &resets, &n_resets);
	if (r < 0)
		return r;
	detached = calloc(actual->n + 1, sizeof(*detached));
	if (!detached)
		return -ENOMEM;

	/* Children before parents: walk the parents-first order backwards. */
	for (size_t i = actual->n; i-- > 0;) {
		const struct sched_node *a = &actual->nodes[i];
		const struct sched_node *d = sched_tree_find(desired, a->cgroup);
		enum plan_reason why;

		if (a->foreign)
			continue;
		if (under_reset(resets, n_resets, a->cgroup, false))
			why = d ? PLAN_CHANGED : PLAN_GONE;
		else if (under_reset(resets, n_resets, a->cgroup, true))
			why = d ? PLAN_REPARENT : PLAN_GONE;
		else
			continue;
		r = push(&p, PLAN_DETACH, why, a);
		if (r < 0)
			return r;
		detached[i] = true;
	}

	/* Parents before children. */
	for (size_t i = 0; i < desired->n; i++) {
		const struct sched_node *d = &desired->nodes[i];
		const struct sched_node *a = sched_tree_find(actual, d->cgroup);
		enum plan_reason why;

		if (blocked[i])
			continue;
		if (!a)
			why = PLAN_NEW;
		else if (detached[a - actual->nodes])
			why = sched_node_same_config(a, d) ? PLAN_REPARENT : PLAN_CHANGED;
		else
			continue;
		r = push(&p, PLAN_ATTACH, why, d);
		if (r < 0)
			return r;
	}
	*ret = p;
	p = (struct plan){};
	return 0;
}

void plan_done(struct plan *p)
{
	free(p->steps);
	free(p->blocked);
	free(p->blocked_by);
	*p = (struct plan){};
}
