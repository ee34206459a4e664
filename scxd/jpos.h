/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * jansson reports positions only for syntax errors. To point validation
 * errors at the offending value, jpos walks the same (already well-formed)
 * text once and records where each value starts, keyed by its JSON pointer
 * ("/entries/1/tunables/slice_us"). Keys are recorded too, as pointer + "#key".
 */

#include <stddef.h>

struct jpos_entry {
	char *pointer;
	unsigned line, column;	/* 1-based, columns in characters as jansson counts */
};

struct jpos_index {
	struct jpos_entry *entries;
	size_t n, cap;
};

/* Index text of length len. Malformed input yields a partial index, never a crash. */
int jpos_index_build(struct jpos_index *idx, const char *text, size_t len);

/* Position of the value at pointer, else of its nearest recorded ancestor. */
void jpos_lookup(const struct jpos_index *idx, const char *pointer,
		 unsigned *line, unsigned *column);

void jpos_index_done(struct jpos_index *idx);

/* An object key as a JSON pointer token: '~' → "~0", '/' → "~1". */
char *jpos_escape(const char *key);
