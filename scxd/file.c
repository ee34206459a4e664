// SPDX-License-Identifier: GPL-2.0
/*
 * Open once, check the descriptor, read it to EOF: see file.h.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"
#include "strict.h"
#include "util.h"

static const char *file_type_name(mode_t mode)
{
	if (S_ISLNK(mode))
		return "a symbolic link";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

static int check_fd(int fd, const char *path, bool trusted, struct stat *st, char **reason)
{
	if (fstat(fd, st) < 0)
		return refuse(-errno, reason, "%s: %s", path, strerror(errno));
	return trusted ? strict_check_stat(path, st, reason) : 0;
}

/*
 * Open the directory dir (absolute, no symbolic links: realpath's output)
 * from "/" down, one component at a time, checking each descriptor before
 * opening the next through it.
 */
static int open_dir_checked(const char *dir, bool trusted, char **reason)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *walked = malloc(strlen(dir) + 2);
	const char *p = dir;
	struct stat st;
	int r;

	if (!walked)
		return -ENOMEM;
	strcpy(walked, "/");
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return refuse(-errno, reason, "/: %s", strerror(errno));
	r = check_fd(fd, "/", trusted, &st, reason);
	if (r < 0)
		return r;
	for (;;) {
		size_t len;
		int next;

		p += strspn(p, "/");
		if (!*p)
			return TAKE_FD(fd);
		len = strcspn(p, "/");
		if (!streq(walked, "/"))
			strcat(walked, "/");
		strncat(walked, p, len);
		p += len;
		next = openat(fd, walked + strlen(walked) - len,
			      O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			return refuse(-errno, reason, "directory %s: %s%s", walked, strerror(errno),
				      errno == ENOTDIR || errno == ELOOP ?
				      " (it changed while scxd opened it)" : "");
		close(fd);
		fd = next;
		r = check_fd(fd, walked, trusted, &st, reason);
		if (r < 0)
			return r;
	}
}

int file_read_fd(int fd, size_t hint, size_t max_size, char **ret, size_t *ret_size)
{
	_cleanup_free_ char *buf = NULL;
	size_t have = 0, cap = hint < 4096 ? 4096 : hint + 1;

	if (cap > max_size + 1)
		cap = max_size + 1;
	buf = malloc(cap + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (have == cap) {
			char *bigger;

			if (cap > max_size)
				return -EFBIG;
			cap = cap > max_size / 2 ? max_size + 1 : 2 * cap;
			bigger = realloc(buf, cap + 1);
			if (!bigger)
				return -ENOMEM;
			buf = bigger;
		}
		n = read(fd, buf + have, cap - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		have += n;
	}
	if (have > max_size)
		return -EFBIG;
	buf[have] = '\0';
	*ret = TAKE_PTR(buf);
	*ret_size = have;
	return 0;
}

int file_read(const char *path, size_t max_size, unsigned flags, char **ret,
	      size_t *ret_size, char **reason)
{
	bool trusted = flags & FILE_TRUSTED;
	_cleanup_free_ char *copy = strdup(path), *dir = NULL;
	_cleanup_close_ int dfd = -1, fd = -1;
	const char *base;
	struct stat st;
	char *slash;
	int r;

	*reason = NULL;
	*ret = NULL;
	*ret_size = 0;
	if (!copy)
		return -ENOMEM;
	slash = strrchr(copy, '/');
	if (slash) {
		*slash = '\0';
		base = slash + 1;
		dir = realpath(slash == copy ? "/" : copy, NULL);
	} else {
		base = copy;
		dir = realpath(".", NULL);
	}
	if (!dir)
		return refuse(-errno, reason, "%s: %s", path, strerror(errno));
	if (!*base)
		return refuse(-EISDIR, reason, "%s: names a directory, not a file", path);

	dfd = open_dir_checked(dir, trusted, reason);
	if (dfd < 0)
		return dfd;

	/* Look before opening: opening a device or FIFO can have effects. */
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return refuse(-errno, reason, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return refuse(S_ISLNK(st.st_mode) ? -ELOOP : -EINVAL, reason,
			      "%s is %s, not a regular file; refusing it", path,
			      file_type_name(st.st_mode));
	fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return refuse(-errno, reason, "%s: %s%s", path, strerror(errno),
			      errno == ELOOP ? " (a symbolic link); refusing it" : "");
	r = check_fd(fd, path, trusted, &st, reason);
	if (r < 0)
		return r;
	if (!S_ISREG(st.st_mode))
		return refuse(-EINVAL, reason, "%s is %s, not a regular file; refusing it", path,
			      file_type_name(st.st_mode));
	if ((size_t)st.st_size > max_size)
		return refuse(-EFBIG, reason, "%s is %jd bytes, more than the %zu allowed; refusing it",
			      path, (intmax_t)st.st_size, max_size);
	r = file_read_fd(fd, st.st_size, max_size, ret, ret_size);
	if (r == -EFBIG)
		return refuse(r, reason, "%s grew past the %zu bytes allowed while being read; refusing it",
			      path, max_size);
	if (r < 0)
		return refuse(r, reason, "%s: read error: %s", path, strerror(-r));
	return 0;
}

int file_write_all(int fd, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

int file_replace(const char *dir, const char *name, const char *text, unsigned mode)
{
	_cleanup_free_ char *tmp = NULL, *path = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	if (asprintf(&path, "%s/%s", dir, name) < 0 || asprintf(&tmp, "%s/.%s.XXXXXX", dir, name) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = file_write_all(fd, text, strlen(text));
	if (r == 0 && fchmod(fd, mode) < 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}
