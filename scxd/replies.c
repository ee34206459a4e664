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
		r = actual_read(&d->paths, &cg, NULL, &a);
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
		r = actual_read(&d->paths, &cg, NULL, &a);
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
