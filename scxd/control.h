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
#define CONTROL_CLIENTS_MAX 64

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

/*
 * Called with a parsed request the peer is allowed to make; fills *reply
 * (a new object: "ok" is added if missing) and returns 0, or returns
 * -errno and the server replies with a generic error.
 */
typedef int (*control_handler_t)(void *userdata, const struct control_peer *peer,
				 const char *command, json_t *request, json_t **reply);

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

/*
 * Client side: send request, wait up to timeout_usec (0: forever) for the
 * reply. -ENOENT/-ECONNREFUSED: no scxd; -ETIMEDOUT; -EPROTO: the reply is
 * not one JSON object.
 */
int control_call(const char *path, json_t *request, uint64_t timeout_usec, json_t **reply);
