// SPDX-License-Identifier: GPL-2.0
/* The pattern matcher: globs per component, specificity, overlap. */

#include "match.h"
#include "tests.h"

static void test_match_is_per_component(void)
{
	CHECK(pattern_match("/", "/"));
	CHECK(!pattern_match("/", "/a"));
	CHECK(pattern_match("/workload/*", "/workload/a"));
	CHECK(pattern_match("/workload/*", "/workload/"
			    "a-very-long-name.scope"));
	CHECK(!pattern_match("/workload/*", "/workload/a/b"));
	CHECK(!pattern_match("/workload/*", "/workload"));
	CHECK(pattern_match("/machine.slice/*.scope", "/machine.slice/vm1.scope"));
	CHECK(!pattern_match("/machine.slice/*.scope", "/machine.slice/vm1.service"));
	CHECK(pattern_match("/a/?x*y", "/a/1xy"));
	CHECK(pattern_match("/a/?x*y", "/a/1x--y"));
	CHECK(!pattern_match("/a/?x*y", "/a/xy"));
	CHECK(pattern_match("/*/*", "/a/b"));
	CHECK(pattern_match("/a*b*c", "/abbbc"));
	CHECK(!pattern_match("/a*b*c", "/abbb"));
	/* '*' never crosses a '/' */
	CHECK(!pattern_match("/a*", "/ab/c"));
}

static void test_validate_rejects_malformed_patterns(void)
{
	const char *why = NULL;

	CHECK_INTEQ(pattern_validate("/", &why), 0);
	CHECK_INTEQ(pattern_validate("/a/*.scope", &why), 0);
	CHECK(pattern_validate("a/b", &why) < 0);
	CHECK_STREQ(why, "must be an absolute path starting with '/'");
	CHECK(pattern_validate("/a//b", &why) < 0);
	CHECK_STREQ(why, "has an empty component ('//')");
	CHECK(pattern_validate("/a/", &why) < 0);
	CHECK_STREQ(why, "must not end with '/'");
	CHECK(pattern_validate("/a/../b", &why) < 0);
	CHECK_STREQ(why, "must not contain '.' or '..' components");
	CHECK(pattern_validate("/a/[ab]", &why) < 0);
	CHECK_STREQ(why, "uses '[', ']' or '\\'; only '*' and '?' are supported");
}

static void test_specificity_leftmost_difference_decides(void)
{
	CHECK_INTEQ(path_depth("/"), 0);
	CHECK_INTEQ(path_depth("/a/b/c"), 3);
	/* literal beats glob */
	CHECK(pattern_specificity_cmp("/a/b", "/a/*") > 0);
	CHECK(pattern_specificity_cmp("/a/*", "/a/b") < 0);
	/* leftmost component decides before later ones */
	CHECK(pattern_specificity_cmp("/a/*", "/*/b") > 0);
	/* fewer stars beat more */
	CHECK(pattern_specificity_cmp("/a/x*", "/a/*x*") > 0);
	/* more literal characters beat fewer */
	CHECK(pattern_specificity_cmp("/m/build-*.scope", "/m/*.scope") > 0);
	/* '?' is a glob: literal beats it */
	CHECK(pattern_specificity_cmp("/a/bc", "/a/b?") > 0);
	CHECK_INTEQ(pattern_specificity_cmp("/a*/x", "/*a/x"), 0);
	CHECK_INTEQ(pattern_specificity_cmp("/a/b", "/a/c"), 0);
}

static void test_overlap_is_exact_for_star_and_question_mark(void)
{
	CHECK(pattern_overlap("/a*", "/*a"));		/* "a" */
	CHECK(pattern_overlap("/a*/x", "/*b/x"));	/* "ab" */
	CHECK(!pattern_overlap("/a*", "/b*"));
	CHECK(!pattern_overlap("/a/b", "/a/c"));
	CHECK(pattern_overlap("/a/b", "/a/?"));
	CHECK(!pattern_overlap("/a/bc", "/a/?"));
	CHECK(pattern_overlap("/*.scope", "/vm*"));
	CHECK(!pattern_overlap("/*.scope", "/*.slice"));
	CHECK(!pattern_overlap("/a", "/a/b"));		/* different depth */
	CHECK(pattern_prefix_overlap("/", "/a/b"));
	CHECK(pattern_prefix_overlap("/a*", "/ab/c"));
	CHECK(!pattern_prefix_overlap("/a*", "/b/c"));
	CHECK(pattern_prefix_overlap("/t/*.slice", "/t/x.slice/*.scope"));
}

int main(void)
{
	test_match_is_per_component();
	test_validate_rejects_malformed_patterns();
	test_specificity_leftmost_difference_decides();
	test_overlap_is_exact_for_star_and_question_mark();
	return test_main_end("test-match");
}
