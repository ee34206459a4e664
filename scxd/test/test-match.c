// SPDX-License-Identifier: GPL-2.0
/* The pattern matcher: globs per component, specificity, overlap. */

#include <errno.h>
#include <stdlib.h>

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

	/* 4095 bytes in 16 components of 255 are fine; one more byte is not */
	{
		char long_path[4200] = "";

		for (int i = 0; i < 16; i++)
			snprintf(long_path + strlen(long_path), sizeof(long_path) - strlen(long_path),
				 "/%0255d", i);
		long_path[4095] = '\0';
		CHECK_INTEQ(strlen(long_path), 4095);
		CHECK_INTEQ(pattern_validate(long_path, &why), 0);
		strcat(long_path, "x");
		CHECK(pattern_validate(long_path, &why) < 0);
		CHECK_STREQ(why, "is longer than 4095 bytes");
	}
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

/* unit names resolve the way systemd lays out slices and scopes */
static void expect_unit(const char *unit, const char *slice, const char *want, bool any_depth)
{
	const char *why = NULL;
	char *got = NULL;
	bool any = !any_depth;

	CHECK_INTEQ(unit_pattern(unit, slice, &got, &any, &why), 0);
	CHECK_STREQ(got, want);
	CHECK_INTEQ(any, any_depth);
	if (why)
		fprintf(stderr, "%s: %s\n", unit, why);
	free(got);
}

static void expect_unit_error(const char *unit, const char *slice, const char *reason)
{
	const char *why = NULL;
	char *got = NULL;
	bool any;

	CHECK_INTEQ(unit_pattern(unit, slice, &got, &any, &why), -EINVAL);
	CHECK(got == NULL);
	CHECK_STREQ(why, reason);
}

static void test_units_resolve_as_systemd_nests_them(void)
{
	/* a slice is nested by the dashes of its name */
	expect_unit("batch.slice", NULL, "/batch.slice", false);
	expect_unit("scxd-demo.slice", NULL, "/scxd.slice/scxd-demo.slice", false);
	expect_unit("a-b-c.slice", NULL, "/a.slice/a-b.slice/a-b-c.slice", false);
	expect_unit("-.slice", NULL, "/", false);
	/* globs keep the depth their dashes give */
	expect_unit("batch-*.slice", NULL, "/batch.slice/batch-*.slice", false);
	expect_unit("*.slice", NULL, "/*.slice", false);
	/* a scope or service lives directly under its slice */
	expect_unit("web.scope", "scxd-demo.slice", "/scxd.slice/scxd-demo.slice/web.scope", false);
	expect_unit("*.scope", "scxd-demo.slice", "/scxd.slice/scxd-demo.slice/*.scope", false);
	expect_unit("getty@*.service", "system-getty.slice",
		    "/system.slice/system-getty.slice/getty@*.service", false);
	expect_unit("init.scope", "-.slice", "/init.scope", false);
	/* without a slice its place is unknown: any depth */
	expect_unit("batch-*.scope", NULL, "/batch-*.scope", true);
	expect_unit("nginx.service", NULL, "/nginx.service", true);

	expect_unit_error("batch", NULL, "must end in .slice, .scope or .service");
	expect_unit_error("x.socket", NULL, "must end in .slice, .scope or .service");
	expect_unit_error("a\\x2db.slice", NULL,
			  "is escaped ('\\', as in \\x2d); write the entry's \"cgroup\" path instead");
	expect_unit_error("a/b.scope", NULL,
			  "has a character systemd does not allow in unit names (allowed: letters, digits, ':', '-', '_', '.', '@', and the globs '*', '?')");
	expect_unit_error("a--b.slice", NULL,
			  "is not a valid slice name (no leading, trailing or double '-'; the root slice is \"-.slice\")");
	expect_unit_error("a-.slice", NULL,
			  "is not a valid slice name (no leading, trailing or double '-'; the root slice is \"-.slice\")");
	expect_unit_error("a.slice", "b.slice",
			  "is a slice: its place follows from its name, \"slice\" goes only with scopes and services");
	expect_unit_error("a.scope", "b.scope", "has a \"slice\" that is not a .slice unit");
	expect_unit_error("a.scope", "-b.slice",
			  "has an invalid \"slice\" (a slice name such as \"batch.slice\")");
}

int main(void)
{
	test_match_is_per_component();
	test_validate_rejects_malformed_patterns();
	test_specificity_leftmost_difference_decides();
	test_overlap_is_exact_for_star_and_question_mark();
	test_units_resolve_as_systemd_nests_them();
	return test_main_end("test-match");
}
