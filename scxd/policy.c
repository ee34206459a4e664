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
#include <sys/stat.h>

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
	static __thread char bufs[2][300];
	static __thread unsigned which;
	char *buf = bufs[which++ % 2];

	if (e->pattern)
		snprintf(buf, sizeof(bufs[0]), "entries[%zu] \"%.256s\"", e->index, e->pattern);
	else
		snprintf(buf, sizeof(bufs[0]), "entries[%zu]", e->index);
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

/* One entry object; returns false if it has errors (already reported). */
static bool parse_entry(struct parse_ctx *ctx, size_t index, json_t *obj,
			struct policy_entry *e)
{
	static const char *const keys[] = { "cgroup", "scheduler", "tunables", "comment" };
	const struct sched_info *s = NULL;
	const char *pattern = NULL, *sched = NULL, *reason = NULL;
	char ep[64], ename[64];
	json_t *tun, *comment;
	bool ok = true;
	unsigned line, column;

	snprintf(ep, sizeof(ep), "/entries/%zu", index);
	snprintf(ename, sizeof(ename), "entries[%zu]", index);
	e->index = index;
	jpos_lookup(&ctx->idx, ep, &line, &column);
	e->line = line;
	e->column = column;

	if (!json_is_object(obj)) {
		ctx_error(ctx, ep, "%s: must be an object, got %s", ename, json_type_name(obj));
		return false;
	}
	if (string_member(ctx, ep, ename, obj, "cgroup", &pattern)) {
		e->pattern = strdup(pattern);
		if (!e->pattern)
			return (ctx->error = -ENOMEM), false;
		e->components = path_depth(pattern);
		if (pattern_validate(pattern, &reason) < 0) {
			char vp[80];

			snprintf(vp, sizeof(vp), "%s/cgroup", ep);
			ctx_error(ctx, vp, "%s: cgroup pattern %s", policy_entry_name(e), reason);
			ok = false;
		}
	} else {
		ok = false;
	}
	if (!check_keys(ctx, ep, obj, keys, ELEMENTSOF(keys), policy_entry_name(e),
			"cgroup, scheduler, tunables, comment"))
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
	if (ctx->catalog->lookup(ctx->catalog, sched, &s, &reason) < 0) {
		char vp[80];

		snprintf(vp, sizeof(vp), "%s/scheduler", ep);
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

__attribute__((format(printf, 3, 4)))
static void report_at_cgroup(struct parse_ctx *ctx, const struct policy_entry *e,
			     const char *fmt, ...)
{
	char vp[80];
	va_list ap;

	snprintf(vp, sizeof(vp), "/entries/%zu/cgroup", e->index);
	va_start(ap, fmt);
	ctx_errorv(ctx, vp, fmt, ap);
	va_end(ap);
}

/* Duplicates and ties between equally specific, overlapping patterns. */
static void check_ties(struct parse_ctx *ctx, struct policy_entry **v, size_t n)
{
	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < j; i++) {
			const struct policy_entry *a = v[i], *b = v[j];

			if (a->components != b->components)
				continue;
			if (streq(a->pattern, b->pattern)) {
				report_at_cgroup(ctx, b, "%s: same cgroup pattern as %s",
						 policy_entry_name(b), policy_entry_name(a));
				break;
			}
			if (pattern_specificity_cmp(a->pattern, b->pattern) == 0 &&
			    pattern_overlap(a->pattern, b->pattern)) {
				report_at_cgroup(ctx, b,
						 "%s: ties with %s: equally specific and both can match the same cgroup",
						 policy_entry_name(b), policy_entry_name(a));
				break;
			}
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

/*
 * Nesting: an entry A with fewer components whose pattern can match an
 * ancestor of B's cgroups may end up as B's parent, so it must host
 * children; the longest such chain must not exceed SCX_SUB_MAX_DEPTH.
 */
static void check_nesting(struct parse_ctx *ctx, struct policy_entry **v, size_t n)
{
	_cleanup_free_ size_t *depth = calloc(n ?: 1, sizeof(size_t));
	bool have_root = false, root_reported = false;

	if (!depth) {
		ctx->error = -ENOMEM;
		return;
	}
	qsort(v, n, sizeof(*v), entry_components_cmp);
	for (size_t j = 0; j < n; j++) {
		struct policy_entry *b = v[j];
		const struct policy_entry *via = NULL;
		bool reported = false;

		depth[j] = 1;
		if (b->components == 0) {
			have_root = true;
			continue;
		}
		if (!have_root && !root_reported) {
			report_at_cgroup(ctx, b, "%s: child entries need a root entry \"%s\"",
					 policy_entry_name(b), "/");
			root_reported = true;
		}
		for (size_t i = 0; i < j; i++) {
			const struct policy_entry *a = v[i];

			if (a->components >= b->components ||
			    !pattern_prefix_overlap(a->pattern, b->pattern))
				continue;
			if (!a->can_host_children && !reported) {
				char vp[80];

				snprintf(vp, sizeof(vp), "/entries/%zu/cgroup", b->index);
				ctx_error(ctx, vp,
					  "%s: would be nested under %s whose scheduler \"%s\" cannot host children",
					  policy_entry_name(b), policy_entry_name(a), a->scheduler);
				reported = true;
			}
			if (depth[i] + 1 > depth[j]) {
				depth[j] = depth[i] + 1;
				via = a;
			}
		}
		if (depth[j] > SCX_SUB_MAX_DEPTH) {
			char vp[80];

			snprintf(vp, sizeof(vp), "/entries/%zu/cgroup", b->index);
			ctx_error(ctx, vp,
				  "%s: would nest %zu schedulers deep (root included, parent %s); the kernel allows %d",
				  policy_entry_name(b), depth[j], policy_entry_name(via),
				  SCX_SUB_MAX_DEPTH);
		}
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

int policy_parse(const char *file, const char *text, size_t len,
		 struct sched_catalog *catalog, struct diag_list *diags,
		 struct policy **ret)
{
	_cleanup_(policy_freep) struct policy *p = NULL;
	_cleanup_(json_decrefp) json_t *root = NULL;
	_cleanup_(parse_ctx_done) struct parse_ctx ctx = {
		.file = file, .diags = diags, .catalog = catalog,
	};
	_cleanup_free_ struct policy_entry **valid = NULL;
	size_t before = diags->n, n_valid = 0;
	json_error_t jerr;
	json_t *entries;
	int r;

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		r = diag_add(diags, file, jerr.line > 0 ? jerr.line : 1,
			     jerr.column > 0 ? jerr.column : 1, "%s", jerr.text);
		return r < 0 ? r : -EINVAL;
	}
	r = jpos_index_build(&ctx.idx, text, len);
	if (r < 0)
		return r;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->file = strdup(file);
	if (!p->file)
		return -ENOMEM;

	check_top(&ctx, root, &entries);
	if (entries) {
		size_t n = json_array_size(entries);

		p->entries = calloc(n ?: 1, sizeof(*p->entries));
		valid = calloc(n ?: 1, sizeof(*valid));
		if (!p->entries || !valid)
			return -ENOMEM;
		p->n_entries = n;
		for (size_t i = 0; i < n; i++)
			if (parse_entry(&ctx, i, json_array_get(entries, i), &p->entries[i]))
				valid[n_valid++] = &p->entries[i];
		check_ties(&ctx, valid, n_valid);
		check_nesting(&ctx, valid, n_valid);
	}
	if (ctx.error < 0)
		return ctx.error;
	if (diags->n > before)
		return -EINVAL;

	for (size_t i = 0; i < p->n_entries; i++)
		if (p->entries[i].components == 0)
			p->root = &p->entries[i];
	*ret = TAKE_PTR(p);
	return 0;
}

int policy_load(const char *file, struct sched_catalog *catalog,
		struct diag_list *diags, struct policy **ret)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *text = NULL;
	struct stat st;
	size_t n;
	int r;

	f = fopen(file, "re");
	if (!f) {
		r = -errno;
		diag_add(diags, file, 1, 1, "cannot open: %s", strerror(-r));
		return r;
	}
	if (fstat(fileno(f), &st) < 0)
		return -errno;
	if (st.st_size > 16 << 20) {
		diag_add(diags, file, 1, 1, "larger than 16 MiB, not a policy");
		return -EFBIG;
	}
	text = malloc(st.st_size + 1);
	if (!text)
		return -ENOMEM;
	n = fread(text, 1, st.st_size, f);
	if (ferror(f)) {
		diag_add(diags, file, 1, 1, "read error");
		return -EIO;
	}
	text[n] = '\0';
	return policy_parse(file, text, n, catalog, diags, ret);
}

const struct policy_entry *policy_match(const struct policy *p, const char *cgroup)
{
	const struct policy_entry *best = NULL;
	size_t depth = path_depth(cgroup);

	for (size_t i = 0; i < p->n_entries; i++) {
		const struct policy_entry *e = &p->entries[i];

		if (e->components != depth || !pattern_match(e->pattern, cgroup))
			continue;
		if (!best || pattern_specificity_cmp(e->pattern, best->pattern) > 0)
			best = e;
	}
	return best;
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_entries; i++) {
		struct policy_entry *e = &p->entries[i];

		for (size_t t = 0; t < e->n_tunables; t++)
			free(e->tunables[t].name);
		free(e->tunables);
		free(e->pattern);
		free(e->scheduler);
	}
	free(p->entries);
	free(p->file);
	free(p);
}
