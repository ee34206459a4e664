// SPDX-License-Identifier: GPL-2.0
/*
 * The control socket, both ends. The protocol is in control.h. The server
 * keeps one struct control_client per connection, each with its own io
 * source and deadline in scxd's sd-event loop: it reads until the client
 * shuts its side down, answers, writes the answer as the socket takes it,
 * and closes only once it has read everything the client sent.
 */

#include <errno.h>
#include <libgen.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#include "control.h"
#include "log.h"
#include "util.h"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

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

static int make_addr(const char *path, struct sockaddr_un *sa)
{
	*sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* ---- server ---- */

struct control_client {
	struct control_server *server;
	struct control_client *next;
	int fd;
	sd_event_source *io;
	sd_event_source *timer;
	struct control_peer peer;
	char *in;
	size_t in_len, in_cap;
	bool in_eof;
	char *out;		/* the reply, once there is one */
	size_t out_len, out_done;
};

struct control_server {
	sd_event *event;
	const char *path;
	int fd;
	gid_t group;
	sd_event_source *listen;
	control_handler_t handler;
	void *userdata;
	struct control_client *clients;
	size_t n_clients;
};

static void client_free(struct control_client *c)
{
	struct control_server *s = c->server;

	for (struct control_client **p = &s->clients; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			s->n_clients--;
			break;
		}
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->timer);
	if (c->fd >= 0)
		close(c->fd);
	free(c->in);
	free(c->out);
	free(c);
}

static bool peer_in_group(int fd, const struct ucred *cred, gid_t group)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);

	if (group == (gid_t)-1)
		return false;
	if (cred->gid == group)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == group)
			return true;
	return false;
}

static int client_set_reply(struct control_client *c, json_t *reply)
{
	if (!json_object_get(reply, "ok"))
		json_object_set_new(reply, "ok", json_true());
	c->out = json_dumps(reply, JSON_COMPACT | JSON_ENSURE_ASCII);
	if (!c->out)
		return -ENOMEM;
	c->out_len = strlen(c->out);
	c->out_done = 0;
	/* a fresh deadline for the peer to read it: the handler may have been long */
	sd_event_source_set_time(c->timer, now_usec() + CONTROL_TIMEOUT_USEC);
	return sd_event_source_set_io_events(c->io, (c->in_eof ? 0 : EPOLLIN) | EPOLLOUT);
}

/* An error reply; code (or NULL) is for programs: "permission-denied", ... */
static int client_error(struct control_client *c, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int client_error(struct control_client *c, const char *code, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	json_t *reply;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return -ENOMEM;
	reply = json_pack("{s:b, s:s, s:s*}", "ok", 0, "error", msg, "code", code);
	if (!reply)
		return -ENOMEM;
	r = client_set_reply(c, reply);
	json_decref(reply);
	return r;
}

/* The whole request is in: parse it, check the peer may ask it, answer. */
static int client_handle(struct control_client *c)
{
	struct control_server *s = c->server;
	json_t *request, *reply = NULL;
	json_error_t err;
	const char *command;
	int r;

	if (c->peer.role == CONTROL_ROLE_NONE)
		return 0;	/* answered at accept */
	request = json_loadb(c->in ?: "", c->in_len, JSON_REJECT_DUPLICATES, &err);
	if (!request)
		return client_error(c, "bad-request", "request is not a JSON object: %s", err.text);
	if (!json_is_object(request)) {
		json_decref(request);
		return client_error(c, "bad-request", "request is not a JSON object");
	}
	command = json_string_value(json_object_get(request, "command"));
	if (!command) {
		r = client_error(c, "bad-request", "request has no \"command\" string");
	} else if (!control_command_known(command)) {
		r = client_error(c, "unknown-command", "unknown command \"%.64s\" (status, describe, diff, reload)", command);
	} else if (c->peer.role != CONTROL_ROLE_ADMIN && !control_command_is_read_only(command)) {
		log_warning(0, ABOUT(.file = s->path),
			    "%s: refused \"%s\" from uid %u (pid %d): only root may change scxd's state",
			    s->path, command, (unsigned)c->peer.uid, (int)c->peer.pid);
		r = client_error(c, "permission-denied", "permission denied: only root may %s", command);
	} else {
		r = s->handler(s->userdata, &c->peer, command, request, &reply);
		if (r < 0)
			r = client_error(c, "failed", "%s failed: %s", command, strerror(-r));
		else
			r = client_set_reply(c, reply);
		json_decref(reply);
	}
	json_decref(request);
	return r;
}

static int client_read(struct control_client *c)
{
	for (;;) {
		ssize_t n;

		if (c->in_len + 4096 > c->in_cap) {
			size_t cap = c->in_cap ? 2 * c->in_cap : 8192;
			char *p;

			if (cap > CONTROL_REQUEST_MAX + 4096)
				cap = CONTROL_REQUEST_MAX + 4096;
			p = realloc(c->in, cap);
			if (!p)
				return -ENOMEM;
			c->in = p;
			c->in_cap = cap;
		}
		n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		if (n == 0) {
			c->in_eof = true;
			return 1;
		}
		if (c->out) {
			/* answered already (refused peer): what it sends is not read */
			c->in_len = 0;
			continue;
		}
		c->in_len += n;
		if (c->in_len > CONTROL_REQUEST_MAX)
			return -EMSGSIZE;
	}
}

static int client_write(struct control_client *c)
{
	while (c->out_done < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_done, c->out_len - c->out_done,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		c->out_done += n;
	}
	shutdown(c->fd, SHUT_WR);
	return 1;
}

/* Read, answer, write as far as the socket lets us: < 0 drop, 1 done, 0 wait. */
static int client_progress(struct control_client *c, uint32_t revents)
{
	int r;

	if (!c->in_eof && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
		r = client_read(c);
		if (r == -EMSGSIZE && !c->out) {
			r = client_error(c, "bad-request", "request larger than %u bytes", CONTROL_REQUEST_MAX);
			c->in_len = 0;
		}
		if (r < 0)
			return r;
		if (c->in_eof && !c->out) {
			r = client_handle(c);
			if (r < 0)
				return r;
		}
	}
	if (c->out && c->out_done < c->out_len) {
		r = client_write(c);
		if (r < 0)
			return r;
	}
	if (c->out && c->out_done == c->out_len && c->in_eof)
		return 1;
	/*
	 * Level-triggered: ask only for what can make progress, or an end of
	 * stream already read would wake us up in a loop while the peer is
	 * slow to read its reply. All said and input still open: wait for the
	 * peer's end of stream, then close.
	 */
	return sd_event_source_set_io_events(c->io, (c->in_eof ? 0 : EPOLLIN) |
					     (c->out && c->out_done < c->out_len ? EPOLLOUT : 0));
}

static int on_client_io(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct control_client *c = userdata;
	int r = client_progress(c, revents);

	if (r < 0)
		log_debug(ABOUT(.file = c->server->path), "%s: dropping the connection of pid %d: %s",
			  c->server->path, (int)c->peer.pid, strerror(-r));
	if (r != 0)
		client_free(c);
	return 0;
}

static int on_client_timeout(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct control_client *c = userdata;

	log_warning(0, ABOUT(.file = c->server->path),
		    "%s: pid %d (uid %u) did not %s within %llu s; closing its connection",
		    c->server->path, (int)c->peer.pid, (unsigned)c->peer.uid,
		    c->out ? "read its reply" : "send its request",
		    CONTROL_TIMEOUT_USEC / 1000000);
	client_free(c);
	return 0;
}

static int client_new(struct control_server *s, int fd)
{
	struct control_client *c;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int r;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		close(fd);
		return -errno;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->server = s;
	c->fd = fd;
	c->peer = (struct control_peer){
		.pid = cred.pid, .uid = cred.uid, .gid = cred.gid,
		.role = cred.uid == 0 ? CONTROL_ROLE_ADMIN :
			peer_in_group(fd, &cred, s->group) ? CONTROL_ROLE_READ : CONTROL_ROLE_NONE,
	};
	c->next = s->clients;
	s->clients = c;
	s->n_clients++;

	r = sd_event_add_io(s->event, &c->io, fd, EPOLLIN, on_client_io, c);
	if (r >= 0)
		r = sd_event_add_time(s->event, &c->timer, CLOCK_MONOTONIC,
				      now_usec() + CONTROL_TIMEOUT_USEC, 0, on_client_timeout, c);
	if (r >= 0 && c->peer.role == CONTROL_ROLE_NONE) {
		log_warning(0, ABOUT(.file = s->path),
			    "%s: refused a connection from uid %u (pid %d): not root%s",
			    s->path, (unsigned)cred.uid, (int)cred.pid,
			    s->group != (gid_t)-1 ? " nor in the control group" : "");
		r = client_error(c, "permission-denied", "permission denied: scxd answers root%s only",
				 s->group != (gid_t)-1 ? " and its control group" : "");
	}
	if (r < 0) {
		client_free(c);
		return r;
	}
	return 0;
}

static int on_listen(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct control_server *s = userdata;

	for (;;) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (c < 0)
			return 0;
		if (s->n_clients >= CONTROL_CLIENTS_MAX) {
			log_warning(0, ABOUT(.file = s->path),
				    "%s: %d connections open already; closing a new one unanswered",
				    s->path, CONTROL_CLIENTS_MAX);
			close(c);
			continue;
		}
		client_new(s, c);
	}
}

static int listen_socket(const char *path, gid_t group)
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
	if (group != (gid_t)-1 &&
	    (chown(dir, 0, group) < 0 || chmod(dir, 0710) < 0))
		return -errno;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* the caller holds the instance lock: a socket here is a dead scxd's */
	unlink(path);
	old = umask(0177);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0)
		return -errno;
	if (group != (gid_t)-1 && (chown(path, 0, group) < 0 || chmod(path, 0660) < 0))
		return -errno;
	if (listen(fd, 64) < 0)
		return -errno;
	return TAKE_FD(fd);
}

int control_server_new(sd_event *event, const char *path, gid_t group,
		       control_handler_t handler, void *userdata,
		       struct control_server **ret)
{
	struct control_server *s;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = (struct control_server){ .event = event, .path = path, .group = group,
				      .handler = handler, .userdata = userdata, .fd = -1 };
	s->fd = listen_socket(path, group);
	if (s->fd < 0) {
		r = s->fd;
		free(s);
		return r;
	}
	r = sd_event_add_io(event, &s->listen, s->fd, EPOLLIN, on_listen, s);
	if (r < 0) {
		control_server_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

void control_server_free(struct control_server *s)
{
	if (!s)
		return;
	while (s->clients)
		client_free(s->clients);
	sd_event_source_disable_unref(s->listen);
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

/* ---- client ---- */

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

static int send_all(int fd, const char *s, size_t len, uint64_t deadline)
{
	while (len > 0) {
		ssize_t n = send(fd, s, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		int r;

		if (n < 0 && errno == EAGAIN) {
			r = wait_fd(fd, POLLOUT, deadline);
			if (r < 0)
				return r;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		s += n;
		len -= n;
	}
	return 0;
}

static int recv_all(int fd, char **ret, size_t *ret_len, uint64_t deadline)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		ssize_t n;
		int r;

		if (len + 4096 + 1 > cap) {
			char *b = realloc(buf, cap = 2 * cap + 8192);

			if (!b)
				return -ENOMEM;
			buf = b;
		}
		n = recv(fd, buf + len, cap - len - 1, MSG_DONTWAIT);
		if (n < 0 && errno == EAGAIN) {
			r = wait_fd(fd, POLLIN, deadline);
			if (r < 0)
				return r;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += n;
		if (len > CONTROL_REPLY_MAX)
			return -EMSGSIZE;
	}
	buf[len] = '\0';
	*ret_len = len;
	*ret = TAKE_PTR(buf);
	return 0;
}

int control_call(const char *path, json_t *request, uint64_t timeout_usec, json_t **reply)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *out = NULL, *in = NULL;
	uint64_t deadline = timeout_usec ? now_usec() + timeout_usec : 0;
	struct sockaddr_un sa;
	json_error_t err;
	size_t in_len = 0;
	int r, sent;
	json_t *j;

	r = make_addr(path, &sa);
	if (r < 0)
		return r;
	out = json_dumps(request, JSON_COMPACT);
	if (!out)
		return -ENOMEM;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	/*
	 * A server that refuses us answers before reading: a failed send does
	 * not end the call, the reply may be waiting all the same.
	 */
	sent = send_all(fd, out, strlen(out), deadline);
	if (sent == -ETIMEDOUT)
		return sent;
	shutdown(fd, SHUT_WR);
	r = recv_all(fd, &in, &in_len, deadline);
	if (r < 0)
		return sent < 0 ? sent : r;
	if (in_len == 0)
		return sent < 0 ? sent : -EPROTO;
	j = json_loadb(in, in_len, 0, &err);
	if (!j || !json_is_object(j)) {
		json_decref(j);
		return -EPROTO;
	}
	*reply = j;
	return 0;
}
