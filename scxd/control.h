/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * The control socket between scxctl and scxd: a unix stream socket, mode
 * 0600 in a 0700 directory, and scxd also checks the peer is uid 0. One
 * request per connection: a command line in, a reply out. The reply's
 * first line is "ok" or "error"; the rest is text for a person.
 */

#define SCXD_CONTROL_SOCKET "/run/scxd/control"

int control_listen(const char *path);

/* Server side: read the command (a short line) and the peer's uid. */
int control_read_request(int fd, char *cmd, unsigned len, unsigned *uid);
int control_write_all(int fd, const char *s);

/* Client side: send cmd, return the reply text without its status line. */
int control_request(const char *path, const char *cmd, char **reply, int *ok);
