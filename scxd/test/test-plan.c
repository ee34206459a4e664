// SPDX-License-Identifier: GPL-2.0
/*
 * The planner: step order (children detached first, parents attached
 * first), only differences touched, reparenting below reset nodes, and
 * foreign schedulers left alone.
 */

#include <stdlib.h>

#include "plan.h"
#include "tests.h"
#include "util.h"

struct spec {
	const char *cgroup, *scheduler;
	uint64_t slice;		/* 0: no tunables */
	bool foreign;
};

static void make_tree(struct sched_tree *t, const struct spec *s, size_t n)
{
	t->nodes = calloc(n + 1, sizeof(*t->nodes));
	t->n = n;
	for (size_t i = 0; i < n; i++) {
		struct tunable_value tv = { .name = "slice_us", .raw = s[i].slice, .size = 8 };

		sched_node_init(&t->nodes[i], s[i].cgroup, s[i].scheduler, &tv, s[i].slice ? 1 : 0);
		t->nodes[i].foreign = s[i].foreign;
	}
	sched_tree_link(t);
}

/* Render the plan as "detach /a, attach /b" for one-line comparisons. */
static char *render(const struct plan *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	for (size_t i = 0; i < p->n; i++)
		fprintf(f, "%s%s %s (%s)", i ? ", " : "", plan_op_name(p->steps[i].op),
			p->steps[i].node->cgroup, plan_reason_name(p->steps[i].reason));
	fclose(f);
	return buf;
}

static void expect_plan(const struct spec *desired, size_t nd, const struct spec *actual,
			size_t na, const char *expected, size_t blocked)
{
	struct sched_tree d = {}, a = {};
	struct plan p;
	char *got;

	make_tree(&d, desired, nd);
	make_tree(&a, actual, na);
	CHECK_INTEQ(plan_build(&d, &a, &p), 0);
	got = render(&p);
	CHECK_STREQ(got, expected);
	CHECK_INTEQ(p.n_blocked, blocked);
	free(got);
	plan_done(&p);
	sched_tree_done(&d);
	sched_tree_done(&a);
}

static const struct spec tree3[] = {
	{ "/", "wparent" }, { "/a", "wparent" }, { "/a/x", "fifo" }, { "/b", "vtime" },
};

static void test_from_nothing_parents_attach_first(void)
{
	expect_plan(tree3, 4, NULL, 0,
		    "attach / (new), attach /a (new), attach /b (new), attach /a/x (new)", 0);
}

static void test_to_nothing_children_detach_first(void)
{
	expect_plan(NULL, 0, tree3, 4,
		    "detach /a/x (gone), detach /b (gone), detach /a (gone), detach / (gone)", 0);
}

static void test_equal_trees_need_no_steps(void)
{
	expect_plan(tree3, 4, tree3, 4, "", 0);
}

static void test_a_new_leaf_touches_only_itself(void)
{
	static const struct spec want[] = {
		{ "/", "wparent" }, { "/a", "wparent" }, { "/a/x", "fifo" }, { "/b", "vtime" },
		{ "/a/y", "lat" },
	};

	expect_plan(want, 5, tree3, 4, "attach /a/y (new)", 0);
}

static void test_a_tunables_change_reattaches_the_subtree(void)
{
	static const struct spec want[] = {
		{ "/", "wparent" }, { "/a", "wparent", 500 }, { "/a/x", "fifo" }, { "/b", "vtime" },
	};

	expect_plan(want, 4, tree3, 4,
		    "detach /a/x (reparent), detach /a (changed), attach /a (changed), attach /a/x (reparent)",
		    0);
}

static void test_removing_a_middle_node_reparents_its_children(void)
{
	static const struct spec want[] = {
		{ "/", "wparent" }, { "/a/x", "fifo" }, { "/b", "vtime" },
	};

	expect_plan(want, 3, tree3, 4,
		    "detach /a/x (reparent), detach /a (gone), attach /a/x (reparent)", 0);
}

static void test_inserting_a_middle_node_reparents_existing_children(void)
{
	static const struct spec have[] = { { "/", "wparent" }, { "/a/x", "fifo" } };
	static const struct spec want[] = {
		{ "/", "wparent" }, { "/a", "wparent" }, { "/a/x", "fifo" },
	};

	expect_plan(want, 3, have, 2,
		    "detach /a/x (reparent), attach /a (new), attach /a/x (reparent)", 0);
}

static void test_root_change_resets_everything(void)
{
	static const struct spec want[] = {
		{ "/", "lat" },
	};
	static const struct spec have[] = { { "/", "wparent" }, { "/b", "vtime" } };

	expect_plan(want, 1, have, 2, "detach /b (gone), detach / (changed), attach / (changed)", 0);
}

static void test_foreign_schedulers_are_left_alone(void)
{
	static const struct spec have[] = { { "/", "simple", 0, true } };
	static const struct spec want[] = { { "/", "wparent" }, { "/a", "fifo" } };

	/* the root is someone else's: scxd replaces it not, nor attaches below it */
	expect_plan(want, 2, have, 1, "", 2);
	/* and never detaches it when the policy no longer wants a root */
	expect_plan(NULL, 0, have, 1, "", 0);
}

/* A foreign root blocks the whole desired tree, every level of it. */
static void test_foreign_root_blocks_its_whole_subtree(void)
{
	static const struct spec have[] = { { "/", "simple", 0, true } };
	struct sched_tree d = {}, a = {};
	struct plan p;

	make_tree(&d, tree3, 4);
	make_tree(&a, have, 1);
	CHECK_INTEQ(plan_build(&d, &a, &p), 0);
	CHECK_INTEQ(p.n, 0);
	CHECK_INTEQ(p.n_blocked, 4);
	for (size_t i = 0; i < p.n_blocked; i++)
		CHECK(p.blocked_by[i] == &a.nodes[0]);
	printf("foreign root: %zu of %zu desired nodes blocked, %zu steps\n", p.n_blocked, d.n, p.n);
	plan_done(&p);
	sched_tree_done(&d);
	sched_tree_done(&a);
}

/*
 * A foreign scheduler on a cgroup the policy wants nothing on blocks what
 * the policy wants below it; scxd's own nodes there stay as they are
 * unless the policy drops them.
 */
static void test_foreign_child_blocks_below_it(void)
{
	static const struct spec have[] = {
		{ "/", "wparent" }, { "/a", "simple", 0, true }, { "/a/x", "fifo" },
		{ "/a/y", "fifo" },
	};
	static const struct spec want[] = {
		{ "/", "wparent" }, { "/a/x", "fifo", 300 }, { "/a/z", "lat" }, { "/b", "vtime" },
	};

	/* /a/x would change and /a/z be new: both wait; /a/y is no longer wanted */
	expect_plan(want, 4, have, 4, "detach /a/y (gone), attach /b (new)", 2);
}

/* A foreign scheduler that is what the policy wants there hosts the subtree. */
static void test_foreign_node_with_the_wanted_scheduler_blocks_nothing(void)
{
	static const struct spec have[] = { { "/", "wparent", 0, true } };
	static const struct spec want[] = { { "/", "wparent" }, { "/a", "fifo" } };

	expect_plan(want, 2, have, 1, "attach /a (new)", 0);
}

int main(void)
{
	test_from_nothing_parents_attach_first();
	test_to_nothing_children_detach_first();
	test_equal_trees_need_no_steps();
	test_a_new_leaf_touches_only_itself();
	test_a_tunables_change_reattaches_the_subtree();
	test_removing_a_middle_node_reparents_its_children();
	test_inserting_a_middle_node_reparents_existing_children();
	test_root_change_resets_everything();
	test_foreign_schedulers_are_left_alone();
	test_foreign_root_blocks_its_whole_subtree();
	test_foreign_child_blocks_below_it();
	test_foreign_node_with_the_wanted_scheduler_blocks_nothing();
	return test_main_end("test-plan");
}
