// SPDX-License-Identifier: GPL-2.0
/*
 * One reconcile: read what the scope covers (cgroups, the kernel's
 * schedulers, scxd's records), compute the desired tree from the policy,
 * plan the steps against what runs and apply them in order. Exits the
 * kernel reported are logged and backed off first.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "daemon.h"
#include "desired.h"
#include "escape.h"
#include "log.h"
#include "message-id.h"
#include "util.h"

/* The scheduler running nearest above cgroup: its parent in the kernel's tree. */
const struct sched_node *parent_sched(const struct actual_state *a, const char *cgroup)
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

bool below_failed(const char *const *failed, size_t n, const char *cgroup)
{
	for (size_t i = 0; i < n; i++)
		if (cgroup_is_below(cgroup, failed[i]))
			return true;
	return false;
}

/*
 * One step. An attach's object was loaded ahead (job, see load_ahead())
 * and is only committed here; its load's failure is its failure. On
 * failure the returned -errno comes with the reason libbpf or the kernel
 * gave.
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

	/* run_steps() loaded every attach step ahead: its job is there */
	if (job->r < 0) {
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
	d->counters.enable_usec += job->obj.enable_usec;
	log_info(ABOUT(.cgroup = n->cgroup, .scheduler = n->scheduler,
		       .file = d->policy_file, .message_id = SCXD_MESSAGE_ATTACHED),
		 "%s: attached %s (%s, cgroup id %" PRIu64 "; loaded in %.2f s, enabled in %.3f s)",
		 n->cgroup, n->scheduler, plan_reason_name(s->reason), cgid,
		 job->load_usec / 1e6, job->obj.enable_usec / 1e6);
	return 0;
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
	for (size_t i = 0; i < k; i++)
		d->counters.load_usec += jobs[i].load_usec;
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
 * The plan's steps in order. Attach steps are loaded ahead on worker
 * threads, in windows of twice as many as there are workers (a window
 * bounds the memory of objects loaded and not yet attached), while this
 * thread pings the watchdog: one object's verification can outlast it.
 */
static int run_steps(struct daemon *d, const struct plan *plan, const struct cgroup_list *cg,
		     const char **failed, size_t *n_failed)
{
	size_t window = 2 * (d->load_workers ?: 1), n_jobs = 0;
	_cleanup_free_ struct apply_load_job *jobs = calloc(window + 1, sizeof(*jobs));
	_cleanup_free_ struct apply_load_job **job_of = calloc(plan->n + 1, sizeof(*job_of));

	if (!jobs || !job_of)
		return -ENOMEM;
	for (size_t i = 0; i < plan->n; i++) {
		uint64_t cgid;

		if (!job_of[i] && step_loadable(d, &plan->steps[i], cg, &cgid)) {
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
		r = actual_read(&d->paths, cgroups, NULL, actual);
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
		r = actual_read(&d->paths, cgroups,
				&(struct actual_scope){ gone, n_gone }, actual);
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
static int reconcile_once(struct daemon *d, bool dry_run)
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
		return reconcile_once(d, dry_run);
	}
	if (scope.full)
		report_blocked(d, &plan);
	else
		d->counters.scoped_reconciles++;
	d->last_steps = plan.n;
	if (dry_run) {
		for (size_t i = 0; i < plan.n; i++) {
			/* whoever may make cgroups picks these bytes: escaped for the terminal */
			_cleanup_free_ char *cgroup = escape_text(plan.steps[i].node->cgroup);

			printf("%s %s %s (%s)\n", plan_op_name(plan.steps[i].op),
			       cgroup ?: "?", plan.steps[i].node->scheduler,
			       plan_reason_name(plan.steps[i].reason));
		}
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
	metrics_file_changed(d);
	/* the status line counts the whole tree: only a full read has it */
	if (scope.full)
		notify_status(d, &desired.tree, &plan, failed, n_failed);
	return 0;
}

/* One reconcile, its time counted (counters.reconcile_usec) when it applies. */
int reconcile(struct daemon *d, bool dry_run)
{
	uint64_t start = now_usec();
	int r = reconcile_once(d, dry_run);

	if (!dry_run)
		d->counters.reconcile_usec += now_usec() - start;
	return r;
}
