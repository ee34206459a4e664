// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include "control.h"
#include "util.h"

static int make_addr(const char *path, struct sockaddr_un *sa)
{
	*sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

int control_listen(const char *path)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *dir = strdup(path);
	struct sockaddr_un sa;
	mode_t old;
	int r;

	if (!dir)
		return -ENOMEM;
	r = make_addr(path, &sa);
	if (r < 0)
		return r;
	if (mkdir(dirname(dir), 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(path);
	old = umask(0177);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0)
		return -errno;
	if (listen(fd, 8) < 0)
		return -errno;
	return TAKE_FD(fd);
}

int control_read_request(int fd, char *cmd, unsigned len, unsigned *uid)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct timeval tv = { .tv_sec = 1 };
	ssize_t n;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0)
		return -errno;
	*uid = cred.uid;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(fd, cmd, len - 1, 0);
	if (n < 0)
		return -errno;
	cmd[n] = '\0';
	cmd[strcspn(cmd, "\r\n")] = '\0';
	return 0;
}

int control_write_all(int fd, const char *s)
{
	size_t left = strlen(s);

	while (left > 0) {
		ssize_t n = send(fd, s, left, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		s += n;
		left -= n;
	}
	return 0;
}

int control_request(const char *path, const char *cmd, char **reply, int *ok)
{
	_cleanup_close_ int fd = -1;
	struct sockaddr_un sa;
	char *buf = NULL, *nl;
	size_t len = 0, cap = 0;
	int r;

	r = make_addr(path, &sa);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	r = control_write_all(fd, cmd);
	if (r == 0)
		r = control_write_all(fd, "\n");
	if (r < 0)
		return r;
	shutdown(fd, SHUT_WR);
	for (;;) {
		ssize_t n;

		if (len + 4096 + 1 > cap) {
			char *b = realloc(buf, cap = len + 8192);

			if (!b) {
				free(buf);
				return -ENOMEM;
			}
			buf = b;
		}
		n = recv(fd, buf + len, cap - len - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return -errno;
		}
		if (n == 0)
			break;
		len += n;
	}
	if (!buf)
		return -EPROTO;
	buf[len] = '\0';
	*ok = startswith(buf, "ok\n") || streq(buf, "ok");
	nl = strchr(buf, '\n');
	memmove(buf, nl ? nl + 1 : buf + len, strlen(nl ? nl + 1 : buf + len) + 1);
	*reply = buf;
	return 0;
}
