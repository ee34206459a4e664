// SPDX-License-Identifier: GPL-2.0
/*
 * A scheduler instance's sysfs files and exit info as values: see
 * sched-stats.h. Everything here takes text or bytes and is driven by the
 * host tests (test/test-sysfs.c) without a kernel.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched-stats.h"
#include "util.h"

/* ---- exit info ---- */

static const struct {
	int kind;
	const char *id;
	const char *text;
} exit_kinds[] = {
	{ 1, "done", "done" },
	{ 64, "unregistered", "unregistered" },
	{ 65, "unregistered-bpf", "unregistered by BPF" },
	{ 66, "unregistered-kernel", "unregistered by the kernel" },
	{ 67, "sysrq", "sysrq" },
	{ SCXD_EXIT_PARENT, "parent", "parent exited" },
	{ SCXD_EXIT_PARENT_KILL, "parent-kill", "killed by its parent scheduler" },
	{ 1024, "error", "error" },
	{ 1025, "error-bpf", "BPF error" },
	{ 1026, "error-stall", "stall (watchdog)" },
};

const char *sched_exit_kind_id(int kind)
{
	for (size_t i = 0; i < ELEMENTSOF(exit_kinds); i++)
		if (exit_kinds[i].kind == kind)
			return exit_kinds[i].id;
	return NULL;
}

const char *sched_exit_kind_text(int kind)
{
	for (size_t i = 0; i < ELEMENTSOF(exit_kinds); i++)
		if (exit_kinds[i].kind == kind)
			return exit_kinds[i].text;
	return NULL;
}

void sched_exit_from_uei(const unsigned char *uei, struct sched_exit *e)
{
	long long code;

	*e = (struct sched_exit){};
	memcpy(&e->kind, uei, sizeof(e->kind));
	memcpy(&code, uei + 8, sizeof(code));
	e->code = code;
	memcpy(e->reason, uei + 16, sizeof(e->reason) - 1);
	memcpy(e->msg, uei + 16 + SCHED_EXIT_REASON_LEN, sizeof(e->msg) - 1);
}

char *sched_exit_format(const struct sched_exit *e)
{
	char *out;

	if (asprintf(&out, "%s, kind %d, code %" PRId64 ": %s%s%s%s",
		     sched_exit_kind_text(e->kind) ?: "unknown", e->kind, e->code, e->reason,
		     e->msg[0] ? " (" : "", e->msg, e->msg[0] ? ")" : "") < 0)
		return NULL;
	return out;
}

json_t *sched_exit_json(const struct sched_exit *e)
{
	return json_pack("{s:s, s:i, s:I, s:s, s:s}",
			 "kind", sched_exit_kind_id(e->kind) ?: "unknown", "code", e->kind,
			 "exit_code", (json_int_t)e->code, "reason", e->reason, "message", e->msg);
}

/* ---- CPU lists ---- */

const char *const sched_cap_names[SCHED_NR_CAPS] = {
	[SCHED_CAP_ENQ_IMMED] = "enq_immed",
	[SCHED_CAP_ENQ] = "enq",
	[SCHED_CAP_PREEMPT] = "preempt",
	[SCHED_CAP_PERF] = "perf",
};

static int set_error(char **error, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int set_error(char **error, const char *fmt, ...)
{
	va_list ap;
	int r;

	free(*error);
	va_start(ap, fmt);
	r = vasprintf(error, fmt, ap);
	va_end(ap);
	if (r < 0) {
		*error = NULL;
		return -ENOMEM;
	}
	return -EINVAL;
}

/* n bytes of s with those that are not printable ASCII as \\xNN, for messages. */
static char *printable(const char *s, size_t n)
{
	char *out = malloc(4 * n + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			*o++ = c;
		else
			o += sprintf(o, "\\x%02x", c);
	}
	*o = '\0';
	return out;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* A decimal CPU number at *p, advancing it; -1 if there is none or it is too big. */
static long parse_cpu(const char **p)
{
	long v = 0;

	if (**p < '0' || **p > '9')
		return -1;
	for (; **p >= '0' && **p <= '9'; (*p)++) {
		v = v * 10 + (**p - '0');
		if (v > SCHED_CPU_MAX)
			return -1;
	}
	return v;
}

static int cpu_list_add_range(struct cpu_list *l, uint32_t from, uint32_t to)
{
	uint32_t *v = realloc(l->cpus, (l->n + (to - from) + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	l->cpus = v;
	for (uint32_t c = from; c <= to; c++)
		l->cpus[l->n++] = c;
	return 0;
}

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* '"LIST": what "REST"' (no REST when at is NULL), bytes made printable. */
static int list_error(char **error, const char *begin, const char *at, const char *end,
		      const char *what)
{
	_cleanup_free_ char *list = printable(begin, end - begin);
	_cleanup_free_ char *rest = at ? printable(at, end - at) : NULL;

	if (!list || (at && !rest))
		return -ENOMEM;
	if (at)
		return set_error(error, "\"%s\": %s \"%s\"", list, what, rest);
	return set_error(error, "\"%s\": %s", list, what);
}

int cpu_list_parse(const char *text, struct cpu_list *ret, char **error)
{
	_cleanup_(cpu_list_done) struct cpu_list l = {};
	const char *p = text, *begin, *end;
	long last = -1;
	int r;

	*ret = (struct cpu_list){};
	while (is_blank(*p))
		p++;
	begin = p;
	end = p + strlen(p);
	while (end > p && is_blank(end[-1]))
		end--;
	while (p < end) {
		const char *start = p;
		long from, to;

		from = parse_cpu(&p);
		to = from;
		if (from >= 0 && *p == '-') {
			p++;
			to = parse_cpu(&p);
		}
		if (from < 0 || to < 0 || (p < end && *p != ','))
			return list_error(error, begin, start, end,
					  "not a CPU or range of CPUs (0-" STRINGIFY(SCHED_CPU_MAX) ") at");
		if (to < from || from <= last)
			return list_error(error, begin, start, end, "CPUs not in ascending order at");
		r = cpu_list_add_range(&l, from, to);
		if (r < 0)
			return r;
		last = to;
		if (p < end && ++p == end)
			return list_error(error, begin, NULL, end, "ends with a comma");
	}
	*ret = l;
	l = (struct cpu_list){};
	return 0;
}

char *cpu_list_format(const struct cpu_list *l)
{
	size_t cap = 16 * l->n + 1, at = 0;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	s[0] = '\0';
	for (size_t i = 0; i < l->n;) {
		size_t j = i;

		while (j + 1 < l->n && l->cpus[j + 1] == l->cpus[j] + 1)
			j++;
		if (j == i)
			at += snprintf(s + at, cap - at, "%s%" PRIu32, at ? "," : "", l->cpus[i]);
		else
			at += snprintf(s + at, cap - at, "%s%" PRIu32 "-%" PRIu32, at ? "," : "",
				       l->cpus[i], l->cpus[j]);
		i = j + 1;
	}
	return s;
}

void cpu_list_done(struct cpu_list *l)
{
	free(l->cpus);
	*l = (struct cpu_list){};
}

/* ---- caps ---- */

static int cap_by_name(const char *name, size_t len)
{
	for (int i = 0; i < SCHED_NR_CAPS; i++)
		if (strlen(sched_cap_names[i]) == len && !strncmp(sched_cap_names[i], name, len))
			return i;
	return -1;
}

/* [a-z_][a-z0-9_]*, as the kernel names capabilities */
static bool valid_cap_name(const char *name, size_t len)
{
	if (len == 0 || (name[0] >= '0' && name[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '_'))
			return false;
	return true;
}

int sched_caps_parse(const char *text, struct sched_caps *ret, char **error)
{
	_cleanup_(sched_caps_done) struct sched_caps c = {};
	unsigned line_no = 0;
	const char *line = text;
	int r;

	*ret = (struct sched_caps){};
	while (*line) {
		size_t len = strcspn(line, "\n"), name_len;
		_cleanup_free_ char *rest = NULL, *why = NULL;
		const char *name = line, *sep;
		int cap;

		line_no++;
		while (name < line + len && is_blank(*name))
			name++;
		name_len = strcspn(name, " \t\n:");
		if (name == line + len) {
			/* an empty line: only the end of the file may have one */
		} else if (!valid_cap_name(name, name_len)) {
			_cleanup_free_ char *shown = printable(line, len);

			if (!shown)
				return -ENOMEM;
			return set_error(error, "line %u: \"%s\" is not \"NAME[:] LIST\"", line_no, shown);
		} else if ((cap = cap_by_name(name, name_len)) >= 0) {
			if (c.present[cap])
				return set_error(error, "line %u: %s listed twice", line_no,
						 sched_cap_names[cap]);
			/* upstream (7.2 on) writes "NAME: LIST" */
			sep = name + name_len;
			if (sep < line + len && *sep == ':')
				sep++;
			rest = strndup(sep, line + len - sep);
			if (!rest)
				return -ENOMEM;
			r = cpu_list_parse(rest, &c.cpus[cap], &why);
			if (r == -EINVAL)
				return set_error(error, "line %u, %s: %s", line_no, sched_cap_names[cap], why);
			if (r < 0)
				return r;
			c.present[cap] = true;
		}
		line += len;
		if (*line == '\n')
			line++;
	}
	*ret = c;
	c = (struct sched_caps){};
	return 0;
}

void sched_caps_done(struct sched_caps *c)
{
	for (int i = 0; i < SCHED_NR_CAPS; i++)
		cpu_list_done(&c->cpus[i]);
	*c = (struct sched_caps){};
}

/* ---- events ---- */

int sched_events_get(const char *events, const char *name, uint64_t *ret)
{
	size_t len = strlen(name);

	for (const char *line = events; *line; line += strcspn(line, "\n"), line += !!*line) {
		unsigned long long v;
		char *end;

		if (strncmp(line, name, len) || (line[len] != ' ' && line[len] != '\t'))
			continue;
		errno = 0;
		v = strtoull(line + len, &end, 10);
		if (errno || end == line + len)
			continue;
		*ret = v;
		return 0;
	}
	return -ENOENT;
}

json_t *sched_events_json(const char *events)
{
	_cleanup_free_ char *copy = strdup(events);
	json_t *o = json_object();
	char *save = NULL;

	if (!copy || !o) {
		json_decref(o);
		return NULL;
	}
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[128];
		long long v;

		if (sscanf(line, "%127s %lld", name, &v) == 2)
			json_object_set_new(o, name, json_integer(v));
	}
	return o;
}

static const struct {
	const char *event;
	const char *name;
} denied_events[] = {
	{ "SCX_EV_SUB_ENQ_DENIED", "enq" },
	{ "SCX_EV_SUB_KICK_DENIED", "kick" },
	{ "SCX_EV_SUB_PREEMPT_DENIED", "preempt" },
	{ "SCX_EV_SUB_CPUPERF_DENIED", "cpuperf" },
};

static int add_caps_json(json_t *node, const char *text)
{
	_cleanup_(sched_caps_done) struct sched_caps caps = {};
	_cleanup_free_ char *error = NULL;
	json_t *o;
	int r;

	r = sched_caps_parse(text, &caps, &error);
	if (r == -EINVAL)
		return json_object_set_new(node, "caps_error", json_string(error)) < 0 ? -ENOMEM : 0;
	if (r < 0)
		return r;
	o = json_object();
	if (!o || json_object_set_new(node, "caps", o) < 0)
		return -ENOMEM;
	for (int i = 0; i < SCHED_NR_CAPS; i++) {
		json_t *cpus;

		if (!caps.present[i])
			continue;
		cpus = json_array();
		if (!cpus || json_object_set_new(o, sched_cap_names[i], cpus) < 0)
			return -ENOMEM;
		for (size_t k = 0; k < caps.cpus[i].n; k++)
			if (json_array_append_new(cpus, json_integer(caps.cpus[i].cpus[k])) < 0)
				return -ENOMEM;
	}
	return 0;
}

int sched_stats_add_json(json_t *node, const char *events, const char *caps)
{
	if (events) {
		json_t *ev = sched_events_json(events), *rescue, *denied = NULL;

		if (!ev || json_object_set_new(node, "events", ev) < 0)
			return -ENOMEM;
		rescue = json_object_get(ev, "SCX_EV_SUB_RESCUE");
		if (rescue && json_object_set(node, "rescues", rescue) < 0)
			return -ENOMEM;
		for (size_t i = 0; i < ELEMENTSOF(denied_events); i++) {
			json_t *v = json_object_get(ev, denied_events[i].event);

			if (!v)
				continue;
			if (!denied) {
				denied = json_object();
				if (!denied || json_object_set_new(node, "denied", denied) < 0)
					return -ENOMEM;
			}
			if (json_object_set(denied, denied_events[i].name, v) < 0)
				return -ENOMEM;
		}
	}
	return caps ? add_caps_json(node, caps) : 0;
}
