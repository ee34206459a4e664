// SPDX-License-Identifier: GPL-2.0
/*
 * What the daemon makes of its events: kernel uevents parsed and judged
 * by sender (only the kernel, nl_pid 0, is believed; anything else, an
 * overflowed socket or a truncated datagram asks for a full resync), and
 * bursts of events debounced into one reconcile with an upper bound.
 */

#include <errno.h>
#include <stdlib.h>

#include "events.h"
#include "tests.h"
#include "util.h"

#define MSG(s) s, sizeof(s)	/* with the final NUL, as the kernel sends it */

static const char enable_root[] =
	"add@/kernel/sched_ext/root\0ACTION=add\0DEVPATH=/kernel/sched_ext/root\0"
	"SUBSYSTEM=sched_ext\0SCXOPS=wparent\0SEQNUM=4242";

static void test_parse(void)
{
	struct uevent ev;

	CHECK_INTEQ(uevent_parse(MSG(enable_root), &ev), 0);
	CHECK(ev.action && ev.action_len == 3 && !strncmp(ev.action, "add", 3));
	CHECK_STREQ(ev.devpath, "/kernel/sched_ext/root");
	CHECK_STREQ(ev.subsystem, "sched_ext");
	CHECK_INTEQ(ev.seqnum, 4242);
	CHECK(uevent_is_sched_ext(&ev));

	CHECK_INTEQ(uevent_sub_cgid(&ev), 0);

	CHECK_INTEQ(uevent_parse(MSG("remove@/kernel/sched_ext/root/sub/sub-77"), &ev), 0);
	CHECK(uevent_is_sched_ext(&ev));
	CHECK_INTEQ(uevent_sub_cgid(&ev), 77);
	CHECK_INTEQ(uevent_parse(MSG("add@/kernel/sched_ext/root/sub/sub-77/sub/sub-123456"), &ev), 0);
	CHECK_INTEQ(uevent_sub_cgid(&ev), 123456);
	CHECK_INTEQ(uevent_parse(MSG("add@/kernel/sched_ext/root/sub"), &ev), 0);
	CHECK_INTEQ(uevent_sub_cgid(&ev), 0);
	CHECK_INTEQ(uevent_parse(MSG("add@/kernel/sched_ext/root/sub/sub-7x"), &ev), 0);
	CHECK_INTEQ(uevent_sub_cgid(&ev), 0);
	CHECK_INTEQ(uevent_parse(MSG("add@/devices/sub-9"), &ev), 0);
	CHECK_INTEQ(uevent_sub_cgid(&ev), 0);
	CHECK_INTEQ(uevent_parse(MSG("add@/kernel/sched_extra\0ACTION=add"), &ev), 0);
	CHECK(!uevent_is_sched_ext(&ev));
	CHECK_INTEQ(uevent_parse(MSG("add@/devices/virtual/net/lo\0ACTION=add"), &ev), 0);
	CHECK(!uevent_is_sched_ext(&ev));

	/* not kernel uevents */
	CHECK_INTEQ(uevent_parse("", 0, &ev), -EINVAL);
	CHECK_INTEQ(uevent_parse(MSG("libudev\0\xfe\xed\xca\xfe"), &ev), -EINVAL);
	CHECK_INTEQ(uevent_parse(MSG("no header"), &ev), -EINVAL);
	CHECK_INTEQ(uevent_parse(MSG("@/kernel/sched_ext"), &ev), -EINVAL);
	CHECK_INTEQ(uevent_parse(MSG("add@kernel/sched_ext"), &ev), -EINVAL);
	CHECK_INTEQ(uevent_parse(MSG("add@/kernel/sched_ext\0ACTION=remove"), &ev), -EINVAL);
	CHECK_INTEQ(uevent_parse(MSG("add@/a\0DEVPATH=/kernel/sched_ext"), &ev), -EINVAL);
	/* the last field must end within the datagram */
	CHECK_INTEQ(uevent_parse("add@/kernel/sched_ext\0ACTION=add", 31, &ev), -EINVAL);
}

static enum uevent_verdict classify(ssize_t n, int err, uint32_t pid, int flags, const char *buf,
				    const char **why)
{
	struct sockaddr_nl from = { .nl_family = AF_NETLINK, .nl_pid = pid };

	return uevent_classify(n, err, &from, sizeof(from), flags, buf, why);
}

static void test_classify(void)
{
	struct sockaddr_nl from = { .nl_family = AF_NETLINK };
	const char *why;

	CHECK_INTEQ(classify(sizeof(enable_root), 0, 0, 0, enable_root, &why), UEVENT_RECONCILE);
	CHECK(!why);
	CHECK_INTEQ(classify(sizeof("add@/devices/x"), 0, 0, 0, "add@/devices/x", &why), UEVENT_IGNORE);
	CHECK_INTEQ(classify(-1, EAGAIN, 0, 0, NULL, &why), UEVENT_IGNORE);

	/* lost events */
	CHECK_INTEQ(classify(-1, ENOBUFS, 0, 0, NULL, &why), UEVENT_RESYNC);
	CHECK(why && strstr(why, "overflowed"));
	CHECK_INTEQ(classify(sizeof(enable_root), 0, 0, MSG_TRUNC, enable_root, &why), UEVENT_RESYNC);
	CHECK(why && strstr(why, "truncated"));

	/* forged: from a process (its port id), however well formed */
	CHECK_INTEQ(classify(sizeof(enable_root), 0, 1234, 0, enable_root, &why), UEVENT_RESYNC);
	CHECK(why && strstr(why, "not from the kernel"));
	CHECK_INTEQ(uevent_classify(sizeof(enable_root), 0, &from, 4, 0, enable_root, &why),
		    UEVENT_RESYNC);
	from.nl_family = AF_UNIX;
	CHECK_INTEQ(uevent_classify(sizeof(enable_root), 0, &from, sizeof(from), 0, enable_root, &why),
		    UEVENT_RESYNC);
}

static void test_debounce(void)
{
	struct debounce db = { .quiet_usec = 50000, .max_usec = 250000 };
	uint64_t t = 1000000, deadline = 0;
	unsigned reconciles = 0;

	/* one event: 50 ms later */
	CHECK_INTEQ(debounce_event(&db, t), t + 50000);
	/* a second one 20 ms later moves it */
	CHECK_INTEQ(debounce_event(&db, t + 20000), t + 70000);
	debounce_done(&db);

	/* a burst of 1000 events within 10 ms: one deadline, 50 ms after the last */
	for (unsigned i = 0; i < 1000; i++)
		deadline = debounce_event(&db, t + i * 10);
	CHECK_INTEQ(deadline, t + 9990 + 50000);
	debounce_done(&db);

	/*
	 * an event every 10 ms for 2 s never leaves 50 ms of quiet: the bound
	 * still reconciles every 250 ms
	 */
	t = 5000000;
	deadline = 0;
	for (uint64_t now = t; now < t + 2000000; now += 10000) {
		if (deadline && now >= deadline) {
			reconciles++;
			debounce_done(&db);
		}
		deadline = debounce_event(&db, now);
		CHECK(deadline <= db.first + 250000);
	}
	CHECK_INTEQ(reconciles, 7);
	printf("debounce: 1000 events in 10 ms -> 1 reconcile; an event every 10 ms for 2 s -> %u reconciles\n",
	       reconciles);
}

int main(void)
{
	test_parse();
	test_classify();
	test_debounce();
	return test_main_end("test-events");
}
