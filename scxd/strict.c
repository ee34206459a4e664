// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "strict.h"
#include "util.h"

bool strict_modes = true;

static int check_one(const char *path, const struct stat *st, char **reason)
{
	const char *what = S_ISDIR(st->st_mode) ? "directory" : "file";

	if (st->st_uid != 0)
		return asprintf(reason, "%s %s is owned by uid %u, not root; refusing it",
				what, path, (unsigned)st->st_uid) < 0 ? -ENOMEM : -EPERM;
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return asprintf(reason, "%s %s is writable by %s (mode %04o); refusing it",
				what, path, st->st_mode & S_IWOTH ? "others" : "its group",
				(unsigned)(st->st_mode & 07777)) < 0 ? -ENOMEM : -EPERM;
	return 0;
}

int strict_check_path(const char *path, char **reason)
{
	_cleanup_free_ char *real = NULL;
	struct stat st;
	int r;

	*reason = NULL;
	if (!strict_modes)
		return 0;
	real = realpath(path, NULL);
	if (!real) {
		r = -errno;
		return asprintf(reason, "%s: %s", path, strerror(-r)) < 0 ? -ENOMEM : r;
	}
	/* Walk from the file up to "/", checking each. */
	for (;;) {
		char *slash;

		if (stat(real, &st) < 0) {
			r = -errno;
			return asprintf(reason, "%s: %s", real, strerror(-r)) < 0 ? -ENOMEM : r;
		}
		r = check_one(real, &st, reason);
		if (r < 0)
			return r;
		if (streq(real, "/"))
			return 0;
		slash = strrchr(real, '/');
		if (slash == real)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}
