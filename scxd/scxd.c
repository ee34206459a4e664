// SPDX-License-Identifier: GPL-2.0
/*
 * scxd: keeps the kernel's tree of sched_ext schedulers equal to the
 * policy as cgroups come and go.
 *
 * The loop is sd-event. Nothing polls: a reconcile runs when the cgroup
 * tree changes (inotify), when the kernel's sched_ext sysfs tree changes
 * (kobject uevents: a scheduler was enabled or exited), on SIGHUP or
 * `scxctl reload`, and when a backoff timer for a failed scheduler
 * expires. Each reconcile reads the world afresh (cgroups, sysfs, scxd's
 * pins), computes desired state and plan, and applies the plan.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/netlink.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#include "log.h"
#include "plan.h"
#include "policy.h"
#include "sched-info.h"
#include "strict.h"
#include "util.h"

#ifndef SCXD_SCHED_DIR
#define SCXD_SCHED_DIR "/usr/lib/scxd"
#endif
#ifndef SCXD_POLICY
#define SCXD_POLICY "/etc/scxd/policy.json"
#endif

#define BACKOFF_FIRST_USEC (1 * 1000000ULL)
#define BACKOFF_CAP_USEC (60 * 1000000ULL)
#define STABLE_USEC (60 * 1000000ULL)	/* up this long: failures are forgiven */

struct backoff {
	char *cgroup;
	unsigned failures;
	uint64_t retry_at;	/* CLOCK_MONOTONIC usec */
	uint64_t attached_at;
	char *reason;
};

struct counters {
	unsigned reconciles, attaches, detaches, exits, attach_failures;
	unsigned reloads, reloads_rejected, cgroup_events, kernel_events;
};

struct daemon {
	struct scxd_paths paths;
	const char *policy_file;
	const char *control_path;
	struct sched_dir_catalog *catalog;
	struct policy *policy;
	int sub_sched;			/* 1 yes, 0 no, < 0 no sched_ext */
	bool unsupported_reported;
	bool log_notes;
	char *blocked_reported;		/* "cgroup\tsched\n"... already warned about */

	sd_event *event;
	sd_event_source *reconcile_source;
	sd_event_source *retry_timer;
	int inotify_fd;

	struct backoff *backoffs;
	size_t n_backoffs;
	struct counters counters;

	uint64_t settle_at;		/* look again: the kernel was mid-transition */
	uint64_t watchdog_usec;		/* WatchdogSec=, 0 if none */
	uint64_t watchdog_last;		/* when we last pinged it ourselves */
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
 */
static void watchdog_ping(struct daemon *d)
{
	uint64_t now;

	if (!d->watchdog_usec)
		return;
	now = now_usec();
	if (now - d->watchdog_last < d->watchdog_usec / 4)
		return;
	sd_notify(false, "WATCHDOG=1");
	d->watchdog_last = now;
}

/* ---- policy ---- */

static int policy_rejected(struct daemon *d, int r, bool keep)
{
	if (keep && d->policy)
		log_error(r, ABOUT(.file = d->policy_file),
			  "%s: policy rejected, keeping the running policy", d->policy_file);
	return r;
}

/*
 * Load and validate the policy. With 'keep' a failure keeps what runs:
 * the errors are logged and the old policy and catalog stay.
 */
static int load_policy(struct daemon *d, bool keep)
{
	_cleanup_(sched_dir_catalog_freep) struct sched_dir_catalog *catalog = NULL;
	_cleanup_(diag_list_donep) struct diag_list diags = {};
	_cleanup_(policy_freep) struct policy *p = NULL;
	int r;

	r = sched_dir_catalog_new(d->paths.sched_dir, &catalog);
	if (r < 0)
		return log_error(r, ABOUT(.file = d->policy_file), "out of memory");
	r = policy_load(d->policy_file, sched_dir_catalog_base(catalog), &diags, &p);
	for (size_t i = 0; i < diags.n; i++)
		log_error(0, ABOUT(.file = d->policy_file), "%s", diags.lines[i]);
	if (r < 0)
		return policy_rejected(d, r, keep);

	policy_free(d->policy);
	sched_dir_catalog_free(d->catalog);
	d->policy = TAKE_PTR(p);
	d->catalog = TAKE_PTR(catalog);
	d->log_notes = true;
	log_info(ABOUT(.file = d->policy_file), "%s: policy loaded, %zu entries (%zu drop-ins)",
		 d->policy_file, d->policy->n_entries, d->policy->n_files - 1);
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

static void watch_cgroups(struct daemon *d, const struct cgroup_list *cgroups)
{
	char path[4096];

	if (d->inotify_fd < 0)
		return;
	for (size_t i = 0; i < cgroups->n; i++) {
		snprintf(path, sizeof(path), "%s%s", d->paths.cgroup_root,
			 streq(cgroups->paths[i], "/") ? "" : cgroups->paths[i]);
		/* Adding a watch again returns the same one: idempotent. */
		if (inotify_add_watch(d->inotify_fd, path,
				      IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
				      IN_ONLYDIR) < 0 && errno != ENOENT)
			log_warning(-errno, ABOUT(.cgroup = cgroups->paths[i]),
				    "%s: cannot watch for new cgroups: %m", cgroups->paths[i]);
	}
}

/* Pins whose scheduler the kernel no longer runs: log why, clean up. */
static void handle_exits(struct daemon *d, const struct actual_state *a,
			 const struct cgroup_list *cgroups)
{
	for (size_t i = 0; i < a->n_pins; i++) {
		const struct pin_record *rec = &a->pins[i];
		_cleanup_free_ char *reason = NULL;
		uint64_t delay;
		bool gone;
		int kind;

		if (a->pin_live[i])
			continue;
		gone = !streq(rec->cgroup, "/") && cgroup_list_id(cgroups, rec->cgroup) != rec->cgid;
		reason = apply_read_exit(&d->paths, rec, &kind);
		apply_detach(&d->paths, rec->cgroup);
		d->counters.exits++;
		if (gone) {
			log_info(ABOUT(.cgroup = rec->cgroup, .scheduler = rec->scheduler,
				       .exit_reason = reason ?: "cgroup removed"),
				 "%s: cgroup removed, scheduler %s detached%s%s", rec->cgroup,
				 rec->scheduler, reason ? ": " : "", reason ?: "");
			backoff_forget(d, rec->cgroup);
			continue;
		}
		if (kind == SCXD_EXIT_PARENT) {
			/* Not its fault: reattached right after its parent. */
			log_info(ABOUT(.cgroup = rec->cgroup, .scheduler = rec->scheduler,
				       .exit_reason = reason),
				 "%s: scheduler %s disabled with its parent (%s); reattaching it under the new parent",
				 rec->cgroup, rec->scheduler, reason);
			continue;
		}
		delay = backoff_fail(d, rec->cgroup, reason ?: "exited");

		log_warning(0, ABOUT(.cgroup = rec->cgroup, .scheduler = rec->scheduler,
				     .exit_reason = reason ?: "unknown"),
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

static int run_step(struct daemon *d, const struct plan_step *s, const struct cgroup_list *cg,
		    const char **failed, size_t *n_failed)
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
		log_info(ABOUT(.cgroup = n->cgroup, .scheduler = n->scheduler),
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

	r = apply_attach(&d->paths, n, cgid, &reason);
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
	log_info(ABOUT(.cgroup = n->cgroup, .scheduler = n->scheduler),
		 "%s: attached %s (%s, cgroup id %" PRIu64 ")", n->cgroup, n->scheduler,
		 plan_reason_name(s->reason), cgid);
	return 0;
}

static void notify_status(struct daemon *d, size_t attached)
{
	sd_notifyf(false, "STATUS=%zu schedulers attached, %zu waiting to retry, policy %s",
		   attached, d->n_backoffs, d->policy_file);
}

/*
 * Desired nodes on cgroups where a scheduler scxd did not attach runs:
 * warned about once, again only after the set changes.
 */
static void report_blocked(struct daemon *d, const struct plan *plan,
			   const struct sched_tree *actual)
{
	_cleanup_free_ char *now = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&now, &len);

	if (!f)
		return;
	for (size_t i = 0; i < plan->n_blocked; i++)
		fprintf(f, "%s\t%s\n", plan->blocked[i]->cgroup, plan->blocked[i]->scheduler);
	if (fclose(f) != 0)
		return;
	if (d->blocked_reported && streq(d->blocked_reported, now))
		return;
	for (size_t i = 0; i < plan->n_blocked; i++) {
		const struct sched_node *n = plan->blocked[i];
		const struct sched_node *other = sched_tree_find(actual, n->cgroup);

		log_warning(0, ABOUT(.cgroup = n->cgroup, .scheduler = n->scheduler),
			    "%s: runs %s, which scxd did not attach; not replacing it with %s",
			    n->cgroup, other ? other->scheduler : "another scheduler", n->scheduler);
	}
	free(d->blocked_reported);
	d->blocked_reported = TAKE_PTR(now);
}

/* Read the world, compute desired state and plan; print or apply it. */
static int reconcile(struct daemon *d, bool dry_run)
{
	_cleanup_(cgroup_list_donep) struct cgroup_list cgroups = {};
	_cleanup_(actual_state_donep) struct actual_state actual = {};
	_cleanup_(desired_result_donep) struct desired_result desired = {};
	_cleanup_(plan_donep) struct plan plan = {};
	_cleanup_free_ const char **failed = NULL;
	struct desired_opts opts = { .sub_sched_supported = d->sub_sched == 1 };
	size_t n_failed = 0;
	int r;

	d->counters.reconciles++;
	r = cgroup_scan(d->paths.cgroup_root, &cgroups);
	if (r < 0)
		return log_error(r, ABOUT(.cgroup = "/"), "%s: cannot walk the cgroup tree: %s",
				 d->paths.cgroup_root, strerror(-r));
	if (!dry_run)
		watch_cgroups(d, &cgroups);
	r = actual_read(&d->paths, &cgroups, &actual);
	if (r < 0)
		return log_error(r, ABOUT(.file = d->paths.sysfs),
				 "cannot read what is attached (%s, %s): %s", d->paths.sysfs,
				 d->paths.state_dir, strerror(-r));
	d->settle_at = 0;
	if (actual.settling && !dry_run) {
		/* no uevent marks the end of enabling: poll until it is over */
		d->settle_at = now_usec() + 100 * 1000;
		arm_retry_timer(d);
		return 0;
	}
	if (!dry_run)
		handle_exits(d, &actual, &cgroups);

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
			   "%s: %zu cgroup(s) match child entries, but this kernel has no sched_ext sub-scheduler support (sched_ext_ops.sub_cgroup_id); only the root entry is applied",
			   d->policy_file, desired.unsupported_children);
		d->unsupported_reported = true;
	}

	r = plan_build(&desired.tree, &actual.tree, &plan);
	if (r < 0)
		return log_error(r, ABOUT(.file = d->policy_file), "out of memory");
	report_blocked(d, &plan, &actual.tree);
	if (dry_run) {
		for (size_t i = 0; i < plan.n; i++)
			printf("%s %s %s (%s)\n", plan_op_name(plan.steps[i].op),
			       plan.steps[i].node->cgroup, plan.steps[i].node->scheduler,
			       plan_reason_name(plan.steps[i].reason));
		return 0;
	}

	failed = calloc(plan.n + 1, sizeof(*failed));
	if (!failed)
		return -ENOMEM;
	for (size_t i = 0; i < plan.n; i++) {
		run_step(d, &plan.steps[i], &cgroups, failed, &n_failed);
		watchdog_ping(d);
	}
	for (size_t i = d->n_backoffs; i-- > 0;)
		if (!sched_tree_find(&desired.tree, d->backoffs[i].cgroup))
			backoff_forget(d, d->backoffs[i].cgroup);
	arm_retry_timer(d);
	notify_status(d, desired.tree.n - n_failed);
	return 0;
}

/* ---- status ---- */

static void print_events(FILE *f, const char *events, const char *indent)
{
	_cleanup_free_ char *copy = events ? strdup(events) : NULL;
	char *save = NULL;
	bool first = true;

	if (!copy)
		return;
	fprintf(f, "%sevents:", indent);
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		fprintf(f, "%s%s", first ? " " : ", ", line);
		first = false;
	}
	fputc('\n', f);
}

static void status_row(FILE *f, struct daemon *d, const struct sched_node *want,
		       const struct sched_node *have, const struct actual_state *a,
		       const struct cgroup_list *cg)
{
	const struct sched_node *n = want ?: have;
	const struct backoff *b = backoff_find(d, n->cgroup);
	const struct kernel_sched *k;
	char state[600];
	uint64_t cgid = streq(n->cgroup, "/") ? 1 : cgroup_list_id(cg, n->cgroup);
	char indent[32];
	size_t depth = n->depth ? n->depth - 1 : 0;

	if (have && have->foreign)
		snprintf(state, sizeof(state), "foreign (%s, not attached by scxd)", have->scheduler);
	else if (want && have && sched_node_same_config(want, have))
		snprintf(state, sizeof(state), "attached");
	else if (want && have)
		snprintf(state, sizeof(state), "attached as %s, to be replaced", have->scheduler);
	else if (!want)
		snprintf(state, sizeof(state), "attached, to be detached");
	else if (b && b->retry_at)
		snprintf(state, sizeof(state), "backoff: %u failures, retry in %" PRIu64 " s, last: %.400s",
			 b->failures,
			 b->retry_at > now_usec() ? (b->retry_at - now_usec()) / 1000000 : 0,
			 b->reason ?: "?");
	else
		snprintf(state, sizeof(state), "pending");

	snprintf(indent, sizeof(indent), "%*s", (int)(2 * (depth < 8 ? depth : 8)), "");
	fprintf(f, "%s%-*s %-10s %s\n", indent, (int)(40 - strlen(indent)), n->cgroup,
		n->scheduler, state);
	k = actual_kernel_sched(a, cgid);
	if (k && k->events) {
		strcat(indent, "    ");
		print_events(f, k->events, indent);
	}
}

static int status_text(struct daemon *d, char **ret)
{
	_cleanup_(cgroup_list_donep) struct cgroup_list cg = {};
	_cleanup_(actual_state_donep) struct actual_state a = {};
	_cleanup_(desired_result_donep) struct desired_result want = {};
	struct desired_opts opts = { .sub_sched_supported = d->sub_sched == 1 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	r = cgroup_scan(d->paths.cgroup_root, &cg);
	if (r >= 0)
		r = actual_read(&d->paths, &cg, &a);
	if (r >= 0)
		r = desired_build(d->policy, (const char *const *)cg.paths, cg.n, &opts, &want);
	if (r < 0)
		return r;
	f = open_memstream(&buf, &len);
	if (!f)
		return -ENOMEM;
	fprintf(f, "policy: %s (%zu entries)\n", d->policy_file, d->policy->n_entries);
	fprintf(f, "kernel: %s\n",
		d->sub_sched == 1 ? "sched_ext with sub-scheduler support" :
		d->sub_sched == 0 ? "sched_ext without sub-scheduler support: only the root entry applies" :
				    "no sched_ext");
	fprintf(f, "%-40s %-10s %s\n", "CGROUP", "SCHEDULER", "STATE");
	for (size_t i = 0; i < want.tree.n; i++)
		status_row(f, d, &want.tree.nodes[i],
			   sched_tree_find(&a.tree, want.tree.nodes[i].cgroup), &a, &cg);
	for (size_t i = 0; i < a.tree.n; i++)
		if (!sched_tree_find(&want.tree, a.tree.nodes[i].cgroup))
			status_row(f, d, NULL, &a.tree.nodes[i], &a, &cg);
	if (want.tree.n == 0 && a.tree.n == 0)
		fprintf(f, "(nothing attached)\n");
	fprintf(f, "counters: reconciles %u, attaches %u, attach failures %u, detaches %u, exits %u, "
		   "reloads %u (rejected %u), cgroup events %u, kernel events %u\n",
		d->counters.reconciles, d->counters.attaches, d->counters.attach_failures,
		d->counters.detaches, d->counters.exits, d->counters.reloads,
		d->counters.reloads_rejected, d->counters.cgroup_events, d->counters.kernel_events);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf;
	return 0;
}

/* ---- events ---- */

static void schedule_reconcile(struct daemon *d)
{
	sd_event_source_set_enabled(d->reconcile_source, SD_EVENT_ONESHOT);
}

static int on_reconcile(sd_event_source *s, void *userdata)
{
	reconcile(userdata, false);
	return 0;
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	reconcile(userdata, false);
	return 0;
}

static int reload(struct daemon *d)
{
	int r;

	sd_notify(false, "RELOADING=1");
	r = load_policy(d, true);
	if (r < 0)
		d->counters.reloads_rejected++;
	else
		d->counters.reloads++;
	if (r == 0)
		reconcile(d, false);
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

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct daemon *d = userdata;
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (read(fd, buf, sizeof(buf)) > 0)
		d->counters.cgroup_events++;
	schedule_reconcile(d);
	return 0;
}

static int on_uevent(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct daemon *d = userdata;
	char buf[8192];
	ssize_t n;
	bool ours = false;

	while ((n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT)) > 0) {
		buf[n] = '\0';
		/* "ACTION@DEVPATH\0KEY=VALUE\0...": only sched_ext's kobjects matter. */
		for (ssize_t i = 0; i < n; i += strlen(buf + i) + 1)
			ours = ours || strstr(buf + i, "/kernel/sched_ext");
	}
	if (ours) {
		d->counters.kernel_events++;
		schedule_reconcile(d);
	}
	return 0;
}

static int on_control(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct daemon *d = userdata;
	_cleanup_close_ int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	_cleanup_free_ char *text = NULL;
	char cmd[64];
	unsigned uid;
	int r;

	if (c < 0)
		return 0;
	r = control_read_request(c, cmd, sizeof(cmd), &uid);
	if (r < 0)
		return 0;
	if (uid != 0) {
		log_warning(0, ABOUT(.file = d->control_path),
			    "%s: refused command \"%s\" from uid %u: only root controls scxd",
			    d->control_path, cmd, uid);
		control_write_all(c, "error\nonly root may control scxd\n");
		return 0;
	}
	if (streq(cmd, "status")) {
		r = status_text(d, &text);
		control_write_all(c, r < 0 ? "error\ncannot read the state\n" : "ok\n");
		if (r >= 0)
			control_write_all(c, text);
	} else if (streq(cmd, "reload")) {
		log_info(ABOUT(.file = d->policy_file), "scxctl reload: reloading %s", d->policy_file);
		r = reload(d);
		control_write_all(c, r < 0 ? "error\npolicy rejected, the running policy stays; see the journal for the errors\n"
				  : "ok\npolicy reloaded\n");
	} else {
		control_write_all(c, "error\nunknown command (status, reload)\n");
	}
	return 0;
}

static int open_uevent_socket(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = 1 };
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			NETLINK_KOBJECT_UEVENT);

	if (fd < 0)
		return -errno;
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

	fd = control_listen(d->control_path);
	if (fd < 0)
		return log_error(fd, ABOUT(.file = d->control_path), "%s: cannot listen: %s",
				 d->control_path, strerror(-fd));
	sd_event_add_io(d->event, NULL, fd, EPOLLIN, on_control, d);
	return 0;
}

static void daemon_done(struct daemon *d)
{
	for (size_t i = 0; i < d->n_backoffs; i++) {
		free(d->backoffs[i].cgroup);
		free(d->backoffs[i].reason);
	}
	free(d->backoffs);
	free(d->blocked_reported);
	sd_event_source_unref(d->reconcile_source);
	sd_event_source_unref(d->retry_timer);
	sd_event_unref(d->event);
	if (d->inotify_fd >= 0)
		close(d->inotify_fd);
	policy_free(d->policy);
	sched_dir_catalog_free(d->catalog);
}

/* ---- command line ---- */

static int describe(struct daemon *d, const char *name)
{
	_cleanup_(sched_dir_catalog_freep) struct sched_dir_catalog *c = NULL;
	const struct sched_info *s;
	const char *reason = NULL;
	int r;

	r = sched_dir_catalog_new(d->paths.sched_dir, &c);
	if (r < 0)
		return r;
	r = sched_dir_catalog_base(c)->lookup(sched_dir_catalog_base(c), name, &s, &reason);
	if (r < 0) {
		fprintf(stderr, "scxd: %s: %s\n", name, reason ?: strerror(-r));
		return r;
	}
	printf("%s (%s): %s children\n", s->name, s->path,
	       s->can_host_children ? "can host" : "cannot host");
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
	       "       scxd --check FILE | --describe SCHEDULER | --dry-run\n\n"
	       "Keeps sched_ext schedulers attached to cgroups as the policy says.\n\n"
	       "  -p --policy FILE     policy file (default %s)\n"
	       "  -s --sched-dir DIR   scheduler objects (default $SCXD_SCHED_DIR or %s)\n"
	       "     --check FILE      validate FILE and exit: 0 only if it is valid\n"
	       "     --describe NAME   list a scheduler's tunables from its BTF\n"
	       "     --dry-run         print the plan for the current state and exit\n"
	       "     --cgroup-root DIR cgroup2 mount (default /sys/fs/cgroup)\n"
	       "     --pin-dir DIR     bpffs directory for links (default /sys/fs/bpf/scxd)\n"
	       "     --state-dir DIR   runtime state and control socket (default /run/scxd)\n"
	       "     --sysfs DIR       the kernel's sched_ext sysfs tree (default /sys/kernel/sched_ext)\n"
	       "     --no-strict-modes do not refuse files others can write (development only)\n"
	       "     --sub-sched=yes|no|auto  whether the kernel has sub-schedulers (default: ask its BTF)\n"
	       "  -v --verbose         log debug messages\n"
	       "  -h --help            this text\n", SCXD_POLICY, SCXD_SCHED_DIR);
}

enum { OPT_CHECK = 256, OPT_DESCRIBE, OPT_DRY_RUN, OPT_CGROUP_ROOT, OPT_PIN_DIR,
       OPT_STATE_DIR, OPT_NO_STRICT, OPT_SYSFS, OPT_SUB_SCHED };

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
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct daemon d = {
		.policy_file = SCXD_POLICY,
		.paths = {
			.cgroup_root = "/sys/fs/cgroup",
			.sysfs = "/sys/kernel/sched_ext",
			.pin_dir = "/sys/fs/bpf/scxd",
			.state_dir = "/run/scxd",
			.sched_dir = getenv("SCXD_SCHED_DIR") ?: SCXD_SCHED_DIR,
		},
		.inotify_fd = -1,
	};
	const char *check = NULL, *describe_name = NULL;
	_cleanup_free_ char *control = NULL;
	const char *sub_sched = "auto";
	bool dry_run = false;
	int c, r;

	while ((c = getopt_long(argc, argv, "p:s:vh", options, NULL)) >= 0) {
		switch (c) {
		case 'p': d.policy_file = optarg; break;
		case 's': d.paths.sched_dir = optarg; break;
		case OPT_CHECK: check = optarg; break;
		case OPT_DESCRIBE: describe_name = optarg; break;
		case OPT_DRY_RUN: dry_run = true; break;
		case OPT_CGROUP_ROOT: d.paths.cgroup_root = optarg; break;
		case OPT_PIN_DIR: d.paths.pin_dir = optarg; break;
		case OPT_STATE_DIR: d.paths.state_dir = optarg; break;
		case OPT_SYSFS: d.paths.sysfs = optarg; break;
		case OPT_NO_STRICT: strict_modes = false; break;
		case OPT_SUB_SCHED: sub_sched = optarg; break;
		case 'v': log_max_priority = LOG_DEBUG; break;
		case 'h': help(); return 0;
		default: return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "scxd: unexpected argument \"%s\"\n", argv[optind]);
		return 2;
	}
	if (check)
		return scxd_check(check, d.paths.sched_dir) < 0 ? 1 : 0;
	if (describe_name)
		return describe(&d, describe_name) < 0 ? 1 : 0;

	if (asprintf(&control, "%s/control", d.paths.state_dir) < 0)
		return 1;
	d.control_path = control;
	/* --sub-sched=yes|no overrides what the kernel's BTF says (for --dry-run). */
	d.sub_sched = streq(sub_sched, "yes") ? 1 : streq(sub_sched, "no") ? 0 :
		      apply_kernel_has_sub_sched();
	if (load_policy(&d, false) < 0) {
		log_error(0, ABOUT(.file = d.policy_file), "%s: no valid policy, exiting", d.policy_file);
		return 1;
	}
	if (dry_run) {
		r = reconcile(&d, true);
		daemon_done(&d);
		return r < 0 ? 1 : 0;
	}
	if (geteuid() != 0) {
		daemon_done(&d);
		log_error(-EPERM, NULL, "scxd must run as root (it loads BPF schedulers)");
		return 1;
	}
	if (d.sub_sched < 0)
		log_warning(d.sub_sched, ABOUT(.file = "/sys/kernel/btf/vmlinux"),
			    "the kernel's BTF has no sched_ext_ops (%s): nothing can be attached",
			    strerror(-d.sub_sched));

	r = setup_events(&d);
	if (r < 0)
		return 1;
	reconcile(&d, false);
	sd_notify(false, "READY=1");
	r = sd_event_loop(d.event);
	sd_notify(false, "STOPPING=1");
	log_info(ABOUT(.file = d.policy_file),
		 "exiting; attached schedulers stay pinned under %s for the next scxd to adopt",
		 d.paths.pin_dir);
	daemon_done(&d);
	return r < 0 ? 1 : 0;
}
