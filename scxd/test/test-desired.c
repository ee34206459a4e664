// SPDX-License-Identifier: GPL-2.0
/* Desired state: policy × existing cgroups → tree with parents. */

#include <errno.h>
#include <stdlib.h>

#include "desired.h"
#include "fake-catalog.h"
#include "tests.h"

static struct policy *parse(const char *text)
{
	struct diag_list d = {};
	struct policy *p = NULL;

	if (policy_parse("t.json", text, strlen(text), &fake_catalog, &d, &p) < 0)
		for (size_t i = 0; i < d.n; i++)
			fprintf(stderr, "%s\n", d.lines[i]);
	diag_list_done(&d);
	return p;
}

static const char *const cgroups[] = {
	"/", "/init.scope", "/w", "/w/web", "/w/db", "/w/db/inner", "/system.slice",
	"/t", "/t/a", "/t/a/x",
};

static const char policy_text[] =
	"{\"version\": 1, \"entries\": ["
	"{\"cgroup\": \"/\", \"scheduler\": \"wparent\", \"tunables\": {\"slice_us\": 7}},"
	"{\"cgroup\": \"/w/*\", \"scheduler\": \"vtime\"},"
	"{\"cgroup\": \"/w/db\", \"scheduler\": \"fifo\"},"
	"{\"cgroup\": \"/t\", \"scheduler\": \"wparent\"},"
	"{\"cgroup\": \"/t/*/x\", \"scheduler\": \"lat\"},"
	"{\"cgroup\": \"/gone/*\", \"scheduler\": \"lat\"}]}";

static void test_desired_tree_nests_by_nearest_attached_ancestor(void)
{
	struct policy *p = parse(policy_text);
	struct desired_opts opts = { .api = KERNEL_API_CPU };
	struct desired_result r;
	const struct sched_node *n;

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_INTEQ(desired_build(p, cgroups, ELEMENTSOF(cgroups), &opts, &r), 0);
	CHECK_INTEQ(r.tree.n, 5);
	CHECK_INTEQ(r.n_notes, 0);
	CHECK_INTEQ(r.unsupported_children, 0);

	/* parents before children */
	CHECK_STREQ(r.tree.nodes[0].cgroup, "/");
	CHECK_STREQ(r.tree.nodes[1].cgroup, "/t");
	CHECK_STREQ(r.tree.nodes[2].cgroup, "/w/db");
	CHECK_STREQ(r.tree.nodes[3].cgroup, "/w/web");
	CHECK_STREQ(r.tree.nodes[4].cgroup, "/t/a/x");

	n = sched_tree_find(&r.tree, "/");
	CHECK(n && n->parent == NODE_NO_PARENT && n->depth == 1);
	CHECK(n && n->n_tunables == 1 && n->tunables[0].raw == 7);
	n = sched_tree_find(&r.tree, "/w/db");
	CHECK(n && streq(n->scheduler, "fifo") && n->depth == 2);
	CHECK(n && streq(r.tree.nodes[n->parent].cgroup, "/"));
	/* /t/a has no entry: /t/a/x nests directly under /t */
	n = sched_tree_find(&r.tree, "/t/a/x");
	CHECK(n && streq(r.tree.nodes[n->parent].cgroup, "/t") && n->depth == 3);
	CHECK(n && n->entry_index == 4);
	CHECK(sched_tree_find(&r.tree, "/w/db/inner") == NULL);
	desired_result_done(&r);
	policy_free(p);
}

static void test_without_sched_ext_children_are_counted_not_wanted(void)
{
	struct policy *p = parse(policy_text);
	struct desired_opts opts = { .api = KERNEL_API_NONE };
	struct desired_result r;

	if (!p)
		return;
	CHECK_INTEQ(desired_build(p, cgroups, ELEMENTSOF(cgroups), &opts, &r), 0);
	CHECK_INTEQ(r.tree.n, 1);
	CHECK_STREQ(r.tree.nodes[0].cgroup, "/");
	CHECK_INTEQ(r.unsupported_children, 4);
	desired_result_done(&r);
	policy_free(p);
}

/*
 * A kernel with sched_ext but no sub-schedulers refuses the policy: each
 * child entry is an error at its "cgroup", naming the kernel's limit; a
 * kernel with sub-schedulers of either form, or a root-only policy, passes.
 */
static void test_root_only_kernel_refuses_every_child_entry(void)
{
	struct policy *p = parse(policy_text);
	struct policy *root_only = parse("{\"version\": 1, \"entries\": ["
					 "{\"cgroup\": \"/\", \"scheduler\": \"fifo\"}]}");
	struct diag_list d = {};

	if (!p || !root_only)
		return;
	CHECK_INTEQ(desired_check_kernel(p, KERNEL_API_ROOT_ONLY, &d), -EINVAL);
	CHECK_INTEQ(d.n, 5);
	if (d.n > 0)
		CHECK_STREQ(d.lines[0],
			    "t.json:1:108: entries[1] \"/w/*\" (vtime): a sub-scheduler, but the kernel has sched_ext without sub-schedulers (root only)");
	diag_list_done(&d);
	CHECK_INTEQ(desired_check_kernel(p, KERNEL_API_CPU, &d), 0);
	CHECK_INTEQ(desired_check_kernel(p, KERNEL_API_CID, &d), 0);
	CHECK_INTEQ(desired_check_kernel(p, KERNEL_API_NONE, &d), 0);
	CHECK_INTEQ(desired_check_kernel(root_only, KERNEL_API_ROOT_ONLY, &d), 0);
	CHECK_INTEQ(d.n, 0);
	diag_list_done(&d);
	policy_free(p);
	policy_free(root_only);
}

static void test_no_root_entry_wants_nothing(void)
{
	struct policy *p = parse("{\"version\": 1, \"entries\": []}");
	struct desired_opts opts = { .api = KERNEL_API_CPU };
	struct desired_result r;

	if (!p)
		return;
	CHECK_INTEQ(desired_build(p, cgroups, ELEMENTSOF(cgroups), &opts, &r), 0);
	CHECK_INTEQ(r.tree.n, 0);
	desired_result_done(&r);
	policy_free(p);
}

static void test_duplicate_cgroups_yield_one_node(void)
{
	static const char *const dup[] = { "/w/a", "/", "/w/a" };
	struct policy *p = parse(policy_text);
	struct desired_opts opts = { .api = KERNEL_API_CPU };
	struct desired_result r;

	if (!p)
		return;
	CHECK_INTEQ(desired_build(p, dup, ELEMENTSOF(dup), &opts, &r), 0);
	CHECK_INTEQ(r.tree.n, 2);
	desired_result_done(&r);
	policy_free(p);
}

/*
 * Unit entries on a systemd-like tree: the slice by its dashes, scopes
 * under a given slice, and a scope glob at any depth, which is left out
 * (with a note naming the parent) where it would nest under a scheduler
 * that cannot host children.
 */
static void test_unit_entries_on_a_systemd_tree(void)
{
	static const char *const tree[] = {
		"/", "/system.slice", "/system.slice/cron.service",
		"/scxd.slice", "/scxd.slice/scxd-demo.slice",
		"/scxd.slice/scxd-demo.slice/web.scope", "/scxd.slice/scxd-demo.slice/batch.scope",
		"/scxd-demo.slice/web.scope",
		"/user.slice", "/user.slice/user-0.slice", "/user.slice/user-0.slice/job-1.scope",
		"/leaf.slice", "/leaf.slice/job-2.scope",
	};
	struct policy *p = parse(
		"{\"version\": 1, \"entries\": ["
		"{\"cgroup\": \"/\", \"scheduler\": \"wparent\"},"
		"{\"unit\": \"*.scope\", \"slice\": \"scxd-demo.slice\", \"scheduler\": \"vtime\"},"
		"{\"unit\": \"batch.scope\", \"slice\": \"scxd-demo.slice\", \"scheduler\": \"fifo\"},"
		"{\"unit\": \"job-*.scope\", \"scheduler\": \"lat\"},"
		"{\"unit\": \"leaf.slice\", \"scheduler\": \"fifo\"}]}");
	struct desired_opts opts = { .api = KERNEL_API_CPU };
	struct desired_result r;
	const struct sched_node *n;

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_INTEQ(desired_build(p, tree, ELEMENTSOF(tree), &opts, &r), 0);
	n = sched_tree_find(&r.tree, "/scxd.slice/scxd-demo.slice/web.scope");
	CHECK(n && streq(n->scheduler, "vtime") && n->depth == 2);
	n = sched_tree_find(&r.tree, "/scxd.slice/scxd-demo.slice/batch.scope");
	CHECK(n && streq(n->scheduler, "fifo"));
	/* not where systemd puts scxd-demo.slice */
	CHECK(sched_tree_find(&r.tree, "/scxd-demo.slice/web.scope") == NULL);
	n = sched_tree_find(&r.tree, "/user.slice/user-0.slice/job-1.scope");
	CHECK(n && streq(n->scheduler, "lat") && n->depth == 2);
	CHECK(sched_tree_find(&r.tree, "/leaf.slice") != NULL);
	CHECK(sched_tree_find(&r.tree, "/leaf.slice/job-2.scope") == NULL);
	CHECK_INTEQ(r.tree.n, 5);
	CHECK_INTEQ(r.n_notes, 1);
	if (r.n_notes) {
		CHECK_STREQ(r.notes[0].cgroup, "/leaf.slice/job-2.scope");
		CHECK_STREQ(r.notes[0].message,
			    "entries[3] unit \"job-*.scope\": not attached, its parent /leaf.slice (fifo) cannot host children");
	}
	desired_result_done(&r);
	policy_free(p);
}

int main(void)
{
	test_desired_tree_nests_by_nearest_attached_ancestor();
	test_without_sched_ext_children_are_counted_not_wanted();
	test_root_only_kernel_refuses_every_child_entry();
	test_no_root_entry_wants_nothing();
	test_duplicate_cgroups_yield_one_node();
	test_unit_entries_on_a_systemd_tree();
	return test_main_end("test-desired");
}
