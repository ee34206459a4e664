// SPDX-License-Identifier: GPL-2.0
/*
 * Replies to scxdctl (control.h): status, describe, diff and reload, as
 * JSON (the status schema: conf/status.schema.json).
 */

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "desired.h"
#include "escape.h"
#include "log.h"
#include "sched-json.h"
#include "util.h"

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

	o = json_pack("{s:I, s:s, s:I, s:s}", "cgroup_id", (json_int_t)cgid,
		      "scheduler", n->scheduler, "depth", (json_int_t)n->depth, "state", state);
	if (!o || json_set_cgroup(o, "cgroup", n->cgroup) < 0) {
		json_decref(o);
		return NULL;	/* out of memory: status fails as a whole */
	}
	if (have)
		json_object_set_new(o, "running", json_string(have->scheduler));
	if (blocker && want) {
		json_t *by = json_pack("{s:s}", "scheduler", blocker->scheduler);

		if (by)
			json_set_cgroup(by, "cgroup", blocker->cgroup);
		json_object_set_new(o, "blocked_by", by);
	}
	if (streq(state, "backoff")) {
		uint64_t now = now_usec();

		json_object_set_new(o, "backoff",
				    json_pack("{s:I, s:I, s:s*}", "failures", (json_int_t)b->failures,
					      "retry_in_sec",
					      (json_int_t)(b->retry_at > now ? (b->retry_at - now) / 1000000 : 0),
					      "last_error", NULL));
		if (b->reason)
			json_object_set_new(json_object_get(o, "backoff"), "last_error", json_text(b->reason));
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

int status_json(struct daemon *d, json_t **ret)
{
	_cleanup_(cgroup_list_donep) struct cgroup_list cg = {};
	_cleanup_(actual_state_donep) struct actual_state a = {};
	_cleanup_(desired_result_donep) struct desired_result want = {};
	_cleanup_(plan_donep) struct plan plan = {};
	_cleanup_free_ const struct sched_node **blocker = NULL;
	struct desired_opts opts = { .api = d->api };
	json_t *o, *nodes, *ignored;
	int r;

	r = cgroup_scan(d->paths.cgroup_root, &cg);
	if (r >= 0)
		r = actual_read(&d->paths, &cg, NULL, &a);
	if (r >= 0)
		r = desired_build(d->policy, (const char *const *)cg.paths, cg.n, &opts, &want);
	if (r >= 0)
		r = plan_build(&want.tree, &a.tree, &plan);	/* for what is blocked */
	if (r < 0)
		return r;
	/* by position in want: the foreign node that blocks it (plan.blocked points into want) */
	blocker = calloc(want.tree.n + 1, sizeof(*blocker));
	if (!blocker)
		return -ENOMEM;
	for (size_t j = 0; j < plan.n_blocked; j++)
		blocker[plan.blocked[j] - want.tree.nodes] = plan.blocked_by[j];
	nodes = json_array();
	for (size_t i = 0; i < want.tree.n; i++)
		json_array_append_new(nodes, status_node(d, &want.tree.nodes[i],
							 sched_tree_find(&a.tree, want.tree.nodes[i].cgroup),
							 blocker[i], &a, &cg));
	for (size_t i = 0; i < a.tree.n; i++)
		if (!sched_tree_find(&want.tree, a.tree.nodes[i].cgroup))
			json_array_append_new(nodes, status_node(d, NULL, &a.tree.nodes[i], NULL, &a, &cg));
	ignored = json_array();
	for (size_t i = 0; i < a.n_strays; i++)
		json_array_append_new(ignored, json_text(a.strays[i]));
	o = json_pack("{s:i, s:{s:s, s:i, s:s, s:I, s:s, s:s, s:o*}, s:o, s:o, "
			   "s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}}",
		      "schema", SCXD_STATUS_SCHEMA,
		      "daemon", "version", SCXD_VERSION, "pid", (int)getpid(),
		      "policy", d->policy_file, "policy_entries", (json_int_t)d->policy->n_entries,
		      "kernel", kernel_api_support_name(d->api), "kernel_api", kernel_api_name(d->api),
		      "last_reload_error", json_text(d->reload_error),
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
		      "scoped_reconciles", (json_int_t)d->counters.scoped_reconciles,
		      "load_usec", (json_int_t)d->counters.load_usec,
		      "enable_usec", (json_int_t)d->counters.enable_usec,
		      "reconcile_usec", (json_int_t)d->counters.reconcile_usec);
	if (!o)
		return -ENOMEM;
	*ret = o;
	return 0;
}

int describe_lookup(struct daemon *d, const char *name, struct sched_dir_catalog **catalog,
		    const struct sched_info **ret, const char **reason)
{
	int r = sched_dir_catalog_new_for(d->sched_base, d->api, catalog);

	if (r < 0)
		return r;
	return sched_dir_catalog_base(*catalog)->lookup(sched_dir_catalog_base(*catalog), name, ret,
							 reason);
}

/* A scheduler object as the catalog read it: role and tunables. */
static int describe_json(struct daemon *d, const char *name, json_t **ret)
{
	_cleanup_(sched_dir_catalog_freep) struct sched_dir_catalog *c = NULL;
	const struct sched_info *s;
	const char *reason = NULL;
	int r = describe_lookup(d, name, &c, &s, &reason);

	if (r < 0 && !c)
		return r;
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
		json_array_append_new(a, json_text(diags->lines[i]));
	return a;
}

static int step_by_cgroup_cmp(const void *x, const void *y, void *userdata)
{
	const struct plan *plan = userdata;
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	int r = strcmp(plan->steps[a].node->cgroup, plan->steps[b].node->cgroup);

	return r ? r : a < b ? -1 : a > b;
}

/*
 * For each step, the other step of the same cgroup with the other op (a
 * replace is a detach and an attach), or SIZE_MAX: neighbours once the
 * steps are sorted by cgroup.
 */
static size_t *plan_pairs(const struct plan *plan)
{
	_cleanup_free_ size_t *order = calloc(plan->n + 1, sizeof(*order));
	size_t *other = calloc(plan->n + 1, sizeof(*other));

	if (!order || !other) {
		free(other);
		return NULL;
	}
	for (size_t i = 0; i < plan->n; i++) {
		order[i] = i;
		other[i] = SIZE_MAX;
	}
	qsort_r(order, plan->n, sizeof(*order), step_by_cgroup_cmp, (void *)plan);
	for (size_t k = 0; k + 1 < plan->n; k++) {
		const struct plan_step *a = &plan->steps[order[k]], *b = &plan->steps[order[k + 1]];

		if (a->op != b->op && streq(a->node->cgroup, b->node->cgroup)) {
			other[order[k]] = order[k + 1];
			other[order[k + 1]] = order[k];
		}
	}
	return other;
}

json_t *diff_invalid_json(const struct diag_list *diags)
{
	return json_pack("{s:b, s:s, s:o}", "ok", 0, "error", "the policy is not valid",
			 "errors", diags_json(diags));
}

/*
 * What a reload with policy p would do now: the plan against the cgroups
 * and schedulers there are, per cgroup (a detach and an attach of the
 * same cgroup are one "replace").
 */
int diff_json(struct daemon *d, const char *file, const struct policy *p, json_t **ret)
{
	_cleanup_(cgroup_list_donep) struct cgroup_list cg = {};
	_cleanup_(actual_state_donep) struct actual_state a = {};
	_cleanup_(desired_result_donep) struct desired_result want = {};
	_cleanup_(plan_donep) struct plan plan = {};
	_cleanup_free_ size_t *other = NULL;
	struct desired_opts opts = { .api = d->api };
	json_t *changes, *o;
	int r;

	r = cgroup_scan(d->paths.cgroup_root, &cg);
	if (r >= 0)
		r = actual_read(&d->paths, &cg, NULL, &a);
	if (r >= 0)
		r = desired_build(p, (const char *const *)cg.paths, cg.n, &opts, &want);
	if (r >= 0)
		r = plan_build(&want.tree, &a.tree, &plan);
	if (r < 0)
		return r;
	other = plan_pairs(&plan);
	if (!other)
		return -ENOMEM;

	changes = json_array();
	for (size_t i = 0; i < plan.n; i++) {
		const struct plan_step *s = &plan.steps[i];
		const char *cgroup = s->node->cgroup;

		if (other[i] != SIZE_MAX && s->op == PLAN_DETACH)
			continue;	/* said with its attach */
		o = json_pack("{s:s, s:s, s:s}", "action", other[i] != SIZE_MAX ? "replace" : plan_op_name(s->op),
			      "scheduler", s->node->scheduler, "reason", plan_reason_name(s->reason));
		if (o && json_set_cgroup(o, "cgroup", cgroup) < 0) {
			json_decref(o);
			return -ENOMEM;
		}
		if (o && other[i] != SIZE_MAX)
			json_object_set_new(o, "from", json_string(plan.steps[other[i]].node->scheduler));
		json_array_append_new(changes, o);
	}
	o = json_array();
	for (size_t i = 0; i < plan.n_blocked; i++) {
		json_t *b = json_pack("{s:s}", "scheduler", plan.blocked[i]->scheduler);

		if (b)
			json_set_cgroup(b, "cgroup", plan.blocked[i]->cgroup);
		json_array_append_new(o, b);
	}
	*ret = json_pack("{s:s, s:I, s:o, s:o}", "policy", file, "entries", (json_int_t)p->n_entries,
			 "changes", changes, "blocked", o);
	return *ret ? 0 : -ENOMEM;
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
		json_array_append_new(a, json_text(l));
	return a;
}

/* A request from scxdctl the peer may make (control.c checked). */
int on_control_request(void *userdata, struct control_client *c, const struct control_peer *peer,
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
		const char *file = json_string_value(json_object_get(request, "file")) ?: "(policy)";
		int fd = control_client_take_fd(c);

		if (fd < 0 && !json_is_string(text)) {
			*reply = json_pack("{s:b, s:s}", "ok", 0, "error",
					   "diff needs the policy: a sealed memfd, or \"policy\" (the file's text)");
			return *reply ? 0 : -ENOMEM;
		}
		/* the answer comes once the policy is parsed and checked, off the loop */
		return policy_job_diff(d, c, peer->pid, file, fd >= 0 ? NULL : json_string_value(text),
				       json_string_length(text), fd);
	}
	/* reload */
	log_info(ABOUT(.file = d->policy_file), "scxdctl reload (pid %d): reloading %s",
		 (int)peer->pid, d->policy_file);
	return policy_job_reload(d, c, peer->pid);
}

json_t *reload_errors_json(struct daemon *d)
{
	return lines_json(d->reload_error);
}
