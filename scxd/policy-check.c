// SPDX-License-Identifier: GPL-2.0
/*
 * The checks over a policy's merged entries (after the drop-ins replaced
 * theirs): duplicates and ties, and nesting (parents that can host
 * children, at most SCX_SUB_MAX_DEPTH deep). Near-linear in entries for
 * any mix of literals and globs: ties are looked for within groups of
 * equal shape through sorted heads and tails, nesting through the
 * pattern index (tests/bench/policy-check, test-policy-scale.c).
 */

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "match.h"
#include "pattern-index.h"
#include "policy-check.h"
#include "util.h"

struct check_ctx {
	struct diag_list *diags;
	int error;		/* -ENOMEM */
};

/* Report an error at an entry's "cgroup" or "unit" value. */
__attribute__((format(printf, 3, 4)))
static void report_at_target(struct check_ctx *ctx, const struct policy_entry *e,
			     const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0 || diag_add(ctx->diags, e->file, e->target_line, e->target_column, "%s", msg) < 0)
		ctx->error = -ENOMEM;
}

/*
 * How a message names another entry: as policy_entry_name(), and where it
 * is when that is in another file than the entry the message is about.
 */
static const char *other_entry(const struct policy_entry *about, const struct policy_entry *other)
{
	static __thread char buf[4600];

	if (about->file == other->file)
		return policy_entry_name(other);
	snprintf(buf, sizeof(buf), "%s (%s:%u:%u)", policy_entry_name(other), other->file,
		 other->target_line, other->target_column);
	return buf;
}

/*
 * What two entries must share to be duplicates or to tie: whether they
 * match at any depth, and per component either its literal text or, for
 * a glob, its rank (stars and literal characters). Equally specific
 * patterns rank equal component by component, and literal components
 * overlap only when they are equal, so entries with different keys
 * neither tie nor share a pattern.
 */
static char *tie_key(const struct policy_entry *e)
{
	const char *p = e->pattern;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fputc(e->any_depth ? 'A' : 'P', f);
	while (*p) {
		size_t n, stars = 0, chars = 0;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (!n)
			break;
		if (pattern_component_is_literal(p, n)) {
			fprintf(f, "/L%.*s", (int)n, p);
		} else {
			for (size_t i = 0; i < n; i++) {
				stars += p[i] == '*';
				chars += p[i] != '*' && p[i] != '?';
			}
			fprintf(f, "/G%zu,%zu", stars, chars);
		}
		p += n;
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

struct tie_item {
	char *key;
	size_t pos;	/* in the entries checked */
};

struct tie_items {
	struct tie_item *v;
	size_t n;
};

static void tie_items_done(struct tie_items *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].key);
	free(t->v);
}

static int tie_item_cmp(const void *x, const void *y)
{
	const struct tie_item *a = x, *b = y;
	int r = strcmp(a->key, b->key);

	if (r)
		return r;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* What check_ties() found for one entry: the first earlier entry it clashes with. */
struct tie_found {
	size_t with;		/* SIZE_MAX: none */
	bool same;		/* the same pattern, not a tie */
};

/*
 * Ties within one group of equal tie_key()s, without comparing every pair.
 *
 * The members of a group have their literal components in common and, at
 * each other position, glob components of the same rank: as many '*'s
 * and literal characters. Two such components can match a common name
 * only if their heads (the literal characters before the first '*' or
 * '?') are one a prefix of the other, and likewise their tails (after the
 * last one) one a suffix of the other. So per glob position the members
 * are sorted by head and by tail, and the earlier members a member may
 * tie with are those whose head (or tail) is a prefix (suffix) of its own
 * or has its own as one: a few ranges of the sorted arrays. The smallest
 * of these candidate sets is checked in order with the exact test.
 */
struct tie_end {
	const char *s;
	size_t len;
	size_t member;
};

#define TIE_END_MAX 255		/* a component is no longer (match.c); longer share the slot */

struct tie_side {
	struct tie_end *v;	/* the group's members by their ends, sorted */
	bool backward;		/* tails: compared from their last character */
	bool has_len[TIE_END_MAX + 1];	/* the lengths of ends there are */
};

static char end_char(const struct tie_end *e, size_t i, bool backward)
{
	return backward ? e->s[e->len - 1 - i] : e->s[i];
}

/* As strcmp() of the ends as read in their direction; 'prefix': 0 if a starts with b. */
static int end_cmp(const struct tie_end *a, const struct tie_end *b, bool backward, bool prefix)
{
	size_t n = a->len < b->len ? a->len : b->len;

	for (size_t i = 0; i < n; i++) {
		unsigned char x = end_char(a, i, backward), y = end_char(b, i, backward);

		if (x != y)
			return x < y ? -1 : 1;
	}
	if (prefix && a->len >= b->len)
		return 0;
	return a->len < b->len ? -1 : a->len > b->len;
}

static int head_cmp(const void *a, const void *b)
{
	return end_cmp(a, b, false, false);
}

static int tail_cmp(const void *a, const void *b)
{
	return end_cmp(a, b, true, false);
}

/* [*lo, *hi) of side's n ends equal to key (or starting with it, 'prefix'). */
static void end_range(const struct tie_side *side, size_t n, const struct tie_end *key, bool prefix,
		      size_t *lo, size_t *hi)
{
	size_t a = 0, b = n;

	while (a < b) {		/* the first not below key */
		size_t m = a + (b - a) / 2;

		if (end_cmp(&side->v[m], key, side->backward, prefix) < 0)
			a = m + 1;
		else
			b = m;
	}
	*lo = a;
	b = n;
	while (a < b) {		/* the first above it */
		size_t m = a + (b - a) / 2;

		if (end_cmp(&side->v[m], key, side->backward, prefix) <= 0)
			a = m + 1;
		else
			b = m;
	}
	*hi = a;
}

/*
 * Calls fn on the ranges of 'side' whose members' ends are compatible with
 * key (a prefix of it, or having it as one); returns how many members
 * they hold.
 */
static size_t end_candidates(const struct tie_side *side, size_t n, const struct tie_end *key,
			     void (*fn)(const struct tie_side *, size_t, size_t, void *), void *userdata)
{
	size_t total = 0, lo, hi;

	for (size_t l = 0; l <= key->len; l++) {
		struct tie_end k = { side->backward ? key->s + key->len - l : key->s, l, 0 };

		if (l < key->len && !side->has_len[l < TIE_END_MAX ? l : TIE_END_MAX])
			continue;	/* no end that long: no range to look up */
		end_range(side, n, &k, l == key->len, &lo, &hi);
		total += hi - lo;
		if (fn && hi > lo)
			fn(side, lo, hi, userdata);
	}
	return total;
}

struct tie_collect {
	size_t *v;
	size_t n;
	size_t before;		/* only members before this one */
};

static void collect_members(const struct tie_side *side, size_t lo, size_t hi, void *userdata)
{
	struct tie_collect *c = userdata;

	for (size_t i = lo; i < hi; i++)
		if (side->v[i].member < c->before)
			c->v[c->n++] = side->v[i].member;
}

static int size_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* Whether group members i and j clash; *same: they name the same cgroups. */
static bool tie_clash(struct policy_entry **v, const struct tie_item *g, size_t i, size_t j,
		      bool *same)
{
	const struct policy_entry *a = v[g[i].pos], *b = v[g[j].pos];

	/* equal tie_key()s: equally specific, component by component */
	*same = policy_entry_same_target(a, b);
	return *same || pattern_overlap(a->pattern, b->pattern);
}

/* The glob components of pattern: their starts and lengths; returns how many. */
static size_t glob_components(const char *p, const char **s, size_t *len)
{
	size_t n = 0;

	while (*p) {
		size_t l;

		while (*p == '/')
			p++;
		l = strcspn(p, "/");
		if (!l)
			break;
		if (!pattern_component_is_literal(p, l) && n < PATTERN_MAX_COMPONENTS) {
			s[n] = p;
			len[n++] = l;
		}
		p += l;
	}
	return n;
}

static struct tie_end component_end(const char *s, size_t len, size_t member, bool tail)
{
	size_t n = 0;

	if (tail) {
		while (n < len && s[len - 1 - n] != '*' && s[len - 1 - n] != '?')
			n++;
		return (struct tie_end){ s + len - n, n, member };
	}
	while (n < len && s[n] != '*' && s[n] != '?')
		n++;
	return (struct tie_end){ s, n, member };
}

struct tie_group {
	size_t n, n_pos;
	struct tie_side *sides;		/* 2 * n_pos: heads and tails per glob position */
	struct tie_end *ends;		/* [member][side], as the member's own */
	size_t *cand;
};

static void tie_group_done(struct tie_group *t)
{
	for (size_t i = 0; t->sides && i < 2 * t->n_pos; i++)
		free(t->sides[i].v);
	free(t->sides);
	free(t->ends);
	free(t->cand);
}

static int tie_group_init(struct tie_group *t, struct policy_entry **v, const struct tie_item *g,
			  size_t n)
{
	const char *s[PATTERN_MAX_COMPONENTS];
	size_t len[PATTERN_MAX_COMPONENTS];

	t->n = n;
	t->n_pos = glob_components(v[g[0].pos]->pattern, s, len);
	t->sides = calloc(2 * t->n_pos + 1, sizeof(*t->sides));
	t->ends = calloc(2 * t->n_pos * n + 1, sizeof(*t->ends));
	t->cand = calloc(n + 1, sizeof(*t->cand));
	if (!t->sides || !t->ends || !t->cand)
		return -ENOMEM;
	for (size_t k = 0; k < 2 * t->n_pos; k++) {
		t->sides[k] = (struct tie_side){ calloc(n, sizeof(struct tie_end)), k & 1 };
		if (!t->sides[k].v)
			return -ENOMEM;
	}
	for (size_t m = 0; m < n; m++) {
		/* the key fixes the structure: every member has n_pos glob components */
		if (glob_components(v[g[m].pos]->pattern, s, len) != t->n_pos)
			return -EINVAL;
		for (size_t k = 0; k < 2 * t->n_pos; k++) {
			struct tie_end e = component_end(s[k / 2], len[k / 2], m, k & 1);

			t->ends[m * 2 * t->n_pos + k] = t->sides[k].v[m] = e;
			t->sides[k].has_len[e.len < TIE_END_MAX ? e.len : TIE_END_MAX] = true;
		}
	}
	for (size_t k = 0; k < 2 * t->n_pos; k++)
		qsort(t->sides[k].v, n, sizeof(struct tie_end), (k & 1) ? tail_cmp : head_cmp);
	return 0;
}

/*
 * Member j's first clash among the earlier ones: the first TIE_SCAN in
 * order (where a policy of many ties finds them), then the smallest
 * candidate set of the rest.
 */
#define TIE_SCAN 8

static void tie_find_one(struct tie_group *t, struct policy_entry **v, const struct tie_item *g,
			 size_t j, struct tie_found *found)
{
	struct tie_collect c = { t->cand, 0, j };
	size_t best = SIZE_MAX, best_k = 0;
	bool same;

	for (size_t i = 0; i < j && i < TIE_SCAN; i++)
		if (tie_clash(v, g, i, j, &same)) {
			found[g[j].pos] = (struct tie_found){ g[i].pos, same };
			return;
		}
	if (j <= TIE_SCAN)
		return;
	for (size_t k = 0; k < 2 * t->n_pos && best; k++) {
		size_t n = end_candidates(&t->sides[k], t->n, &t->ends[j * 2 * t->n_pos + k], NULL, NULL);

		if (n < best) {
			best = n;
			best_k = k;
		}
	}
	if (best == SIZE_MAX)
		return;	/* no glob: the same pattern, which member 0 has */
	end_candidates(&t->sides[best_k], t->n, &t->ends[j * 2 * t->n_pos + best_k],
		       collect_members, &c);
	qsort(c.v, c.n, sizeof(*c.v), size_cmp);
	for (size_t i = 0; i < c.n; i++)
		if (c.v[i] >= TIE_SCAN && tie_clash(v, g, c.v[i], j, &same)) {
			found[g[j].pos] = (struct tie_found){ g[c.v[i]].pos, same };
			return;
		}
}

/* Within one group of equal keys, in their order: the first clash of each. */
static int find_ties(struct policy_entry **v, const struct tie_item *g, size_t n,
		     struct tie_found *found)
{
	_cleanup_(tie_group_done) struct tie_group t = {};
	int r;

	if (n < 2)
		return 0;
	r = tie_group_init(&t, v, g, n);
	if (r < 0)
		return r;
	for (size_t j = 1; j < n; j++)
		tie_find_one(&t, v, g, j, found);
	return 0;
}

/*
 * Duplicates and ties between equally specific, overlapping patterns.
 * Entries that match at any depth are compared among themselves only: a
 * pattern that says where a cgroup is wins over one that does not. Only
 * entries with the same tie_key() are compared, so a policy of distinct
 * literal paths costs a sort, not every pair.
 */
static void check_ties(struct check_ctx *ctx, struct policy_entry **v, size_t n)
{
	_cleanup_(tie_items_done) struct tie_items t = { calloc(n ?: 1, sizeof(*t.v)) };
	_cleanup_free_ struct tie_found *found = calloc(n ?: 1, sizeof(*found));
	struct tie_item *items = t.v;

	if (!items || !found) {
		ctx->error = -ENOMEM;
		return;
	}
	for (; t.n < n; t.n++) {
		items[t.n] = (struct tie_item){ tie_key(v[t.n]), t.n };
		found[t.n].with = SIZE_MAX;
		if (!items[t.n].key) {
			ctx->error = -ENOMEM;
			return;
		}
	}
	qsort(items, n, sizeof(*items), tie_item_cmp);
	for (size_t i = 0, end; i < n; i = end) {
		for (end = i + 1; end < n && streq(items[i].key, items[end].key); end++)
			;
		if (find_ties(v, &items[i], end - i, found) < 0) {
			ctx->error = -ENOMEM;
			return;
		}
	}
	for (size_t j = 0; j < n; j++) {
		const struct policy_entry *b = v[j], *a;

		if (found[j].with == SIZE_MAX)
			continue;
		a = v[found[j].with];
		if (found[j].same)
			report_at_target(ctx, b, "%s: same cgroup pattern as %s",
					 policy_entry_name(b), other_entry(b, a));
		else
			report_at_target(ctx, b,
					 "%s: ties with %s: equally specific and both can match the same cgroup",
					 policy_entry_name(b), other_entry(b, a));
	}
}

static int entry_components_cmp(const void *a, const void *b)
{
	const struct policy_entry *x = *(const struct policy_entry *const *)a;
	const struct policy_entry *y = *(const struct policy_entry *const *)b;

	if (x->components != y->components)
		return x->components < y->components ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The entries of check_nesting() an entry may nest under, as found by the index. */
struct nesting_walk {
	struct policy_entry **v;
	const size_t *depth;
	size_t deepest;		/* of the candidates, SIZE_MAX if none */
	size_t no_children;	/* the first that cannot host children, SIZE_MAX if none */
};

static int nesting_candidate(size_t i, void *userdata)
{
	struct nesting_walk *w = userdata;

	/* v is sorted: the lowest position is the one the pairwise loop met first */
	if (!w->v[i]->can_host_children && (w->no_children == SIZE_MAX || i < w->no_children))
		w->no_children = i;
	if (w->deepest == SIZE_MAX || w->depth[i] > w->depth[w->deepest] ||
	    (w->depth[i] == w->depth[w->deepest] && i < w->deepest))
		w->deepest = i;
	return 0;
}

/* An index of the entries that say where they nest (not any-depth), by position in v. */
static int nesting_index(struct policy_entry **v, size_t n, struct pattern_index **ret)
{
	_cleanup_(pattern_index_freep) struct pattern_index *x = NULL;
	int r = pattern_index_new(&x);

	for (size_t i = 0; r == 0 && i < n; i++)
		if (!v[i]->any_depth)
			r = pattern_index_add(x, v[i]->pattern, false, i);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(x);
	return 0;
}

/*
 * Nesting: an entry A with fewer components whose pattern can match an
 * ancestor of B's cgroups may end up as B's parent, so it must host
 * children; the longest such chain must not exceed SCX_SUB_MAX_DEPTH.
 * Entries are taken by number of components, so every A is done before
 * its Bs; the As of one B come from the pattern index.
 */
static void check_nesting(struct check_ctx *ctx, struct policy_entry **v, size_t n)
{
	_cleanup_free_ size_t *depth = calloc(n ?: 1, sizeof(size_t));
	_cleanup_(pattern_index_freep) struct pattern_index *x = NULL;
	bool have_root = false, root_reported = false;

	if (!depth) {
		ctx->error = -ENOMEM;
		return;
	}
	qsort(v, n, sizeof(*v), entry_components_cmp);
	if (nesting_index(v, n, &x) < 0) {
		ctx->error = -ENOMEM;
		return;
	}
	for (size_t j = 0; j < n; j++) {
		struct policy_entry *b = v[j];
		struct nesting_walk w = { v, depth, SIZE_MAX, SIZE_MAX };

		depth[j] = 1;
		if (b->components == 0 && !b->any_depth) {
			have_root = true;
			continue;
		}
		if (!have_root && !root_reported) {
			report_at_target(ctx, b, "%s: child entries need a root entry \"%s\"",
					 policy_entry_name(b), "/");
			root_reported = true;
		}
		/* where an any-depth entry nests is known only per cgroup (desired.c) */
		if (b->any_depth)
			continue;
		if (pattern_index_prefix_overlaps(x, b->pattern, nesting_candidate, &w) < 0) {
			ctx->error = -ENOMEM;
			return;
		}
		if (w.no_children != SIZE_MAX)
			report_at_target(ctx, b,
					 "%s: would be nested under %s whose scheduler \"%s\" cannot host children",
					 policy_entry_name(b), other_entry(b, v[w.no_children]),
					 v[w.no_children]->scheduler);
		if (w.deepest != SIZE_MAX)
			depth[j] = depth[w.deepest] + 1;
		if (depth[j] > SCX_SUB_MAX_DEPTH)
			report_at_target(ctx, b,
					 "%s: would nest %zu schedulers deep (root included, parent %s); the kernel allows %d",
					 policy_entry_name(b), depth[j], other_entry(b, v[w.deepest]),
					 SCX_SUB_MAX_DEPTH);
	}
}

int policy_check_ties(struct policy_entry **v, size_t n, struct diag_list *diags)
{
	struct check_ctx ctx = { diags };

	check_ties(&ctx, v, n);
	return ctx.error;
}

int policy_check_nesting(struct policy_entry **v, size_t n, struct diag_list *diags)
{
	struct check_ctx ctx = { diags };

	check_nesting(&ctx, v, n);
	return ctx.error;
}
