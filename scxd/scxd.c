// SPDX-License-Identifier: GPL-2.0
/*
 * scxd: keeps the kernel's tree of sched_ext schedulers equal to the
 * policy as cgroups come and go.
 *
 * The loop is sd-event. Nothing polls: a reconcile runs when the cgroup
 * tree changes (inotify), when the kernel's sched_ext sysfs tree changes
 * (kobject uevents: a scheduler was enabled or exited), on SIGHUP or
 * `scxdctl reload`, and when a backoff timer for a failed scheduler
 * expires. Each reconcile reads the world afresh (cgroups, sysfs, scxd's
 * pins), computes desired state and plan, and applies the plan. After
 * cgroup events, and kernel events about a child scheduler scxd knows,
 * it reads only the subtrees the events named and their ancestors
 * (scope.h); everything else reads it all. Only cgroups below which a
 * policy pattern can match are watched.
 *
 * Bursts of cgroup and kernel events are debounced into one reconcile
 * (events.h). When events may have been lost or forged (the uevent or
 * inotify queue overflowed, a uevent not from the kernel) the state is
 * read again at once (a resync), and a slow safety timer (minutes, after
 * the last reconcile) catches whatever was missed anyway.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <jansson.h>
#include <linux/netlink.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "actual.h"
#include "apply.h"
#include "check.h"
#include "control.h"
#include "desired.h"
#include "events.h"
#include "kernel-api.h"
#include "log.h"
#include "message-id.h"
#include "plan.h"
#include "policy.h"
#include "sched-info.h"
#include "scope.h"
#include "sched-json.h"
#include "sched-stats.h"
#include "strict.h"
#include "util.h"

#ifndef SCXD_SCHED_DIR
#define SCXD_SCHED_DIR "/usr/lib/scxd"
#endif
#ifndef SCXD_POLICY
#define SCXD_POLICY "/etc/scxd/policy.json"
#endif

#ifndef SCXD_VERSION
#define SCXD_VERSION "unknown"
#endif

/* The "schema" member of `scxdctl status --json`: conf/status.schema.json. */
#define SCXD_STATUS_SCHEMA 1

/* Before READY=1, ask systemd for this much more time every third of it. */
#define EXTEND_TIMEOUT_USEC (30 * 1000000ULL)

#define BACKOFF_FIRST_USEC (1 * 1000000ULL)
#define BACKOFF_CAP_USEC (60 * 1000000ULL)
#define STABLE_USEC (60 * 1000000ULL)	/* up this long: failures are forgiven */
#define DEBOUNCE_QUIET_USEC (50 * 1000ULL)	/* a burst of events: wait for this much quiet, */
#define DEBOUNCE_MAX_USEC (250 * 1000ULL)	/* but no longer than this after its first event */
#define RESYNC_DEFAULT_SEC 300		/* the safety resync, after the last reconcile */
#define LOAD_WORKERS_DEFAULT 1		/* objects loaded at once (--load-workers) */

struct backoff {
	char *cgroup;
	unsigned failures;
	uint64_t retry_at;	/* CLOCK_MONOTONIC usec */
	uint64_t attached_at;
	char *reason;
	/* The last exit the kernel recorded for the cgroup's scheduler, kept across reattaches. */
	struct sched_exit *last_exit;
	uint64_t last_exit_at;	/* CLOCK_REALTIME usec */
	uint64_t rescues_logged;	/* SCX_EV_SUB_RESCUE when last logged */
};

struct counters {
	unsigned reconciles, attaches, detaches, exits, parent_kills, attach_failures;
	unsigned reloads, reloads_rejected, cgroup_events, kernel_events;
	unsigned resyncs, safety_resyncs, scoped_reconciles;
};

struct daemon {
	struct scxd_paths paths;
	const char *policy_file;
	const char *control_path;
	gid_t control_group;		/* (gid_t)-1: root only */
	struct control_server *control;
	int lock_fd;			/* <state dir>/scxd.lock, flock()ed while we run */
	bool serve_dry_run;		/* --dry-run --serve: run the loop, apply nothing */
	bool ready;			/* READY=1 sent */
	uint64_t extend_last;		/* when EXTEND_TIMEOUT_USEC was last sent */
	char *reload_error;		/* why the last policy load was rejected */
	char *status_line;		/* what runs, for STATUS= */
	struct sched_dir_catalog *catalog;
	struct policy *policy;
	const char *sched_base;		/* --sched-dir: cpu-form objects, cid-form in its cid/ */
	enum kernel_api api;		/* what the kernel offers; paths.sched_dir is its objects' */
	bool unsupported_reported;
	bool log_notes;
	char *blocked_reported;		/* "cgroup\tsched\n"... already warned about */
	char *strays_reported;		/* pins and records matched to no cgroup, warned about */

	sd_event *event;
	sd_event_source *reconcile_source;
	sd_event_source *retry_timer;
	sd_event_source *debounce_timer;
	sd_event_source *resync_timer;
	struct debounce debounce;
	uint64_t resync_usec;		/* safety resync interval, 0: none */
	bool resync_pending;		/* a resync is scheduled: say why only once */
	size_t last_steps;		/* steps the last reconcile planned */
	int inotify_fd;
	struct watch_table watches;	/* inotify wd → cgroup */
	struct reconcile_scope pending;	/* what the next reconcile reads */
	struct path_set known;		/* cgroups with a scheduler after the last reconcile */

	struct backoff *backoffs;
	size_t n_backoffs;
	struct counters counters;

	uint64_t settle_at;		/* look again: the kernel was mid-transition */
	uint64_t watchdog_usec;		/* WatchdogSec=, 0 if none */
	uint64_t watchdog_last;		/* when we last pinged it ourselves */
	unsigned load_workers;		/* objects loaded at once, 1: one by one */
};

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/*
 * sd-event pings the service watchdog from the loop, but one reconcile can
 * attach hundreds of schedulers (a burst of new cgroups), each a BPF load;
 * under a slow machine that outlasts WatchdogSec=. Ping between steps.
 * Before READY=1 the first reconcile runs against TimeoutStartSec=
 * instead: ask for more time as it goes (EXTEND_TIMEOUT_USEC).
 */
static void watchdog_ping(struct daemon *d)
{
	uint64_t now = now_usec();

	if (!d->ready && now - d->extend_last >= EXTEND_TIMEOUT_USEC / 3) {
		sd_notifyf(false, "EXTEND_TIMEOUT_USEC=%llu", EXTEND_TIMEOUT_USEC);
		d->extend_last = now;
	}
	if (!d->watchdog_usec)
		return;
	if (now - d->watchdog_last < d->watchdog_usec / 4)
		return;
	sd_notify(false, "WATCHDOG=1");
	d->watchdog_last = now;
}

/* ---- policy ---- */

/* Why the last load was rejected, one "file:line:column: message" a line. */
static void policy_error_set(struct daemon *d, const char *file, const char *why)
{
	free(d->reload_error);
	if (asprintf(&d->reload_error, "%s: %s", file, why) < 0)
		d->reload_error = NULL;
}

static void policy_error_from_diags(struct daemon *d, int r, const struct diag_list *diags)
{
	size_t len = 0;
	char *buf = NULL;
	FILE *f;

	if (diags->n == 0) {
		policy_error_set(d, d->policy_file, strerror(-r));
		return;
	}
	f = open_memstream(&buf, &len);
	if (!f)
		return;
	for (size_t i = 0; i < diags->n; i++)
		fprintf(f, "%s%s", i ? "\n" : "", diags->lines[i]);
	if (fclose(f) != 0) {
		free(buf);
		return;
	}
	free(d->reload_error);
	d->reload_error = buf;
}

static int policy_rejected(struct daemon *d, int r, bool keep)
{
	if (keep && d->policy)
		log_error(r, ABOUT(.file = d->policy_file, .message_id = SCXD_MESSAGE_RELOAD_REJECTED),
			  "%s: policy rejected, keeping the running policy", d->policy_file);
	return r;
}

/*
 * Load and validate the policy. With 'keep' a failure keeps what runs:
 * the errors are logged and the old policy and catalog stay. The errors
 * are kept in d->reload_error for scxdctl reload, status and STATUS=.
 */
static int load_policy(struct daemon *d, bool keep)
{
	_cleanup_(sched_dir_catalog_freep) struct sched_dir_catalog *catalog = NULL;
	_cleanup_(diag_list_donep) struct diag_list diags = {};
	_cleanup_(policy_freep) struct policy *p = NULL;
	int r;

	free(d->reload_error);
	d->reload_error = NULL;
	r = sched_dir_catalog_new_for(d->sched_base, d->api, &catalog);
	if (r < 0)
		return log_error(r, ABOUT(.file = d->policy_file), "out of memory");
	r = policy_load(d->policy_file, sched_dir_catalog_base(catalog), &diags, &p);
	if (r >= 0)	/* what this kernel cannot run is refused like any error */
		r = desired_check_kernel(p, d->api, &diags);
	for (size_t i = 0; i < diags.n; i++)
		log_error(0, ABOUT(.file = d->policy_file), "%s", diags.lines[i]);
	if (r < 0) {
		policy_error_from_diags(d, r, &diags);
		return policy_rejected(d, r, keep);
	}

	policy_free(d->policy);
	sched_dir_catalog_free(d->catalog);
	d->policy = TAKE_PTR(p);
	d->catalog = TAKE_PTR(catalog);
	d->log_notes = true;
	log_info(ABOUT(.file = d->policy_file, .message_id = keep ? SCXD_MESSAGE_RELOAD_APPLIED : NULL),
		 "%s: policy loaded, %zu entries (%zu drop-ins)", d->policy_file,
		 d->policy->n_entries, d->policy->n_files - 1);
	return 0;
}

/* ---- backoff ---- */

static struct backoff *backoff_find(struct daemon *d, const char *cgroup)
{
	for (size_t i = 0; i < d->n_backoffs; i++)
		if (streq(d->backoffs[i].cgroup, cgroup))
			return &d->backoffs[i];
	return NULL;
}

static struct backoff *backoff_get(struct daemon *d, const char *cgroup)
{
	struct backoff *b = backoff_find(d, cgroup), *v;

	if (b)
		return b;
	v = realloc(d->backoffs, (d->n_backoffs + 1) * sizeof(*v));
	if (!v)
		return NULL;
	d->backoffs = v;
	b = &d->backoffs[d->n_backoffs];
	*b = (struct backoff){ .cgroup = strdup(cgroup) };
	if (!b->cgroup)
		return NULL;
	d->n_backoffs++;
	return b;
}

/* A failure (attach error or exit): double the wait, up to the cap. */
static uint64_t backoff_fail(struct daemon *d, const char *cgroup, const char *reason)
{
	struct backoff *b = backoff_get(d, cgroup);
	uint64_t delay, now = now_usec();

	if (!b)
		return BACKOFF_CAP_USEC;
	if (b->attached_at && now - b->attached_at > STABLE_USEC)
		b->failures = 0;
	b->failures++;
	b->attached_at = 0;
	delay = b->failures >= 7 ? BACKOFF_CAP_USEC : BACKOFF_FIRST_USEC << (b->failures - 1);
	if (delay > BACKOFF_CAP_USEC)
		delay = BACKOFF_CAP_USEC;
	b->retry_at = now + delay;
	free(b->reason);
	b->reason = reason ? strdup(reason) : NULL;
	return delay;
}

static void backoff_attached(struct daemon *d, const char *cgroup)
{
	struct backoff *b = backoff_find(d, cgroup);

	if (b) {
		b->attached_at = now_usec();
		b->retry_at = 0;
	}
}

static void backoff_forget(struct daemon *d, const char *cgroup)
{
	struct backoff *b = backoff_find(d, cgroup);

	if (!b)
		return;
	free(b->cgroup);
	free(b->reason);
	free(b->last_exit);
	*b = d->backoffs[--d->n_backoffs];
}

static void arm_retry_timer(struct daemon *d)
{
	uint64_t next = d->settle_at;

	for (size_t i = 0; i < d->n_backoffs; i++)
		if (d->backoffs[i].retry_at && (!next || d->backoffs[i].retry_at < next))
			next = d->backoffs[i].retry_at;
	if (!d->retry_timer)
		return;
	if (!next) {
		sd_event_source_set_enabled(d->retry_timer, SD_EVENT_OFF);
		return;
	}
	sd_event_source_set_time(d->retry_timer, next);
	sd_event_source_set_enabled(d->retry_timer, SD_EVENT_ONESHOT);
}

/* ---- reconcile ---- */

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

static void schedule_debounced(struct daemon *d);

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
static void watch_cgroups(struct daemon *d, const struct cgroup_list *cgroups)
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

/* Keep what the kernel recorded for cgroup's last exit, for status. */
static void remember_exit(struct daemon *d, const char *cgroup, const struct sched_exit *e)
{
	struct backoff *b = backoff_get(d, cgroup);
	struct timespec ts;

	if (!b)
		return;
	if (!b->last_exit)
		b->last_exit = malloc(sizeof(*b->last_exit));
	if (!b->last_exit)
		return;
	*b->last_exit = *e;
	clock_gettime(CLOCK_REALTIME, &ts);
	b->last_exit_at = (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The scheduler running nearest above cgroup: its parent in the kernel's tree. */
static const struct sched_node *parent_sched(const struct actual_state *a, const char *cgroup)
{
	const struct sched_node *best = NULL;

	for (size_t i = 0; i < a->tree.n; i++) {
		const struct sched_node *n = &a->tree.nodes[i];

		if (!streq(n->cgroup, cgroup) && cgroup_is_below(cgroup, n->cgroup) &&
		    (!best || n->depth > best->depth))
			best = n;
	}
	return best;
}

/*
 * The scheduler on rec's cgroup was ended by its parent (SCX_EXIT_PARENT_KILL):
 * the parent's policy, not a fault of the child's. Its own MESSAGE_ID, so
 * that a parent killing its children can be told from children failing.
 */
static void log_parent_kill(struct daemon *d, const struct actual_state *a,
			    const struct pin_record *rec, const char *reason, uint64_t delay)
{
	const struct sched_node *parent = parent_sched(a, rec->cgroup);

	d->counters.parent_kills++;
	log_warning(0, ABOUT(.cgroup = rec->cgroup, .scheduler = rec->scheduler,
			     .exit_reason = reason, .message_id = SCXD_MESSAGE_PARENT_KILL),
		    "%s: scheduler %s was killed by its parent scheduler %s on %s (%s); its tasks run on the parent meanwhile, retrying in %" PRIu64 " s",
		    rec->cgroup, rec->scheduler, parent ? parent->scheduler : "(gone)",
		    parent ? parent->cgroup : "?", reason, delay / 1000000);
}

/* Pins whose scheduler the kernel no longer runs: log why, clean up. */
static void handle_exits(struct daemon *d, const struct actual_state *a,
			 const struct cgroup_list *cgroups)
{
	for (size_t i = 0; i < a->n_pins; i++) {
		const struct pin_record *rec = &a->pins[i];
		_cleanup_free_ char *reason = NULL;
		struct sched_exit e;
		uint64_t delay;
		bool gone;

		if (a->pin_live[i])
			continue;
		gone = !streq(rec->cgroup, "/") && cgroup_list_id(cgroups, rec->cgroup) != rec->cgid;
		if (apply_read_exit(&d->paths, rec, &e) == 0)
			reason = sched_exit_format(&e);
		apply_detach(&d->paths, rec->cgroup);
		d->counters.exits++;
		if (gone) {
			log_info(ABOUT(.cgroup = rec->cgroup, .scheduler = rec->scheduler,
				       .exit_reason = reason ?: "cgroup removed",
				       .message_id = SCXD_MESSAGE_DETACHED),
				 "%s: cgroup removed, scheduler %s detached%s%s", rec->cgroup,
				 rec->scheduler, reason ? ": " : "", reason ?: "");
			backoff_forget(d, rec->cgroup);
			continue;
		}
		if (reason)
			remember_exit(d, rec->cgroup, &e);
		if (reason && e.kind == SCXD_EXIT_PARENT) {
			/* Not its fault: reattached right after its parent. */
			log_info(ABOUT(.cgroup = rec->cgroup, .scheduler = rec->scheduler,
				       .exit_reason = reason, .message_id = SCXD_MESSAGE_SCHED_EXITED),
				 "%s: scheduler %s disabled with its parent (%s); reattaching it under the new parent",
				 rec->cgroup, rec->scheduler, reason);
			continue;
		}
		delay = backoff_fail(d, rec->cgroup, reason ?: "exited");
		if (reason && e.kind == SCXD_EXIT_PARENT_KILL) {
			log_parent_kill(d, a, rec, reason, delay);
			continue;
		}
		log_warning(0, ABOUT(.cgroup = rec->cgroup, .scheduler = rec->scheduler,
				     .exit_reason = reason ?: "unknown",
				     .message_id = SCXD_MESSAGE_SCHED_EXITED),
			    "%s: scheduler %s exited (%s); its tasks run on %s meanwhile, retrying in %" PRIu64 " s",
			    rec->cgroup, rec->scheduler, reason ?: "no exit info recorded",
			    streq(rec->cgroup, "/") ? "the kernel's fair class" : "the parent scheduler",
			    delay / 1000000);
	}
}

static bool below_failed(const char *const *failed, size_t n, const char *cgroup)
{
	for (size_t i = 0; i < n; i++)
		if (cgroup_is_below(cgroup, failed[i]))
			return true;
	return false;
}

/*
 * One step. An attach whose object was loaded ahead (job, see
 * load_ahead()) only commits it here; its load's failure is its failure.
 */
static int run_step(struct daemon *d, const struct plan_step *s, const struct cgroup_list *cg,
		    const char **failed, size_t *n_failed, struct apply_load_job *job)
{
	const struct sched_node *n = s->node;
	const struct backoff *b;
	_cleanup_free_ char *reason = NULL;
	uint64_t cgid;
	int r;

	if (s->op == PLAN_DETACH) {
		r = apply_detach(&d->paths, n->cgroup);
		if (r < 0)
			return log_error(r, ABOUT(.cgroup = n->cgroup, .scheduler = n->scheduler),
					 "%s: cannot detach %s: %s", n->cgroup, n->scheduler,
					 strerror(-r));
		d->counters.detaches++;
		path_set_remove(&d->known, n->cgroup);
		log_info(ABOUT(.cgroup = n->cgroup, .scheduler = n->scheduler,
			       .message_id = SCXD_MESSAGE_DETACHED),
			 "%s: detached %s (%s)", n->cgroup, n->scheduler, plan_reason_name(s->reason));
		return 0;
	}

	b = backoff_find(d, n->cgroup);
	if ((b && b->retry_at > now_usec()) || below_failed(failed, *n_failed, n->cgroup)) {
		/* Waiting (the retry timer brings us back), and so is the subtree. */
		failed[(*n_failed)++] = n->cgroup;
		return 0;
	}
	cgid = streq(n->cgroup, "/") ? 1 : cgroup_list_id(cg, n->cgroup);
	if (!cgid)
		return 0; /* vanished since the scan; the next event says so */

	if (!job) {
		r = apply_attach(&d->paths, n, cgid, &reason);
	} else if (job->r < 0) {
		r = job->r;
		reason = TAKE_PTR(job->reason);
	} else {
		r = apply_commit(&d->paths, n, cgid, &job->obj, &reason);
	}
	if (r < 0) {
		uint64_t delay = backoff_fail(d, n->cgroup, reason ?: strerror(-r));

		d->counters.attach_failures++;
		failed[(*n_failed)++] = n->cgroup;
		return log_error(r, ABOUT(.cgroup = n->cgroup, .scheduler = n->scheduler,
					  .exit_reason = reason),
				 "%s: attaching %s failed: %s; retrying in %" PRIu64 " s",
				 n->cgroup, n->scheduler, reason ?: strerror(-r), delay / 1000000);
	}
	backoff_attached(d, n->cgroup);
	d->counters.attaches++;
	path_set_add(&d->known, n->cgroup, cgid);
	log_info(ABOUT(.cgroup = n->cgroup, .scheduler = n->scheduler,
		       .file = d->policy_file, .message_id = SCXD_MESSAGE_ATTACHED),
		 "%s: attached %s (%s, cgroup id %" PRIu64 ")", n->cgroup, n->scheduler,
		 plan_reason_name(s->reason), cgid);
	return 0;
}

/* STATUS=: what runs (d->status_line), and why the last reload was rejected. */
static void notify_send_status(struct daemon *d)
{
	const char *e = d->reload_error, *nl = e ? strchr(e, '\n') : NULL;

	sd_notifyf(false, "STATUS=%s%s%.*s", d->status_line ?: "starting",
		   e ? "; last reload rejected: " : "",
		   e ? (int)(nl ? nl - e : (ptrdiff_t)strlen(e)) : 0, e ?: "");
}

static bool plan_blocks(const struct plan *plan, const char *cgroup)
{
	for (size_t i = 0; i < plan->n_blocked; i++)
		if (streq(plan->blocked[i]->cgroup, cgroup))
			return true;
	return false;
}

/*
 * STATUS= for systemctl status: "3 schedulers on 5 cgroups, policy FILE",
 * what waits to be retried, and why the last reload was rejected.
 */
static void notify_status(struct daemon *d, const struct sched_tree *want, const struct plan *plan,
			  const char *const *failed, size_t n_failed)
{
	_cleanup_free_ const char **names = calloc(want->n + 1, sizeof(*names));
	size_t n_names = 0, n_cgroups = 0, n_waiting = 0;
	char retry[64];

	if (!names)
		return;
	for (size_t i = 0; i < want->n; i++) {
		const struct sched_node *n = &want->nodes[i];
		size_t j;

		if (below_failed(failed, n_failed, n->cgroup) || plan_blocks(plan, n->cgroup))
			continue;
		n_cgroups++;
		for (j = 0; j < n_names && !streq(names[j], n->scheduler); j++)
			;
		if (j == n_names)
			names[n_names++] = n->scheduler;
	}
	for (size_t i = 0; i < d->n_backoffs; i++)
		n_waiting += d->backoffs[i].retry_at != 0;
	snprintf(retry, sizeof(retry), ", %zu waiting to retry", n_waiting);
	free(d->status_line);
	if (asprintf(&d->status_line, "%zu scheduler%s on %zu cgroup%s, policy %s%s",
		     n_names, n_names == 1 ? "" : "s", n_cgroups, n_cgroups == 1 ? "" : "s",
		     d->policy_file, n_waiting ? retry : "") < 0)
		d->status_line = NULL;
	notify_send_status(d);
}

/* Whether blocked node i is the first one its foreign node blocks. */
static bool first_blocked_by(const struct plan *plan, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (plan->blocked_by[j] == plan->blocked_by[i])
			return false;
	return true;
}

/* How many blocked nodes the foreign node 'by' blocks, and the policy's node on it. */
static size_t blocked_count(const struct plan *plan, const struct sched_node *by,
			    const struct sched_node **on_it)
{
	size_t n = 0;

	*on_it = NULL;
	for (size_t i = 0; i < plan->n_blocked; i++) {
		if (plan->blocked_by[i] != by)
			continue;
		n++;
		if (streq(plan->blocked[i]->cgroup, by->cgroup))
			*on_it = plan->blocked[i];
	}
	return n;
}

/*
 * Foreign schedulers that block what the policy wants (their subtrees):
 * one warning per foreign scheduler, once, again only after the set of
 * blocking schedulers changes. New cgroups below one do not repeat it.
 */
static void report_blocked(struct daemon *d, const struct plan *plan)
{
	_cleanup_free_ char *now = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&now, &len);

	if (!f)
		return;
	for (size_t i = 0; i < plan->n_blocked; i++)
		if (first_blocked_by(plan, i))
			fprintf(f, "%s\t%s\n", plan->blocked_by[i]->cgroup,
				plan->blocked_by[i]->scheduler);
	if (fclose(f) != 0)
		return;
	if (d->blocked_reported ? streq(d->blocked_reported, now) : !*now)
		return;
	for (size_t i = 0; i < plan->n_blocked; i++) {
		const struct sched_node *by = plan->blocked_by[i], *on_it;
		size_t n;

		if (!first_blocked_by(plan, i))
			continue;
		n = blocked_count(plan, by, &on_it);
		if (on_it)
			log_warning(0, ABOUT(.cgroup = by->cgroup, .scheduler = on_it->scheduler),
				    "%s: runs %s, which scxd did not attach; not replacing it with %s, nor attaching the %zu scheduler(s) the policy wants below it, until it is gone",
				    by->cgroup, by->scheduler, on_it->scheduler, n - 1);
		else
			log_warning(0, ABOUT(.cgroup = by->cgroup, .scheduler = by->scheduler),
				    "%s: runs %s, which scxd did not attach; not attaching the %zu scheduler(s) the policy wants below it, until it is gone",
				    by->cgroup, by->scheduler, n);
	}
	free(d->blocked_reported);
	d->blocked_reported = TAKE_PTR(now);
}

/*
 * Pins and records that name no cgroup (see actual.c): never acted on,
 * warned about once, again only after the set changes.
 */
static void report_strays(struct daemon *d, const struct actual_state *a)
{
	_cleanup_free_ char *now = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&now, &len);

	if (!f)
		return;
	for (size_t i = 0; i < a->n_strays; i++)
		fprintf(f, "%s\n", a->strays[i]);
	if (fclose(f) != 0)
		return;
	if (d->strays_reported ? streq(d->strays_reported, now) : !*now)
		return;
	for (size_t i = 0; i < a->n_strays; i++)
		log_warning(0, ABOUT(.file = d->paths.state_dir), "%s", a->strays[i]);
	free(d->strays_reported);
	d->strays_reported = TAKE_PTR(now);
}

/*
 * Children their parent left unserved long enough for the kernel to run
 * them itself (SCX_EV_SUB_RESCUE): logged when the count has grown since
 * the last reconcile that saw it. A reattached scheduler starts again
 * from 0.
 */
static void report_rescues(struct daemon *d, const struct actual_state *a,
			   const struct cgroup_list *cgroups)
{
	for (size_t i = 0; i < a->n_kernel; i++) {
		const struct kernel_sched *k = &a->kernel[i];
		const struct sched_node *n, *parent;
		const char *cgroup;
		struct backoff *b;
		uint64_t rescues;

		if (!k->events || sched_events_get(k->events, "SCX_EV_SUB_RESCUE", &rescues) < 0)
			continue;
		cgroup = k->cgid == 1 ? "/" : cgroup_list_path(cgroups, k->cgid);
		b = cgroup ? backoff_find(d, cgroup) : NULL;
		if (b && rescues < b->rescues_logged)
			b->rescues_logged = 0;
		if (!cgroup || rescues == (b ? b->rescues_logged : 0))
			continue;
		n = sched_tree_find(&a->tree, cgroup);
		if (!n || n->foreign)
			continue;	/* not scxd's to report */
		b = backoff_get(d, cgroup);
		if (!b)
			continue;
		parent = parent_sched(a, cgroup);
		log_notice(ABOUT(.cgroup = cgroup, .scheduler = n->scheduler),
			   "%s: scheduler %s rescued by the kernel %" PRIu64 " times (%" PRIu64 " since last logged): its parent scheduler %s on %s left its tasks unserved",
			   cgroup, n->scheduler, rescues, rescues - b->rescues_logged,
			   parent ? parent->scheduler : "?", parent ? parent->cgroup : "?");
		b->rescues_logged = rescues;
	}
}

static void arm_resync_timer(struct daemon *d)
{
	if (!d->resync_timer || !d->resync_usec)
		return;
	sd_event_source_set_time(d->resync_timer, now_usec() + d->resync_usec);
	sd_event_source_set_enabled(d->resync_timer, SD_EVENT_ONESHOT);
}

static void watchdog_tick(void *userdata)
{
	watchdog_ping(userdata);
}

/* Whether run_step() would try attach step s now (not waiting on a backoff). */
static bool step_loadable(struct daemon *d, const struct plan_step *s, const struct cgroup_list *cg,
			  uint64_t *cgid)
{
	const struct backoff *b;

	if (s->op != PLAN_ATTACH)
		return false;
	b = backoff_find(d, s->node->cgroup);
	if (b && b->retry_at > now_usec())
		return false;
	*cgid = streq(s->node->cgroup, "/") ? 1 : cgroup_list_id(cg, s->node->cgroup);
	return *cgid != 0;
}

/*
 * Load the objects of the next attach steps from 'from' on, up to 'max'
 * of them, d->load_workers at a time: the kernel verifies each program
 * where it is loaded, and verifying is most of an attach. Attaching stays
 * in plan order (run_step()). job_of[i] is step i's job, or NULL.
 */
static size_t load_ahead(struct daemon *d, const struct plan *plan, size_t from,
			 const struct cgroup_list *cg, struct apply_load_job *jobs, size_t max,
			 struct apply_load_job **job_of)
{
	size_t k = 0;

	for (size_t i = from; i < plan->n && k < max; i++) {
		uint64_t cgid;

		if (!step_loadable(d, &plan->steps[i], cg, &cgid))
			continue;
		jobs[k] = (struct apply_load_job){ .node = plan->steps[i].node, .cgid = cgid };
		job_of[i] = &jobs[k++];
	}
	apply_load_many(&d->paths, jobs, k, d->load_workers, watchdog_tick, d);
	return k;
}

static void load_jobs_done(struct apply_load_job *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		apply_object_done(&jobs[i].obj);
		free(jobs[i].reason);
		jobs[i] = (struct apply_load_job){};
	}
}

/*
 * The plan's steps in order. With more than one load worker, attach
 * steps are loaded ahead in windows of twice as many as there are
 * workers (a window bounds the memory of objects loaded and not yet
 * attached).
 */
static int run_steps(struct daemon *d, const struct plan *plan, const struct cgroup_list *cg,
		     const char **failed, size_t *n_failed)
{
	size_t window = d->load_workers > 1 ? 2 * d->load_workers : 0, n_jobs = 0;
	_cleanup_free_ struct apply_load_job *jobs = calloc(window + 1, sizeof(*jobs));
	_cleanup_free_ struct apply_load_job **job_of = calloc(plan->n + 1, sizeof(*job_of));

	if (!jobs || !job_of)
		return -ENOMEM;
	for (size_t i = 0; i < plan->n; i++) {
		uint64_t cgid;

		if (window && !job_of[i] && step_loadable(d, &plan->steps[i], cg, &cgid)) {
			load_jobs_done(jobs, n_jobs);
			n_jobs = load_ahead(d, plan, i, cg, jobs, window, job_of);
		}
		run_step(d, &plan->steps[i], cg, failed, n_failed, job_of[i]);
		watchdog_ping(d);
	}
	load_jobs_done(jobs, n_jobs);
	return 0;
}

/*
 * Read what the scope covers: everything, or the subtrees of its roots
 * and their ancestors. A scoped read also looks up the records of the
 * cgroups that had a scheduler below a root and are gone.
 */
static int reconcile_read(struct daemon *d, const struct reconcile_scope *scope,
			  struct cgroup_list *cgroups, struct actual_state *actual)
{
	_cleanup_free_ const char **gone = NULL;
	size_t n_gone = 0;
	int r;

	if (scope->full) {
		r = cgroup_scan(d->paths.cgroup_root, cgroups);
		if (r < 0)
			return log_error(r, ABOUT(.cgroup = "/"), "%s: cannot walk the cgroup tree: %s",
					 d->paths.cgroup_root, strerror(-r));
		r = actual_read(&d->paths, cgroups, actual);
	} else {
		r = cgroup_scan_some(d->paths.cgroup_root, (const char *const *)scope->roots,
				     scope->n_roots, cgroups);
		if (r < 0)
			return log_error(r, ABOUT(.cgroup = scope->roots[0]),
					 "%s: cannot walk the cgroup tree below %s (and %zu more): %s",
					 scope->roots[0], d->paths.cgroup_root, scope->n_roots - 1,
					 strerror(-r));
		gone = calloc(d->known.n + 1, sizeof(*gone));
		if (!gone)
			return log_error(-ENOMEM, ABOUT(.cgroup = scope->roots[0]), "out of memory");
		for (size_t k = 0; k < scope->n_roots; k++) {
			size_t first, n;

			path_set_below(&d->known, scope->roots[k], &first, &n);
			for (size_t i = first; i < first + n; i++)
				if (!cgroup_list_id(cgroups, d->known.v[i].path))
					gone[n_gone++] = d->known.v[i].path;
		}
		r = actual_read_some(&d->paths, cgroups, gone, n_gone, actual);
	}
	if (r < 0)
		return log_error(r, ABOUT(.file = d->paths.sysfs),
				 "cannot read what is attached (%s, %s): %s", d->paths.sysfs,
				 d->paths.state_dir, strerror(-r));
	return 0;
}

/* Whether a step would touch a cgroup outside the scope (an ancestor of a root). */
static bool plan_leaves_scope(const struct plan *plan, const struct reconcile_scope *scope)
{
	for (size_t i = 0; i < plan->n; i++)
		if (!scope_covers(scope, plan->steps[i].node->cgroup))
			return true;
	return false;
}

/* The cgroups with a scheduler, as just read, within the scope. */
static void known_update(struct daemon *d, const struct reconcile_scope *scope,
			 const struct sched_tree *actual, const struct cgroup_list *cgroups)
{
	if (scope->full)
		path_set_done(&d->known);
	for (size_t k = 0; k < scope->n_roots; k++)
		path_set_remove_below(&d->known, scope->roots[k]);
	for (size_t i = 0; i < actual->n; i++) {
		const char *cg = actual->nodes[i].cgroup;

		if (scope_covers(scope, cg))
			path_set_add(&d->known, cg, streq(cg, "/") ? 1 : cgroup_list_id(cgroups, cg));
	}
}

/*
 * Read the world (what d->pending covers), compute desired state and
 * plan; print or apply it. A scoped reconcile whose plan reaches outside
 * its scope (an ancestor must change first) is done again in full.
 */
static int reconcile(struct daemon *d, bool dry_run)
{
	_cleanup_(scope_donep) struct reconcile_scope scope = d->pending;
	_cleanup_(cgroup_list_donep) struct cgroup_list cgroups = {};
	_cleanup_(actual_state_donep) struct actual_state actual = {};
	_cleanup_(desired_result_donep) struct desired_result desired = {};
	_cleanup_(plan_donep) struct plan plan = {};
	_cleanup_free_ const char **failed = NULL;
	struct desired_opts opts = { .api = d->api };
	size_t n_failed = 0;
	int r;

	d->pending = (struct reconcile_scope){};
	if (!dry_run || d->serve_dry_run) {
		/* whatever happened before this point is read now */
		debounce_done(&d->debounce);
		if (d->debounce_timer)
			sd_event_source_set_enabled(d->debounce_timer, SD_EVENT_OFF);
	}
	if (scope_empty(&scope))
		return 0;	/* events about nothing we follow */
	d->counters.reconciles++;
	if (!dry_run && scope.full) {
		d->resync_pending = false;
		arm_resync_timer(d);
	}
	r = reconcile_read(d, &scope, &cgroups, &actual);
	if (r < 0)
		return r;
	watch_cgroups(d, &cgroups);
	if (scope.full)
		report_strays(d, &actual);
	d->settle_at = 0;
	if (actual.settling && !dry_run) {
		/* no uevent marks the end of enabling: poll until it is over */
		d->settle_at = now_usec() + 100 * 1000;
		scope_set_full(&d->pending);
		arm_retry_timer(d);
		return 0;
	}
	if (!dry_run) {
		handle_exits(d, &actual, &cgroups);
		report_rescues(d, &actual, &cgroups);
	}
	known_update(d, &scope, &actual.tree, &cgroups);

	r = desired_build(d->policy, (const char *const *)cgroups.paths, cgroups.n, &opts,
			  &desired);
	if (r < 0)
		return log_error(r, ABOUT(.file = d->policy_file), "out of memory");
	if (d->log_notes)
		for (size_t i = 0; i < desired.n_notes; i++)
			log_warning(0, ABOUT(.cgroup = desired.notes[i].cgroup, .file = d->policy_file),
				    "%s: %s", desired.notes[i].cgroup, desired.notes[i].message);
	d->log_notes = false;
	if (desired.unsupported_children && !d->unsupported_reported) {
		log_notice(ABOUT(.file = d->policy_file),
			   "%s: %zu cgroup(s) match child entries, but the %s; they are left out",
			   d->policy_file, desired.unsupported_children, kernel_api_limit(d->api));
		d->unsupported_reported = true;
	}

	r = plan_build(&desired.tree, &actual.tree, &plan);
	if (r < 0)
		return log_error(r, ABOUT(.file = d->policy_file), "out of memory");
	if (!scope.full && plan_leaves_scope(&plan, &scope)) {
		scope_set_full(&d->pending);
		return reconcile(d, dry_run);
	}
	if (scope.full)
		report_blocked(d, &plan);
	else
		d->counters.scoped_reconciles++;
	d->last_steps = plan.n;
	if (dry_run) {
		for (size_t i = 0; i < plan.n; i++)
			printf("%s %s %s (%s)\n", plan_op_name(plan.steps[i].op),
			       plan.steps[i].node->cgroup, plan.steps[i].node->scheduler,
			       plan_reason_name(plan.steps[i].reason));
		fflush(stdout);
		return 0;
	}

	failed = calloc(plan.n + 1, sizeof(*failed));
	if (!failed)
		return -ENOMEM;
	r = run_steps(d, &plan, &cgroups, failed, &n_failed);
	if (r < 0)
		return r;
	for (size_t i = d->n_backoffs; i-- > 0;)
		if (scope_covers(&scope, d->backoffs[i].cgroup) &&
		    !sched_tree_find(&desired.tree, d->backoffs[i].cgroup))
			backoff_forget(d, d->backoffs[i].cgroup);
	arm_retry_timer(d);
	/* the status line counts the whole tree: only a full read has it */
	if (scope.full)
		notify_status(d, &desired.tree, &plan, failed, n_failed);
	return 0;
}

/* ---- status, describe, diff: replies to scxdctl (schema in conf/status.schema.json) ---- */

static json_t *status_node(struct daemon *d, const struct sched_node *want,
			   const struct sched_node *have, const struct sched_node *blocker,
			   const struct actual_state *a, const struct cgroup_list *cg)
{
	const struct sched_node *n = want ?: have;
	const struct backoff *b = backoff_find(d, n->cgroup);
	uint64_t cgid = streq(n->cgroup, "/") ? 1 : cgroup_list_id(cg, n->cgroup);
	const struct kernel_sched *k = actual_kernel_sched(a, cgid);
	const char *state;
	json_t *o;

	if (want && blocker)
		state = "blocked";
	else if (have && have->foreign)
		state = "foreign";
	else if (want && have && sched_node_same_config(want, have))
		state = "attached";
	else if (want && have)
		state = "replace";
	else if (!want)
		state = "detach";
	else if (b && b->retry_at)
		state = "backoff";
	else
		state = "pending";

	o = json_pack("{s:s, s:I, s:s, s:I, s:s}", "cgroup", n->cgroup, "cgroup_id", (json_int_t)cgid,
		      "scheduler", n->scheduler, "depth", (json_int_t)n->depth, "state", state);
	if (!o)
		return NULL;
	if (have)
		json_object_set_new(o, "running", json_string(have->scheduler));
	if (blocker && want)
		json_object_set_new(o, "blocked_by",
				    json_pack("{s:s, s:s}", "cgroup", blocker->cgroup,
					      "scheduler", blocker->scheduler));
	if (streq(state, "backoff")) {
		uint64_t now = now_usec();

		json_object_set_new(o, "backoff",
				    json_pack("{s:I, s:I, s:s*}", "failures", (json_int_t)b->failures,
					      "retry_in_sec",
					      (json_int_t)(b->retry_at > now ? (b->retry_at - now) / 1000000 : 0),
					      "last_error", b->reason));
	}
	if (b && b->last_exit) {
		json_t *e = sched_exit_json(b->last_exit);

		if (e)
			json_object_set_new(e, "at_realtime_usec", json_integer((json_int_t)b->last_exit_at));
		json_object_set_new(o, "last_exit", e);
	}
	if (k && sched_stats_add_json(o, k->events, k->caps) < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int status_json(struct daemon *d, json_t **ret)
{
	_cleanup_(cgroup_list_donep) struct cgroup_list cg = {};
	_cleanup_(actual_state_donep) struct actual_state a = {};
	_cleanup_(desired_result_donep) struct desired_result want = {};
	_cleanup_(plan_donep) struct plan plan = {};
	struct desired_opts opts = { .api = d->api };
	json_t *o, *nodes, *ignored;
	int r;

	r = cgroup_scan(d->paths.cgroup_root, &cg);
	if (r >= 0)
		r = actual_read(&d->paths, &cg, &a);
	if (r >= 0)
		r = desired_build(d->policy, (const char *const *)cg.paths, cg.n, &opts, &want);
	if (r >= 0)
		r = plan_build(&want.tree, &a.tree, &plan);	/* for what is blocked */
	if (r < 0)
		return r;
	nodes = json_array();
	for (size_t i = 0; i < want.tree.n; i++) {
		const struct sched_node *blocker = NULL;

		for (size_t j = 0; j < plan.n_blocked; j++)
			if (plan.blocked[j] == &want.tree.nodes[i])
				blocker = plan.blocked_by[j];
		json_array_append_new(nodes, status_node(d, &want.tree.nodes[i],
							 sched_tree_find(&a.tree, want.tree.nodes[i].cgroup),
							 blocker, &a, &cg));
	}
	for (size_t i = 0; i < a.tree.n; i++)
		if (!sched_tree_find(&want.tree, a.tree.nodes[i].cgroup))
			json_array_append_new(nodes, status_node(d, NULL, &a.tree.nodes[i], NULL, &a, &cg));
	ignored = json_array();
	for (size_t i = 0; i < a.n_strays; i++)
		json_array_append_new(ignored, json_string(a.strays[i]));
	o = json_pack("{s:i, s:{s:s, s:i, s:s, s:I, s:s, s:s, s:o*}, s:o, s:o, "
			   "s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}}",
		      "schema", SCXD_STATUS_SCHEMA,
		      "daemon", "version", SCXD_VERSION, "pid", (int)getpid(),
		      "policy", d->policy_file, "policy_entries", (json_int_t)d->policy->n_entries,
		      "kernel", kernel_api_support_name(d->api), "kernel_api", kernel_api_name(d->api),
		      "last_reload_error", d->reload_error ? json_string(d->reload_error) : NULL,
		      "nodes", nodes,
		      "ignored", ignored,
		      "counters",
		      "reconciles", (json_int_t)d->counters.reconciles,
		      "attaches", (json_int_t)d->counters.attaches,
		      "attach_failures", (json_int_t)d->counters.attach_failures,
		      "detaches", (json_int_t)d->counters.detaches,
		      "exits", (json_int_t)d->counters.exits,
		      "parent_kills", (json_int_t)d->counters.parent_kills,
		      "reloads", (json_int_t)d->counters.reloads,
		      "reloads_rejected", (json_int_t)d->counters.reloads_rejected,
		      "cgroup_events", (json_int_t)d->counters.cgroup_events,
		      "kernel_events", (json_int_t)d->counters.kernel_events,
		      "resyncs", (json_int_t)d->counters.resyncs,
		      "safety_resyncs", (json_int_t)d->counters.safety_resyncs,
		      "scoped_reconciles", (json_int_t)d->counters.scoped_reconciles);
	if (!o)
		return -ENOMEM;
	*ret = o;
	return 0;
}

/* A scheduler object as the catalog read it: role and tunables. */
static int describe_json(struct daemon *d, const char *name, json_t **ret)
{
	_cleanup_(sched_dir_catalog_freep) struct sched_dir_catalog *c = NULL;
	const struct sched_info *s;
	const char *reason = NULL;
	int r;

	r = sched_dir_catalog_new_for(d->sched_base, d->api, &c);
	if (r < 0)
		return r;
	r = sched_dir_catalog_base(c)->lookup(sched_dir_catalog_base(c), name, &s, &reason);
	if (r < 0) {
		*ret = json_pack("{s:b, s:s++}", "ok", 0, "error", name, ": ", reason ?: strerror(-r));
		return *ret ? 0 : -ENOMEM;
	}
	*ret = json_pack("{s:o, s:s, s:s}", "scheduler", sched_info_json(s),
			 "kernel_api", kernel_api_name(d->api), "kernel", kernel_api_describe(d->api));
	return *ret ? 0 : -ENOMEM;
}

static json_t *diags_json(const struct diag_list *diags)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < diags->n; i++)
		json_array_append_new(a, json_string(diags->lines[i]));
	return a;
}

/*
 * What a reload with this policy text would do now: the plan against the
 * cgroups and schedulers there are, per cgroup (a detach and an attach of
 * the same cgroup are one "replace").
 */
static int diff_json(struct daemon *d, const char *file, const char *text, size_t len,
		     json_t **ret)
{
	_cleanup_(sched_dir_catalog_freep) struct sched_dir_catalog *catalog = NULL;
	_cleanup_(diag_list_donep) struct diag_list diags = {};
	_cleanup_(policy_freep) struct policy *p = NULL;
	_cleanup_(cgroup_list_donep) struct cgroup_list cg = {};
	_cleanup_(actual_state_donep) struct actual_state a = {};
	_cleanup_(desired_result_donep) struct desired_result want = {};
	_cleanup_(plan_donep) struct plan plan = {};
	struct desired_opts opts = { .api = d->api };
	json_t *changes, *o;
	int r;

	r = sched_dir_catalog_new_for(d->sched_base, d->api, &catalog);
	if (r < 0)
		return r;
	r = policy_parse(file, text, len, sched_dir_catalog_base(catalog), &diags, &p);
	if (r >= 0)
		r = desired_check_kernel(p, d->api, &diags);
	if (r < 0) {
		*ret = json_pack("{s:b, s:s, s:o}", "ok", 0, "error", "the policy is not valid",
				 "errors", diags_json(&diags));
		return *ret ? 0 : -ENOMEM;
	}
	r = cgroup_scan(d->paths.cgroup_root, &cg);
	if (r >= 0)
		r = actual_read(&d->paths, &cg, &a);
	if (r >= 0)
		r = desired_build(p, (const char *const *)cg.paths, cg.n, &opts, &want);
	if (r >= 0)
		r = plan_build(&want.tree, &a.tree, &plan);
	if (r < 0)
		return r;

	changes = json_array();
	for (size_t i = 0; i < plan.n; i++) {
		const struct plan_step *s = &plan.steps[i];
		const char *cgroup = s->node->cgroup;
		const struct plan_step *other = NULL;

		for (size_t j = 0; j < plan.n; j++)
			if (j != i && plan.steps[j].op != s->op && streq(plan.steps[j].node->cgroup, cgroup))
				other = &plan.steps[j];
		if (other && s->op == PLAN_DETACH)
			continue;	/* said with its attach */
		if (other)
			o = json_pack("{s:s, s:s, s:s, s:s, s:s}", "cgroup", cgroup, "action", "replace",
				      "scheduler", s->node->scheduler, "from", other->node->scheduler,
				      "reason", plan_reason_name(s->reason));
		else
			o = json_pack("{s:s, s:s, s:s, s:s}", "cgroup", cgroup,
				      "action", plan_op_name(s->op), "scheduler", s->node->scheduler,
				      "reason", plan_reason_name(s->reason));
		json_array_append_new(changes, o);
	}
	o = json_array();
	for (size_t i = 0; i < plan.n_blocked; i++)
		json_array_append_new(o, json_pack("{s:s, s:s}", "cgroup", plan.blocked[i]->cgroup,
						   "scheduler", plan.blocked[i]->scheduler));
	*ret = json_pack("{s:s, s:I, s:o, s:o}", "policy", file, "entries", (json_int_t)p->n_entries,
			 "changes", changes, "blocked", o);
	return *ret ? 0 : -ENOMEM;
}

/* ---- events ---- */

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

/*
 * Reload the policy and apply it. systemd hears RELOADING=1 (with the
 * time, as it asks) and READY=1 once the outcome is known; scxdctl reload
 * gets the outcome in its reply.
 */
static int reload(struct daemon *d)
{
	int r;

	sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, now_usec());
	r = load_policy(d, true);
	if (r < 0)
		d->counters.reloads_rejected++;
	else
		d->counters.reloads++;
	if (r == 0) {
		scope_set_full(&d->pending);
		reconcile(d, d->serve_dry_run);
	}
	else
		notify_send_status(d);
	sd_notify(false, "READY=1");
	return r;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	log_info(ABOUT(.file = ((struct daemon *)userdata)->policy_file), "SIGHUP: reloading %s",
		 ((struct daemon *)userdata)->policy_file);
	reload(userdata);
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

/* "a\nb" → ["a", "b"] */
static json_t *lines_json(const char *text)
{
	_cleanup_free_ char *copy = text ? strdup(text) : NULL;
	json_t *a = json_array();
	char *save = NULL;

	if (!copy || !a)
		return a;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		json_array_append_new(a, json_string(l));
	return a;
}

/* A request from scxdctl the peer may make (control.c checked). */
static int on_control_request(void *userdata, const struct control_peer *peer,
			      const char *command, json_t *request, json_t **reply)
{
	struct daemon *d = userdata;
	int r;

	if (streq(command, "status")) {
		json_t *status;

		r = status_json(d, &status);
		if (r < 0)
			return r;
		*reply = json_pack("{s:o}", "status", status);
		return *reply ? 0 : -ENOMEM;
	}
	if (streq(command, "describe")) {
		const char *name = json_string_value(json_object_get(request, "scheduler"));

		if (!name) {
			*reply = json_pack("{s:b, s:s}", "ok", 0, "error", "describe needs \"scheduler\"");
			return *reply ? 0 : -ENOMEM;
		}
		return describe_json(d, name, reply);
	}
	if (streq(command, "diff")) {
		json_t *text = json_object_get(request, "policy");
		const char *file = json_string_value(json_object_get(request, "file"));

		if (!json_is_string(text)) {
			*reply = json_pack("{s:b, s:s}", "ok", 0, "error", "diff needs \"policy\" (the file's text)");
			return *reply ? 0 : -ENOMEM;
		}
		return diff_json(d, file ?: "(policy)", json_string_value(text),
				 json_string_length(text), reply);
	}
	/* reload */
	log_info(ABOUT(.file = d->policy_file), "scxdctl reload (pid %d): reloading %s",
		 (int)peer->pid, d->policy_file);
	r = reload(d);
	if (r < 0)
		*reply = json_pack("{s:b, s:s, s:o}", "ok", 0,
				   "error", "policy rejected, the running policy stays",
				   "errors", lines_json(d->reload_error));
	else
		*reply = json_pack("{s:s, s:I}", "policy", d->policy_file,
				   "entries", (json_int_t)d->policy->n_entries);
	return *reply ? 0 : -ENOMEM;
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

static int setup_events(struct daemon *d)
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

	r = control_server_new(d->event, d->control_path, d->control_group, on_control_request, d,
			       &d->control);
	if (r < 0)
		return log_error(r, ABOUT(.file = d->control_path), "%s: cannot listen: %s; exiting",
				 d->control_path, strerror(-r));
	return 0;
}

static void daemon_done(struct daemon *d)
{
	for (size_t i = 0; i < d->n_backoffs; i++) {
		free(d->backoffs[i].cgroup);
		free(d->backoffs[i].reason);
		free(d->backoffs[i].last_exit);
	}
	free(d->backoffs);
	free(d->blocked_reported);
	free(d->strays_reported);
	free(d->reload_error);
	free(d->status_line);
	control_server_free(d->control);
	sd_event_source_unref(d->reconcile_source);
	sd_event_source_unref(d->retry_timer);
	sd_event_source_unref(d->debounce_timer);
	sd_event_source_unref(d->resync_timer);
	sd_event_unref(d->event);
	if (d->inotify_fd >= 0)
		close(d->inotify_fd);
	watch_table_done(&d->watches);
	scope_done(&d->pending);
	path_set_done(&d->known);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	policy_free(d->policy);
	sched_dir_catalog_free(d->catalog);
}

/* ---- one instance ---- */

/*
 * Take <state dir>/scxd.lock: an flock() on an fd kept open for as long as
 * scxd runs (the kernel drops it when the process dies, however it dies),
 * with the holder's pid written in the file for the next one's message.
 * Returns -EBUSY with *holder set when another scxd has it; the caller
 * then leaves the control socket, which is the other one's, alone.
 */
static int instance_lock(struct daemon *d, pid_t *holder)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	char buf[32];
	ssize_t n;
	int len;

	if (asprintf(&path, "%s/scxd.lock", d->paths.state_dir) < 0)
		return -ENOMEM;
	if (mkdir(d->paths.state_dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK)
			return -errno;
		n = pread(fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		*holder = (pid_t)strtol(buf, NULL, 10);
		return -EBUSY;
	}
	len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, len, 0) != len)
		return -errno;
	d->lock_fd = TAKE_FD(fd);
	return 0;
}

/* ---- command line ---- */

static int describe(struct daemon *d, const char *name)
{
	_cleanup_(sched_dir_catalog_freep) struct sched_dir_catalog *c = NULL;
	const struct sched_info *s;
	const char *reason = NULL;
	int r;

	r = sched_dir_catalog_new_for(d->sched_base, d->api, &c);
	if (r < 0)
		return r;
	r = sched_dir_catalog_base(c)->lookup(sched_dir_catalog_base(c), name, &s, &reason);
	if (r < 0) {
		fprintf(stderr, "scxd: %s: %s\n", name, reason ?: strerror(-r));
		return r;
	}
	printf("%s (%s): %s children\n", s->name, s->path,
	       s->can_host_children ? "can host" : "cannot host");
	printf("  kernel: %s\n", kernel_api_describe(d->api));
	for (size_t i = 0; i < s->n_tunables; i++) {
		const struct sched_tunable *t = &s->tunables[i];
		char type[16];

		sched_tunable_type_name(t, type, sizeof(type));
		if (t->kind == TUNABLE_ENUM) {
			printf("  %-24s enum, default %" PRId64 ":", t->name, (int64_t)t->default_raw);
			for (size_t e = 0; e < t->n_enumerators; e++)
				printf(" %s=%" PRId64, t->enumerators[e].name, t->enumerators[e].value);
			printf("\n");
		} else if (t->is_signed) {
			int64_t v = (int64_t)(t->default_raw << (64 - 8 * t->size)) >> (64 - 8 * t->size);

			printf("  %-24s %s, default %" PRId64 "\n", t->name, type, v);
		} else {
			printf("  %-24s %s, default %" PRIu64 "\n", t->name, type, t->default_raw);
		}
	}
	return 0;
}

static void help(void)
{
	printf("Usage: scxd [OPTIONS]\n"
	       "       scxd --check FILE | --describe SCHEDULER | --dry-run [--serve] | --version\n\n"
	       "Keeps sched_ext schedulers attached to cgroups as the policy says.\n\n"
	       "  -p --policy FILE     policy file (default %s)\n"
	       "  -s --sched-dir DIR   scheduler objects (default $SCXD_SCHED_DIR or %s)\n"
	       "     --check FILE      validate FILE and exit: 0 only if it is valid\n"
	       "     --describe NAME   list a scheduler's tunables from its BTF\n"
	       "     --dry-run         print the plan for the current state and exit\n"
	       "     --serve           with --dry-run: keep running and answer scxdctl, apply nothing\n"
	       "     --control-group=GROUP  members of GROUP may use scxdctl's read-only commands\n"
	       "     --cgroup-root DIR cgroup2 mount (default /sys/fs/cgroup)\n"
	       "     --pin-dir DIR     bpffs directory for links (default /sys/fs/bpf/scxd)\n"
	       "     --state-dir DIR   runtime state and control socket (default /run/scxd)\n"
	       "     --sysfs DIR       the kernel's sched_ext sysfs tree (default /sys/kernel/sched_ext)\n"
	       "     --no-strict-modes do not refuse files others can write (development only)\n"
	       "     --kernel-api=auto|cid|cpu|root-only|none  the kernel's sched_ext API (default\n"
	       "                       auto: ask its BTF); cid loads the objects in DIR/cid\n"
	       "     --btf FILE        the kernel's BTF (default /sys/kernel/btf/vmlinux)\n"
	       "     --load-workers N  load (verify) up to N scheduler objects at once; attaching\n"
	       "                       stays parents first (default %d)\n"
	       "     --resync-interval SEC  read the whole state again SEC s after the last\n"
	       "                       reconcile, in case an event was missed (default %d, 0: never)\n"
	       "  -v --verbose         log debug messages\n"
	       "  -h --help            this text\n"
	       "     --version         print the version and exit\n",
	       SCXD_POLICY, SCXD_SCHED_DIR, LOAD_WORKERS_DEFAULT, RESYNC_DEFAULT_SEC);
}

enum { OPT_CHECK = 256, OPT_DESCRIBE, OPT_DRY_RUN, OPT_CGROUP_ROOT, OPT_PIN_DIR,
       OPT_STATE_DIR, OPT_NO_STRICT, OPT_SYSFS, OPT_SUB_SCHED, OPT_RESYNC_INTERVAL, OPT_SERVE,
       OPT_CONTROL_GROUP, OPT_VERSION, OPT_LOAD_WORKERS, OPT_KERNEL_API, OPT_BTF };

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "sched-dir", required_argument, NULL, 's' },
		{ "check", required_argument, NULL, OPT_CHECK },
		{ "describe", required_argument, NULL, OPT_DESCRIBE },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "cgroup-root", required_argument, NULL, OPT_CGROUP_ROOT },
		{ "pin-dir", required_argument, NULL, OPT_PIN_DIR },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "sysfs", required_argument, NULL, OPT_SYSFS },
		{ "no-strict-modes", no_argument, NULL, OPT_NO_STRICT },
		{ "sub-sched", required_argument, NULL, OPT_SUB_SCHED },
		{ "kernel-api", required_argument, NULL, OPT_KERNEL_API },
		{ "btf", required_argument, NULL, OPT_BTF },
		{ "resync-interval", required_argument, NULL, OPT_RESYNC_INTERVAL },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "serve", no_argument, NULL, OPT_SERVE },
		{ "control-group", required_argument, NULL, OPT_CONTROL_GROUP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "load-workers", required_argument, NULL, OPT_LOAD_WORKERS },
		{}
	};
	struct daemon d = {
		.policy_file = SCXD_POLICY,
		.paths = {
			.cgroup_root = "/sys/fs/cgroup",
			.sysfs = "/sys/kernel/sched_ext",
			.pin_dir = "/sys/fs/bpf/scxd",
			.state_dir = "/run/scxd",
		},
		.sched_base = getenv("SCXD_SCHED_DIR") ?: SCXD_SCHED_DIR,
		.inotify_fd = -1,
		.pending = { .full = true },
		.load_workers = LOAD_WORKERS_DEFAULT,
		.resync_usec = RESYNC_DEFAULT_SEC * 1000000ULL,
		.lock_fd = -1,
		.control_group = (gid_t)-1,
	};
	const char *check = NULL, *describe_name = NULL, *control_group = NULL;
	bool serve = false;
	pid_t holder = 0;
	_cleanup_free_ char *control = NULL, *sched_dir = NULL;
	const char *kernel_api = "auto";
	bool dry_run = false;
	int c, r;

	while ((c = getopt_long(argc, argv, "p:s:vh", options, NULL)) >= 0) {
		switch (c) {
		case 'p': d.policy_file = optarg; break;
		case 's': d.sched_base = optarg; break;
		case OPT_CHECK: check = optarg; break;
		case OPT_DESCRIBE: describe_name = optarg; break;
		case OPT_DRY_RUN: dry_run = true; break;
		case OPT_CGROUP_ROOT: d.paths.cgroup_root = optarg; break;
		case OPT_PIN_DIR: d.paths.pin_dir = optarg; break;
		case OPT_STATE_DIR: d.paths.state_dir = optarg; break;
		case OPT_SYSFS: d.paths.sysfs = optarg; break;
		case OPT_NO_STRICT: strict_modes = false; break;
		case OPT_SUB_SCHED:	/* the older spelling: yes is cpu, no root-only */
			kernel_api = streq(optarg, "yes") ? "cpu" : streq(optarg, "no") ? "root-only" : optarg;
			break;
		case OPT_KERNEL_API: kernel_api = optarg; break;
		case OPT_BTF: d.paths.kernel_btf = optarg; break;
		case OPT_RESYNC_INTERVAL: {
			char *end = NULL;
			unsigned long long sec;

			errno = 0;
			sec = strtoull(optarg, &end, 10);
			if (errno || !end || *end || end == optarg || *optarg == '-' ||
			    sec > 7 * 24 * 3600) {
				fprintf(stderr, "scxd: --resync-interval: \"%s\" is not a number of seconds up to a week\n",
					optarg);
				return 2;
			}
			d.resync_usec = sec * 1000000ULL;
			break;
		}
		case 'v': log_max_priority = LOG_DEBUG; break;
		case 'h': help(); return 0;
		case OPT_SERVE: serve = true; break;
		case OPT_CONTROL_GROUP: control_group = optarg; break;
		case OPT_VERSION: printf("scxd %s\n", SCXD_VERSION); return 0;
		case OPT_LOAD_WORKERS: {
			char *end = NULL;
			unsigned long n;

			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || !end || *end || end == optarg || n < 1 || n > APPLY_LOAD_WORKERS_MAX) {
				fprintf(stderr, "scxd: --load-workers: \"%s\" is not a number from 1 to %d\n",
					optarg, APPLY_LOAD_WORKERS_MAX);
				return 2;
			}
			d.load_workers = n;
			break;
		}
		default: return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "scxd: unexpected argument \"%s\"\n", argv[optind]);
		return 2;
	}
	if (serve && !dry_run) {
		fprintf(stderr, "scxd: --serve goes with --dry-run\n");
		return 2;
	}
	if (control_group) {
		struct group *g = getgrnam(control_group);

		if (!g) {
			fprintf(stderr, "scxd: --control-group=%s: no such group\n", control_group);
			return 2;
		}
		d.control_group = g->gr_gid;
	}
	/* --kernel-api overrides what the kernel's BTF says (for --check and --dry-run). */
	if (kernel_api_option(kernel_api, d.paths.kernel_btf, &d.api) < 0) {
		fprintf(stderr, "scxd: --kernel-api=%s: not auto, cid, cpu, root-only or none\n", kernel_api);
		return 2;
	}
	sched_dir = kernel_api_sched_dir(d.api, d.sched_base);
	if (!sched_dir)
		return 1;
	d.paths.sched_dir = sched_dir;
	if (check)
		return scxd_check(check, d.sched_base, d.api) < 0 ? 1 : 0;
	if (describe_name)
		return describe(&d, describe_name) < 0 ? 1 : 0;

	if (asprintf(&control, "%s/control", d.paths.state_dir) < 0)
		return 1;
	d.control_path = control;
	if (load_policy(&d, false) < 0) {
		log_error(0, ABOUT(.file = d.policy_file), "%s: no valid policy, exiting", d.policy_file);
		return 1;
	}
	if (dry_run && !serve) {
		r = reconcile(&d, true);
		daemon_done(&d);
		return r < 0 ? 1 : 0;
	}
	d.serve_dry_run = serve;
	log_info(ABOUT(.file = d.paths.kernel_btf ?: "/sys/kernel/btf/vmlinux"),
		 "kernel: %s%s; scheduler objects from %s", kernel_api_describe(d.api),
		 streq(kernel_api, "auto") ? "" : " (as --kernel-api says)", d.paths.sched_dir);
	if (!serve && geteuid() != 0) {
		daemon_done(&d);
		log_error(-EPERM, NULL, "scxd must run as root (it loads BPF schedulers)");
		return 1;
	}
	if (d.api == KERNEL_API_NONE)
		log_warning(0, ABOUT(.file = d.paths.kernel_btf ?: "/sys/kernel/btf/vmlinux"),
			    "%s: no sched_ext_ops in the kernel's BTF, or no BTF: nothing can be attached",
			    d.paths.kernel_btf ?: "/sys/kernel/btf/vmlinux");

	r = instance_lock(&d, &holder);
	if (r == -EBUSY) {
		log_error(r, ABOUT(.file = d.paths.state_dir),
			  "another scxd (pid %d) is running with the state directory %s; exiting and leaving its socket %s alone",
			  (int)holder, d.paths.state_dir, d.control_path);
		daemon_done(&d);
		return 3;
	}
	if (r < 0) {
		log_error(r, ABOUT(.file = d.paths.state_dir), "%s/scxd.lock: cannot take the lock: %s; exiting",
			  d.paths.state_dir, strerror(-r));
		daemon_done(&d);
		return 1;
	}
	r = setup_events(&d);
	if (r < 0) {
		daemon_done(&d);
		return 1;
	}
	watchdog_ping(&d);	/* the first EXTEND_TIMEOUT_USEC */
	reconcile(&d, d.serve_dry_run);
	d.ready = true;
	sd_notify(false, "READY=1");
	r = sd_event_loop(d.event);
	sd_notify(false, "STOPPING=1");
	/* ours (we hold the lock): scxdctl then says scxd is not running */
	control_server_free(TAKE_PTR(d.control));
	unlink(d.control_path);
	log_info(ABOUT(.file = d.policy_file),
		 "exiting; attached schedulers stay pinned under %s for the next scxd to adopt",
		 d.paths.pin_dir);
	daemon_done(&d);
	return r < 0 ? 1 : 0;
}
