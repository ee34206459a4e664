// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>

#include "strict.h"

bool strict_modes = true;

int strict_check_stat(const char *path, const struct stat *st, char **reason)
{
	const char *what = S_ISDIR(st->st_mode) ? "directory" : "file";

	*reason = NULL;
	if (!strict_modes)
		return 0;
	if (st->st_uid != 0)
		return asprintf(reason, "%s %s is owned by uid %u, not root; refusing it",
				what, path, (unsigned)st->st_uid) < 0 ? -ENOMEM : -EPERM;
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return asprintf(reason, "%s %s is writable by %s (mode %04o); refusing it",
				what, path, st->st_mode & S_IWOTH ? "others" : "its group",
				(unsigned)(st->st_mode & 07777)) < 0 ? -ENOMEM : -EPERM;
	return 0;
}
