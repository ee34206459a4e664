// SPDX-License-Identifier: GPL-2.0
/*
 * The parser and validator: every error class with its exact message and
 * the line:column it points at.
 */

#include <errno.h>
#include <stdlib.h>

#include "fake-catalog.h"
#include "policy.h"
#include "tests.h"

/* Parse text; check the result is valid (expected == NULL) or the errors. */
static void expect(const char *text, const char *const *expected, size_t n_expected,
		   int line)
{
	struct diag_list d = {};
	struct policy *p = NULL;
	int r = policy_parse("t.json", text, strlen(text), &fake_catalog, &d, &p);

	if (n_expected == 0) {
		CHECK_INTEQ(r, 0);
		CHECK(p != NULL);
	} else {
		CHECK_INTEQ(r, -EINVAL);
		CHECK(p == NULL);
	}
	if (d.n != n_expected)
		fprintf(stderr, "case at line %d: %zu errors, expected %zu\n", line, d.n,
			n_expected);
	CHECK_INTEQ(d.n, n_expected);
	for (size_t i = 0; i < d.n && i < n_expected; i++)
		CHECK_STREQ(d.lines[i], expected[i]);
	for (size_t i = n_expected; i < d.n; i++)
		fprintf(stderr, "  extra: %s\n", d.lines[i]);
	diag_list_done(&d);
	policy_free(p);
}

#define EXPECT_OK(text) expect(text, NULL, 0, __LINE__)
#define EXPECT_ERRORS(text, ...)                                                \
	do {                                                                    \
		static const char *const _e[] = { __VA_ARGS__ };                \
		expect(text, _e, ELEMENTSOF(_e), __LINE__);                     \
	} while (0)

static void test_valid_policy_parses(void)
{
	struct diag_list d = {};
	struct policy *p = NULL;
	const char *text =
		"{\"version\": 1, \"comment\": \"x\", \"entries\": [\n"
		" {\"cgroup\": \"/\", \"scheduler\": \"wparent\",\n"
		"  \"tunables\": {\"slice_us\": 3000, \"boost\": false, \"mode\": \"MODE_NEG\"}},\n"
		" {\"cgroup\": \"/w/*\", \"scheduler\": \"vtime\"},\n"
		" {\"cgroup\": \"/w/db\", \"scheduler\": \"fifo\", \"tunables\": {\"slice_us\": 1}}\n"
		"]}";

	CHECK_INTEQ(policy_parse("t.json", text, strlen(text), &fake_catalog, &d, &p), 0);
	CHECK_INTEQ(d.n, 0);
	if (!p)
		return;
	CHECK_INTEQ(p->n_entries, 3);
	CHECK(p->root == &p->entries[0]);
	/* tunables come sorted by name with their raw values */
	CHECK_INTEQ(p->entries[0].n_tunables, 3);
	CHECK_STREQ(p->entries[0].tunables[0].name, "boost");
	CHECK_INTEQ(p->entries[0].tunables[0].raw, 0);
	CHECK_STREQ(p->entries[0].tunables[1].name, "mode");
	CHECK_INTEQ((int64_t)p->entries[0].tunables[1].raw, -2);
	CHECK_STREQ(p->entries[0].tunables[2].name, "slice_us");
	CHECK_INTEQ(p->entries[0].tunables[2].raw, 3000);
	CHECK_INTEQ(p->entries[0].line, 2);
	CHECK_INTEQ(p->entries[0].column, 2);
	/* most specific match wins */
	CHECK_STREQ(policy_match(p, "/w/db")->scheduler, "fifo");
	CHECK_STREQ(policy_match(p, "/w/web")->scheduler, "vtime");
	CHECK_STREQ(policy_match(p, "/")->scheduler, "wparent");
	CHECK(policy_match(p, "/w") == NULL);
	CHECK(policy_match(p, "/w/db/x") == NULL);
	policy_free(p);
}

static void test_syntax_errors_have_line_and_column(void)
{
	EXPECT_ERRORS("{\"version\": 1,\n  \"entries\": [,]}",
		      "t.json:2:15: unexpected token near ','");
	EXPECT_ERRORS("{\"version\": 1, \"version\": 1, \"entries\": []}",
		      "t.json:1:24: duplicate object key near '\"version\"'");
	EXPECT_ERRORS("", "t.json:1:1: '[' or '{' expected near end of file");
}

static void test_top_level_keys_and_types(void)
{
	EXPECT_ERRORS("[]", "t.json:1:1: the policy must be an object, got an array");
	EXPECT_ERRORS("{\"version\": 1,\n \"entires\": []}",
		      "t.json:2:2: top level: unknown key \"entires\" (expected: version, entries, comment)",
		      "t.json:1:1: missing \"entries\" at the top level");
	EXPECT_ERRORS("{\"version\": 2, \"entries\": []}",
		      "t.json:1:13: \"version\" is 2, only 1 is supported");
	EXPECT_ERRORS("{\"version\": \"1\", \"entries\": []}",
		      "t.json:1:13: \"version\" must be an integer, got a string");
	EXPECT_ERRORS("{\"entries\": {}}",
		      "t.json:1:1: missing \"version\" at the top level (this format is version 1)",
		      "t.json:1:13: \"entries\" must be an array, got an object");
	EXPECT_OK("{\"version\": 1, \"entries\": []}");
}

static void test_entry_keys_and_types(void)
{
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"sched\": \"wparent\"}]}",
		      "t.json:2:19: entries[0] \"/\": unknown key \"sched\" (expected: cgroup or unit, slice, scheduler, tunables, comment)",
		      "t.json:2:3: entries[0] \"/\": missing \"scheduler\"");
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": 7, \"scheduler\": \"wparent\"}]}",
		      "t.json:2:14: entries[0]: \"cgroup\" must be a string, got an integer");
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [ 3 ]}",
		      "t.json:1:29: entries[0]: must be an object, got an integer");
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/a//b\", \"scheduler\": \"wparent\"}]}",
		      "t.json:2:14: entries[0] \"/a//b\": cgroup pattern has an empty component ('//')");
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/a\", \"scheduler\": \"wparent\"}]}",
		      "t.json:2:14: entries[0] \"/a\": child entries need a root entry \"/\"");
}

static void test_unknown_scheduler_names_the_object(void)
{
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"scheduler\": \"nope\"}]}",
		      "t.json:2:32: entries[0] \"/\": unknown scheduler \"nope\": no object /test/sched/<name>.bpf.o");
}

static void test_tunables_are_checked_against_the_scheduler(void)
{
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"scheduler\": \"wparent\",\n"
		      "   \"tunables\": {\"slize_us\": 1}}]}",
		      "t.json:3:17: entries[0] \"/\": scheduler \"wparent\" has no tunable \"slize_us\" (available: slice_us, weight_max, nice_bias, boost, mode)");
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"scheduler\": \"lat\", \"tunables\": {\"x\": 1}}]}",
		      "t.json:2:52: entries[0] \"/\": scheduler \"lat\" has no tunable \"x\" (available: none)");
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"scheduler\": \"wparent\", \"tunables\": {\n"
		      "    \"weight_max\": 4294967296,\n"
		      "    \"nice_bias\": -129,\n"
		      "    \"slice_us\": -1,\n"
		      "    \"boost\": 1,\n"
		      "    \"mode\": \"MODE_X\"}}]}",
		      "t.json:3:19: entries[0] \"/\": tunable \"weight_max\" of scheduler \"wparent\" is u32, 4294967296 is out of range 0..4294967295",
		      "t.json:4:18: entries[0] \"/\": tunable \"nice_bias\" of scheduler \"wparent\" is s8, -129 is out of range -128..127",
		      "t.json:5:17: entries[0] \"/\": tunable \"slice_us\" of scheduler \"wparent\" is u64, -1 is out of range 0..18446744073709551615",
		      "t.json:6:14: entries[0] \"/\": tunable \"boost\" of scheduler \"wparent\" is bool, got an integer",
		      "t.json:7:13: entries[0] \"/\": tunable \"mode\" of scheduler \"wparent\" is an enum, \"MODE_X\" is not one of: MODE_FAIR, MODE_STRICT, MODE_NEG");
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"scheduler\": \"wparent\", \"tunables\": {\"weight_max\": true}}]}",
		      "t.json:2:70: entries[0] \"/\": tunable \"weight_max\" of scheduler \"wparent\" is u32, got a boolean");
	/* enum by value, extreme in-range integers */
	EXPECT_OK("{\"version\": 1, \"entries\": [{\"cgroup\": \"/\", \"scheduler\": \"wparent\","
		  " \"tunables\": {\"mode\": 5, \"nice_bias\": -128, \"weight_max\": 4294967295}}]}");
}

static void test_ties_and_duplicates_name_both_entries(void)
{
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"scheduler\": \"wparent\"},\n"
		      "  {\"cgroup\": \"/a*/x\", \"scheduler\": \"fifo\"},\n"
		      "  {\"cgroup\": \"/*a/x\", \"scheduler\": \"vtime\"}]}",
		      "t.json:4:14: entries[2] \"/*a/x\": ties with entries[1] \"/a*/x\": equally specific and both can match the same cgroup");
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"scheduler\": \"wparent\"},\n"
		      "  {\"cgroup\": \"/a\", \"scheduler\": \"fifo\"},\n"
		      "  {\"cgroup\": \"/a\", \"scheduler\": \"vtime\"}]}",
		      "t.json:4:14: entries[2] \"/a\": same cgroup pattern as entries[1] \"/a\"");
	/* equally specific but disjoint: fine */
	EXPECT_OK("{\"version\": 1, \"entries\": [{\"cgroup\": \"/\", \"scheduler\": \"wparent\"},"
		  "{\"cgroup\": \"/a*\", \"scheduler\": \"fifo\"},"
		  "{\"cgroup\": \"/b*\", \"scheduler\": \"vtime\"}]}");
	/* overlapping but ranked: fine */
	EXPECT_OK("{\"version\": 1, \"entries\": [{\"cgroup\": \"/\", \"scheduler\": \"wparent\"},"
		  "{\"cgroup\": \"/a/*\", \"scheduler\": \"fifo\"},"
		  "{\"cgroup\": \"/*/b\", \"scheduler\": \"vtime\"}]}");
}

static void test_children_need_a_parent_that_hosts_them(void)
{
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"scheduler\": \"wparent\"},\n"
		      "  {\"cgroup\": \"/w/*\", \"scheduler\": \"vtime\"},\n"
		      "  {\"cgroup\": \"/w/a/b\", \"scheduler\": \"fifo\"}]}",
		      "t.json:4:14: entries[2] \"/w/a/b\": would be nested under entries[1] \"/w/*\" whose scheduler \"vtime\" cannot host children");
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"scheduler\": \"fifo\"},\n"
		      "  {\"cgroup\": \"/w\", \"scheduler\": \"vtime\"}]}",
		      "t.json:3:14: entries[1] \"/w\": would be nested under entries[0] \"/\" whose scheduler \"fifo\" cannot host children");
	/* a sibling subtree under a leaf does not matter */
	EXPECT_OK("{\"version\": 1, \"entries\": [{\"cgroup\": \"/\", \"scheduler\": \"wparent\"},"
		  "{\"cgroup\": \"/v/*\", \"scheduler\": \"vtime\"},"
		  "{\"cgroup\": \"/w/a/b\", \"scheduler\": \"fifo\"}]}");
}

static void test_depth_is_limited_to_four(void)
{
	EXPECT_OK("{\"version\": 1, \"entries\": [{\"cgroup\": \"/\", \"scheduler\": \"wparent\"},"
		  "{\"cgroup\": \"/a\", \"scheduler\": \"wparent\"},"
		  "{\"cgroup\": \"/a/*\", \"scheduler\": \"wparent\"},"
		  "{\"cgroup\": \"/a/*/c\", \"scheduler\": \"lat\"}]}");
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"scheduler\": \"wparent\"},\n"
		      "  {\"cgroup\": \"/a\", \"scheduler\": \"wparent\"},\n"
		      "  {\"cgroup\": \"/a/*\", \"scheduler\": \"wparent\"},\n"
		      "  {\"cgroup\": \"/a/*/c\", \"scheduler\": \"wparent\"},\n"
		      "  {\"cgroup\": \"/a/b/c/d\", \"scheduler\": \"lat\"}]}",
		      "t.json:6:14: entries[4] \"/a/b/c/d\": would nest 5 schedulers deep (root included, parent entries[3] \"/a/*/c\"); the kernel allows 4");
}

static void test_positions_survive_odd_keys_and_text(void)
{
	/* '/' and '~' in a key are escaped in the JSON pointer, multi-byte
	 * characters count as one column, as jansson counts them */
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"scheduler\": \"wparent\", \"comment\": \"\xc3\xa9t\xc3\xa9\",\n"
		      "   \"tunables\": {\"a/b~c\": 1}}]}",
		      "t.json:3:17: entries[0] \"/\": scheduler \"wparent\" has no tunable \"a/b~c\" (available: slice_us, weight_max, nice_bias, boost, mode)");
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [{\"cgroup\": \"/\", \"scheduler\": \"wparent\"}], \"\xc3\xa9\": 1}",
		      "t.json:1:70: top level: unknown key \"\xc3\xa9\" (expected: version, entries, comment)");
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [{\"cgroup\": \"/\", \"scheduler\": \"wparent\","
		      " \"x\\u0041\": 1}]}",
		      "t.json:1:68: entries[0] \"/\": unknown key \"xA\" (expected: cgroup or unit, slice, scheduler, tunables, comment)");
}

static void test_all_errors_are_reported_at_once(void)
{
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"scheduler\": \"nope\"},\n"
		      "  {\"cgroup\": \"/x\", \"scheduler\": \"vtime\", \"tunables\": {\"q\": 1}}]}",
		      "t.json:2:32: entries[0] \"/\": unknown scheduler \"nope\": no object /test/sched/<name>.bpf.o",
		      "t.json:3:55: entries[1] \"/x\": scheduler \"vtime\" has no tunable \"q\" (available: slice_us)");
}

static void test_unit_entries(void)
{
	struct diag_list d = {};
	struct policy *p = NULL;
	const char *text =
		"{\"version\": 1, \"entries\": [\n"
		" {\"unit\": \"-.slice\", \"scheduler\": \"wparent\"},\n"
		" {\"unit\": \"batch.slice\", \"scheduler\": \"fifo\"},\n"
		" {\"unit\": \"*.scope\", \"slice\": \"scxd-demo.slice\", \"scheduler\": \"vtime\"},\n"
		" {\"unit\": \"db-*.scope\", \"scheduler\": \"lat\"},\n"
		" {\"unit\": \"db-main.scope\", \"scheduler\": \"fifo\"},\n"
		" {\"cgroup\": \"/w/db-x.scope\", \"scheduler\": \"vtime\"}\n"
		"]}";

	CHECK_INTEQ(policy_parse("t.json", text, strlen(text), &fake_catalog, &d, &p), 0);
	for (size_t i = 0; i < d.n; i++)
		fprintf(stderr, "%s\n", d.lines[i]);
	diag_list_done(&d);
	if (!p)
		return;
	/* "-.slice" is the root entry */
	CHECK(p->root == &p->entries[0]);
	CHECK_STREQ(policy_match(p, "/batch.slice")->scheduler, "fifo");
	CHECK(policy_match(p, "/batch.slice/x.scope") == NULL);
	CHECK_STREQ(policy_match(p, "/scxd.slice/scxd-demo.slice/web.scope")->scheduler, "vtime");
	/* the slice systemd would not put there is not matched */
	CHECK(policy_match(p, "/scxd-demo.slice/web.scope") == NULL);
	/* without a slice: the last component, at any depth */
	CHECK_STREQ(policy_match(p, "/db-1.scope")->scheduler, "lat");
	CHECK_STREQ(policy_match(p, "/system.slice/a/db-2.scope")->scheduler, "lat");
	CHECK(policy_match(p, "/db-2.scope/child") == NULL);
	/* among any-depth entries the more specific wins ... */
	CHECK_STREQ(policy_match(p, "/u.slice/db-main.scope")->scheduler, "fifo");
	/* ... and an entry that says where the cgroup is beats them all */
	CHECK_STREQ(policy_match(p, "/w/db-x.scope")->scheduler, "vtime");
	CHECK_STREQ(policy_entry_name(&p->entries[3]), "entries[3] unit \"db-*.scope\"");
	CHECK_STREQ(policy_entry_name(&p->entries[5]), "entries[5] \"/w/db-x.scope\"");
	policy_free(p);

	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"scheduler\": \"wparent\"},\n"
		      "  {\"unit\": \"a--b.slice\", \"scheduler\": \"fifo\"},\n"
		      "  {\"unit\": \"x.scope\", \"cgroup\": \"/x\", \"scheduler\": \"fifo\"},\n"
		      "  {\"scheduler\": \"fifo\"},\n"
		      "  {\"cgroup\": \"/y\", \"slice\": \"a.slice\", \"scheduler\": \"fifo\"},\n"
		      "  {\"unit\": \"y.scope\", \"slice\": 3, \"scheduler\": \"fifo\"}]}",
		      "t.json:3:12: entries[1] unit \"a--b.slice\": unit is not a valid slice name (no leading, trailing or double '-'; the root slice is \"-.slice\")",
		      "t.json:4:3: entries[2]: has both \"cgroup\" and \"unit\"; an entry names one of them",
		      "t.json:5:3: entries[3]: missing \"cgroup\" (a path) or \"unit\" (a systemd unit)",
		      "t.json:6:20: entries[4] \"/y\": \"slice\" goes only with \"unit\" (a scope or service)",
		      "t.json:7:32: entries[5] unit \"y.scope\": \"slice\" must be a string, got an integer");
	/* any-depth entries tie among themselves, with the unit's position */
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"scheduler\": \"wparent\"},\n"
		      "  {\"unit\": \"a*.scope\", \"scheduler\": \"fifo\"},\n"
		      "  {\"unit\": \"*b.scope\", \"scheduler\": \"lat\"},\n"
		      "  {\"cgroup\": \"/*b.scope\", \"scheduler\": \"lat\"}]}",
		      "t.json:4:12: entries[2] unit \"*b.scope\": ties with entries[1] unit \"a*.scope\": equally specific and both can match the same cgroup");
	/* a unit entry and a path entry for the same cgroup are duplicates */
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"scheduler\": \"wparent\"},\n"
		      "  {\"cgroup\": \"/a.slice/a-b.slice\", \"scheduler\": \"fifo\"},\n"
		      "  {\"unit\": \"a-b.slice\", \"scheduler\": \"lat\"}]}",
		      "t.json:4:12: entries[2] unit \"a-b.slice\": same cgroup pattern as entries[1] \"/a.slice/a-b.slice\"");
	/* slices nest: under a scheduler that cannot host children */
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"cgroup\": \"/\", \"scheduler\": \"wparent\"},\n"
		      "  {\"unit\": \"a.slice\", \"scheduler\": \"fifo\"},\n"
		      "  {\"unit\": \"a-b.slice\", \"scheduler\": \"lat\"}]}",
		      "t.json:4:12: entries[2] unit \"a-b.slice\": would be nested under entries[1] unit \"a.slice\" whose scheduler \"fifo\" cannot host children");
	/* an any-depth entry needs the root entry too */
	EXPECT_ERRORS("{\"version\": 1, \"entries\": [\n"
		      "  {\"unit\": \"x.scope\", \"scheduler\": \"lat\"}]}",
		      "t.json:2:12: entries[0] unit \"x.scope\": child entries need a root entry \"/\"");
}

int main(void)
{
	test_valid_policy_parses();
	test_syntax_errors_have_line_and_column();
	test_top_level_keys_and_types();
	test_entry_keys_and_types();
	test_unknown_scheduler_names_the_object();
	test_tunables_are_checked_against_the_scheduler();
	test_ties_and_duplicates_name_both_entries();
	test_children_need_a_parent_that_hosts_them();
	test_depth_is_limited_to_four();
	test_positions_survive_odd_keys_and_text();
	test_all_errors_are_reported_at_once();
	test_unit_entries();
	return test_main_end("test-policy");
}
