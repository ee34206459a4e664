// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel uevents and the debounce of event bursts (see events.h).
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "util.h"

static bool field_is(const char *field, const char *key, const char **value)
{
	size_t n = strlen(key);

	if (strncmp(field, key, n) != 0 || field[n] != '=')
		return false;
	*value = field + n + 1;
	return true;
}

int uevent_parse(const char *buf, size_t len, struct uevent *ret)
{
	const char *at, *end = buf + len, *v;
	struct uevent ev = {};

	*ret = (struct uevent){};
	if (len == 0 || buf[len - 1] != '\0')
		return -EINVAL;
	/* udev's messages to its listeners start "libudev\0" and a header */
	if (streq(buf, "libudev"))
		return -EINVAL;
	at = strchr(buf, '@');
	if (!at || at == buf || at[1] != '/')
		return -EINVAL;
	ev.action = buf;
	ev.action_len = (size_t)(at - buf);
	ev.devpath = at + 1;
	for (const char *f = buf + strlen(buf) + 1; f < end; f += strlen(f) + 1) {
		if (field_is(f, "ACTION", &v)) {
			if (strlen(v) != ev.action_len || strncmp(v, ev.action, ev.action_len) != 0)
				return -EINVAL;
		} else if (field_is(f, "DEVPATH", &v)) {
			if (!streq(v, ev.devpath))
				return -EINVAL;
		} else if (field_is(f, "SUBSYSTEM", &v)) {
			ev.subsystem = v;
		} else if (field_is(f, "SEQNUM", &v)) {
			ev.seqnum = strtoull(v, NULL, 10);
		}
	}
	*ret = ev;
	return 0;
}

bool uevent_is_sched_ext(const struct uevent *ev)
{
	static const char prefix[] = "/kernel/sched_ext";
	size_t n = sizeof(prefix) - 1;

	return strncmp(ev->devpath, prefix, n) == 0 &&
	       (ev->devpath[n] == '\0' || ev->devpath[n] == '/');
}

uint64_t uevent_sub_cgid(const struct uevent *ev)
{
	const char *last = strrchr(ev->devpath, '/');
	char *end = NULL;
	uint64_t id;

	if (!uevent_is_sched_ext(ev) || !last || !startswith(last, "/sub-") ||
	    !isdigit((unsigned char)last[5]))
		return 0;
	errno = 0;
	id = strtoull(last + 5, &end, 10);
	return errno || *end ? 0 : id;
}

enum uevent_verdict uevent_classify(ssize_t n, int err, const struct sockaddr_nl *from,
				    socklen_t from_len, int flags, const char *buf,
				    const char **why)
{
	struct uevent ev;

	*why = NULL;
	if (n < 0 && err == ENOBUFS) {
		*why = "the uevent socket overflowed: events were lost";
		return UEVENT_RESYNC;
	}
	if (n < 0)
		return UEVENT_IGNORE;	/* EAGAIN: read everything; EINTR: the loop comes back */
	if (from_len < sizeof(*from) || from->nl_family != AF_NETLINK || from->nl_pid != 0) {
		*why = "a uevent came from a process, not from the kernel";
		return UEVENT_RESYNC;
	}
	if (flags & MSG_TRUNC) {
		*why = "a uevent was truncated";
		return UEVENT_RESYNC;
	}
	if (uevent_parse(buf, (size_t)n, &ev) < 0 || !uevent_is_sched_ext(&ev))
		return UEVENT_IGNORE;
	return UEVENT_RECONCILE;
}

uint64_t debounce_event(struct debounce *db, uint64_t now)
{
	uint64_t deadline;

	if (!db->first)
		db->first = now;
	deadline = now + db->quiet_usec;
	if (deadline > db->first + db->max_usec)
		deadline = db->first + db->max_usec;
	if (deadline < db->deadline)
		deadline = db->deadline;	/* never earlier than already armed */
	db->deadline = deadline;
	return deadline;
}

void debounce_done(struct debounce *db)
{
	db->first = 0;
	db->deadline = 0;
}
