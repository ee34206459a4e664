// SPDX-License-Identifier: GPL-2.0
/*
 * Status as Prometheus text (metrics.h). Each family is written whole,
 * HELP and TYPE first, then its samples over every node, as the format
 * wants a family's samples together.
 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "metrics.h"
#include "util.h"

static const struct {
	const char *key;	/* in status.counters */
	const char *name;	/* scxd_<name>_total */
	const char *help;
} counters[] = {
	{ "reconciles", "reconciles", "Reconciles run (read, desired, plan, apply)." },
	{ "attaches", "attaches", "Schedulers attached." },
	{ "attach_failures", "attach_failures", "Attaches that failed." },
	{ "detaches", "detaches", "Schedulers detached." },
	{ "exits", "scheduler_exits", "Schedulers the kernel ended (any exit kind)." },
	{ "parent_kills", "parent_kills", "Schedulers ended by their parent scheduler." },
	{ "reloads", "reloads", "Policy reloads." },
	{ "reloads_rejected", "reloads_rejected", "Policy reloads rejected (the running policy kept)." },
	{ "cgroup_events", "cgroup_events", "Cgroup events (inotify) handled." },
	{ "kernel_events", "kernel_events", "sched_ext uevents handled." },
	{ "resyncs", "resyncs", "Full reads of the state after an event could not be trusted." },
	{ "safety_resyncs", "safety_resyncs", "Safety resyncs (the periodic full read)." },
	{ "scoped_reconciles", "scoped_reconciles", "Reconciles limited to the cgroups an event named." },
};

/* Counters of time, kept in µs (status.counters), written in seconds. */
static const struct {
	const char *key;	/* in status.counters */
	const char *name;	/* scxd_<name>_seconds_total */
	const char *help;
} seconds[] = {
	{ "load_usec", "attach_load", "Time spent opening and loading scheduler objects (the kernel verifies their programs)." },
	{ "enable_usec", "attach_enable", "Time the kernel took to attach loaded schedulers (creating their struct_ops links)." },
	{ "reconcile_usec", "reconcile", "Time spent in reconciles; less the two above, scxd's own work (reading, planning, pinning, recording)." },
};

/* s as a label value: \\, \" and \n escaped */
static void put_label(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* cgroup="...",scheduler="..." for node n, allocated */
static char *node_labels(const json_t *n)
{
	_cleanup_free_ char *raw = json_get_cgroup((json_t *)n, "cgroup");
	_cleanup_free_ char *text = escape_text(raw ?: "");
	const char *sched = json_string_value(json_object_get(n, "scheduler")) ?: "";
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!text)
		return NULL;
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	fputs("cgroup=\"", f);
	put_label(f, text);
	fputs("\",scheduler=\"", f);
	put_label(f, sched);
	fputc('"', f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static json_int_t num(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* "SCX_EV_SUB_RESCUE" -> "sub_rescue" */
static void put_event_name(FILE *f, const char *name)
{
	if (strncmp(name, "SCX_EV_", 7) == 0)
		name += 7;
	for (; *name; name++)
		fputc(isalnum((unsigned char)*name) ? tolower((unsigned char)*name) : '_', f);
}

static void write_nodes(FILE *f, const json_t *nodes, char **labels)
{
	const json_t *n, *v;
	const char *key;
	size_t i;

	family(f, "scxd_scheduler_state", "gauge",
	       "1 for each cgroup scxd knows, labelled with its state: attached, pending, replace, detach, backoff, blocked, foreign.");
	json_array_foreach(nodes, i, n) {
		fprintf(f, "scxd_scheduler_state{%s,state=\"", labels[i]);
		put_label(f, json_string_value(json_object_get(n, "state")) ?: "");
		fputs("\"} 1\n", f);
	}

	family(f, "scxd_scheduler_backoff_failures", "gauge",
	       "Attach failures in a row of a cgroup in backoff.");
	json_array_foreach(nodes, i, n) {
		const json_t *b = json_object_get(n, "backoff");

		if (b)
			fprintf(f, "scxd_scheduler_backoff_failures{%s} %" JSON_INTEGER_FORMAT "\n",
				labels[i], num(b, "failures"));
	}

	family(f, "scxd_scheduler_last_exit", "gauge",
	       "When the kernel last ended the cgroup's scheduler (Unix time, seconds), labelled with the exit kind and its number.");
	json_array_foreach(nodes, i, n) {
		const json_t *e = json_object_get(n, "last_exit");

		if (!e)
			continue;
		fprintf(f, "scxd_scheduler_last_exit{%s,kind=\"", labels[i]);
		put_label(f, json_string_value(json_object_get(e, "kind")) ?: "unknown");
		fprintf(f, "\",code=\"%" JSON_INTEGER_FORMAT "\"} %.3f\n", num(e, "code"),
			(double)num(e, "at_realtime_usec") / 1e6);
	}

	family(f, "scxd_scheduler_caps_cpus", "gauge",
	       "CPUs (cids on upstream kernels) the cgroup's scheduler holds each capability on.");
	json_array_foreach(nodes, i, n)
		json_object_foreach((json_t *)json_object_get(n, "caps"), key, v)
			fprintf(f, "scxd_scheduler_caps_cpus{%s,cap=\"%s\"} %zu\n", labels[i], key,
				json_array_size(v));

	family(f, "scxd_scheduler_rescues_total", "counter",
	       "Runs the kernel gave the cgroup's scheduler that its parent did not serve (SCX_EV_SUB_RESCUE).");
	json_array_foreach(nodes, i, n)
		if (json_object_get(n, "rescues"))
			fprintf(f, "scxd_scheduler_rescues_total{%s} %" JSON_INTEGER_FORMAT "\n",
				labels[i], num(n, "rescues"));

	family(f, "scxd_scheduler_denied_total", "counter",
	       "What the cgroup's scheduler tried on CPUs it holds no capability for (SCX_EV_SUB_*_DENIED).");
	json_array_foreach(nodes, i, n)
		json_object_foreach((json_t *)json_object_get(n, "denied"), key, v)
			fprintf(f, "scxd_scheduler_denied_total{%s,cap=\"%s\"} %" JSON_INTEGER_FORMAT "\n",
				labels[i], key, json_integer_value(v));

	family(f, "scxd_scheduler_events_total", "counter",
	       "The kernel's event counters of the cgroup's scheduler (its sysfs events file, SCX_EV_* lowercased without the prefix).");
	json_array_foreach(nodes, i, n)
		json_object_foreach((json_t *)json_object_get(n, "events"), key, v) {
			fprintf(f, "scxd_scheduler_events_total{%s,event=\"", labels[i]);
			put_event_name(f, key);
			fprintf(f, "\"} %" JSON_INTEGER_FORMAT "\n", json_integer_value(v));
		}
}

int metrics_format(const json_t *status, char **ret)
{
	const json_t *d = json_object_get(status, "daemon"), *c = json_object_get(status, "counters");
	const json_t *nodes = json_object_get(status, "nodes");
	size_t n_nodes = json_array_size(nodes), len = 0;
	char **labels, *buf = NULL;
	bool oom = false;
	FILE *f;

	labels = calloc(n_nodes + 1, sizeof(*labels));
	if (!labels)
		return -ENOMEM;
	for (size_t i = 0; i < n_nodes; i++)
		if (!(labels[i] = node_labels(json_array_get(nodes, i))))
			oom = true;
	f = oom ? NULL : open_memstream(&buf, &len);
	if (f) {
		family(f, "scxd_info", "gauge", "scxd's version and the kernel API it runs the schedulers with.");
		fputs("scxd_info{version=\"", f);
		put_label(f, json_string_value(json_object_get(d, "version")) ?: "");
		fputs("\",kernel_api=\"", f);
		put_label(f, json_string_value(json_object_get(d, "kernel_api")) ?: "");
		fputs("\"} 1\n", f);
		family(f, "scxd_policy_entries", "gauge", "Entries of the running policy, drop-ins included.");
		fprintf(f, "scxd_policy_entries %" JSON_INTEGER_FORMAT "\n", num(d, "policy_entries"));
		family(f, "scxd_last_reload_rejected", "gauge",
		       "1 if the last policy reload was rejected (the one before it runs).");
		fprintf(f, "scxd_last_reload_rejected %d\n", json_object_get(d, "last_reload_error") ? 1 : 0);
		for (size_t i = 0; i < ELEMENTSOF(counters); i++) {
			char name[64];

			snprintf(name, sizeof(name), "scxd_%s_total", counters[i].name);
			family(f, name, "counter", counters[i].help);
			fprintf(f, "%s %" JSON_INTEGER_FORMAT "\n", name, num(c, counters[i].key));
		}
		for (size_t i = 0; i < ELEMENTSOF(seconds); i++) {
			char name[64];

			snprintf(name, sizeof(name), "scxd_%s_seconds_total", seconds[i].name);
			family(f, name, "counter", seconds[i].help);
			fprintf(f, "%s %.6f\n", name, (double)num(c, seconds[i].key) / 1e6);
		}
		write_nodes(f, nodes, labels);
		if (fclose(f) != 0)
			oom = true;
	} else
		oom = true;
	for (size_t i = 0; i < n_nodes; i++)
		free(labels[i]);
	free(labels);
	if (oom) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf;
	return 0;
}
