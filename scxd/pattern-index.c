// SPDX-License-Identifier: GPL-2.0
/*
 * The pattern index: a trie of pattern components with hashed edges. See
 * pattern-index.h for what it answers.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "match.h"
#include "pattern-index.h"
#include "util.h"

#define NO_NODE SIZE_MAX

/* A growable array of indices: a node's ids, or its children. */
struct index_list {
	size_t *v;
	size_t n, cap;
};

struct trie_node {
	char *component;	/* NULL for the root */
	size_t len;
	bool literal;
	size_t parent;
	struct index_list ids;		/* patterns that end here */
	struct index_list children;	/* every child */
	struct index_list globs;	/* the children that hold '*' or '?' */
	size_t max_prefix;		/* the longest literal prefix of a glob child */
};

/*
 * The glob children of one node that share a literal prefix (what comes
 * before their first '*' or '?'): a name can match only those whose
 * prefix it starts with, so a lookup tries one group per prefix length
 * instead of every glob child.
 */
struct glob_group {
	size_t parent;
	const char *prefix;	/* points into the first member's component */
	size_t len;
	struct index_list members;
};

/*
 * One trie. Edges (parent, component) → child are in an open-addressing
 * table of node numbers; slot value 0 is empty (node 0 is the root, never
 * a child).
 */
struct trie {
	struct trie_node *nodes;
	size_t n, cap;
	size_t *slots;
	size_t n_slots;		/* a power of two, at least twice n */
	struct glob_group *groups;	/* slot values below are group number + 1 */
	size_t n_groups, cap_groups;
	size_t *group_slots;
	size_t n_group_slots;
};

struct pattern_index {
	struct trie paths;	/* patterns by their components */
	struct trie last;	/* any-depth patterns: one component, matched at any depth */
	size_t n_patterns;
};

static int index_list_add(struct index_list *l, size_t v)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 2;
		size_t *nv = realloc(l->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = cap;
	}
	l->v[l->n++] = v;
	return 0;
}

static uint64_t edge_hash(size_t parent, const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ULL);

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h ^ (h >> 29);
}

static bool edge_is(const struct trie *t, size_t node, size_t parent, const char *s, size_t len)
{
	const struct trie_node *n = &t->nodes[node];

	return n->parent == parent && n->len == len && memcmp(n->component, s, len) == 0;
}

/* The child of parent for component [s, s + len), NO_NODE if none. */
static size_t trie_child(const struct trie *t, size_t parent, const char *s, size_t len)
{
	size_t mask, i;

	if (!t->n_slots)
		return NO_NODE;
	mask = t->n_slots - 1;
	for (i = edge_hash(parent, s, len) & mask; t->slots[i]; i = (i + 1) & mask)
		if (edge_is(t, t->slots[i], parent, s, len))
			return t->slots[i];
	return NO_NODE;
}

static void slot_insert(size_t *slots, size_t n_slots, const struct trie_node *n, size_t node)
{
	size_t mask = n_slots - 1, i;

	for (i = edge_hash(n->parent, n->component, n->len) & mask; slots[i]; i = (i + 1) & mask)
		;
	slots[i] = node;
}

static int trie_grow_slots(struct trie *t)
{
	size_t n_slots = t->n_slots ? t->n_slots * 2 : 64;
	size_t *slots = calloc(n_slots, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 1; i < t->n; i++)
		slot_insert(slots, n_slots, &t->nodes[i], i);
	free(t->slots);
	t->slots = slots;
	t->n_slots = n_slots;
	return 0;
}

static size_t glob_prefix_len(const char *s, size_t len)
{
	size_t n = 0;

	while (n < len && s[n] != '*' && s[n] != '?')
		n++;
	return n;
}

/* The group of parent's glob children with this prefix, NULL if none. */
static const struct glob_group *group_find(const struct trie *t, size_t parent, const char *s,
					   size_t len)
{
	size_t mask, i;

	if (!t->n_group_slots)
		return NULL;
	mask = t->n_group_slots - 1;
	for (i = edge_hash(parent, s, len) & mask; t->group_slots[i]; i = (i + 1) & mask) {
		const struct glob_group *g = &t->groups[t->group_slots[i] - 1];

		if (g->parent == parent && g->len == len && memcmp(g->prefix, s, len) == 0)
			return g;
	}
	return NULL;
}

static void group_slot_insert(struct trie *t, size_t k)
{
	const struct glob_group *g = &t->groups[k];
	size_t mask = t->n_group_slots - 1, i;

	for (i = edge_hash(g->parent, g->prefix, g->len) & mask; t->group_slots[i];
	     i = (i + 1) & mask)
		;
	t->group_slots[i] = k + 1;
}

static int group_grow_slots(struct trie *t)
{
	size_t n = t->n_group_slots ? t->n_group_slots * 2 : 64;
	size_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	free(t->group_slots);
	t->group_slots = slots;
	t->n_group_slots = n;
	for (size_t k = 0; k < t->n_groups; k++)
		group_slot_insert(t, k);
	return 0;
}

/* File glob node 'node' (a child of parent) under its prefix's group. */
static int group_add(struct trie *t, size_t parent, size_t node)
{
	const struct trie_node *n = &t->nodes[node];
	size_t len = glob_prefix_len(n->component, n->len);
	struct glob_group *g = (struct glob_group *)group_find(t, parent, n->component, len);
	int r;

	if (!g) {
		if ((t->n_groups + 1) * 2 > t->n_group_slots) {
			r = group_grow_slots(t);
			if (r < 0)
				return r;
		}
		if (t->n_groups == t->cap_groups) {
			size_t cap = t->cap_groups ? t->cap_groups * 2 : 8;
			struct glob_group *v = realloc(t->groups, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			t->groups = v;
			t->cap_groups = cap;
		}
		g = &t->groups[t->n_groups++];
		*g = (struct glob_group){ .parent = parent, .prefix = n->component, .len = len };
		group_slot_insert(t, t->n_groups - 1);
	}
	if (len > t->nodes[parent].max_prefix)
		t->nodes[parent].max_prefix = len;
	return index_list_add(&g->members, node);
}

static int trie_init(struct trie *t)
{
	t->nodes = calloc(1, sizeof(*t->nodes));
	if (!t->nodes)
		return -ENOMEM;
	t->cap = t->n = 1;
	t->nodes[0] = (struct trie_node){ .parent = NO_NODE, .literal = true };
	return 0;
}

/* The child of parent for a component, made if it is not there yet. */
static int trie_child_get(struct trie *t, size_t parent, const char *s, size_t len, size_t *ret)
{
	struct trie_node *n;
	size_t node = trie_child(t, parent, s, len);
	int r;

	if (node != NO_NODE) {
		*ret = node;
		return 0;
	}
	if ((t->n + 1) * 2 > t->n_slots) {
		r = trie_grow_slots(t);
		if (r < 0)
			return r;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap * 2;
		struct trie_node *v = realloc(t->nodes, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->nodes = v;
		t->cap = cap;
	}
	node = t->n;
	n = &t->nodes[node];
	*n = (struct trie_node){ .parent = parent, .len = len, .component = strndup(s, len),
				 .literal = pattern_component_is_literal(s, len) };
	if (!n->component)
		return -ENOMEM;
	t->n++;
	slot_insert(t->slots, t->n_slots, n, node);
	r = index_list_add(&t->nodes[parent].children, node);
	if (r == 0 && !n->literal)
		r = index_list_add(&t->nodes[parent].globs, node);
	if (r == 0 && !t->nodes[node].literal)
		r = group_add(t, parent, node);
	*ret = node;
	return r;
}

static void trie_done(struct trie *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->nodes[i].component);
		free(t->nodes[i].ids.v);
		free(t->nodes[i].children.v);
		free(t->nodes[i].globs.v);
	}
	for (size_t i = 0; i < t->n_groups; i++)
		free(t->groups[i].members.v);
	free(t->nodes);
	free(t->slots);
	free(t->groups);
	free(t->group_slots);
	*t = (struct trie){};
}

int pattern_index_new(struct pattern_index **ret)
{
	_cleanup_(pattern_index_freep) struct pattern_index *x = calloc(1, sizeof(*x));
	int r;

	if (!x)
		return -ENOMEM;
	r = trie_init(&x->paths);
	if (r == 0)
		r = trie_init(&x->last);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(x);
	return 0;
}

void pattern_index_free(struct pattern_index *x)
{
	if (!x)
		return;
	trie_done(&x->paths);
	trie_done(&x->last);
	free(x);
}

size_t pattern_index_size(const struct pattern_index *x)
{
	return x->n_patterns;
}

/* The components of a path: [s, s + len), one at a time. */
static bool next_component(const char **cursor, const char **s, size_t *len)
{
	const char *p = *cursor;

	while (*p == '/')
		p++;
	if (!*p)
		return false;
	*s = p;
	*len = strcspn(p, "/");
	*cursor = p + *len;
	return true;
}

int pattern_index_add(struct pattern_index *x, const char *pattern, bool any_depth, size_t id)
{
	struct trie *t = any_depth ? &x->last : &x->paths;
	const char *cursor = pattern, *s;
	size_t node = 0, len;
	int r;

	while (next_component(&cursor, &s, &len)) {
		r = trie_child_get(t, node, s, len, &node);
		if (r < 0)
			return r;
	}
	r = index_list_add(&t->nodes[node].ids, id);
	if (r < 0)
		return r;
	x->n_patterns++;
	return 0;
}

static int report_ids(const struct trie_node *n, pattern_index_fn fn, void *userdata)
{
	for (size_t i = 0; i < n->ids.n; i++) {
		int r = fn(n->ids.v[i], userdata);

		if (r < 0)
			return r;
	}
	return 0;
}

/* A path split into its components, for the walks below. */
struct split_path {
	const char *s[PATTERN_MAX_COMPONENTS + 1];
	size_t len[PATTERN_MAX_COMPONENTS + 1];
	size_t n;
};

/* -E2BIG for a path deeper than any pattern can be. */
static int split_path(const char *path, struct split_path *sp)
{
	const char *cursor = path, *s;
	size_t len;

	sp->n = 0;
	while (next_component(&cursor, &s, &len)) {
		if (sp->n == PATTERN_MAX_COMPONENTS + 1)
			return -E2BIG;
		sp->s[sp->n] = s;
		sp->len[sp->n++] = len;
	}
	return 0;
}

/*
 * Depth first from node (at depth k) along the edges that match the path's
 * components: the literal child by hash, then each glob child.
 * at_end(node) runs on the nodes reached at the path's depth.
 */
typedef int (*reached_fn)(const struct trie *t, size_t node, pattern_index_fn fn,
			  void *userdata);

static int walk_matching(const struct trie *t, size_t node, const struct split_path *sp, size_t k,
			 reached_fn at_end, pattern_index_fn fn, void *userdata)
{
	const struct trie_node *n = &t->nodes[node];
	size_t child;
	int r;

	if (k == sp->n)
		return at_end(t, node, fn, userdata);
	child = trie_child(t, node, sp->s[k], sp->len[k]);
	if (child != NO_NODE && t->nodes[child].literal) {
		r = walk_matching(t, child, sp, k + 1, at_end, fn, userdata);
		if (r != 0)
			return r;
	}
	/* the glob children whose literal prefix the name starts with */
	for (size_t plen = 0; n->globs.n && plen <= n->max_prefix && plen <= sp->len[k]; plen++) {
		const struct glob_group *grp = group_find(t, node, sp->s[k], plen);

		for (size_t i = 0; grp && i < grp->members.n; i++) {
			size_t c = grp->members.v[i];
			const struct trie_node *g = &t->nodes[c];

			if (!pattern_component_match(g->component, g->len, sp->s[k], sp->len[k]))
				continue;
			r = walk_matching(t, c, sp, k + 1, at_end, fn, userdata);
			if (r != 0)
				return r;
		}
	}
	return 0;
}

static int reached_report(const struct trie *t, size_t node, pattern_index_fn fn, void *userdata)
{
	return report_ids(&t->nodes[node], fn, userdata);
}

int pattern_index_match(const struct pattern_index *x, const char *path, pattern_index_fn fn,
			void *userdata)
{
	struct split_path sp, last;
	int r;

	if (split_path(path, &sp) < 0)
		return 0; /* deeper than any pattern: nothing matches */
	r = walk_matching(&x->paths, 0, &sp, 0, reached_report, fn, userdata);
	if (r < 0 || sp.n == 0 || x->last.n == 1)
		return r < 0 ? r : 0;
	last = (struct split_path){ .s = { sp.s[sp.n - 1] }, .len = { sp.len[sp.n - 1] }, .n = 1 };
	r = walk_matching(&x->last, 0, &last, 0, reached_report, fn, userdata);
	return r < 0 ? r : 0;
}

/* Returns 1 (stop: found) where the node has children. */
static int reached_has_children(const struct trie *t, size_t node, pattern_index_fn fn,
				void *userdata)
{
	return t->nodes[node].children.n > 0;
}

bool pattern_index_may_match_below(const struct pattern_index *x, const char *path)
{
	struct split_path sp;

	if (x->last.n > 1)
		return true;
	if (split_path(path, &sp) < 0)
		return false;
	return walk_matching(&x->paths, 0, &sp, 0, reached_has_children, NULL, NULL) > 0;
}

/*
 * Depth first along the edges whose component overlaps the pattern's
 * component at that depth; every node passed above the pattern's depth
 * reports its ids.
 */
static int walk_overlapping(const struct trie *t, size_t node, const struct split_path *sp,
			    size_t k, pattern_index_fn fn, void *userdata)
{
	const struct trie_node *n = &t->nodes[node];
	bool literal;
	int r;

	if (k == sp->n)
		return 0; /* as many components: not an ancestor */
	r = report_ids(n, fn, userdata);
	if (r < 0 || k + 1 == sp->n)
		return r;	/* the children are as deep as the pattern: none is an ancestor */
	literal = pattern_component_is_literal(sp->s[k], sp->len[k]);
	if (literal) {
		size_t child = trie_child(t, node, sp->s[k], sp->len[k]);

		if (child != NO_NODE && t->nodes[child].literal) {
			r = walk_overlapping(t, child, sp, k + 1, fn, userdata);
			if (r < 0)
				return r;
		}
	}
	/* a literal component meets the glob children; a glob meets them all */
	for (size_t i = 0; i < (literal ? n->globs.n : n->children.n); i++) {
		size_t c = literal ? n->globs.v[i] : n->children.v[i];
		const struct trie_node *g = &t->nodes[c];

		if (!pattern_component_overlap(g->component, g->len, sp->s[k], sp->len[k]))
			continue;
		r = walk_overlapping(t, c, sp, k + 1, fn, userdata);
		if (r < 0)
			return r;
	}
	return 0;
}

int pattern_index_prefix_overlaps(const struct pattern_index *x, const char *pattern,
				  pattern_index_fn fn, void *userdata)
{
	struct split_path sp;

	if (split_path(pattern, &sp) < 0)
		return -E2BIG;
	return walk_overlapping(&x->paths, 0, &sp, 0, fn, userdata);
}
