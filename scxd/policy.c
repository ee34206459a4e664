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

#include "jpos.h"
#include "match.h"
#include "policy-check.h"
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

int policy_parse_files(const struct policy_source *sources, size_t n_sources,
		       struct sched_catalog *catalog, struct diag_list *diags,
		       struct policy **ret)
{
	_cleanup_(policy_freep) struct policy *p = NULL;
	_cleanup_(source_states_done) struct source_states ss = {};
	_cleanup_free_ struct policy_entry **valid = NULL;
	_cleanup_free_ bool *replaced = NULL;
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

	r = policy_apply_replacements(valid, n_valid, replaced, &left);
	if (r < 0)
		return r;
	if (left > POLICY_MAX_ENTRIES) {
		r = diag_add(diags, p->file, 1, 1,
			     "with its %zu drop-in(s) the policy has %zu entries, at most %d are allowed",
			     n_sources - 1, left, POLICY_MAX_ENTRIES);
		return r < 0 ? r : -EINVAL;
	}
	r = policy_check_merged(valid, n_valid, replaced, left, diags);
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
