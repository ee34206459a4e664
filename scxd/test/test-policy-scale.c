// SPDX-License-Identifier: GPL-2.0
/*
 * The policy checks at scale: near-linear in entries whatever their
 * shape, and the ties they find in large groups of equally ranked globs
 * are the ones the pairwise comparison finds.
 *
 * The bound that fails: 20 000 globs under one directory must be checked
 * in under 10 s (issue 28 measured 46.8 s before the tie and nesting
 * checks stopped comparing every pair; to see it fail, make
 * tie_find_one() scan every earlier member in order, or drop the depth cut
 * in walk_overlapping()). The other shapes print their figures, with
 * issue 28's goals (100 000 entries in 2 s, the realistic 50 000 in 1 s)
 * as bounds a slow or shared machine may miss by far: 5 times them.
 */

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "../../tests/bench/policy-shapes.h"
#include "fake-catalog.h"
#include "match.h"
#include "policy.h"
#include "tests.h"

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Seconds to parse and check a policy of n entries of shape; it must be valid. */
static double check_time(const char *shape, size_t n)
{
	_cleanup_(diag_list_donep) struct diag_list diags = {};
	_cleanup_(policy_freep) struct policy *p = NULL;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	double start, took;
	int r;

	CHECK(f != NULL);
	if (!f)
		return 0;
	CHECK_INTEQ(policy_shape_write(f, shape, n), 0);
	fclose(f);
	start = now_sec();
	r = policy_parse("scale.json", text, len, &fake_catalog, &diags, &p);
	took = now_sec() - start;
	CHECK_INTEQ(r, 0);
	if (r < 0 && diags.n)
		fprintf(stderr, "%s: %s\n", shape, diags.lines[0]);
	printf("# %-14s %6zu entries: %.3f s\n", shape, n, took);
	return took;
}

static void test_twenty_thousand_globs_in_one_directory_under_ten_seconds(void)
{
	CHECK(check_time("globs-one-dir", 20000) < 10.0);
}

static void test_every_shape_near_linear(void)
{
	for (size_t k = 0; policy_shapes[k]; k++)
		CHECK(check_time(policy_shapes[k], 99999) < 5 * 2.0);
	CHECK(check_time("realistic", 50000) < 5 * 1.0);
}

/* ---- ties in large groups against the pairwise oracle ---- */

static unsigned rnd(unsigned n)
{
	return (unsigned)random() % n;
}

/* Six characters from a-f or '?' (rarely), one of them '*': ranks vary a little. */
static void random_glob(char *out)
{
	size_t star = rnd(6);

	for (size_t i = 0; i < 6; i++)
		out[i] = i == star ? '*' : rnd(12) == 0 ? '?' : (char)('a' + rnd(6));
	out[6] = '\0';
}

static void test_ties_in_large_groups_are_the_pairwise_ones(void)
{
	enum { ROUNDS = 20, ENTRIES = 600 };
	size_t ties = 0, late = 0, mismatches = 0;

	for (int round = 0; round < ROUNDS; round++) {
		static char pat[ENTRIES][16];
		_cleanup_(diag_list_donep) struct diag_list diags = {};
		_cleanup_(diag_list_donep) struct diag_list want = {};
		_cleanup_(policy_freep) struct policy *p = NULL;
		_cleanup_free_ char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		fprintf(f, "{\"version\": 1, \"entries\": [{\"cgroup\": \"/\", \"scheduler\": \"wparent\"}");
		for (size_t i = 0; i < ENTRIES; i++) {
			random_glob(pat[i]);
			fprintf(f, ", {\"cgroup\": \"/g/%s\", \"scheduler\": \"fifo\"}", pat[i]);
		}
		fprintf(f, "]}");
		fclose(f);
		/* the oracle: each entry's first clash among the earlier ones, in order */
		for (size_t j = 0; j < ENTRIES; j++)
			for (size_t i = 0; i < j; i++) {
				char a[32], b[32];

				snprintf(a, sizeof(a), "/g/%s", pat[i]);
				snprintf(b, sizeof(b), "/g/%s", pat[j]);
				if (streq(a, b)) {
					diag_add_line(&want, "entries[%zu] \"%s\": same cgroup pattern as entries[%zu] \"%s\"",
						      j + 1, b, i + 1, a);
				} else if (pattern_specificity_cmp(a, b) == 0 && pattern_overlap(a, b)) {
					diag_add_line(&want, "entries[%zu] \"%s\": ties with entries[%zu] \"%s\": equally specific and both can match the same cgroup",
						      j + 1, b, i + 1, a);
					late += i >= 8;
				} else {
					continue;
				}
				break;
			}
		CHECK_INTEQ(policy_parse("ties.json", text, len, &fake_catalog, &diags, &p),
			    want.n ? -EINVAL : 0);
		ties += want.n;
		CHECK_INTEQ(diags.n, want.n);
		for (size_t i = 0; i < diags.n && i < want.n; i++) {
			const char *msg = strstr(diags.lines[i], "entries[");

			if (!msg || !streq(msg, want.lines[i])) {
				if (!mismatches++)
					fprintf(stderr, "got:  %s\nwant: %s\n", diags.lines[i], want.lines[i]);
			}
		}
	}
	printf("# ties in groups of %d globs: %zu found, %zu of them beyond the first 8 earlier entries, %zu differ from the pairwise oracle\n",
	       ENTRIES, ties, late, mismatches);
	CHECK(ties > 100);
	CHECK(late > 10);
	CHECK_INTEQ(mismatches, 0);
}

int main(void)
{
	unsigned seed = getenv("SEED") ? (unsigned)atoi(getenv("SEED")) : (unsigned)time(NULL);

	printf("# SEED=%u\n", seed);
	srandom(seed);
	test_ties_in_large_groups_are_the_pairwise_ones();
	test_twenty_thousand_globs_in_one_directory_under_ten_seconds();
	test_every_shape_near_linear();
	return test_main_end("policy-scale");
}
