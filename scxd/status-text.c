// SPDX-License-Identifier: GPL-2.0
/*
 * scxdctl's text for people: `scxdctl status` from scxd's status reply
 * (conf/status.schema.json), one line per cgroup, everything with -v; and
 * the helpers that read a reply's members for the terminal.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "kernel-api.h"
#include "sched-stats.h"
#include "status-text.h"
#include "util.h"

const char *reply_str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key)) ?: "";
}

/*
 * A member for the terminal: its raw bytes (from "<key>_hex" when scxd
 * sent them so: escape.h) with control characters and what is not UTF-8
 * escaped. Whoever may make cgroups picks a cgroup's bytes. The text
 * lives until a few more calls.
 */
const char *reply_term(const json_t *o, const char *key)
{
	static char *ring[8];
	static unsigned next;
	_cleanup_free_ char *raw = json_get_cgroup((json_t *)o, key);
	char **slot = &ring[next++ % ELEMENTSOF(ring)];

	free(*slot);
	*slot = escape_text(raw ?: "");
	return *slot ?: "?";
}

json_int_t reply_num(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* "last exit: parent-kill (kind 69, code 0): reason (message)" */
static void print_last_exit(const char *indent, const json_t *e)
{
	const char *msg = reply_str(e, "message");

	if (!e)
		return;
	printf("%s    last exit: %s (kind %" JSON_INTEGER_FORMAT ", code %" JSON_INTEGER_FORMAT
	       "): %s%s%s%s\n", indent, reply_str(e, "kind"), reply_num(e, "code"), reply_num(e, "exit_code"),
	       reply_str(e, "reason"), *msg ? " (" : "", msg, *msg ? ")" : "");
}

/* "caps: enq_immed 0-3, enq 0-1, preempt none, perf 2" from the JSON CPU arrays. */
static void print_caps(const char *indent, const json_t *n)
{
	const json_t *caps = json_object_get(n, "caps");
	const char *name;
	json_t *cpus;
	bool first = true;

	if (json_object_get(n, "caps_error"))
		printf("%s    caps: unreadable: %s\n", indent, reply_str(n, "caps_error"));
	if (!caps)
		return;
	printf("%s    caps:", indent);
	json_object_foreach((json_t *)caps, name, cpus) {
		_cleanup_free_ char *list = NULL;
		struct cpu_list l = { .n = json_array_size(cpus) };
		json_t *c;
		size_t i;

		l.cpus = calloc(l.n + 1, sizeof(*l.cpus));
		if (!l.cpus)
			return;
		json_array_foreach(cpus, i, c)
			l.cpus[i] = (uint32_t)json_integer_value(c);
		list = cpu_list_format(&l);
		cpu_list_done(&l);
		printf("%s%s %s", first ? " " : ", ", name, list && *list ? list : "none");
		first = false;
	}
	printf("%s\n", first ? " none" : "");
}

/* "rescues 3, denied: enq 12, kick 0, preempt 1, cpuperf 0" */
static void print_delegation(const char *indent, const json_t *n)
{
	const json_t *rescues = json_object_get(n, "rescues"), *denied = json_object_get(n, "denied");
	const char *name;
	json_t *v;
	bool first = true;

	if (!rescues && !denied)
		return;
	printf("%s   ", indent);
	if (rescues)
		printf(" rescues %" JSON_INTEGER_FORMAT "%s", json_integer_value(rescues),
		       denied ? "," : "");
	if (denied) {
		printf(" denied:");
		json_object_foreach((json_t *)denied, name, v) {
			printf("%s%s %" JSON_INTEGER_FORMAT, first ? " " : ", ", name,
			       json_integer_value(v));
			first = false;
		}
	}
	printf("\n");
}

/* "enq_immed 0-3" (the CPUs it may run tasks on), else its first cap; "-" for none */
static const char *caps_summary(const json_t *n)
{
	static char text[64];
	const json_t *caps = json_object_get(n, "caps"), *cpus;
	const char *name = "enq_immed";
	_cleanup_free_ char *list = NULL;
	struct cpu_list l = {};
	json_t *c;
	size_t i;

	if (json_object_get(n, "caps_error"))
		return "caps unreadable";
	cpus = json_object_get(caps, name);
	if (!cpus) {
		void *it = json_object_iter((json_t *)caps);

		if (!it)
			return "-";
		name = json_object_iter_key(it);
		cpus = json_object_iter_value(it);
	}
	l.n = json_array_size(cpus);
	l.cpus = calloc(l.n + 1, sizeof(*l.cpus));
	if (!l.cpus)
		return "?";
	json_array_foreach(cpus, i, c)
		l.cpus[i] = (uint32_t)json_integer_value(c);
	list = cpu_list_format(&l);
	cpu_list_done(&l);
	snprintf(text, sizeof(text), "%s %.40s", name, list && *list ? list : "none");
	return text;
}

/* One line: cgroup, scheduler, state[, caps][, last exit kind]. */
static void print_node_line(const json_t *n)
{
	const json_t *e = json_object_get(n, "last_exit");
	size_t depth = reply_num(n, "depth") ? reply_num(n, "depth") - 1 : 0;
	const char *caps = caps_summary(n);
	char indent[32], exit_text[96] = "-";

	snprintf(indent, sizeof(indent), "%*s", (int)(2 * (depth < 8 ? depth : 8)), "");
	if (e)
		snprintf(exit_text, sizeof(exit_text), "%.40s (kind %" JSON_INTEGER_FORMAT ")",
			 reply_str(e, "kind"), reply_num(e, "code"));
	/* no trailing columns when there is nothing to say in them */
	if (e || !streq(caps, "-"))
		printf("%s%-*s %-10s %-10s %-24s %s\n", indent, (int)(40 - strlen(indent)),
		       reply_term(n, "cgroup"), reply_term(n, "scheduler"), reply_str(n, "state"), caps, exit_text);
	else
		printf("%s%-*s %-10s %s\n", indent, (int)(40 - strlen(indent)), reply_term(n, "cgroup"),
		       reply_term(n, "scheduler"), reply_str(n, "state"));
}

static void print_node(const json_t *n)
{
	const char *state = reply_str(n, "state"), *running = reply_str(n, "running");
	size_t depth = reply_num(n, "depth") ? reply_num(n, "depth") - 1 : 0;
	const json_t *events = json_object_get(n, "events");
	char text[600], indent[32];

	if (streq(state, "foreign"))
		snprintf(text, sizeof(text), "foreign (%s, not attached by scxd)", reply_term(n, "running"));
	else if (streq(state, "blocked")) {
		const json_t *b = json_object_get(n, "blocked_by");

		if (streq(reply_term(b, "cgroup"), reply_term(n, "cgroup")))
			snprintf(text, sizeof(text), "blocked: runs %s, not attached by scxd",
				 reply_term(b, "scheduler"));
		else
			snprintf(text, sizeof(text), "blocked: below %.200s, which runs %s, not attached by scxd",
				 reply_term(b, "cgroup"), reply_term(b, "scheduler"));
	}
	else if (streq(state, "replace"))
		snprintf(text, sizeof(text), "attached as %s, to be replaced", running);
	else if (streq(state, "detach"))
		snprintf(text, sizeof(text), "attached, to be detached");
	else if (streq(state, "backoff")) {
		const json_t *b = json_object_get(n, "backoff");

		snprintf(text, sizeof(text), "backoff: %" JSON_INTEGER_FORMAT " failures, retry in %"
			 JSON_INTEGER_FORMAT " s, last: %.400s", reply_num(b, "failures"),
			 reply_num(b, "retry_in_sec"), *reply_str(b, "last_error") ? reply_term(b, "last_error") : "?");
	} else
		snprintf(text, sizeof(text), "%s", state);

	snprintf(indent, sizeof(indent), "%*s", (int)(2 * (depth < 8 ? depth : 8)), "");
	printf("%s%-*s %-10s %s\n", indent, (int)(40 - strlen(indent)), reply_term(n, "cgroup"),
	       reply_term(n, "scheduler"), text);
	print_last_exit(indent, json_object_get(n, "last_exit"));
	print_caps(indent, n);
	print_delegation(indent, n);
	if (json_object_size(events) > 0) {
		const char *name;
		json_t *v;
		bool first = true;

		printf("%s    events:", indent);
		json_object_foreach((json_t *)events, name, v) {
			printf("%s%s %" JSON_INTEGER_FORMAT, first ? " " : ", ", name, json_integer_value(v));
			first = false;
		}
		printf("\n");
	}
}

/* The kernel line: by "kernel_api", or by "kernel" from an older scxd. */
static const char *kernel_status_text(const char *kernel, const char *api_name)
{
	enum kernel_api api;

	if (kernel_api_from_name(api_name, &api) < 0)
		return streq(kernel, "sub-schedulers") ? "sub-schedulers" :
		       streq(kernel, "root-only") ? "root only" : "none";
	return kernel_api_describe(api);
}

void status_print(const json_t *st, bool verbose)
{
	const json_t *d = json_object_get(st, "daemon"), *c = json_object_get(st, "counters");
	const json_t *nodes = json_object_get(st, "nodes"), *n;
	const char *kernel = reply_str(d, "kernel");
	size_t i;

	printf("policy: %s (%" JSON_INTEGER_FORMAT " entries)\n", reply_str(d, "policy"),
	       reply_num(d, "policy_entries"));
	if (json_object_get(d, "last_reload_error"))
		printf("last reload rejected: %s\n", reply_str(d, "last_reload_error"));
	printf("kernel: %s\n", kernel_status_text(kernel, reply_str(d, "kernel_api")));
	if (verbose)
		printf("%-40s %-10s %s\n", "CGROUP", "SCHEDULER", "STATE");
	else
		printf("%-40s %-10s %-10s %-24s %s\n", "CGROUP", "SCHEDULER", "STATE", "CAPS", "LAST EXIT");
	json_array_foreach(nodes, i, n) {
		if (verbose)
			print_node(n);
		else
			print_node_line(n);
	}
	if (json_array_size(nodes) == 0)
		printf("(nothing attached)\n");
	json_array_foreach(json_object_get(st, "ignored"), i, n)
		printf("ignored: %s\n", json_string_value(n));
	if (!verbose)
		return;
	printf("counters: reconciles %" JSON_INTEGER_FORMAT ", attaches %" JSON_INTEGER_FORMAT
	       ", attach failures %" JSON_INTEGER_FORMAT ", detaches %" JSON_INTEGER_FORMAT
	       ", exits %" JSON_INTEGER_FORMAT " (killed by their parent %" JSON_INTEGER_FORMAT
	       "), reloads %" JSON_INTEGER_FORMAT
	       " (rejected %" JSON_INTEGER_FORMAT "), cgroup events %" JSON_INTEGER_FORMAT
	       ", kernel events %" JSON_INTEGER_FORMAT ", resyncs %" JSON_INTEGER_FORMAT
	       " (safety %" JSON_INTEGER_FORMAT "), scoped reconciles %" JSON_INTEGER_FORMAT "\n",
	       reply_num(c, "reconciles"), reply_num(c, "attaches"), reply_num(c, "attach_failures"),
	       reply_num(c, "detaches"), reply_num(c, "exits"), reply_num(c, "parent_kills"), reply_num(c, "reloads"),
	       reply_num(c, "reloads_rejected"),
	       reply_num(c, "cgroup_events"), reply_num(c, "kernel_events"), reply_num(c, "resyncs"),
	       reply_num(c, "safety_resyncs"), reply_num(c, "scoped_reconciles"));
}
