// SPDX-License-Identifier: GPL-2.0
/*
 * Value positions for a JSON text, see jpos.h. The walker trusts nothing:
 * every read is bounds-checked and it stops quietly at anything unexpected.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jpos.h"
#include "util.h"

#define JPOS_MAX_DEPTH 256

struct walker {
	const char *s;
	size_t len, i;
	unsigned line, column;
	char *ptr;		/* current JSON pointer */
	size_t ptr_len, ptr_cap;
	struct jpos_index *idx;
	int error;
};

static bool at_end(const struct walker *w)
{
	return w->i >= w->len;
}

/* Advance one byte, counting lines and characters (UTF-8 lead bytes). */
static void advance(struct walker *w)
{
	unsigned char c = (unsigned char)w->s[w->i++];

	if (c == '\n') {
		w->line++;
		w->column = 0;
	} else if ((c & 0xc0) != 0x80) {
		w->column++;
	}
}

static void skip_ws(struct walker *w)
{
	while (!at_end(w) && strchr(" \t\r\n", w->s[w->i]) && w->s[w->i])
		advance(w);
}

static int ptr_append(struct walker *w, const char *s, size_t n)
{
	if (w->ptr_len + n + 1 > w->ptr_cap) {
		size_t cap = (w->ptr_len + n + 1) * 2;
		char *p = realloc(w->ptr, cap);

		if (!p)
			return -ENOMEM;
		w->ptr = p;
		w->ptr_cap = cap;
	}
	memcpy(w->ptr + w->ptr_len, s, n);
	w->ptr_len += n;
	w->ptr[w->ptr_len] = '\0';
	return 0;
}

static int record(struct walker *w, const char *suffix, unsigned line, unsigned column)
{
	struct jpos_index *idx = w->idx;
	char *p;

	if (idx->n == idx->cap) {
		size_t cap = idx->cap ? idx->cap * 2 : 32;
		struct jpos_entry *e = realloc(idx->entries, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		idx->entries = e;
		idx->cap = cap;
	}
	if (asprintf(&p, "%s%s", w->ptr ? w->ptr : "", suffix) < 0)
		return -ENOMEM;
	idx->entries[idx->n++] = (struct jpos_entry){ p, line, column + 1 };
	return 0;
}

/* Decode the four hex digits after "\u" (cursor on the 'u') into UTF-8. */
static size_t decode_u_escape(struct walker *w, char out[4])
{
	unsigned cp = 0;

	for (int k = 0; k < 4; k++) {
		int h;

		advance(w);
		h = at_end(w) ? -1 : unhexchar(w->s[w->i]);
		if (h < 0)
			return 0;
		cp = cp << 4 | h;
	}
	if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff)) {
		out[0] = '?';	/* NUL or half a surrogate pair: no key of scxd's */
		return 1;
	}
	if (cp < 0x80) {
		out[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = 0xc0 | cp >> 6;
		out[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	out[0] = 0xe0 | cp >> 12;
	out[1] = 0x80 | ((cp >> 6) & 0x3f);
	out[2] = 0x80 | (cp & 0x3f);
	return 3;
}

/*
 * Read a string starting at the opening quote. With as_key, append the
 * decoded bytes, escaped for a JSON pointer (jpos_escape()), to the pointer.
 */
static bool walk_string(struct walker *w, bool as_key)
{
	advance(w); /* opening quote */
	while (!at_end(w)) {
		char c = w->s[w->i];
		char buf[4] = { c };
		size_t n = 1;

		if (c == '"') {
			advance(w);
			return true;
		}
		if (c == '\\') {
			advance(w);
			if (at_end(w))
				return false;
			c = w->s[w->i];
			buf[0] = c == 'n' ? '\n' : c == 't' ? '\t' :
				 c == 'r' ? '\r' : c == 'b' ? '\b' :
				 c == 'f' ? '\f' : c;
			if (c == 'u')
				n = decode_u_escape(w, buf);
			if (n == 0)
				return false;
		}
		for (size_t k = 0; as_key && k < n; k++) {
			const char *piece = buf[k] == '~' ? "~0" : buf[k] == '/' ? "~1" : NULL;

			if (ptr_append(w, piece ?: &buf[k], piece ? 2 : 1) < 0) {
				w->error = -ENOMEM;
				return false;
			}
		}
		advance(w);
	}
	return false;
}

char *jpos_escape(const char *key)
{
	char *out = malloc(strlen(key) * 2 + 1), *o = out;

	if (!out)
		return NULL;
	for (const char *p = key; *p; p++) {
		if (*p == '~' || *p == '/') {
			*o++ = '~';
			*o++ = *p == '~' ? '0' : '1';
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	return out;
}

static bool walk_value(struct walker *w, unsigned depth);

static bool walk_container(struct walker *w, unsigned depth, bool object)
{
	size_t base = w->ptr_len;
	char close = object ? '}' : ']';

	advance(w);
	skip_ws(w);
	if (!at_end(w) && w->s[w->i] == close) {
		advance(w);
		return true;
	}
	for (size_t n = 0;; n++) {
		char num[32];

		w->ptr_len = base;
		if (w->ptr)
			w->ptr[base] = '\0';
		if (ptr_append(w, "/", 1) < 0)
			return (w->error = -ENOMEM), false;
		skip_ws(w);
		if (object) {
			unsigned line = w->line, column = w->column;

			if (at_end(w) || w->s[w->i] != '"' || !walk_string(w, true))
				return false;
			if (record(w, "#key", line, column) < 0)
				return (w->error = -ENOMEM), false;
			skip_ws(w);
			if (at_end(w) || w->s[w->i] != ':')
				return false;
			advance(w);
		} else {
			snprintf(num, sizeof(num), "%zu", n);
			if (ptr_append(w, num, strlen(num)) < 0)
				return (w->error = -ENOMEM), false;
		}
		if (!walk_value(w, depth + 1))
			return false;
		skip_ws(w);
		if (at_end(w))
			return false;
		if (w->s[w->i] == ',') {
			advance(w);
			continue;
		}
		if (w->s[w->i] != close)
			return false;
		advance(w);
		w->ptr_len = base;
		w->ptr[base] = '\0';
		return true;
	}
}

static bool walk_value(struct walker *w, unsigned depth)
{
	skip_ws(w);
	if (at_end(w) || depth > JPOS_MAX_DEPTH)
		return false;
	if (record(w, "", w->line, w->column) < 0)
		return (w->error = -ENOMEM), false;

	switch (w->s[w->i]) {
	case '{':
		return walk_container(w, depth, true);
	case '[':
		return walk_container(w, depth, false);
	case '"':
		return walk_string(w, false);
	default:
		/* number, true, false, null */
		while (!at_end(w) && !strchr(",]} \t\r\n", w->s[w->i]) && w->s[w->i])
			advance(w);
		return true;
	}
}

/*
 * By pointer; a pointer recorded twice (duplicate keys in text jansson
 * rejected anyway) keeps its first place first.
 */
static int jpos_entry_cmp(const void *x, const void *y)
{
	const struct jpos_entry *a = x, *b = y;
	int r = strcmp(a->pointer, b->pointer);

	if (r)
		return r;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return a->column < b->column ? -1 : a->column > b->column;
}

/* The first entry for pointer, NULL if none. */
static const struct jpos_entry *jpos_find(const struct jpos_index *idx, const char *pointer)
{
	size_t lo = 0, hi = idx->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(idx->entries[mid].pointer, pointer) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < idx->n && streq(idx->entries[lo].pointer, pointer) ? &idx->entries[lo] : NULL;
}

int jpos_index_build(struct jpos_index *idx, const char *text, size_t len)
{
	struct walker w = { .s = text, .len = len, .line = 1, .idx = idx };

	*idx = (struct jpos_index){};
	walk_value(&w, 0);
	free(w.ptr);
	/* by pointer for jpos_lookup()'s binary search */
	if (idx->n)
		qsort(idx->entries, idx->n, sizeof(*idx->entries), jpos_entry_cmp);
	return w.error;
}

void jpos_lookup(const struct jpos_index *idx, const char *pointer,
		 unsigned *line, unsigned *column)
{
	_cleanup_free_ char *p = strdup(pointer);

	*line = 1;
	*column = 1;
	while (p) {
		const struct jpos_entry *e = jpos_find(idx, p);

		if (e) {
			*line = e->line;
			*column = e->column;
			return;
		}
		char *slash = strrchr(p, '/');
		char *hash = strrchr(p, '#');

		if (hash && (!slash || hash > slash))
			*hash = '\0';
		else if (slash && *p)
			*slash = '\0';
		else
			return;
	}
}

void jpos_index_done(struct jpos_index *idx)
{
	for (size_t i = 0; i < idx->n; i++)
		free(idx->entries[i].pointer);
	free(idx->entries);
	*idx = (struct jpos_index){};
}
