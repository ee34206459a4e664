// SPDX-License-Identifier: GPL-2.0
/*
 * scxdctl: talk to scxd. status, describe, diff and reload go over the
 * control socket (control.h: one JSON request, one JSON reply); check and
 * list read the policy and the scheduler objects locally, exactly as scxd
 * would, so they work without a running daemon. The exit status says what
 * went wrong (scxdctl(1), EXIT STATUS).
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "check.h"
#include "control.h"
#include "escape.h"
#include "file.h"
#include "sched-json.h"
#include "sched-stats.h"
#include "strict.h"
#include "util.h"

#ifndef SCXD_SCHED_DIR
#define SCXD_SCHED_DIR "/usr/lib/scxd"
#endif
#ifndef SCXD_VERSION
#define SCXD_VERSION "unknown"
#endif

enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1,	/* scxd (or check) said no: rejected policy, unknown scheduler */
	EXIT_USAGE = 2,
	EXIT_UNREACHABLE = 3,	/* no scxd, no answer in time, or an answer that is not one */
	EXIT_DENIED = 4,	/* not root (nor in the control group, for read-only commands) */
};

#define READ_TIMEOUT_USEC (30 * 1000000ULL)

struct options {
	const char *socket_path;
	const char *sched_dir;
	enum kernel_api api;		/* for check and list */
	bool json;
	uint64_t timeout_usec;	/* 0: the command's default */
};

static void help(void)
{
	printf("Usage: scxdctl [OPTIONS] COMMAND [ARG]\n\n"
	       "Commands answered by scxd:\n"
	       "  status              the cgroups, their schedulers and state, counters\n"
	       "  describe SCHEDULER  a scheduler's role and tunables, as scxd reads them\n"
	       "  diff FILE           what a reload with FILE as the policy would change, per cgroup\n"
	       "  reload              reload the policy; waits, fails if it is rejected\n"
	       "Commands run here:\n"
	       "  check [FILE]        validate a policy file (default /etc/scxd/policy.json)\n"
	       "  list                the installed schedulers, their roles and tunables\n\n"
	       "  -S --socket PATH    control socket (default %s)\n"
	       "  -s --sched-dir DIR  scheduler objects for check and list (default $SCXD_SCHED_DIR or %s)\n"
	       "     --kernel-api=auto|cid|cpu|root-only|none  check and list for this kernel API\n"
	       "                     (default auto: the running kernel's; cid: the objects in DIR/cid)\n"
	       "     --btf FILE      the kernel's BTF for auto (default /sys/kernel/btf/vmlinux)\n"
	       "  -j --json           print scxd's reply (or list) as JSON\n"
	       "  -t --timeout SEC    give up waiting for scxd after SEC seconds (default 30, reload: none)\n"
	       "     --no-strict-modes  check: accept files others can write\n"
	       "  -h --help\n"
	       "     --version\n", SCXD_CONTROL_SOCKET, SCXD_SCHED_DIR);
}

/* ---- talking to scxd ---- */

static int call_fd(const struct options *o, json_t *request, int fd, uint64_t timeout_usec,
		   json_t **reply)
{
	const char *error, *code;
	int r;

	if (!request)
		return EXIT_FAILED;
	r = control_call(o->socket_path, request, fd, o->timeout_usec ?: timeout_usec, reply);
	json_decref(request);
	if (r < 0) {
		fprintf(stderr, "scxdctl: %s: %s%s\n", o->socket_path, strerror(-r),
			r == -ENOENT || r == -ECONNREFUSED ? " (is scxd running?)" :
			r == -EACCES ? " (only root and scxd's control group may talk to scxd)" :
			r == -EPROTO ? " (the reply is not a JSON object)" : "");
		return r == -EACCES ? EXIT_DENIED : EXIT_UNREACHABLE;
	}
	if (json_is_true(json_object_get(*reply, "ok")))
		return EXIT_OK;
	error = json_string_value(json_object_get(*reply, "error"));
	code = json_string_value(json_object_get(*reply, "code"));
	if (!o->json) {
		json_t *e;
		size_t i;

		_cleanup_free_ char *why = escape_text(error ?: "scxd refused the request");

		fprintf(stderr, "scxdctl: %s\n", why ?: "?");
		json_array_foreach(json_object_get(*reply, "errors"), i, e) {
			_cleanup_free_ char *line = escape_text(json_string_value(e) ?: "?");

			fprintf(stderr, "%s\n", line ?: "?");
		}
	}
	return code && streq(code, "permission-denied") ? EXIT_DENIED : EXIT_FAILED;
}

static int call(const struct options *o, json_t *request, uint64_t timeout_usec, json_t **reply)
{
	return call_fd(o, request, -1, timeout_usec, reply);
}

static void print_json(const json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2));

	if (s)
		puts(s);
	free(s);
}

static int reply_done(const struct options *o, json_t *reply, int ret)
{
	if (o->json && reply)
		print_json(reply);
	json_decref(reply);
	return ret;
}

/* ---- status ---- */

static const char *str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key)) ?: "";
}

/*
 * A member for the terminal: its raw bytes (from "<key>_hex" when scxd
 * sent them so: escape.h) with control characters and what is not UTF-8
 * escaped. Whoever may make cgroups picks a cgroup's bytes. The text
 * lives until a few more calls.
 */
static const char *term(const json_t *o, const char *key)
{
	static char *ring[8];
	static unsigned next;
	_cleanup_free_ char *raw = json_get_cgroup((json_t *)o, key);
	char **slot = &ring[next++ % ELEMENTSOF(ring)];

	free(*slot);
	*slot = escape_text(raw ?: "");
	return *slot ?: "?";
}

static json_int_t num(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

/* "last exit: parent-kill (kind 69, code 0): reason (message)" */
static void print_last_exit(const char *indent, const json_t *e)
{
	const char *msg = str(e, "message");

	if (!e)
		return;
	printf("%s    last exit: %s (kind %" JSON_INTEGER_FORMAT ", code %" JSON_INTEGER_FORMAT
	       "): %s%s%s%s\n", indent, str(e, "kind"), num(e, "code"), num(e, "exit_code"),
	       str(e, "reason"), *msg ? " (" : "", msg, *msg ? ")" : "");
}

/* "caps: enq_immed 0-3, enq 0-1, preempt none, perf 2" from the JSON CPU arrays. */
static void print_caps(const char *indent, const json_t *n)
{
	const json_t *caps = json_object_get(n, "caps");
	const char *name;
	json_t *cpus;
	bool first = true;

	if (json_object_get(n, "caps_error"))
		printf("%s    caps: unreadable: %s\n", indent, str(n, "caps_error"));
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

static void print_node(const json_t *n)
{
	const char *state = str(n, "state"), *running = str(n, "running");
	size_t depth = num(n, "depth") ? num(n, "depth") - 1 : 0;
	const json_t *events = json_object_get(n, "events");
	char text[600], indent[32];

	if (streq(state, "foreign"))
		snprintf(text, sizeof(text), "foreign (%s, not attached by scxd)", term(n, "running"));
	else if (streq(state, "blocked")) {
		const json_t *b = json_object_get(n, "blocked_by");

		if (streq(term(b, "cgroup"), term(n, "cgroup")))
			snprintf(text, sizeof(text), "blocked: runs %s, not attached by scxd",
				 term(b, "scheduler"));
		else
			snprintf(text, sizeof(text), "blocked: below %.200s, which runs %s, not attached by scxd",
				 term(b, "cgroup"), term(b, "scheduler"));
	}
	else if (streq(state, "replace"))
		snprintf(text, sizeof(text), "attached as %s, to be replaced", running);
	else if (streq(state, "detach"))
		snprintf(text, sizeof(text), "attached, to be detached");
	else if (streq(state, "backoff")) {
		const json_t *b = json_object_get(n, "backoff");

		snprintf(text, sizeof(text), "backoff: %" JSON_INTEGER_FORMAT " failures, retry in %"
			 JSON_INTEGER_FORMAT " s, last: %.400s", num(b, "failures"),
			 num(b, "retry_in_sec"), *str(b, "last_error") ? term(b, "last_error") : "?");
	} else
		snprintf(text, sizeof(text), "%s", state);

	snprintf(indent, sizeof(indent), "%*s", (int)(2 * (depth < 8 ? depth : 8)), "");
	printf("%s%-*s %-10s %s\n", indent, (int)(40 - strlen(indent)), term(n, "cgroup"),
	       term(n, "scheduler"), text);
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

static void print_status(const json_t *st)
{
	const json_t *d = json_object_get(st, "daemon"), *c = json_object_get(st, "counters");
	const json_t *nodes = json_object_get(st, "nodes"), *n;
	const char *kernel = str(d, "kernel");
	size_t i;

	printf("policy: %s (%" JSON_INTEGER_FORMAT " entries)\n", str(d, "policy"),
	       num(d, "policy_entries"));
	if (json_object_get(d, "last_reload_error"))
		printf("last reload rejected: %s\n", str(d, "last_reload_error"));
	printf("kernel: %s\n", kernel_status_text(kernel, str(d, "kernel_api")));
	printf("%-40s %-10s %s\n", "CGROUP", "SCHEDULER", "STATE");
	json_array_foreach(nodes, i, n)
		print_node(n);
	if (json_array_size(nodes) == 0)
		printf("(nothing attached)\n");
	json_array_foreach(json_object_get(st, "ignored"), i, n)
		printf("ignored: %s\n", json_string_value(n));
	printf("counters: reconciles %" JSON_INTEGER_FORMAT ", attaches %" JSON_INTEGER_FORMAT
	       ", attach failures %" JSON_INTEGER_FORMAT ", detaches %" JSON_INTEGER_FORMAT
	       ", exits %" JSON_INTEGER_FORMAT " (killed by their parent %" JSON_INTEGER_FORMAT
	       "), reloads %" JSON_INTEGER_FORMAT
	       " (rejected %" JSON_INTEGER_FORMAT "), cgroup events %" JSON_INTEGER_FORMAT
	       ", kernel events %" JSON_INTEGER_FORMAT ", resyncs %" JSON_INTEGER_FORMAT
	       " (safety %" JSON_INTEGER_FORMAT "), scoped reconciles %" JSON_INTEGER_FORMAT "\n",
	       num(c, "reconciles"), num(c, "attaches"), num(c, "attach_failures"),
	       num(c, "detaches"), num(c, "exits"), num(c, "parent_kills"), num(c, "reloads"),
	       num(c, "reloads_rejected"),
	       num(c, "cgroup_events"), num(c, "kernel_events"), num(c, "resyncs"),
	       num(c, "safety_resyncs"), num(c, "scoped_reconciles"));
}

static int cmd_status(const struct options *o)
{
	json_t *reply = NULL;
	int r = call(o, json_pack("{s:s}", "command", "status"), READ_TIMEOUT_USEC, &reply);

	if (r == EXIT_OK && o->json) {
		print_json(json_object_get(reply, "status"));
		json_decref(reply);
		return r;
	}
	if (r == EXIT_OK)
		print_status(json_object_get(reply, "status"));
	json_decref(reply);
	return r;
}

/* ---- describe, list ---- */

static void print_sched(const json_t *s)
{
	const json_t *t;
	size_t i;

	if (json_object_get(s, "error")) {
		printf("%-12s %-6s cannot read %s: %s\n", str(s, "name"), "?", str(s, "path"),
		       str(s, "error"));
		return;
	}
	printf("%-12s %-6s %s\n", str(s, "name"), str(s, "role"), str(s, "path"));
	printf("  hosts children: %s; grants CPUs: %s\n",
	       json_is_true(json_object_get(s, "sub_attach")) ? "yes (sets sub_attach)" :
	       json_is_true(json_object_get(s, "can_host_children")) ?
			"yes (marked; no sub_attach in this build)" : "no",
	       json_is_true(json_object_get(s, "grants_cpus")) ? "yes (calls scx_bpf_sub_grant)" : "no");
	json_array_foreach(json_object_get(s, "tunables"), i, t) {
		const json_t *def = json_object_get(t, "default"), *v;
		const char *name;

		printf("  %-24s %-5s default ", str(t, "name"), str(t, "type"));
		if (json_is_boolean(def))
			printf("%s", json_is_true(def) ? "true" : "false");
		else
			printf("%" JSON_INTEGER_FORMAT, json_integer_value(def));
		json_object_foreach((json_t *)json_object_get(t, "values"), name, v)
			printf(" %s=%" JSON_INTEGER_FORMAT, name, json_integer_value(v));
		printf("\n");
	}
}

static int cmd_describe(const struct options *o, const char *name)
{
	json_t *reply = NULL;
	int r = call(o, json_pack("{s:s, s:s}", "command", "describe", "scheduler", name),
		     READ_TIMEOUT_USEC, &reply);

	if (r == EXIT_OK && !o->json) {
		print_sched(json_object_get(reply, "scheduler"));
		if (json_object_get(reply, "kernel"))
			printf("  kernel: %s\n", str(reply, "kernel"));
	}
	return reply_done(o, reply, r);
}

static int cmd_list(const struct options *o)
{
	_cleanup_free_ char *dir = kernel_api_sched_dir(o->api, o->sched_dir);
	json_t *list, *s;
	size_t i;
	int r;

	if (!dir)
		return EXIT_FAILED;
	r = sched_dir_list_json(dir, &list);
	if (r < 0) {
		fprintf(stderr, "scxdctl: %s: %s (kernel: %s)\n", dir, strerror(-r),
			kernel_api_describe(o->api));
		return EXIT_FAILED;
	}
	if (o->json)
		print_json(list);
	else {
		printf("%-12s %-6s %s\n", "SCHEDULER", "ROLE", "OBJECT / TUNABLES");
		json_array_foreach(list, i, s)
			print_sched(s);
		if (json_array_size(list) == 0)
			printf("(no schedulers in %s)\n", dir);
		printf("kernel: %s; objects from %s\n", kernel_api_describe(o->api), dir);
	}
	json_decref(list);
	return EXIT_OK;
}

/* ---- diff, reload ---- */

/*
 * The policy file, read here with the caller's rights, into a sealed
 * memfd: scxd gets bytes that cannot change nor block, not a path, and
 * reads them off its loop, up to the size a policy file may have.
 */
static int policy_memfd(const char *file)
{
	_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	_cleanup_close_ int mfd = -1;
	_cleanup_free_ char *text = NULL;
	size_t len = 0, done = 0;
	struct stat st;
	int r;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	r = file_read_fd(fd, st.st_size, FILE_POLICY_MAX, &text, &len);
	if (r < 0)
		return r;
	mfd = memfd_create("scxd-policy", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return -errno;
	while (done < len) {
		ssize_t n = write(mfd, text + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		done += n;
	}
	if (fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		return -errno;
	return TAKE_FD(mfd);
}

static int cmd_diff(const struct options *o, const char *file)
{
	_cleanup_close_ int fd = policy_memfd(file);
	json_t *reply = NULL, *c;
	size_t i;
	int r;

	if (fd < 0) {
		fprintf(stderr, "scxdctl: %s: %s\n", file,
			fd == -EINVAL ? "not a regular file" :
			fd == -EFBIG ? "larger than a policy file may be" : strerror(-fd));
		return EXIT_FAILED;
	}
	r = call_fd(o, json_pack("{s:s, s:o}", "command", "diff", "file", json_text(file)), fd,
		    READ_TIMEOUT_USEC, &reply);
	if (r != EXIT_OK || o->json)
		return reply_done(o, reply, r);
	json_array_foreach(json_object_get(reply, "changes"), i, c) {
		const char *action = str(c, "action");

		if (streq(action, "replace"))
			printf("replace %s: %s -> %s (%s)\n", term(c, "cgroup"), term(c, "from"),
			       term(c, "scheduler"), str(c, "reason"));
		else
			printf("%s %s: %s (%s)\n", action, term(c, "cgroup"), term(c, "scheduler"),
			       str(c, "reason"));
	}
	json_array_foreach(json_object_get(reply, "blocked"), i, c)
		printf("blocked %s: %s (a scheduler scxd did not attach runs there)\n",
		       term(c, "cgroup"), term(c, "scheduler"));
	if (json_array_size(json_object_get(reply, "changes")) == 0)
		printf("no changes: a reload with %s would leave every cgroup as it is\n", file);
	return reply_done(o, reply, r);
}

static int cmd_reload(const struct options *o)
{
	json_t *reply = NULL;
	int r = call(o, json_pack("{s:s}", "command", "reload"), 0, &reply);

	if (r == EXIT_OK && !o->json)
		printf("%s: policy reloaded, %" JSON_INTEGER_FORMAT " entries\n", str(reply, "policy"),
		       num(reply, "entries"));
	return reply_done(o, reply, r);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "socket", required_argument, NULL, 'S' },
		{ "sched-dir", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ "no-strict-modes", no_argument, NULL, 256 },
		{ "version", no_argument, NULL, 257 },
		{ "kernel-api", required_argument, NULL, 258 },
		{ "btf", required_argument, NULL, 259 },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct options o = {
		.socket_path = SCXD_CONTROL_SOCKET,
		.sched_dir = getenv("SCXD_SCHED_DIR") ?: SCXD_SCHED_DIR,
	};
	const char *cmd, *arg, *kernel_api = "auto", *btf = NULL;
	int c, nargs;

	while ((c = getopt_long(argc, argv, "S:s:jt:h", options, NULL)) >= 0) {
		switch (c) {
		case 'S': o.socket_path = optarg; break;
		case 's': o.sched_dir = optarg; break;
		case 'j': o.json = true; break;
		case 't': {
			unsigned long long sec;

			if (parse_seconds(optarg, 7 * 24 * 3600, &sec) < 0) {
				fprintf(stderr, "scxdctl: --timeout: \"%s\" is not a number of seconds up to a week\n",
					optarg);
				return EXIT_USAGE;
			}
			o.timeout_usec = sec * 1000000ULL;
			break;
		}
		case 256: strict_modes = false; break;
		case 257: printf("scxdctl %s\n", SCXD_VERSION); return EXIT_OK;
		case 258: kernel_api = optarg; break;
		case 259: btf = optarg; break;
		case 'h': help(); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		help();
		return EXIT_USAGE;
	}
	/* the BTF is read only by the commands run here (check, list) */
	if (!streq(kernel_api, "auto") && kernel_api_from_name(kernel_api, &o.api) < 0) {
		fprintf(stderr, "scxdctl: --kernel-api=%s: not auto, cid, cpu, root-only or none\n",
			kernel_api);
		return EXIT_USAGE;
	}
	cmd = argv[optind];
	if (streq(cmd, "check") || streq(cmd, "list"))
		kernel_api_option(kernel_api, btf, &o.api);
	nargs = argc - optind - 1;
	arg = nargs > 0 ? argv[optind + 1] : NULL;

	if (streq(cmd, "check") && nargs <= 1)
		return scxd_check(arg ?: "/etc/scxd/policy.json", o.sched_dir, o.api) < 0 ? EXIT_FAILED : EXIT_OK;
	if (streq(cmd, "status") && nargs == 0)
		return cmd_status(&o);
	if (streq(cmd, "reload") && nargs == 0)
		return cmd_reload(&o);
	if (streq(cmd, "list") && nargs == 0)
		return cmd_list(&o);
	if (streq(cmd, "describe") && nargs == 1)
		return cmd_describe(&o, arg);
	if (streq(cmd, "diff") && nargs == 1)
		return cmd_diff(&o, arg);
	fprintf(stderr, "scxdctl: \"%s\" with %d argument%s: see scxdctl --help "
		"(status, describe SCHEDULER, diff FILE, reload, check [FILE], list)\n",
		cmd, nargs, nargs == 1 ? "" : "s");
	return EXIT_USAGE;
}
