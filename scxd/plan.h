/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * Desired tree vs actual tree → ordered steps. Only what differs is
 * touched: a node is reset when it appears, disappears or changes
 * scheduler or tunables, and every attached node below a reset node is
 * detached first and reattached after it (the kernel nests a scheduler
 * under its nearest ancestor at attach time, and disables children when
 * their parent goes). Detaches come first, deepest first; attaches follow,
 * parents first. Nodes scxd did not attach (foreign) are never touched.
 *
 * A foreign scheduler blocks its whole subtree: no desired node at or
 * below its cgroup is attached (the kernel would nest it under a
 * scheduler scxd knows nothing of), and scxd's own nodes there are only
 * detached when the policy no longer wants them. A foreign node blocks
 * nothing when the policy wants that very scheduler there (same name, no
 * tunables): scxd then treats it as its own parent.
 */

#include <stddef.h>

#include "desired.h"

enum plan_op {
	PLAN_DETACH,
	PLAN_ATTACH,
};

enum plan_reason {
	PLAN_NEW,		/* attach: not attached yet */
	PLAN_GONE,		/* detach: no longer wanted */
	PLAN_CHANGED,		/* scheduler or tunables differ */
	PLAN_REPARENT,		/* an ancestor is reset */
};

struct plan_step {
	enum plan_op op;
	enum plan_reason reason;
	const struct sched_node *node;	/* in actual (detach) or desired (attach) */
};

struct plan {
	struct plan_step *steps;
	size_t n;
	/*
	 * desired nodes not attached because a foreign scheduler is there or
	 * above, and (parallel) the topmost such foreign node in actual
	 */
	const struct sched_node **blocked;
	const struct sched_node **blocked_by;
	size_t n_blocked;
};

int plan_build(const struct sched_tree *desired, const struct sched_tree *actual,
	       struct plan *ret);
void plan_done(struct plan *p);

const char *plan_op_name(enum plan_op op);
const char *plan_reason_name(enum plan_reason r);

/* For _cleanup_() */
static inline void plan_donep(struct plan *p)
{
	plan_done(p);
}
