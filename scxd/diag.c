// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "diag.h"
#include "util.h"

static int diag_push(struct diag_list *d, char *full)
{
	char **lines = realloc(d->lines, (d->n + 1) * sizeof(*lines));

	if (!lines) {
		free(full);
		return -ENOMEM;
	}
	d->lines = lines;
	d->lines[d->n++] = full;
	return 0;
}

int diag_add_line(struct diag_list *d, const char *fmt, ...)
{
	char *full;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&full, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	return diag_push(d, full);
}

int diag_add(struct diag_list *d, const char *file, unsigned line, unsigned column,
	     const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	char *full;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	if (asprintf(&full, "%s:%u:%u: %s", file, line, column, msg) < 0)
		return -ENOMEM;
	return diag_push(d, full);
}

void diag_list_done(struct diag_list *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->lines[i]);
	free(d->lines);
	*d = (struct diag_list){};
}
