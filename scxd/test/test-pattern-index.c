// SPDX-License-Identifier: GPL-2.0
/*
 * The pattern index against the pairwise functions it replaces: on random
 * patterns and paths it must find exactly the patterns pattern_match() and
 * pattern_prefix_overlap() accept, and policy_match() must pick the entry
 * the old linear scan picked. Random policies are also checked whole:
 * policy_parse() accepts exactly those the pairwise checks accept.
 */

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "fake-catalog.h"
#include "match.h"
#include "pattern-index.h"
#include "policy.h"
#include "tests.h"

/* ---- random patterns and paths over a small alphabet, so that they meet ---- */

static unsigned rnd(unsigned n)
{
	return (unsigned)random() % n;
}

static void random_component(char *out, bool glob)
{
	static const char *const names[] = { "a", "b", "ab", "ba", "a.slice", "b.scope", "aab" };
	static const char *const globs[] = { "*", "a*", "*b", "?", "a?", "*.slice", "*a*", "?b*" };

	strcpy(out, glob && rnd(3) == 0 ? globs[rnd(ELEMENTSOF(globs))] : names[rnd(ELEMENTSOF(names))]);
}

/* depth 0..max, '/' for 0 */
static void random_path(char *out, size_t max_depth, bool glob)
{
	size_t depth = rnd(max_depth + 1);

	out[0] = '\0';
	for (size_t i = 0; i < depth; i++) {
		char c[16];

		random_component(c, glob);
		strcat(out, "/");
		strcat(out, c);
	}
	if (!depth)
		strcpy(out, "/");
}

struct found {
	bool *hit;
	size_t n;
};

static int collect(size_t id, void *userdata)
{
	struct found *f = userdata;

	if (id < f->n)
		f->hit[id] = true;
	return 0;
}

/* What the old linear matcher took for one pattern. */
static bool linear_matches(const char *pattern, bool any_depth, const char *path)
{
	char last[300];

	if (!any_depth)
		return pattern_match(pattern, path);
	if (path_depth(path) == 0)
		return false;
	snprintf(last, sizeof(last), "/%s", path_last_component(path));
	return pattern_match(pattern, last);
}

static void test_index_finds_what_the_linear_scan_finds(void)
{
	enum { PATTERNS = 60, PATHS = 300, ROUNDS = 40 };
	char patterns[PATTERNS][128], path[128];
	bool any_depth[PATTERNS], hit[PATTERNS];
	size_t mismatches = 0, matched = 0, checked = 0;

	for (int round = 0; round < ROUNDS; round++) {
		_cleanup_(pattern_index_freep) struct pattern_index *x = NULL;

		CHECK_INTEQ(pattern_index_new(&x), 0);
		for (size_t i = 0; i < PATTERNS; i++) {
			any_depth[i] = rnd(8) == 0;
			if (any_depth[i]) {
				char c[16];

				random_component(c, true);
				snprintf(patterns[i], sizeof(patterns[i]), "/%s", c);
			} else {
				random_path(patterns[i], 4, true);
			}
			CHECK_INTEQ(pattern_index_add(x, patterns[i], any_depth[i], i), 0);
		}
		for (size_t k = 0; k < PATHS; k++) {
			struct found f = { hit, PATTERNS };

			random_path(path, 5, false);
			memset(hit, 0, sizeof(hit));
			CHECK_INTEQ(pattern_index_match(x, path, collect, &f), 0);
			for (size_t i = 0; i < PATTERNS; i++) {
				bool want = linear_matches(patterns[i], any_depth[i], path);

				mismatches += want != hit[i];
				matched += want;
				checked++;
			}
		}
	}
	printf("# index vs pattern_match(): %zu pairs, %zu matches, %zu mismatches\n", checked,
	       matched, mismatches);
	CHECK(matched > 1000);
	CHECK_INTEQ(mismatches, 0);
}

static void test_prefix_overlaps_is_pairwise_prefix_overlap(void)
{
	enum { PATTERNS = 60, ROUNDS = 40 };
	char patterns[PATTERNS][128];
	bool hit[PATTERNS];
	size_t mismatches = 0, overlaps = 0;

	for (int round = 0; round < ROUNDS; round++) {
		_cleanup_(pattern_index_freep) struct pattern_index *x = NULL;

		CHECK_INTEQ(pattern_index_new(&x), 0);
		for (size_t i = 0; i < PATTERNS; i++) {
			random_path(patterns[i], 4, true);
			CHECK_INTEQ(pattern_index_add(x, patterns[i], false, i), 0);
		}
		for (size_t j = 0; j < PATTERNS; j++) {
			struct found f = { hit, PATTERNS };

			memset(hit, 0, sizeof(hit));
			CHECK_INTEQ(pattern_index_prefix_overlaps(x, patterns[j], collect, &f), 0);
			for (size_t i = 0; i < PATTERNS; i++) {
				bool want = path_depth(patterns[i]) < path_depth(patterns[j]) &&
					    pattern_prefix_overlap(patterns[i], patterns[j]);

				mismatches += want != hit[i];
				overlaps += want;
			}
		}
	}
	printf("# index vs pattern_prefix_overlap(): %zu overlaps, %zu mismatches\n", overlaps,
	       mismatches);
	CHECK(overlaps > 1000);
	CHECK_INTEQ(mismatches, 0);
}

/* Whether some string of up to 'max' characters over {a, b, c} matches both globs. */
static bool brute_overlap(const char *x, const char *y, size_t max)
{
	char str[16];

	for (size_t len = 0; len <= max; len++) {
		size_t total = 1;

		for (size_t i = 0; i < len; i++)
			total *= 3;
		for (size_t k = 0; k < total; k++) {
			size_t v = k;

			for (size_t i = 0; i < len; i++, v /= 3)
				str[i] = "abc"[v % 3];
			if (pattern_component_match(x, strlen(x), str, len) &&
			    pattern_component_match(y, strlen(y), str, len))
				return true;
		}
	}
	return false;
}

static void test_component_overlap_is_brute_force(void)
{
	size_t mismatches = 0, overlaps = 0, pairs = 4000;

	for (size_t k = 0; k < pairs; k++) {
		char x[8], y[8];
		size_t lx = rnd(5), ly = rnd(5);

		for (size_t i = 0; i < lx; i++)
			x[i] = "ab?*"[rnd(4)];
		for (size_t i = 0; i < ly; i++)
			y[i] = "ab?*"[rnd(4)];
		x[lx] = y[ly] = '\0';
		if (pattern_component_overlap(x, lx, y, ly) != brute_overlap(x, y, lx + ly)) {
			mismatches++;
			fprintf(stderr, "overlap(\"%s\", \"%s\") differs from brute force\n", x, y);
		}
		overlaps += brute_overlap(x, y, lx + ly);
	}
	printf("# component overlap vs brute force: %zu pairs, %zu overlap, %zu mismatches\n", pairs,
	       overlaps, mismatches);
	CHECK(overlaps > pairs / 10 && overlaps < pairs * 9 / 10);
	CHECK_INTEQ(mismatches, 0);
}

static void test_may_match_below(void)
{
	_cleanup_(pattern_index_freep) struct pattern_index *x = NULL;

	CHECK_INTEQ(pattern_index_new(&x), 0);
	CHECK(!pattern_index_may_match_below(x, "/"));
	CHECK_INTEQ(pattern_index_add(x, "/", false, 0), 0);
	CHECK(!pattern_index_may_match_below(x, "/"));
	CHECK_INTEQ(pattern_index_add(x, "/machine.slice/*.scope", false, 1), 0);
	CHECK(pattern_index_may_match_below(x, "/"));
	CHECK(pattern_index_may_match_below(x, "/machine.slice"));
	CHECK(!pattern_index_may_match_below(x, "/system.slice"));
	CHECK(!pattern_index_may_match_below(x, "/machine.slice/vm1.scope"));
	CHECK_INTEQ(pattern_index_add(x, "/*/x/y", false, 2), 0);
	CHECK(pattern_index_may_match_below(x, "/system.slice"));
	CHECK(pattern_index_may_match_below(x, "/system.slice/x"));
	CHECK(!pattern_index_may_match_below(x, "/system.slice/z"));
	/* a unit without its slice can be anywhere: everything is watched */
	CHECK_INTEQ(pattern_index_add(x, "/*.service", true, 3), 0);
	CHECK(pattern_index_may_match_below(x, "/system.slice/z"));
	CHECK_INTEQ(pattern_index_size(x), 4);
}

/* ---- whole policies: the old linear policy_match() and pairwise checks as oracles ---- */

struct gen_entry {
	char pattern[128];
	bool unit;		/* "unit": any depth */
	bool hosts;		/* wparent, else fifo */
};

static bool oracle_wins(const struct policy_entry *a, const struct policy_entry *b)
{
	if (a->any_depth != b->any_depth)
		return !a->any_depth;
	return pattern_specificity_cmp(a->pattern, b->pattern) > 0;
}

/* policy_match() as it was: every entry, in order. */
static const struct policy_entry *oracle_match(const struct policy *p, const char *cgroup)
{
	const struct policy_entry *best = NULL;

	for (size_t i = 0; i < p->n_entries; i++) {
		const struct policy_entry *e = &p->entries[i];

		if (!linear_matches(e->pattern, e->any_depth, cgroup) ||
		    (e->any_depth && path_depth(cgroup) == 0) ||
		    (!e->any_depth && e->components != path_depth(cgroup)))
			continue;
		if (!best || oracle_wins(e, best))
			best = e;
	}
	return best;
}

/* The pairwise validity checks as they were (ties, hosting, depth). */
static bool oracle_valid(const struct gen_entry *g, size_t n)
{
	size_t depth[64];

	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < j; i++) {
			if (g[i].unit != g[j].unit ||
			    path_depth(g[i].pattern) != path_depth(g[j].pattern))
				continue;
			if (streq(g[i].pattern, g[j].pattern))
				return false;
			if (pattern_specificity_cmp(g[i].pattern, g[j].pattern) == 0 &&
			    pattern_overlap(g[i].pattern, g[j].pattern))
				return false;
		}
	/* g[0] is the root; entries come by depth in the generator */
	for (size_t j = 0; j < n; j++) {
		depth[j] = 1;
		if (g[j].unit || j == 0)
			continue;
		for (size_t i = 0; i < n; i++) {
			if (g[i].unit || path_depth(g[i].pattern) >= path_depth(g[j].pattern) ||
			    !pattern_prefix_overlap(g[i].pattern, g[j].pattern))
				continue;
			if (!g[i].hosts)
				return false;
			if (depth[i] + 1 > depth[j])
				depth[j] = depth[i] + 1;
		}
		if (depth[j] > SCX_SUB_MAX_DEPTH)
			return false;
	}
	return true;
}

static int gen_depth_cmp(const void *a, const void *b)
{
	size_t x = path_depth(((const struct gen_entry *)a)->pattern);
	size_t y = path_depth(((const struct gen_entry *)b)->pattern);

	return x < y ? -1 : x > y;
}

static void test_random_policies_match_and_validate_as_before(void)
{
	enum { ROUNDS = 300, ENTRIES = 24, PATHS = 200 };
	size_t valid = 0, agree = 0, matches = 0, mismatches = 0;

	for (int round = 0; round < ROUNDS; round++) {
		struct gen_entry g[ENTRIES];
		_cleanup_(diag_list_donep) struct diag_list diags = {};
		_cleanup_(policy_freep) struct policy *p = NULL;
		_cleanup_free_ char *text = NULL;
		size_t len = 0, n = 1 + rnd(ENTRIES - 1);
		FILE *f = open_memstream(&text, &len);
		int r;

		g[0] = (struct gen_entry){ "/", false, true };
		for (size_t i = 1; i < n; i++) {
			g[i].unit = rnd(10) == 0;
			g[i].hosts = rnd(4) != 0;
			if (g[i].unit)
				snprintf(g[i].pattern, sizeof(g[i].pattern), "/%s.service",
					 (const char *[]){ "a", "b*", "*", "a?" }[rnd(4)]);
			else
				do
					random_path(g[i].pattern, 4, true);
				while (path_depth(g[i].pattern) == 0);
		}
		qsort(g + 1, n - 1, sizeof(*g), gen_depth_cmp);
		fprintf(f, "{\"version\": 1, \"entries\": [");
		for (size_t i = 0; i < n; i++)
			fprintf(f, "%s{\"%s\": \"%s\", \"scheduler\": \"%s\"}", i ? ", " : "",
				g[i].unit ? "unit" : "cgroup", g[i].pattern + (g[i].unit ? 1 : 0),
				g[i].hosts ? "wparent" : "fifo");
		fprintf(f, "]}");
		fclose(f);

		r = policy_parse("random.json", text, len, &fake_catalog, &diags, &p);
		agree += (r == 0) == oracle_valid(g, n);
		if (((r == 0) != oracle_valid(g, n)))
			fprintf(stderr, "disagree (parse %d): %s\n", r, text);
		if (r < 0)
			continue;
		valid++;
		for (size_t k = 0; k < PATHS; k++) {
			char path[128];
			const struct policy_entry *want, *got;

			random_path(path, 5, false);
			want = oracle_match(p, path);
			got = policy_match(p, path);
			mismatches += want != got;
			matches += want != NULL;
		}
	}
	printf("# random policies: %zu valid of %d, validity agrees in %zu; %zu lookups matched, %zu differ from the linear scan\n",
	       valid, ROUNDS, agree, matches, mismatches);
	CHECK(valid > 30);
	CHECK_INTEQ(agree, ROUNDS);
	CHECK(matches > 1000);
	CHECK_INTEQ(mismatches, 0);
}

int main(void)
{
	unsigned seed = getenv("SEED") ? (unsigned)atoi(getenv("SEED")) : (unsigned)time(NULL);

	printf("# SEED=%u\n", seed);
	srandom(seed);
	test_index_finds_what_the_linear_scan_finds();
	test_prefix_overlaps_is_pairwise_prefix_overlap();
	test_may_match_below();
	test_component_overlap_is_brute_force();
	test_random_policies_match_and_validate_as_before();
	return test_main_end("pattern-index");
}
