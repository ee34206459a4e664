// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the uevent parser and verdict: any bytes as a
 * datagram from the kernel and from a process. Whatever parses must point
 * inside the datagram; a datagram from a process always asks for a resync.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data, *why;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK }, process = kernel;
	struct uevent ev;

	process.nl_pid = 4242;
	if (uevent_parse(buf, size, &ev) == 0) {
		if (ev.devpath < buf || ev.devpath + strlen(ev.devpath) >= buf + size ||
		    ev.action != buf || ev.devpath[0] != '/')
			abort();
		if (ev.subsystem && (ev.subsystem < buf || ev.subsystem >= buf + size))
			abort();
		(void)uevent_is_sched_ext(&ev);
	}
	(void)uevent_classify((ssize_t)size, 0, &kernel, sizeof(kernel), 0, buf, &why);
	if (uevent_classify((ssize_t)size, 0, &process, sizeof(process), 0, buf, &why) != UEVENT_RESYNC)
		abort();
	return 0;
}
