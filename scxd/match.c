// SPDX-License-Identifier: GPL-2.0
/*
 * Glob patterns over cgroup path components. Pure string functions: no
 * allocation except the scratch table of pattern_overlap().
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "match.h"
#include "util.h"

#define COMPONENT_MAX 255

/* A view of one path component: [s, s + len). */
struct component {
	const char *s;
	size_t len;
};

/* Step to the next component of a path; returns false at the end. */
static bool next_component(const char **cursor, struct component *c)
{
	const char *p = *cursor;

	while (*p == '/')
		p++;
	if (!*p)
		return false;
	c->s = p;
	c->len = strcspn(p, "/");
	*cursor = p + c->len;
	return true;
}

size_t path_depth(const char *path)
{
	struct component c;
	size_t n = 0;

	while (next_component(&path, &c))
		n++;
	return n;
}

int pattern_validate(const char *pattern, const char **reason)
{
	const char *p = pattern;
	struct component c;
	size_t n = 0;

	if (pattern[0] != '/') {
		*reason = "must be an absolute path starting with '/'";
		return -EINVAL;
	}
	if (streq(pattern, "/"))
		return 0;
	if (strlen(pattern) > PATTERN_MAX_LENGTH) {
		*reason = "is longer than 4095 bytes";
		return -EINVAL;
	}
	if (strstr(pattern, "//")) {
		*reason = "has an empty component ('//')";
		return -EINVAL;
	}
	if (pattern[strlen(pattern) - 1] == '/') {
		*reason = "must not end with '/'";
		return -EINVAL;
	}
	while (next_component(&p, &c)) {
		if ((c.len == 1 && c.s[0] == '.') ||
		    (c.len == 2 && c.s[0] == '.' && c.s[1] == '.')) {
			*reason = "must not contain '.' or '..' components";
			return -EINVAL;
		}
		if (c.len > COMPONENT_MAX) {
			*reason = "has a component longer than 255 characters";
			return -EINVAL;
		}
		if (memchr(c.s, '[', c.len) || memchr(c.s, ']', c.len) ||
		    memchr(c.s, '\\', c.len)) {
			*reason = "uses '[', ']' or '\\'; only '*' and '?' are supported";
			return -EINVAL;
		}
		if (++n > PATTERN_MAX_COMPONENTS) {
			*reason = "has more than 64 components";
			return -EINVAL;
		}
	}
	return 0;
}

/* Match one component against one glob component ('*' and '?'). */
static bool component_match(struct component pat, struct component name)
{
	size_t p = 0, n = 0, star_p = SIZE_MAX, star_n = 0;

	while (n < name.len) {
		if (p < pat.len && (pat.s[p] == '?' || pat.s[p] == name.s[n])) {
			p++;
			n++;
		} else if (p < pat.len && pat.s[p] == '*') {
			star_p = p++;
			star_n = n;
		} else if (star_p != SIZE_MAX) {
			/* Let the last '*' swallow one more character. */
			p = star_p + 1;
			n = ++star_n;
		} else {
			return false;
		}
	}
	while (p < pat.len && pat.s[p] == '*')
		p++;
	return p == pat.len;
}

bool pattern_match(const char *pattern, const char *path)
{
	struct component pc, nc;

	for (;;) {
		bool have_p = next_component(&pattern, &pc);
		bool have_n = next_component(&path, &nc);

		if (!have_p || !have_n)
			return have_p == have_n;
		if (!component_match(pc, nc))
			return false;
	}
}

struct component_rank {
	bool literal;
	size_t stars;
	size_t literal_chars;
};

static struct component_rank component_rank(struct component c)
{
	struct component_rank r = { .literal = true };

	for (size_t i = 0; i < c.len; i++) {
		if (c.s[i] == '*') {
			r.stars++;
			r.literal = false;
		} else if (c.s[i] == '?') {
			r.literal = false;
		} else {
			r.literal_chars++;
		}
	}
	return r;
}

static int component_rank_cmp(struct component_rank a, struct component_rank b)
{
	if (a.literal != b.literal)
		return a.literal ? 1 : -1;
	if (a.literal)
		return 0;
	if (a.stars != b.stars)
		return a.stars < b.stars ? 1 : -1;
	if (a.literal_chars != b.literal_chars)
		return a.literal_chars > b.literal_chars ? 1 : -1;
	return 0;
}

int pattern_specificity_cmp(const char *a, const char *b)
{
	struct component ca, cb;

	while (next_component(&a, &ca) && next_component(&b, &cb)) {
		int r = component_rank_cmp(component_rank(ca), component_rank(cb));

		if (r)
			return r;
	}
	return 0;
}

/*
 * Whether two glob components can match a common string. ov[i][j] says
 * whether a's suffix from i and b's suffix from j overlap; the table is
 * filled from the ends backwards.
 */
/*
 * Whether the fixed ends of two glob components (what comes before the
 * first '*' and after the last one) clash: a character that differs where
 * neither has '?'. Any common match would have to start and end with
 * both, so a clash rules an overlap out without the table below.
 */
static bool ends_clash(struct component a, struct component b)
{
	size_t pa = strcspn(a.s, "*"), pb = strcspn(b.s, "*");
	size_t sa = 0, sb = 0;

	pa = pa < a.len ? pa : a.len;
	pb = pb < b.len ? pb : b.len;
	for (size_t i = 0; i < pa && i < pb; i++)
		if (a.s[i] != b.s[i] && a.s[i] != '?' && b.s[i] != '?')
			return true;
	while (sa < a.len && a.s[a.len - 1 - sa] != '*')
		sa++;
	while (sb < b.len && b.s[b.len - 1 - sb] != '*')
		sb++;
	for (size_t i = 0; i < sa && i < sb; i++) {
		char x = a.s[a.len - 1 - i], y = b.s[b.len - 1 - i];

		if (x != y && x != '?' && y != '?')
			return true;
	}
	/* without a '*' a component matches names of its own length only */
	if ((pa == a.len && pb == b.len && a.len != b.len) ||
	    (pa == a.len && pb < b.len && a.len < pb + sb) ||
	    (pb == b.len && pa < a.len && b.len < pa + sa))
		return true;
	return false;
}

static bool component_overlap(struct component a, struct component b)
{
	size_t w = b.len + 1;
	_cleanup_free_ bool *ov = NULL;

	if (ends_clash(a, b))
		return false;
	ov = calloc((a.len + 1) * w, sizeof(bool));
	if (!ov)
		return true; /* Out of memory: claim overlap, the safe answer. */

	for (size_t i = a.len + 1; i-- > 0;) {
		for (size_t j = b.len + 1; j-- > 0;) {
			bool v;

			if (i == a.len && j == b.len)
				v = true;
			else if (i < a.len && a.s[i] == '*')
				v = ov[(i + 1) * w + j] ||
				    (j < b.len && ov[i * w + j + 1]);
			else if (j < b.len && b.s[j] == '*')
				v = ov[i * w + j + 1] ||
				    (i < a.len && ov[(i + 1) * w + j]);
			else if (i < a.len && j < b.len)
				v = (a.s[i] == '?' || b.s[j] == '?' ||
				     a.s[i] == b.s[j]) &&
				    ov[(i + 1) * w + j + 1];
			else
				v = false;
			ov[i * w + j] = v;
		}
	}
	return ov[0];
}

bool pattern_component_match(const char *pat, size_t pat_len, const char *name, size_t name_len)
{
	return component_match((struct component){ pat, pat_len }, (struct component){ name, name_len });
}

bool pattern_component_overlap(const char *a, size_t a_len, const char *b, size_t b_len)
{
	return component_overlap((struct component){ a, a_len }, (struct component){ b, b_len });
}

bool pattern_component_is_literal(const char *c, size_t len)
{
	return !memchr(c, '*', len) && !memchr(c, '?', len);
}

bool pattern_prefix_overlap(const char *ancestor, const char *descendant)
{
	struct component ca, cd;

	while (next_component(&ancestor, &ca)) {
		if (!next_component(&descendant, &cd))
			return false;
		if (!component_overlap(ca, cd))
			return false;
	}
	return true;
}

bool pattern_overlap(const char *a, const char *b)
{
	return path_depth(a) == path_depth(b) && pattern_prefix_overlap(a, b);
}

/* ---- systemd unit names ---- */

static const char *unit_suffix(const char *unit)
{
	static const char *const suffixes[] = { ".slice", ".scope", ".service" };
	size_t n = strlen(unit);

	for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
		size_t s = strlen(suffixes[i]);

		if (n > s && streq(unit + n - s, suffixes[i]))
			return suffixes[i];
	}
	return NULL;
}

static int unit_name_validate(const char *unit, const char **reason)
{
	if (strlen(unit) > UNIT_NAME_MAX) {
		*reason = "is longer than 255 characters";
		return -EINVAL;
	}
	if (strchr(unit, '\\')) {
		*reason = "is escaped ('\\', as in \\x2d); write the entry's \"cgroup\" path instead";
		return -EINVAL;
	}
	for (const char *p = unit; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:-_.@*?", *p)) {
			*reason = "has a character systemd does not allow in unit names (allowed: letters, digits, ':', '-', '_', '.', '@', and the globs '*', '?')";
			return -EINVAL;
		}
	if (!unit_suffix(unit)) {
		*reason = "must end in .slice, .scope or .service";
		return -EINVAL;
	}
	return 0;
}

/* "a-b-c.slice" → "/a.slice/a-b.slice/a-b-c.slice"; "-.slice" → "/". */
static int slice_path(const char *slice, char **ret, const char **reason)
{
	size_t n = strlen(slice) - strlen(".slice");
	char *out, *o;

	if (streq(slice, "-.slice")) {
		*ret = strdup("/");
		return *ret ? 0 : -ENOMEM;
	}
	if (slice[0] == '-' || slice[n - 1] == '-' || strstr(slice, "--")) {
		*reason = "is not a valid slice name (no leading, trailing or double '-'; the root slice is \"-.slice\")";
		return -EINVAL;
	}
	/* each dash adds a component that repeats the prefix before it */
	out = o = malloc((n + 7) * (n + 1) + 1);
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && slice[i] != '-')
			continue;
		*o++ = '/';
		memcpy(o, slice, i);
		o += i;
		memcpy(o, ".slice", 6);
		o += 6;
	}
	*o = '\0';
	*ret = out;
	return 0;
}

int unit_pattern(const char *unit, const char *slice, char **ret, bool *any_depth,
		 const char **reason)
{
	_cleanup_free_ char *parent = NULL;
	bool is_slice;
	char *out;
	int r;

	*ret = NULL;
	*any_depth = false;
	r = unit_name_validate(unit, reason);
	if (r < 0)
		return r;
	is_slice = streq(unit_suffix(unit), ".slice");
	if (is_slice && slice) {
		*reason = "is a slice: its place follows from its name, \"slice\" goes only with scopes and services";
		return -EINVAL;
	}
	if (is_slice) {
		r = slice_path(unit, &out, reason);
		if (r < 0)
			return r;
	} else if (!slice) {
		*any_depth = true;
		if (asprintf(&out, "/%s", unit) < 0)
			return -ENOMEM;
	} else {
		if (unit_name_validate(slice, reason) == 0 && !streq(unit_suffix(slice), ".slice")) {
			*reason = "has a \"slice\" that is not a .slice unit";
			return -EINVAL;
		}
		r = unit_name_validate(slice, reason);
		if (r == 0)
			r = slice_path(slice, &parent, reason);
		if (r == -EINVAL)
			*reason = "has an invalid \"slice\" (a slice name such as \"batch.slice\")";
		if (r < 0)
			return r;
		if (asprintf(&out, "%s/%s", streq(parent, "/") ? "" : parent, unit) < 0)
			return -ENOMEM;
	}
	r = pattern_validate(out, reason);
	if (r < 0) {
		free(out);
		return r;
	}
	*ret = out;
	return 0;
}

const char *path_last_component(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}
