// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "diag.h"
#include "util.h"

int diag_add(struct diag_list *d, const char *file, unsigned line, unsigned column,
	     const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	char *full, **lines;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	if (asprintf(&full, "%s:%u:%u: %s", file, line, column, msg) < 0)
		return -ENOMEM;
	lines = realloc(d->lines, (d->n + 1) * sizeof(*lines));
	if (!lines) {
		free(full);
		return -ENOMEM;
	}
	d->lines = lines;
	d->lines[d->n++] = full;
	return 0;
}

void diag_list_done(struct diag_list *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->lines[i]);
	free(d->lines);
	*d = (struct diag_list){};
}
