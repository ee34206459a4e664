// SPDX-License-Identifier: GPL-2.0
/*
 * Policy file → validated struct policy.
 *
 * Parsing happens in two passes over the same text: jansson builds the
 * tree (and reports syntax errors with their position), jpos records where
 * every value starts so that each later error can name its line and
 * column. Errors are collected, not returned on the first one, so that
 * `scxd --check` shows everything wrong with a file at once.
 */

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "file.h"
#include "jpos.h"
#include "match.h"
#include "policy.h"
#include "util.h"

struct parse_ctx {
	const char *file;
	struct jpos_index idx;
	struct diag_list *diags;
	struct sched_catalog *catalog;
	int error;		/* -ENOMEM and such, beyond validation errors */
};

static void parse_ctx_done(struct parse_ctx *ctx)
{
	jpos_index_done(&ctx->idx);
}

/* Report a validation error at the value (or key, with "#key") at pointer. */
__attribute__((format(printf, 3, 0)))
static void ctx_errorv(struct parse_ctx *ctx, const char *pointer, const char *fmt, va_list ap)
{
	_cleanup_free_ char *msg = NULL;
	unsigned line, column;

	if (vasprintf(&msg, fmt, ap) < 0) {
		ctx->error = -ENOMEM;
		return;
	}
	jpos_lookup(&ctx->idx, pointer, &line, &column);
	if (diag_add(ctx->diags, ctx->file, line, column, "%s", msg) < 0)
		ctx->error = -ENOMEM;
}

__attribute__((format(printf, 3, 4)))
static void ctx_error(struct parse_ctx *ctx, const char *pointer, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ctx_errorv(ctx, pointer, fmt, ap);
	va_end(ap);
}

const char *policy_entry_name(const struct policy_entry *e)
{
	static __thread char bufs[2][400];
	static __thread unsigned which;
	char *buf = bufs[which++ % 2];
	char where[80] = "";

	if (e->dropin && e->file)
		snprintf(where, sizeof(where), "%.64s ", path_last_component(e->file));
	if (e->unit)
		snprintf(buf, sizeof(bufs[0]), "%sentries[%zu] unit \"%.256s\"", where,
			 e->file_index, e->unit);
	else if (e->pattern)
		snprintf(buf, sizeof(bufs[0]), "%sentries[%zu] \"%.256s\"", where, e->file_index,
			 e->pattern);
	else
		snprintf(buf, sizeof(bufs[0]), "%sentries[%zu]", where, e->file_index);
	return buf;
}

static const char *json_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
	default:
		return "null";
	}
}

/* Report keys of obj outside allowed[]; 'where' names the object. */
static bool check_keys(struct parse_ctx *ctx, const char *pointer, json_t *obj,
		       const char *const *allowed, size_t n_allowed, const char *where,
		       const char *expected)
{
	const char *key;
	json_t *v;
	bool ok = true;

	json_object_foreach(obj, key, v) {
		_cleanup_free_ char *kp = NULL, *token = NULL;
		bool known = false;

		for (size_t i = 0; i < n_allowed; i++)
			known = known || streq(key, allowed[i]);
		if (known)
			continue;
		token = jpos_escape(key);
		if (!token || asprintf(&kp, "%s/%s#key", pointer, token) < 0) {
			ctx->error = -ENOMEM;
			return false;
		}
		ctx_error(ctx, kp, "%s: unknown key \"%s\" (expected: %s)", where, key, expected);
		ok = false;
	}
	return ok;
}

static int tunable_value_cmp(const void *a, const void *b)
{
	return strcmp(((const struct tunable_value *)a)->name,
		      ((const struct tunable_value *)b)->name);
}

static bool convert_int(struct parse_ctx *ctx, const char *vp, const char *ename,
			const struct sched_info *s, const struct sched_tunable *t,
			const char *type, json_t *v, uint64_t *raw)
{
	int64_t min;
	uint64_t max;
	json_int_t x;

	if (!json_is_integer(v)) {
		ctx_error(ctx, vp, "%s: tunable \"%s\" of scheduler \"%s\" is %s, got %s",
			  ename, t->name, s->name, type, json_type_name(v));
		return false;
	}
	x = json_integer_value(v);
	sched_tunable_range(t, &min, &max);
	if (x < min || (x > 0 && (uint64_t)x > max)) {
		ctx_error(ctx, vp,
			  "%s: tunable \"%s\" of scheduler \"%s\" is %s, %" PRId64
			  " is out of range %" PRId64 "..%" PRIu64,
			  ename, t->name, s->name, type, (int64_t)x, min, max);
		return false;
	}
	*raw = (uint64_t)x;
	return true;
}

static bool convert_enum(struct parse_ctx *ctx, const char *vp, const char *ename,
			 const struct sched_info *s, const struct sched_tunable *t,
			 json_t *v, uint64_t *raw)
{
	_cleanup_free_ char *names = NULL;
	size_t len = 0;
	FILE *f;

	for (size_t i = 0; i < t->n_enumerators; i++) {
		const struct sched_enumerator *en = &t->enumerators[i];

		if ((json_is_string(v) && streq(json_string_value(v), en->name)) ||
		    (json_is_integer(v) && json_integer_value(v) == en->value)) {
			*raw = (uint64_t)en->value;
			return true;
		}
	}
	f = open_memstream(&names, &len);
	if (!f) {
		ctx->error = -ENOMEM;
		return false;
	}
	for (size_t i = 0; i < t->n_enumerators; i++)
		fprintf(f, "%s%s", i ? ", " : "", t->enumerators[i].name);
	fclose(f);
	if (json_is_string(v))
		ctx_error(ctx, vp, "%s: tunable \"%s\" of scheduler \"%s\" is an enum, \"%s\" is not one of: %s",
			  ename, t->name, s->name, json_string_value(v), names);
	else
		ctx_error(ctx, vp, "%s: tunable \"%s\" of scheduler \"%s\" is an enum, expected one of: %s",
			  ename, t->name, s->name, names);
	return false;
}

static bool parse_tunables(struct parse_ctx *ctx, const char *ep, struct policy_entry *e,
			   const struct sched_info *s, json_t *obj)
{
	const char *key;
	json_t *v;
	bool ok = true;
	size_t n = 0;

	e->tunables = calloc(json_object_size(obj) ?: 1, sizeof(*e->tunables));
	if (!e->tunables) {
		ctx->error = -ENOMEM;
		return false;
	}
	json_object_foreach(obj, key, v) {
		const struct sched_tunable *t = sched_info_find_tunable(s, key);
		const char *ename = policy_entry_name(e);
		_cleanup_free_ char *vp = NULL, *kp = NULL, *token = jpos_escape(key);
		char type[16];
		uint64_t raw = 0;
		bool good;

		if (!token || asprintf(&vp, "%s/tunables/%s", ep, token) < 0 ||
		    asprintf(&kp, "%s#key", vp) < 0) {
			ctx->error = -ENOMEM;
			return false;
		}
		if (!t) {
			_cleanup_free_ char *list = sched_info_tunable_list(s);

			ctx_error(ctx, kp, "%s: scheduler \"%s\" has no tunable \"%s\" (available: %s)",
				  ename, s->name, key, list ?: "?");
			ok = false;
			continue;
		}
		sched_tunable_type_name(t, type, sizeof(type));
		switch (t->kind) {
		case TUNABLE_BOOL:
			good = json_is_boolean(v);
			if (good)
				raw = json_is_true(v);
			else
				ctx_error(ctx, vp, "%s: tunable \"%s\" of scheduler \"%s\" is bool, got %s",
					  ename, t->name, s->name, json_type_name(v));
			break;
		case TUNABLE_ENUM:
			good = convert_enum(ctx, vp, ename, s, t, v, &raw);
			break;
		case TUNABLE_INT:
		default:
			good = convert_int(ctx, vp, ename, s, t, type, v, &raw);
			break;
		}
		if (!good) {
			ok = false;
			continue;
		}
		e->tunables[n].name = strdup(key);
		if (!e->tunables[n].name) {
			ctx->error = -ENOMEM;
			return false;
		}
		e->tunables[n].raw = raw;
		e->tunables[n].size = t->size;
		e->n_tunables = ++n;
	}
	e->n_tunables = n;
	qsort(e->tunables, n, sizeof(*e->tunables), tunable_value_cmp);
	return ok;
}

static bool string_member(struct parse_ctx *ctx, const char *ep, const char *ename,
			  json_t *obj, const char *key, const char **ret)
{
	json_t *v = json_object_get(obj, key);
	_cleanup_free_ char *vp = NULL;

	if (asprintf(&vp, "%s/%s", ep, key) < 0) {
		ctx->error = -ENOMEM;
		return false;
	}
	if (!v) {
		ctx_error(ctx, ep, "%s: missing \"%s\"", ename, key);
		return false;
	}
	if (!json_is_string(v)) {
		ctx_error(ctx, vp, "%s: \"%s\" must be a string, got %s", ename, key,
			  json_type_name(v));
		return false;
	}
	*ret = json_string_value(v);
	return true;
}

/* "cgroup": a path pattern, as written. */
static bool parse_cgroup(struct parse_ctx *ctx, const char *ep, const char *pattern,
			 struct policy_entry *e)
{
	const char *reason = NULL;
	char vp[80];

	e->pattern = strdup(pattern);
	if (!e->pattern)
		return (ctx->error = -ENOMEM), false;
	e->components = path_depth(pattern);
	if (pattern_validate(pattern, &reason) < 0) {
		snprintf(vp, sizeof(vp), "%s/cgroup", ep);
		ctx_error(ctx, vp, "%s: cgroup pattern %s", policy_entry_name(e), reason);
		return false;
	}
	return true;
}

/* "unit" and "slice": resolved to a pattern as systemd lays units out. */
static bool parse_unit(struct parse_ctx *ctx, const char *ep, json_t *obj, const char *unit,
		       struct policy_entry *e)
{
	const char *slice = NULL, *reason = NULL;
	char vp[80];
	int r;

	e->unit = strdup(unit);
	if (!e->unit)
		return (ctx->error = -ENOMEM), false;
	if (json_object_get(obj, "slice") &&
	    !string_member(ctx, ep, policy_entry_name(e), obj, "slice", &slice))
		return false;
	r = unit_pattern(unit, slice, &e->pattern, &e->any_depth, &reason);
	if (r == -ENOMEM)
		return (ctx->error = r), false;
	if (r < 0) {
		snprintf(vp, sizeof(vp), "%s/unit", ep);
		ctx_error(ctx, vp, "%s: unit %s", policy_entry_name(e), reason);
		return false;
	}
	e->components = path_depth(e->pattern);
	return true;
}

/* One entry object; returns false if it has errors (already reported). */
static bool parse_entry(struct parse_ctx *ctx, size_t index, json_t *obj,
			struct policy_entry *e)
{
	static const char *const keys[] = {
		"cgroup", "unit", "slice", "scheduler", "tunables", "comment",
	};
	const struct sched_info *s = NULL;
	const char *target = NULL, *sched = NULL, *reason = NULL;
	const char *key;
	char ep[64], ename[64], tp[80];
	json_t *tun, *comment;
	bool ok = true, is_unit;
	unsigned line, column;
	int r;

	snprintf(ep, sizeof(ep), "/entries/%zu", index);
	snprintf(ename, sizeof(ename), "entries[%zu]", index);
	e->file_index = index;
	e->file = ctx->file;
	jpos_lookup(&ctx->idx, ep, &line, &column);
	e->line = e->target_line = line;
	e->column = e->target_column = column;

	if (!json_is_object(obj)) {
		ctx_error(ctx, ep, "%s: must be an object, got %s", ename, json_type_name(obj));
		return false;
	}
	is_unit = json_object_get(obj, "unit") && !json_object_get(obj, "cgroup");
	key = is_unit ? "unit" : "cgroup";
	snprintf(tp, sizeof(tp), "%s/%s", ep, key);
	if (json_object_get(obj, "unit") && json_object_get(obj, "cgroup")) {
		ctx_error(ctx, ep, "%s: has both \"cgroup\" and \"unit\"; an entry names one of them",
			  ename);
		ok = false;
	} else if (!json_object_get(obj, "unit") && !json_object_get(obj, "cgroup")) {
		ctx_error(ctx, ep, "%s: missing \"cgroup\" (a path) or \"unit\" (a systemd unit)",
			  ename);
		ok = false;
	} else if (string_member(ctx, ep, ename, obj, key, &target)) {
		jpos_lookup(&ctx->idx, tp, &line, &column);
		e->target_line = line;
		e->target_column = column;
		if (!(is_unit ? parse_unit(ctx, ep, obj, target, e) : parse_cgroup(ctx, ep, target, e)))
			ok = false;
	} else {
		ok = false;
	}
	if (!is_unit && json_object_get(obj, "slice")) {
		snprintf(tp, sizeof(tp), "%s/slice#key", ep);
		ctx_error(ctx, tp, "%s: \"slice\" goes only with \"unit\" (a scope or service)",
			  policy_entry_name(e));
		ok = false;
	}
	if (!check_keys(ctx, ep, obj, keys, ELEMENTSOF(keys), policy_entry_name(e),
			"cgroup or unit, slice, scheduler, tunables, comment"))
		ok = false;

	comment = json_object_get(obj, "comment");
	if (comment && !json_is_string(comment)) {
		char vp[80];

		snprintf(vp, sizeof(vp), "%s/comment", ep);
		ctx_error(ctx, vp, "%s: \"comment\" must be a string, got %s",
			  policy_entry_name(e), json_type_name(comment));
		ok = false;
	}

	if (!string_member(ctx, ep, policy_entry_name(e), obj, "scheduler", &sched))
		return false;
	e->scheduler = strdup(sched);
	if (!e->scheduler)
		return (ctx->error = -ENOMEM), false;
	r = ctx->catalog->lookup(ctx->catalog, sched, &s, &reason);
	if (r < 0) {
		char vp[80];

		snprintf(vp, sizeof(vp), "%s/scheduler", ep);
		if (r == -EOPNOTSUPP && reason)	/* no object for this kernel's API */
			ctx_error(ctx, vp, "%s: %s", policy_entry_name(e), reason);
		else
			ctx_error(ctx, vp, "%s: unknown scheduler \"%s\": %s",
				  policy_entry_name(e), sched, reason ?: "not found");
		return false;
	}
	e->can_host_children = s->can_host_children;

	tun = json_object_get(obj, "tunables");
	if (tun && !json_is_object(tun)) {
		char vp[80];

		snprintf(vp, sizeof(vp), "%s/tunables", ep);
		ctx_error(ctx, vp, "%s: \"tunables\" must be an object, got %s",
			  policy_entry_name(e), json_type_name(tun));
		return false;
	}
	if (tun && !parse_tunables(ctx, ep, e, s, tun))
		ok = false;
	return ok;
}

/* Report an error at an entry's "cgroup" or "unit" value. */
__attribute__((format(printf, 3, 4)))
static void report_at_target(struct parse_ctx *ctx, const struct policy_entry *e,
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

/* Whether a and b name the same cgroups: an entry of a later file replaces. */
static bool same_target(const struct policy_entry *a, const struct policy_entry *b)
{
	return a->any_depth == b->any_depth && streq(a->pattern, b->pattern);
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

struct tie_side {
	struct tie_end *v;	/* the group's members by their ends, sorted */
	bool backward;		/* tails: compared from their last character */
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

	*same = same_target(a, b);
	return *same || (pattern_specificity_cmp(a->pattern, b->pattern) == 0 &&
			 pattern_overlap(a->pattern, b->pattern));
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
			t->ends[m * 2 * t->n_pos + k] = component_end(s[k / 2], len[k / 2], m, k & 1);
			t->sides[k].v[m] = t->ends[m * 2 * t->n_pos + k];
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
static void check_ties(struct parse_ctx *ctx, struct policy_entry **v, size_t n)
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
static void check_nesting(struct parse_ctx *ctx, struct policy_entry **v, size_t n)
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

static void check_top(struct parse_ctx *ctx, json_t *root, json_t **entries)
{
	static const char *const keys[] = { "version", "entries", "comment" };
	json_t *version, *comment;

	*entries = NULL;
	if (!json_is_object(root)) {
		ctx_error(ctx, "", "the policy must be an object, got %s", json_type_name(root));
		return;
	}
	check_keys(ctx, "", root, keys, ELEMENTSOF(keys), "top level",
		   "version, entries, comment");

	version = json_object_get(root, "version");
	if (!version)
		ctx_error(ctx, "", "missing \"version\" at the top level (this format is version %d)",
			  POLICY_VERSION);
	else if (!json_is_integer(version))
		ctx_error(ctx, "/version", "\"version\" must be an integer, got %s",
			  json_type_name(version));
	else if (json_integer_value(version) != POLICY_VERSION)
		ctx_error(ctx, "/version", "\"version\" is %" JSON_INTEGER_FORMAT ", only %d is supported",
			  json_integer_value(version), POLICY_VERSION);

	comment = json_object_get(root, "comment");
	if (comment && !json_is_string(comment))
		ctx_error(ctx, "/comment", "\"comment\" must be a string, got %s",
			  json_type_name(comment));

	*entries = json_object_get(root, "entries");
	if (!*entries) {
		ctx_error(ctx, "", "missing \"entries\" at the top level");
	} else if (!json_is_array(*entries)) {
		ctx_error(ctx, "/entries", "\"entries\" must be an array, got %s",
			  json_type_name(*entries));
		*entries = NULL;
	} else if (json_array_size(*entries) > POLICY_MAX_ENTRIES) {
		ctx_error(ctx, "/entries", "\"entries\" has %zu entries, at most %d are allowed",
			  json_array_size(*entries), POLICY_MAX_ENTRIES);
		*entries = NULL;
	}
}

/* One file's JSON while the policy is being built from all of them. */
struct source_state {
	struct parse_ctx ctx;
	json_t *root;
	json_t *entries;	/* NULL: nothing usable */
};

struct source_states {
	struct source_state *v;
	size_t n;
};

static void source_states_done(struct source_states *s)
{
	for (size_t i = 0; s->v && i < s->n; i++) {
		parse_ctx_done(&s->v[i].ctx);
		json_decref(s->v[i].root);
	}
	free(s->v);
}

/* Syntax, top-level keys and the entries array of one file. */
static int source_open(struct source_state *st, const char *file, const struct policy_source *src,
		       struct sched_catalog *catalog, struct diag_list *diags)
{
	json_error_t jerr;
	int r;

	st->ctx = (struct parse_ctx){ .file = file, .diags = diags, .catalog = catalog };
	st->root = json_loadb(src->text, src->len, JSON_REJECT_DUPLICATES, &jerr);
	if (!st->root)
		return diag_add(diags, file, jerr.line > 0 ? jerr.line : 1,
				jerr.column > 0 ? jerr.column : 1, "%s", jerr.text);
	r = jpos_index_build(&st->ctx.idx, src->text, src->len);
	if (r < 0)
		return r;
	check_top(&st->ctx, st->root, &st->entries);
	return st->ctx.error;
}

static int target_cmp(const void *x, const void *y)
{
	const struct policy_entry *a = *(const struct policy_entry *const *)x;
	const struct policy_entry *b = *(const struct policy_entry *const *)y;
	int r;

	if (a->any_depth != b->any_depth)
		return a->any_depth ? 1 : -1;
	r = strcmp(a->pattern, b->pattern);
	if (r)
		return r;
	return a->index < b->index ? -1 : a->index > b->index;
}

/*
 * Drop-ins over the main file: an entry is replaced by an entry of a
 * later file with the same target. Sorted by target, then by position
 * (files in order), each run of one target keeps the entries of its last
 * file. *left says how many survive; replaced[], by position in
 * p->entries, marks the others.
 */
static int apply_replacements(struct policy_entry **valid, size_t n, bool *replaced,
			      size_t *left)
{
	_cleanup_free_ struct policy_entry **by_target = calloc(n ?: 1, sizeof(*by_target));

	if (!by_target)
		return -ENOMEM;
	memcpy(by_target, valid, n * sizeof(*valid));
	qsort(by_target, n, sizeof(*by_target), target_cmp);
	*left = n;
	for (size_t i = 0, end; i < n; i = end) {
		const char *last_file;

		for (end = i + 1; end < n && same_target(by_target[i], by_target[end]); end++)
			;
		last_file = by_target[end - 1]->file;
		for (size_t k = i; k < end; k++)
			if (by_target[k]->file != last_file) {
				replaced[by_target[k]->index] = true;
				(*left)--;
			}
	}
	return 0;
}

static void policy_entry_done(struct policy_entry *e)
{
	for (size_t t = 0; t < e->n_tunables; t++)
		free(e->tunables[t].name);
	free(e->tunables);
	free(e->pattern);
	free(e->unit);
	free(e->scheduler);
	*e = (struct policy_entry){};
}

/* The index policy_match() looks entries up in. */
static int policy_index(struct policy *p)
{
	int r;

	pattern_index_free(p->index);
	p->index = NULL;
	r = pattern_index_new(&p->index);
	for (size_t i = 0; r == 0 && i < p->n_entries; i++)
		r = pattern_index_add(p->index, p->entries[i].pattern, p->entries[i].any_depth, i);
	return r;
}

/* Keep the entries that survived, in order, renumbered. */
static int policy_keep(struct policy *p, struct policy_entry **valid, size_t n_valid,
		       const bool *replaced, size_t n_left)
{
	struct policy_entry *kept = calloc(n_left ?: 1, sizeof(*kept));
	size_t k = 0;

	if (!kept)
		return -ENOMEM;
	for (size_t i = 0; i < n_valid; i++)
		if (!replaced[valid[i]->index]) {
			kept[k] = *valid[i];
			kept[k].index = k;
			*valid[i] = (struct policy_entry){};
			k++;
		}
	for (size_t i = 0; i < p->n_entries; i++)
		policy_entry_done(&p->entries[i]);
	free(p->entries);
	p->entries = kept;
	p->n_entries = k;
	p->root = NULL;
	for (size_t i = 0; i < k; i++)
		if (kept[i].components == 0 && !kept[i].any_depth)
			p->root = &kept[i];
	return policy_index(p);
}

/* The policy's own copies of the file names, the main file first. */
static int policy_set_files(struct policy *p, const struct policy_source *sources, size_t n)
{
	p->files = calloc(n, sizeof(*p->files));
	if (!p->files)
		return -ENOMEM;
	for (size_t f = 0; f < n; f++) {
		p->files[f] = strdup(sources[f].file);
		if (!p->files[f])
			return -ENOMEM;
		p->n_files++;
	}
	p->file = strdup(sources[0].file);
	return p->file ? 0 : -ENOMEM;
}

/* Parse every file's entries into p->entries; the valid ones into valid[]. */
static int parse_all_entries(struct policy *p, struct source_states *ss,
			     struct policy_entry **valid, size_t *n_valid)
{
	for (size_t f = 0; f < ss->n; f++) {
		struct source_state *st = &ss->v[f];
		size_t n = st->entries ? json_array_size(st->entries) : 0;

		for (size_t i = 0; i < n; i++) {
			struct policy_entry *e = &p->entries[p->n_entries];

			e->index = p->n_entries++;
			e->dropin = f > 0;
			if (parse_entry(&st->ctx, i, json_array_get(st->entries, i), e))
				valid[(*n_valid)++] = e;
		}
		if (st->ctx.error < 0)
			return st->ctx.error;
	}
	return 0;
}

/* Ties and nesting over the entries that survived the drop-ins. */
static int check_merged(struct parse_ctx *merged, struct policy_entry **valid, size_t n_valid,
			const bool *replaced, size_t left)
{
	_cleanup_free_ struct policy_entry **live = calloc(left ?: 1, sizeof(*live));
	size_t k = 0;

	if (!live)
		return -ENOMEM;
	for (size_t i = 0; i < n_valid; i++)
		if (!replaced[valid[i]->index])
			live[k++] = valid[i];
	check_ties(merged, live, k);
	check_nesting(merged, live, k);
	return merged->error;
}

int policy_parse_files(const struct policy_source *sources, size_t n_sources,
		       struct sched_catalog *catalog, struct diag_list *diags,
		       struct policy **ret)
{
	_cleanup_(policy_freep) struct policy *p = NULL;
	_cleanup_(source_states_done) struct source_states ss = {};
	_cleanup_free_ struct policy_entry **valid = NULL;
	_cleanup_free_ bool *replaced = NULL;
	struct parse_ctx merged = { .diags = diags, .catalog = catalog };
	size_t before = diags->n, n_valid = 0, total = 0, left;
	int r;

	if (n_sources == 0)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	ss.v = calloc(n_sources, sizeof(*ss.v));
	if (!p || !ss.v)
		return -ENOMEM;
	r = policy_set_files(p, sources, n_sources);
	if (r < 0)
		return r;
	for (; ss.n < n_sources; ss.n++) {
		/* entries point at the policy's copy of their file name */
		r = source_open(&ss.v[ss.n], p->files[ss.n], &sources[ss.n], catalog, diags);
		if (r < 0) {
			ss.n++;
			return r;
		}
		if (ss.v[ss.n].entries)
			total += json_array_size(ss.v[ss.n].entries);
	}

	p->entries = calloc(total ?: 1, sizeof(*p->entries));
	valid = calloc(total ?: 1, sizeof(*valid));
	replaced = calloc(total ?: 1, sizeof(*replaced));
	if (!p->entries || !valid || !replaced)
		return -ENOMEM;
	r = parse_all_entries(p, &ss, valid, &n_valid);
	if (r < 0)
		return r;

	r = apply_replacements(valid, n_valid, replaced, &left);
	if (r < 0)
		return r;
	if (left > POLICY_MAX_ENTRIES) {
		r = diag_add(diags, p->file, 1, 1,
			     "with its %zu drop-in(s) the policy has %zu entries, at most %d are allowed",
			     n_sources - 1, left, POLICY_MAX_ENTRIES);
		return r < 0 ? r : -EINVAL;
	}
	r = check_merged(&merged, valid, n_valid, replaced, left);
	if (r < 0)
		return r;
	if (diags->n > before)
		return -EINVAL;
	r = policy_keep(p, valid, n_valid, replaced, left);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(p);
	return 0;
}

int policy_parse(const char *file, const char *text, size_t len,
		 struct sched_catalog *catalog, struct diag_list *diags,
		 struct policy **ret)
{
	const struct policy_source src = { .file = file, .text = text, .len = len };

	return policy_parse_files(&src, 1, catalog, diags, ret);
}

char *policy_dropin_dir(const char *file)
{
	const char *slash = strrchr(file, '/');
	char *dir;

	if (!slash)
		return strdup("policy.d");
	if (asprintf(&dir, "%.*s/policy.d", (int)(slash - file), file) < 0)
		return NULL;
	return dir;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct name_list {
	char **v;
	size_t n;
};

static void name_list_done(struct name_list *l)
{
	for (size_t i = 0; l->v && i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	*l = (struct name_list){};
}

static int name_list_add(struct name_list *l, const char *name)
{
	char **v = realloc(l->v, (l->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	l->v = v;
	v[l->n] = strdup(name);
	if (!v[l->n])
		return -ENOMEM;
	l->n++;
	return 0;
}

/* The *.json names in dir, sorted; none if dir does not exist. */
static int list_dropins(const char *dir, struct diag_list *diags, struct name_list *ret)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *de;
	int r;

	if (!d && errno == ENOENT)
		return 0;
	if (!d) {
		r = -errno;
		diag_add_line(diags, "%s: cannot read the drop-in directory: %s", dir, strerror(-r));
		return r;
	}
	while ((errno = 0, de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' || len < 6 || !streq(de->d_name + len - 5, ".json"))
			continue;
		if (ret->n == POLICY_MAX_DROPINS) {
			diag_add_line(diags, "%s: more than %d drop-ins; refusing them all", dir,
				      POLICY_MAX_DROPINS);
			return -E2BIG;
		}
		r = name_list_add(ret, de->d_name);
		if (r < 0)
			return r;
	}
	if (errno) {
		r = -errno;
		diag_add_line(diags, "%s: cannot read the drop-in directory: %s", dir, strerror(-r));
		return r;
	}
	if (ret->n)
		qsort(ret->v, ret->n, sizeof(*ret->v), name_cmp);
	return 0;
}

/* What policy_load() read: paths and their bytes, the main file first. */
struct loaded_files {
	struct policy_source *src;
	char **texts;
	size_t n;
};

static void loaded_files_done(struct loaded_files *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free((char *)l->src[i].file);
		free(l->texts[i]);
	}
	free(l->src);
	free(l->texts);
}

static int load_one(struct loaded_files *l, const char *path, struct diag_list *diags)
{
	_cleanup_free_ char *why = NULL, *text = NULL, *copy = strdup(path);
	size_t len;
	int r;

	if (!copy)
		return -ENOMEM;
	r = file_read(path, FILE_POLICY_MAX, FILE_TRUSTED, &text, &len, &why);
	if (r < 0) {
		diag_add_line(diags, "%s", why ?: strerror(-r));
		return r;
	}
	l->src[l->n] = (struct policy_source){ TAKE_PTR(copy), text, len };
	l->texts[l->n++] = TAKE_PTR(text);
	return 0;
}

int policy_load(const char *file, struct sched_catalog *catalog,
		struct diag_list *diags, struct policy **ret)
{
	_cleanup_free_ char *dir = policy_dropin_dir(file);
	_cleanup_(name_list_done) struct name_list names = {};
	_cleanup_(loaded_files_done) struct loaded_files files = {};
	int r;

	if (!dir)
		return -ENOMEM;
	r = list_dropins(dir, diags, &names);
	if (r < 0)
		return r;
	files.src = calloc(names.n + 1, sizeof(*files.src));
	files.texts = calloc(names.n + 1, sizeof(*files.texts));
	if (!files.src || !files.texts)
		return -ENOMEM;
	r = load_one(&files, file, diags);
	for (size_t i = 0; i < names.n && r >= 0; i++) {
		_cleanup_free_ char *path = NULL;

		if (asprintf(&path, "%s/%s", dir, names.v[i]) < 0)
			return -ENOMEM;
		r = load_one(&files, path, diags);
	}
	if (r < 0)
		return r;
	return policy_parse_files(files.src, files.n, catalog, diags, ret);
}

/* For the same cgroup: whether entry a wins over entry b. */
static bool entry_wins(const struct policy_entry *a, const struct policy_entry *b)
{
	if (a->any_depth != b->any_depth)
		return !a->any_depth;
	return pattern_specificity_cmp(a->pattern, b->pattern) > 0;
}

struct match_state {
	const struct policy *p;
	const struct policy_entry *best;
};

static int match_candidate(size_t id, void *userdata)
{
	struct match_state *m = userdata;
	const struct policy_entry *e = &m->p->entries[id];

	/* the old linear order: on a tie the entry listed first stays */
	if (!m->best || entry_wins(e, m->best) ||
	    (!entry_wins(m->best, e) && e->index < m->best->index))
		m->best = e;
	return 0;
}

const struct policy_entry *policy_match(const struct policy *p, const char *cgroup)
{
	struct match_state m = { .p = p };

	if (!p->index)
		return NULL;
	pattern_index_match(p->index, cgroup, match_candidate, &m);
	return m.best;
}

bool policy_may_match_below(const struct policy *p, const char *cgroup)
{
	return !p->index || pattern_index_may_match_below(p->index, cgroup);
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_entries; i++)
		policy_entry_done(&p->entries[i]);
	free(p->entries);
	for (size_t i = 0; i < p->n_files; i++)
		free(p->files[i]);
	free(p->files);
	free(p->file);
	pattern_index_free(p->index);
	free(p);
}
