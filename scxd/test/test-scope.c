// SPDX-License-Identifier: GPL-2.0
/* Reconcile scopes, the set of cgroups with a scheduler, the watch table. */

#include <stdlib.h>

#include "scope.h"
#include "tests.h"
#include "util.h"

static void test_path_order_puts_descendants_after_their_ancestor(void)
{
	CHECK(scope_path_cmp("/a", "/a/b") < 0);
	CHECK(scope_path_cmp("/a/b", "/a-b") < 0);
	CHECK(scope_path_cmp("/a/z", "/a-b") < 0);
	CHECK(scope_path_cmp("/a", "/a") == 0);
	CHECK(scope_path_cmp("/", "/a") < 0);
}

static void test_scope_keeps_only_topmost_roots(void)
{
	_cleanup_(scope_done) struct reconcile_scope s = {};

	CHECK(scope_empty(&s));
	CHECK_INTEQ(scope_add(&s, "/a/b/c"), 0);
	CHECK_INTEQ(scope_add(&s, "/a/b/d"), 0);
	CHECK_INTEQ(scope_add(&s, "/a-x"), 0);
	CHECK_INTEQ(s.n_roots, 3);
	CHECK(scope_covers(&s, "/a/b/c/deeper"));
	CHECK(!scope_covers(&s, "/a/b"));
	CHECK(!scope_covers(&s, "/a/b/cc"));
	/* an ancestor replaces the roots below it */
	CHECK_INTEQ(scope_add(&s, "/a/b"), 0);
	CHECK_INTEQ(s.n_roots, 2);
	CHECK_STREQ(s.roots[0], "/a/b");
	CHECK_STREQ(s.roots[1], "/a-x");
	CHECK(scope_covers(&s, "/a/b/d"));
	CHECK(!scope_covers(&s, "/a"));
	/* something below a root adds nothing */
	CHECK_INTEQ(scope_add(&s, "/a/b/e"), 0);
	CHECK_INTEQ(s.n_roots, 2);
	CHECK(!scope_empty(&s));
}

static void test_scope_too_many_roots_is_full(void)
{
	_cleanup_(scope_done) struct reconcile_scope s = {};
	char path[64];

	for (int i = 0; i <= SCOPE_MAX_ROOTS; i++) {
		snprintf(path, sizeof(path), "/burst/c%d", i);
		CHECK_INTEQ(scope_add(&s, path), 0);
	}
	CHECK(s.full);
	CHECK(scope_covers(&s, "/anything"));
	scope_done(&s);
	CHECK_INTEQ(scope_add(&s, "/a"), 0);
	CHECK_INTEQ(scope_add(&s, "/"), 0);
	CHECK(s.full);
}

static void test_path_set_below(void)
{
	_cleanup_(path_set_done) struct path_set p = {};
	size_t first, n;

	CHECK_INTEQ(path_set_add(&p, "/a-b", 7), 0);
	CHECK_INTEQ(path_set_add(&p, "/a/x", 0), 0);
	CHECK_INTEQ(path_set_add(&p, "/a", 5), 0);
	CHECK_INTEQ(path_set_add(&p, "/a/x/y", 9), 0);
	CHECK_INTEQ(path_set_add(&p, "/a", 0), 0);
	CHECK_INTEQ(path_set_add(&p, "/", 1), 0);
	CHECK_INTEQ(p.n, 5);
	CHECK_STREQ(path_set_find_id(&p, 5), "/a");
	CHECK_STREQ(path_set_find_id(&p, 9), "/a/x/y");
	CHECK(!path_set_find_id(&p, 0));
	CHECK_INTEQ(path_set_add(&p, "/a/x", 8), 0);
	CHECK_STREQ(path_set_find_id(&p, 8), "/a/x");
	path_set_below(&p, "/a", &first, &n);
	CHECK_INTEQ(n, 3);
	CHECK_STREQ(p.v[first].path, "/a");
	path_set_below(&p, "/a/x", &first, &n);
	CHECK_INTEQ(n, 2);
	path_set_remove_below(&p, "/a/x");
	CHECK_INTEQ(p.n, 3);
	CHECK(!path_set_find_id(&p, 9));
	path_set_remove(&p, "/a-b");
	path_set_remove(&p, "/nothing");
	CHECK_INTEQ(p.n, 2);
	path_set_below(&p, "/", &first, &n);
	CHECK_INTEQ(n, 2);
}

static void test_watch_table(void)
{
	_cleanup_(watch_table_done) struct watch_table t = {};

	CHECK_INTEQ(watch_table_set(&t, 5, "/a"), 0);
	CHECK_INTEQ(watch_table_set(&t, 1, "/"), 0);
	CHECK_INTEQ(watch_table_set(&t, 9, "/a/b"), 0);
	CHECK_STREQ(watch_table_get(&t, 5), "/a");
	CHECK_STREQ(watch_table_get(&t, 1), "/");
	CHECK(!watch_table_get(&t, 4));
	/* the same directory, moved: the new name */
	CHECK_INTEQ(watch_table_set(&t, 5, "/c"), 0);
	CHECK_STREQ(watch_table_get(&t, 5), "/c");
	watch_table_remove(&t, 5);
	CHECK(!watch_table_get(&t, 5));
	CHECK_STREQ(watch_table_get(&t, 9), "/a/b");
	CHECK_INTEQ(t.n, 2);
}

int main(void)
{
	test_path_order_puts_descendants_after_their_ancestor();
	test_scope_keeps_only_topmost_roots();
	test_scope_too_many_roots_is_full();
	test_path_set_below();
	test_watch_table();
	return test_main_end("scope");
}
