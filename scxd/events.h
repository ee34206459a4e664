/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * What the daemon's event sources mean, as pure functions the host tests
 * and a fuzzer drive: a kernel uevent datagram and where it came from,
 * and when a burst of cgroup events is to be reconciled.
 */

#include <linux/netlink.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

/* A kernel uevent: "ACTION@DEVPATH\0KEY=VALUE\0...". Pointers into the datagram. */
struct uevent {
	const char *action;	/* "add", "remove", "change", ... */
	size_t action_len;
	const char *devpath;	/* "/kernel/sched_ext/root" */
	const char *subsystem;	/* SUBSYSTEM=, or NULL */
	uint64_t seqnum;	/* SEQNUM=, 0 if none */
};

/*
 * Parse one datagram of len bytes. -EINVAL if it is not a kernel uevent:
 * no "ACTION@/DEVPATH" header, a field not NUL-terminated within len, an
 * ACTION= or DEVPATH= field that disagrees with the header, or udev's
 * own "libudev" messages.
 */
int uevent_parse(const char *buf, size_t len, struct uevent *ret);

/* Whether it is about sched_ext's sysfs tree (/sys/kernel/sched_ext...). */
bool uevent_is_sched_ext(const struct uevent *ev);

/*
 * The cgroup id of the sub-scheduler a sched_ext uevent is about: its
 * devpath's last component is "sub-<id>" (".../root/sub/sub-77" → 77). 0
 * for the root, the tree itself, or anything else.
 */
uint64_t uevent_sub_cgid(const struct uevent *ev);

enum uevent_verdict {
	UEVENT_IGNORE,		/* not about sched_ext, or nothing more to read */
	UEVENT_RECONCILE,	/* a scheduler was enabled or went */
	UEVENT_RESYNC,		/* something may have been lost or forged: read it all again */
};

/*
 * What one recvmsg() on the uevent socket means. n and err are its
 * return value and errno, from and flags its sender address and
 * msg_flags. ENOBUFS (the socket overflowed: events were lost), a sender
 * that is not the kernel (nl_pid 0), and a truncated datagram all ask for
 * a resync; *why says which.
 */
enum uevent_verdict uevent_classify(ssize_t n, int err, const struct sockaddr_nl *from,
				    socklen_t from_len, int flags, const char *buf,
				    const char **why);

/*
 * Bursts of events coalesced into one reconcile: an event arms (or moves)
 * the deadline to quiet_usec after it, but never past max_usec after the
 * first event of the burst, so a continuous stream still reconciles
 * every max_usec.
 */
struct debounce {
	uint64_t quiet_usec;
	uint64_t max_usec;
	uint64_t first;		/* first event of the pending burst, 0 if none */
	uint64_t deadline;
};

/* An event at now (CLOCK_MONOTONIC usec, > 0): returns the deadline. */
uint64_t debounce_event(struct debounce *db, uint64_t now);
/* The reconcile ran: the next event starts a new burst. */
void debounce_done(struct debounce *db);
