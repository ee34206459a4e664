/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * Reading the files scxd trusts (the policy, its drop-ins, scheduler
 * objects): each is opened once and what was checked is what is read.
 *
 * - The directories are walked from "/" one openat() at a time, each
 *   checked with fstat() on the descriptor that opens the next; the file is
 *   opened relative to its directory's descriptor with O_NOFOLLOW and
 *   O_NONBLOCK, so a symbolic link is refused and a FIFO cannot block.
 *   Symbolic links in the directory part are resolved first (realpath);
 *   the directories actually walked are the ones checked.
 * - Only regular files are read, to EOF whatever st_size says, up to a
 *   size cap; the caller parses or loads those bytes and nothing else.
 * - With FILE_TRUSTED (and strict_modes on, see strict.h) the file and
 *   every directory above it must be owned by root and not writable by
 *   group or others.
 */

#include <stdbool.h>
#include <stddef.h>

#define FILE_POLICY_MAX (16u << 20)	/* a policy or drop-in file: room for 100 000 entries */
#define FILE_OBJECT_MAX (64u << 20)	/* a scheduler object */

enum {
	FILE_TRUSTED = 1 << 0,	/* owner and mode checks (StrictModes) */
};

/*
 * Read path into *ret (NUL-terminated, *ret_size bytes without the NUL).
 * On failure returns -errno and *reason (allocated, may be NULL on
 * -ENOMEM) names the file and says why: -ELOOP a symbolic link, -EINVAL
 * not a regular file, -EFBIG over max_size, -EPERM refused by the owner
 * and mode checks, else the error of open() or read().
 */
int file_read(const char *path, size_t max_size, unsigned flags, char **ret,
	      size_t *ret_size, char **reason);

/*
 * Read fd to EOF into a NUL-terminated buffer, starting at hint bytes and
 * growing; -EFBIG beyond max_size bytes. No checks on what fd is: for
 * callers that opened and judged it themselves.
 */
int file_read_fd(int fd, size_t hint, size_t max_size, char **ret, size_t *ret_size);

/* Write all n bytes of s to fd (EINTR and short writes retried); 0 or -errno. */
int file_write_all(int fd, const char *s, size_t n);

/*
 * Replace dir/name with text, atomically: written to a hidden temporary
 * file in dir (".name.XXXXXX", which readers that want "*.name" skip),
 * given mode, then renamed over name. 0 or -errno; nothing is left
 * behind on failure.
 */
int file_replace(const char *dir, const char *name, const char *text, unsigned mode);
