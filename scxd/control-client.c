// SPDX-License-Identifier: GPL-2.0
/*
 * The control socket, scxdctl's end (the protocol: control.h): connect,
 * send the request (with a descriptor, for diff), shut the writing side,
 * read the reply to the end of the stream, each wait bounded by one
 * deadline.
 */

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "control.h"
#include "util.h"

static int wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int timeout = -1, r;

	if (deadline) {
		uint64_t now = now_usec();

		if (now >= deadline)
			return -ETIMEDOUT;
		timeout = (int)((deadline - now + 999) / 1000);
	}
	r = poll(&p, 1, timeout);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	return r == 0 ? -ETIMEDOUT : 0;
}

/* The descriptor goes with the request's first byte. */
static int send_fd(int sock, int fd, struct control_frame *f)
{
	char cbuf[CMSG_SPACE(sizeof(int))] __attribute__((aligned(8))) = {};
	struct iovec iov = { f->buf, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) < 0)
		return -errno;
	f->done = 1;
	return 0;
}

int control_call(const char *path, json_t *request, int pass_fd, uint64_t timeout_usec,
		 json_t **reply)
{
	_cleanup_close_ int fd = -1;
	_cleanup_(control_frame_done) struct control_frame out = {}, in = {};
	uint64_t deadline = timeout_usec ? now_usec() + timeout_usec : 0;
	struct sockaddr_un sa;
	json_error_t err;
	int r, sent;
	json_t *j;

	r = control_addr(path, &sa);
	if (r < 0)
		return r;
	r = control_frame_set(&out, request);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	/*
	 * A server that refuses us answers before reading: a failed send does
	 * not end the call, the reply may be waiting all the same.
	 */
	sent = pass_fd >= 0 ? send_fd(fd, pass_fd, &out) : 0;
	while (sent == 0 && (sent = control_frame_send(fd, &out)) == 0)
		sent = wait_fd(fd, POLLOUT, deadline);
	if (sent == -ETIMEDOUT)
		return sent;
	shutdown(fd, SHUT_WR);
	while ((r = control_frame_recv(fd, &in, CONTROL_REPLY_MAX, NULL)) == 0) {
		r = wait_fd(fd, POLLIN, deadline);
		if (r < 0)
			break;
	}
	if (r < 0)
		return sent < 0 ? sent : r;
	if (in.len == 0)
		return sent < 0 ? sent : -EPROTO;
	j = json_loadb(in.buf, in.len, 0, &err);
	if (!j || !json_is_object(j)) {
		json_decref(j);
		return -EPROTO;
	}
	*reply = j;
	return 0;
}
