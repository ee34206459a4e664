// SPDX-License-Identifier: GPL-2.0
/*
 * The event sources of the loop: inotify watches on the cgroups below
 * which the policy can match, kobject uevents of the kernel's sched_ext
 * tree, the debounce, retry and safety resync timers, SIGHUP and the
 * control socket. Each source only says what the next reconcile reads.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/netlink.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "util.h"

static void schedule_reconcile(struct daemon *d)
{
	sd_event_source_set_enabled(d->reconcile_source, SD_EVENT_ONESHOT);
}

/* An event in a burst: reconcile once the burst is over (events.h). */
static void schedule_debounced(struct daemon *d)
{
	sd_event_source_set_time(d->debounce_timer, debounce_event(&d->debounce, now_usec()));
	sd_event_source_set_enabled(d->debounce_timer, SD_EVENT_ONESHOT);
}

/*
 * Events may have been lost or forged: read the whole state again now,
 * rather than after the burst. Said once until that reconcile has run.
 */
static void request_resync(struct daemon *d, const char *why)
{
	d->counters.resyncs++;
	scope_set_full(&d->pending);
	if (!d->resync_pending)
		log_notice(ABOUT(.file = d->paths.sysfs),
			   "%s; reading cgroups, %s and the pins again", why, d->paths.sysfs);
	d->resync_pending = true;
	schedule_reconcile(d);
}

/*
 * A cgroup path is under 4 KiB, but with the cgroup root in front it may
 * not fit PATH_MAX: then the watch goes through an O_PATH descriptor.
 * Returns 1 for a new watch, 0 for one that was there already.
 */
static int watch_cgroup(struct daemon *d, const char *cgroup)
{
	const uint32_t mask = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR;
	_cleanup_close_ int root = -1, fd = -1;
	char path[PATH_MAX];
	bool fresh;
	int wd, r;

	if ((size_t)snprintf(path, sizeof(path), "%s%s", d->paths.cgroup_root,
			     streq(cgroup, "/") ? "" : cgroup) >= sizeof(path)) {
		root = open(d->paths.cgroup_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (root >= 0)
			fd = openat(root, cgroup + 1, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	wd = inotify_add_watch(d->inotify_fd, path, mask);
	if (wd < 0)
		return -errno;
	/* events name the watched directory by wd: keep its cgroup */
	fresh = !watch_table_get(&d->watches, wd);
	r = watch_table_set(&d->watches, wd, cgroup);
	return r < 0 ? r : fresh;
}

/*
 * A new watch reports what is made from now on, and the scan that found
 * cgroup ran before it was added: a child made in between (a burst of
 * mkdirs right after their parent's) would wait for the safety resync,
 * minutes. Look again: a child the scan did not list puts cgroup in the
 * next reconcile's scope.
 */
static void watch_catch_up(struct daemon *d, const char *cgroup, const struct cgroup_list *cgroups)
{
	const char *prefix = streq(cgroup, "/") ? "" : cgroup;
	_cleanup_closedir_ DIR *dir = NULL;
	char path[PATH_MAX];
	struct dirent *de;
	bool missed = false;

	if ((size_t)snprintf(path, sizeof(path), "%s%s", d->paths.cgroup_root, prefix) >= sizeof(path))
		missed = true;	/* cannot tell: look again */
	else if (!(dir = opendir(path)))
		return;		/* gone: its parent's watch says so */
	while (dir && !missed && (de = readdir(dir))) {
		_cleanup_free_ char *child = NULL;

		if (de->d_name[0] == '.' || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		if (asprintf(&child, "%s/%s", prefix, de->d_name) < 0)
			missed = true;
		else
			missed = !cgroup_list_id(cgroups, child);
	}
	if (!missed)
		return;
	log_debug(ABOUT(.cgroup = cgroup), "%s: cgroups made while its watch was being added: looking again",
		  cgroup);
	if (scope_add(&d->pending, cgroup) < 0)
		scope_set_full(&d->pending);
	if (d->debounce_timer)
		schedule_debounced(d);
}

/*
 * Watch the cgroups below which a new cgroup could match the policy; the
 * others' children are of no interest. A cgroup with a node is watched
 * by its parent, which is then such a cgroup.
 */
void watch_cgroups(struct daemon *d, const struct cgroup_list *cgroups)
{
	if (d->inotify_fd < 0)
		return;
	for (size_t i = 0; i < cgroups->n; i++) {
		int r;

		if (!policy_may_match_below(d->policy, cgroups->paths[i]))
			continue;
		/* Adding a watch again returns the same one: idempotent. */
		r = watch_cgroup(d, cgroups->paths[i]);
		if (r > 0)
			watch_catch_up(d, cgroups->paths[i], cgroups);
		if (r < 0 && r != -ENOENT)
			log_warning(r, ABOUT(.cgroup = cgroups->paths[i]),
				    "%s: cannot watch for new cgroups: %s", cgroups->paths[i],
				    strerror(-r));
	}
}

static int on_debounce(sd_event_source *s, uint64_t usec, void *userdata)
{
	reconcile(userdata, ((struct daemon *)userdata)->serve_dry_run);
	return 0;
}

/*
 * The safety resync: minutes after the last reconcile, in case an event
 * was missed in a way nothing reported. Anything it finds to do says an
 * event was missed.
 */
static int on_safety_resync(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;

	d->counters.safety_resyncs++;
	scope_set_full(&d->pending);
	reconcile(d, d->serve_dry_run);
	if (d->last_steps)
		log_notice(ABOUT(.file = d->paths.sysfs),
			   "safety resync: %zu step(s) were due that no event announced; next one in %" PRIu64 " s",
			   d->last_steps, d->resync_usec / 1000000);
	return 0;
}

static int on_reconcile(sd_event_source *s, void *userdata)
{
	reconcile(userdata, ((struct daemon *)userdata)->serve_dry_run);
	return 0;
}

/*
 * A backoff expired: look at the cgroups whose wait is over (under churn
 * most failures are cgroups removed before their attach). The kernel was
 * settling, or no wait is over: look at everything.
 */
static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;
	uint64_t now = now_usec();
	bool any = false;

	for (size_t i = 0; i < d->n_backoffs && !d->settle_at; i++) {
		if (!d->backoffs[i].retry_at || d->backoffs[i].retry_at > now)
			continue;
		if (scope_add(&d->pending, d->backoffs[i].cgroup) < 0)
			scope_set_full(&d->pending);
		any = true;
	}
	if (!any)
		scope_set_full(&d->pending);
	reconcile(d, d->serve_dry_run);
	return 0;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	log_info(ABOUT(.file = ((struct daemon *)userdata)->policy_file), "SIGHUP: reloading %s",
		 ((struct daemon *)userdata)->policy_file);
	if (policy_job_reload(userdata, NULL, 0) < 0)
		log_error(-ENOMEM, ABOUT(.file = ((struct daemon *)userdata)->policy_file),
			  "SIGHUP: out of memory; keeping the running policy");
	return 0;
}

/*
 * A directory made, removed or moved below a watched cgroup: its subtree
 * joins the next reconcile's scope. An event on a watch we do not know,
 * or a lost one, makes it read everything.
 */
static void scope_event(struct daemon *d, const struct inotify_event *ev)
{
	const char *parent;
	_cleanup_free_ char *path = NULL;

	if (ev->mask & IN_IGNORED) {
		watch_table_remove(&d->watches, ev->wd);	/* the directory is gone */
		return;
	}
	if (!(ev->mask & IN_ISDIR) || !ev->len)
		return;
	parent = watch_table_get(&d->watches, ev->wd);
	if (!parent || asprintf(&path, "%s/%s", streq(parent, "/") ? "" : parent, ev->name) < 0 ||
	    scope_add(&d->pending, path) < 0)
		scope_set_full(&d->pending);
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct daemon *d = userdata;
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool overflow = false, any = false;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i + (ssize_t)sizeof(struct inotify_event) <= n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(buf + i);

			overflow = overflow || (ev->mask & IN_Q_OVERFLOW);
			scope_event(d, ev);
			d->counters.cgroup_events++;
			any = true;
			i += sizeof(*ev) + ev->len;
		}
	}
	if (overflow)
		request_resync(d, "the inotify queue for cgroup events overflowed: events were lost");
	else if (any)
		schedule_debounced(d);
	return 0;
}

/*
 * A scheduler came or went: the next reconcile looks at its cgroup's
 * subtree when the cgroup id names a cgroup that had a scheduler (one
 * scxd attached or saw), and at everything otherwise (the root, a
 * scheduler someone else attached).
 */
static void scope_kernel_event(struct daemon *d, const char *buf, size_t n)
{
	struct uevent ev;
	const char *cgroup;

	if (uevent_parse(buf, n, &ev) < 0) {
		scope_set_full(&d->pending);
		return;
	}
	cgroup = path_set_find_id(&d->known, uevent_sub_cgid(&ev));
	if (!cgroup || scope_add(&d->pending, cgroup) < 0)
		scope_set_full(&d->pending);
}

static int on_uevent(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct daemon *d = userdata;
	const char *resync_why = NULL;
	bool ours = false;

	for (;;) {
		char buf[8192];
		struct sockaddr_nl from = {};
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr msg = {
			.msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1,
		};
		ssize_t n = recvmsg(fd, &msg, MSG_DONTWAIT);
		int err = n < 0 ? errno : 0;
		const char *why;

		if (err == EINTR)
			continue;
		switch (uevent_classify(n, err, &from, msg.msg_namelen, msg.msg_flags, buf, &why)) {
		case UEVENT_RESYNC:
			if (!resync_why)
				resync_why = why;
			if (n >= 0 && from.nl_pid != 0)
				log_debug(ABOUT(.file = d->paths.sysfs),
					  "uevent from netlink port %" PRIu32 ", not the kernel's (0)",
					  from.nl_pid);
			break;
		case UEVENT_RECONCILE:
			d->counters.kernel_events++;
			scope_kernel_event(d, buf, (size_t)n);
			ours = true;
			break;
		case UEVENT_IGNORE:
			break;
		}
		if (n < 0 && err != ENOBUFS)
			break;	/* EAGAIN: all read */
	}
	if (resync_why) {
		request_resync(d, resync_why);
	} else if (ours) {
		schedule_debounced(d);
	}
	return 0;
}

static int open_uevent_socket(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			NETLINK_KOBJECT_UEVENT);
	int size = 1024 * 1024;

	if (fd < 0)
		return -errno;
	/* Room for a burst (a boot's worth of uevents); an overflow still resyncs. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

int setup_events(struct daemon *d)
{
	sigset_t mask;
	int r, fd;

	r = sd_event_default(&d->event);
	if (r < 0)
		return log_error(r, NULL, "cannot create the event loop: %s", strerror(-r));
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sd_event_add_signal(d->event, NULL, SIGHUP, on_sighup, d);
	sd_event_add_signal(d->event, NULL, SIGTERM, NULL, NULL);
	sd_event_add_signal(d->event, NULL, SIGINT, NULL, NULL);
	sd_event_set_watchdog(d->event, true);
	if (sd_watchdog_enabled(false, &d->watchdog_usec) <= 0)
		d->watchdog_usec = 0;

	r = sd_event_add_defer(d->event, &d->reconcile_source, on_reconcile, d);
	if (r < 0)
		return log_error(r, NULL, "cannot set up the reconcile source: %s", strerror(-r));
	sd_event_source_set_enabled(d->reconcile_source, SD_EVENT_OFF);
	r = sd_event_add_time(d->event, &d->retry_timer, CLOCK_MONOTONIC, UINT64_MAX, 100000,
			      on_retry, d);
	if (r < 0)
		return log_error(r, NULL, "cannot set up the retry timer: %s", strerror(-r));
	sd_event_source_set_enabled(d->retry_timer, SD_EVENT_OFF);
	r = sd_event_add_time(d->event, &d->debounce_timer, CLOCK_MONOTONIC, UINT64_MAX, 10000,
			      on_debounce, d);
	if (r < 0)
		return log_error(r, NULL, "cannot set up the debounce timer: %s", strerror(-r));
	sd_event_source_set_enabled(d->debounce_timer, SD_EVENT_OFF);
	d->debounce = (struct debounce){ .quiet_usec = DEBOUNCE_QUIET_USEC,
					 .max_usec = DEBOUNCE_MAX_USEC };
	/* accuracy: a tenth of the interval, so the kernel may batch the wakeup */
	r = sd_event_add_time(d->event, &d->resync_timer, CLOCK_MONOTONIC, UINT64_MAX,
			      d->resync_usec / 10 ?: 1, on_safety_resync, d);
	if (r < 0)
		return log_error(r, NULL, "cannot set up the safety resync timer: %s", strerror(-r));
	sd_event_source_set_enabled(d->resync_timer, SD_EVENT_OFF);

	d->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (d->inotify_fd < 0)
		return log_error(-errno, ABOUT(.cgroup = "/"), "inotify: %m");
	sd_event_add_io(d->event, NULL, d->inotify_fd, EPOLLIN, on_inotify, d);

	fd = open_uevent_socket();
	if (fd < 0)
		log_warning(fd, ABOUT(.file = d->paths.sysfs),
			    "cannot listen for kernel uevents (%s): scheduler exits are noticed only on the next cgroup change",
			    strerror(-fd));
	else
		sd_event_add_io(d->event, NULL, fd, EPOLLIN, on_uevent, d);

	r = policy_jobs_init(d);
	if (r < 0)
		return log_error(r, ABOUT(.file = d->policy_file), "cannot set up the policy worker: %s",
				 strerror(-r));
	r = control_server_new(d->event, d->control_path, d->control_group, on_control_request, d,
			       &d->control);
	if (r < 0)
		return log_error(r, ABOUT(.file = d->control_path), "%s: cannot listen: %s; exiting",
				 d->control_path, strerror(-r));
	return 0;
}
