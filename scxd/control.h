/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * The control socket between scxdctl and scxd: a unix stream socket,
 * /run/scxd/control. One request per connection:
 *
 *   client: connect, send one JSON object, shutdown(SHUT_WR)
 *   server: read to EOF (at most CONTROL_REQUEST_MAX bytes), send one JSON
 *           object, close
 *
 * The end of the stream is the frame: neither side needs a length, and
 * neither side closes with the other's bytes unread. A request is
 * { "command": NAME, ... }; a reply is { "ok": true|false, "error": TEXT
 * (when not ok), ... }, see scxdctl(1) for each command's members.
 *
 * Who may ask what is decided at accept from the peer's credentials
 * (SO_PEERCRED, SO_PEERGROUPS): root may send every command; members of
 * the control group (scxd --control-group, the socket's group then) may
 * send the read-only ones; anyone else gets an error reply without their
 * request being parsed. Each connection is its own non-blocking event
 * source with a deadline: a silent or slow client holds up nobody.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>
#include <systemd/sd-event.h>

#define SCXD_CONTROL_SOCKET "/run/scxd/control"
#define CONTROL_REQUEST_MAX (2u << 20)		/* a diff carries a policy file */
#define CONTROL_REPLY_MAX (64u << 20)
#define CONTROL_TIMEOUT_USEC (5 * 1000000ULL)	/* to send the request, to read the reply */
/*
 * Connections open at once: the others' together and each non-root uid's
 * (a further one is closed unanswered), and root's, counted apart so that
 * nobody else's connections keep root (systemctl reload) out.
 */
#define CONTROL_CLIENTS_MAX 64
#define CONTROL_CLIENTS_PER_UID 8
#define CONTROL_ROOT_CLIENTS_MAX 16

enum control_role {
	CONTROL_ROLE_NONE,
	CONTROL_ROLE_READ,	/* member of the control group */
	CONTROL_ROLE_ADMIN,	/* root */
};

struct control_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	enum control_role role;
};

/* One connection of the server's: its request, its reply. */
struct control_client;

/*
 * Called with a parsed request the peer is allowed to make; fills *reply
 * (a new object: "ok" is added if missing) and returns 0, or returns
 * -errno and the server replies with a generic error. A handler that
 * returns 0 and leaves *reply NULL answers later, once, with
 * control_client_reply(c, ...); until then the connection has no deadline.
 */
typedef int (*control_handler_t)(void *userdata, struct control_client *c,
				 const struct control_peer *peer, const char *command,
				 json_t *request, json_t **reply);

/* The deferred reply (not taken: the caller keeps its reference). */
void control_client_reply(struct control_client *c, json_t *reply);
/*
 * The descriptor the request came with (scxdctl diff passes the policy
 * as a sealed memfd), now the caller's; -1 if none.
 */
int control_client_take_fd(struct control_client *c);

struct control_server;

/*
 * Listen on path. group: (gid_t)-1 for root only, else the group whose
 * members may send read-only commands (socket 0660 root:group, its
 * directory 0710 root:group).
 */
int control_server_new(sd_event *event, const char *path, gid_t group,
		       control_handler_t handler, void *userdata,
		       struct control_server **ret);
void control_server_free(struct control_server *s);

/* Whether a command only reads (allowed to the control group). */
bool control_command_is_read_only(const char *command);
/* Whether the server knows the command at all. */
bool control_command_known(const char *command);

/* ---- the framing both ends use (control.c) ---- */

struct sockaddr_un;
int control_addr(const char *path, struct sockaddr_un *sa);

/* One message a direction, ended by the end of the stream. */
struct control_frame {
	char *buf;		/* NUL-terminated once received whole */
	size_t len, cap;
	size_t done;		/* bytes sent */
};

/*
 * Read what fd has without blocking: 1 at the end of the stream, 0 when
 * it would block, -EMSGSIZE past max bytes, else -errno. The first
 * descriptor the message carries (SCM_RIGHTS) goes to *passed while that
 * is -1; any other, or all with passed NULL, is closed.
 */
int control_frame_recv(int fd, struct control_frame *f, size_t max, int *passed);
/* Send what is left without blocking, then shut the writing side: 1 all sent, 0 would block. */
int control_frame_send(int fd, struct control_frame *f);
/* The message to send: message as compact ASCII JSON. */
int control_frame_set(struct control_frame *f, json_t *message);
void control_frame_done(struct control_frame *f);

/*
 * Client side (control-client.c): send request, with pass_fd (unless -1)
 * as SCM_RIGHTS, and wait up to timeout_usec (0: forever) for the
 * reply. -ENOENT/-ECONNREFUSED: no scxd; -ETIMEDOUT; -EPROTO: the reply is
 * not one JSON object.
 */
int control_call(const char *path, json_t *request, int pass_fd, uint64_t timeout_usec,
		 json_t **reply);
