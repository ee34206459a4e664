/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * A list of validation errors, each already formatted as
 * "file:line:column: message".
 */

#include <stddef.h>

struct diag_list {
	char **lines;
	size_t n;
};

__attribute__((format(printf, 5, 6)))
int diag_add(struct diag_list *d, const char *file, unsigned line, unsigned column,
	     const char *fmt, ...);

/* A line that is about a whole file: the message names it itself. */
__attribute__((format(printf, 2, 3)))
int diag_add_line(struct diag_list *d, const char *fmt, ...);

void diag_list_done(struct diag_list *d);

/* For _cleanup_() */
static inline void diag_list_donep(struct diag_list *d)
{
	diag_list_done(d);
}
