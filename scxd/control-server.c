// SPDX-License-Identifier: GPL-2.0
/*
 * The control socket, scxd's end (the protocol: control.h). One struct
 * control_client per connection, each with its own io source and deadline
 * in scxd's sd-event loop: it reads until the client shuts its side down,
 * answers (at once, or later for a handler that works off the loop),
 * writes the answer as the socket takes it, and closes only once it has
 * read everything the client sent.
 *
 * Connections are counted per uid at accept: root's apart from the
 * others', so that no other user's connections keep root out. A buffer a
 * connection grew is given back to the system when it closes.
 */

#include <errno.h>
#include <libgen.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "control.h"
#include "log.h"
#include "util.h"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

/* A refused connection is logged at most this often (with how many were refused meanwhile). */
#define REFUSED_LOG_USEC (10 * 1000000ULL)
/* A connection whose buffers grew past this gives the memory back when it closes. */
#define TRIM_BYTES (256u << 10)

struct control_client {
	struct control_server *server;
	struct control_client *next;
	int fd;
	sd_event_source *io;
	sd_event_source *timer;
	struct control_peer peer;
	struct control_frame in, out;
	bool in_eof;
	bool answered;		/* out holds the reply */
	bool pending;		/* the handler answers later */
	int passed_fd;		/* a descriptor the request came with, -1 */
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
	uint64_t refused_logged_at;
	unsigned refused_since;
};

static void client_free(struct control_client *c)
{
	struct control_server *s = c->server;
	bool trim = c->in.cap > TRIM_BYTES || c->out.cap > TRIM_BYTES;

	for (struct control_client **p = &s->clients; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->timer);
	if (c->fd >= 0)
		close(c->fd);
	if (c->passed_fd >= 0)
		close(c->passed_fd);
	control_frame_done(&c->in);
	control_frame_done(&c->out);
	free(c);
	if (trim)
		malloc_trim(0);
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
	int r;

	if (!json_object_get(reply, "ok"))
		json_object_set_new(reply, "ok", json_true());
	r = control_frame_set(&c->out, reply);
	if (r < 0)
		return r;
	c->answered = true;
	c->pending = false;
	/* a fresh deadline for the peer to read it: the handler may have been long */
	sd_event_source_set_time(c->timer, now_usec() + CONTROL_TIMEOUT_USEC);
	sd_event_source_set_enabled(c->timer, SD_EVENT_ONESHOT);
	sd_event_source_set_enabled(c->io, SD_EVENT_ON);
	return sd_event_source_set_io_events(c->io, (c->in_eof ? 0 : EPOLLIN) | EPOLLOUT);
}

/* An error reply; code (or NULL) is for programs: "permission-denied", ... */
__attribute__((format(printf, 3, 4)))
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

void control_client_reply(struct control_client *c, json_t *reply)
{
	int r = reply ? client_set_reply(c, reply) : -ENOMEM;

	if (r < 0 && client_error(c, "failed", "failed: %s", strerror(-r)) < 0) {
		client_free(c);
		return;
	}
	/* the socket may take it all now */
	if (control_frame_send(c->fd, &c->out) < 0 || (c->out.done == c->out.len && c->in_eof))
		client_free(c);
}

int control_client_take_fd(struct control_client *c)
{
	int fd = c->passed_fd;

	c->passed_fd = -1;
	return fd;
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
	request = json_loadb(c->in.buf ?: "", c->in.len, JSON_REJECT_DUPLICATES, &err);
	control_frame_done(&c->in);
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
		r = s->handler(s->userdata, c, &c->peer, command, request, &reply);
		if (r < 0)
			r = client_error(c, "failed", "%s failed: %s", command, strerror(-r));
		else if (reply)
			r = client_set_reply(c, reply);
		else {
			/*
			 * Answered later: no deadline meanwhile, and nothing to
			 * read or write (the source off, or a peer that hung up
			 * would wake the loop with EPOLLHUP until then).
			 */
			c->pending = true;
			sd_event_source_set_enabled(c->timer, SD_EVENT_OFF);
			r = sd_event_source_set_enabled(c->io, SD_EVENT_OFF);
		}
		json_decref(reply);
	}
	json_decref(request);
	return r;
}

static int client_read(struct control_client *c)
{
	if (c->answered) {
		/* answered already (refused peer): what it sends is not kept */
		char sink[4096];
		ssize_t n;

		while ((n = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
			;
		return n == 0 ? 1 : errno == EAGAIN || errno == EINTR ? 0 : -errno;
	}
	return control_frame_recv(c->fd, &c->in, CONTROL_REQUEST_MAX, &c->passed_fd);
}

/* Read, answer, write as far as the socket lets us: < 0 drop, 1 done, 0 wait. */
static int client_progress(struct control_client *c, uint32_t revents)
{
	int r;

	if (!c->in_eof && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
		r = client_read(c);
		if (r == -EMSGSIZE && !c->answered) {
			control_frame_done(&c->in);
			r = client_error(c, "bad-request", "request larger than %u bytes", CONTROL_REQUEST_MAX);
		}
		if (r < 0)
			return r;
		if (r == 1)
			c->in_eof = true;
		if (c->in_eof && !c->answered && !c->pending) {
			r = client_handle(c);
			if (r < 0)
				return r;
		}
	}
	if (c->pending)
		return 0;
	if (c->answered && c->out.done < c->out.len) {
		r = control_frame_send(c->fd, &c->out);
		if (r < 0)
			return r;
	}
	if (c->answered && c->out.done == c->out.len && c->in_eof)
		return 1;
	/*
	 * Level-triggered: ask only for what can make progress, or an end of
	 * stream already read would wake us up in a loop while the peer is
	 * slow to read its reply. All said and input still open: wait for the
	 * peer's end of stream, then close.
	 */
	return sd_event_source_set_io_events(c->io, (c->in_eof ? 0 : EPOLLIN) |
					     (c->answered && c->out.done < c->out.len ? EPOLLOUT : 0));
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
		    c->answered ? "read its reply" : "send its request",
		    CONTROL_TIMEOUT_USEC / 1000000);
	client_free(c);
	return 0;
}

static int client_new(struct control_server *s, int fd, const struct ucred *cred)
{
	struct control_client *c = calloc(1, sizeof(*c));
	int r;

	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->server = s;
	c->fd = fd;
	c->passed_fd = -1;
	c->peer = (struct control_peer){
		.pid = cred->pid, .uid = cred->uid, .gid = cred->gid,
		.role = cred->uid == 0 ? CONTROL_ROLE_ADMIN :
			peer_in_group(fd, cred, s->group) ? CONTROL_ROLE_READ : CONTROL_ROLE_NONE,
	};
	c->next = s->clients;
	s->clients = c;

	r = sd_event_add_io(s->event, &c->io, fd, EPOLLIN, on_client_io, c);
	if (r >= 0)
		r = sd_event_add_time(s->event, &c->timer, CLOCK_MONOTONIC,
				      now_usec() + CONTROL_TIMEOUT_USEC, 0, on_client_timeout, c);
	if (r >= 0 && c->peer.role == CONTROL_ROLE_NONE) {
		log_warning(0, ABOUT(.file = s->path),
			    "%s: refused a connection from uid %u (pid %d): not root%s",
			    s->path, (unsigned)cred->uid, (int)cred->pid,
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

/*
 * Whether uid may open one more connection: root up to its own limit,
 * every other uid up to its share and all of them together up to theirs.
 */
static const char *over_limit(const struct control_server *s, uid_t uid)
{
	size_t of_uid = 0, others = 0;

	for (const struct control_client *c = s->clients; c; c = c->next) {
		of_uid += c->peer.uid == uid;
		others += c->peer.uid != 0;
	}
	if (uid == 0)
		return of_uid >= CONTROL_ROOT_CLIENTS_MAX ? "root's connections" : NULL;
	if (of_uid >= CONTROL_CLIENTS_PER_UID)
		return "this uid's connections";
	return others >= CONTROL_CLIENTS_MAX ? "other users' connections" : NULL;
}

static void log_refused(struct control_server *s, const struct ucred *cred, const char *which)
{
	uint64_t now = now_usec();

	s->refused_since++;
	if (s->refused_logged_at && now - s->refused_logged_at < REFUSED_LOG_USEC)
		return;
	log_warning(0, ABOUT(.file = s->path),
		    "%s: too many %s open; closed a new one of uid %u (pid %d) unanswered (%u refused in the last %llu s); root's are counted apart",
		    s->path, which, (unsigned)cred->uid, (int)cred->pid, s->refused_since,
		    REFUSED_LOG_USEC / 1000000);
	s->refused_logged_at = now;
	s->refused_since = 0;
}

static int on_listen(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct control_server *s = userdata;

	for (;;) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct ucred cred;
		socklen_t len = sizeof(cred);
		const char *which;

		if (c < 0)
			return 0;
		if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			close(c);
			continue;
		}
		which = over_limit(s, cred.uid);
		if (which) {
			log_refused(s, &cred, which);
			close(c);
			continue;
		}
		client_new(s, c, &cred);
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
	r = control_addr(path, &sa);
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
