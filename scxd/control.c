// SPDX-License-Identifier: GPL-2.0
/*
 * The control protocol (control.h), what both ends share: the commands
 * and who may send them, the socket address, and the framing: one
 * message a direction, ended by the end of the stream, read and written
 * without blocking through struct control_frame. control-server.c is
 * scxd's end, control-client.c scxdctl's.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "util.h"

static const struct {
	const char *name;
	bool read_only;
} commands[] = {
	{ "status", true },
	{ "describe", true },
	{ "diff", true },
	{ "reload", false },
};

bool control_command_known(const char *command)
{
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		if (streq(commands[i].name, command))
			return true;
	return false;
}

bool control_command_is_read_only(const char *command)
{
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		if (streq(commands[i].name, command))
			return commands[i].read_only;
	return false;
}

int control_addr(const char *path, struct sockaddr_un *sa)
{
	*sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

/* The descriptors a message came with: the first kept in *passed (if asked and free), others closed. */
static void take_fds(struct msghdr *msg, int *passed)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		int *fds = (int *)CMSG_DATA(cm);
		size_t k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			if (passed && *passed < 0)
				*passed = fds[i];
			else
				close(fds[i]);
		}
	}
}

int control_frame_recv(int fd, struct control_frame *f, size_t max, int *passed)
{
	for (;;) {
		char cbuf[CMSG_SPACE(4 * sizeof(int))] __attribute__((aligned(8)));
		struct iovec iov;
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
				      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		ssize_t n;

		if (f->len + 4096 + 1 > f->cap) {
			size_t cap = f->cap ? 2 * f->cap : 8192;
			char *p;

			if (cap > max + 4096 + 1)
				cap = max + 4096 + 1;
			p = realloc(f->buf, cap);
			if (!p)
				return -ENOMEM;
			f->buf = p;
			f->cap = cap;
		}
		iov = (struct iovec){ f->buf + f->len, f->cap - f->len - 1 };
		n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		take_fds(&msg, passed);
		if (n == 0) {
			f->buf[f->len] = '\0';
			return 1;
		}
		f->len += n;
		if (f->len > max)
			return -EMSGSIZE;
	}
}

int control_frame_send(int fd, struct control_frame *f)
{
	while (f->done < f->len) {
		ssize_t n = send(fd, f->buf + f->done, f->len - f->done, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		f->done += n;
	}
	shutdown(fd, SHUT_WR);
	return 1;
}

int control_frame_set(struct control_frame *f, json_t *message)
{
	control_frame_done(f);
	f->buf = json_dumps(message, JSON_COMPACT | JSON_ENSURE_ASCII);
	if (!f->buf)
		return -ENOMEM;
	f->len = f->cap = strlen(f->buf);
	return 0;
}

void control_frame_done(struct control_frame *f)
{
	free(f->buf);
	*f = (struct control_frame){};
}
