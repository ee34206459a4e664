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
#include "metrics.h"
#include "sched-json.h"
#include "sched-stats.h"
#include "status-text.h"
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
	bool verbose;			/* status: caps, exits, counters and events in full */
	uint64_t timeout_usec;	/* 0: the command's default */
};

static void help(void)
{
	printf("Usage: scxdctl [OPTIONS] COMMAND [ARG]\n\n"
	       "Commands answered by scxd:\n"
	       "  status              one line per cgroup: scheduler, state, caps, last exit\n"
	       "                      (-v: caps, exits, rescues, denials, kernel events, counters)\n"
	       "  metrics             scxd's counters and each scheduler's state in the\n"
	       "                      Prometheus text format\n"
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
	       "  -v --verbose        status: everything scxd and the kernel count\n"
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
		status_print(json_object_get(reply, "status"), o->verbose);
	json_decref(reply);
	return r;
}

static int cmd_metrics(const struct options *o)
{
	_cleanup_free_ char *text = NULL;
	json_t *reply = NULL;
	int r = call(o, json_pack("{s:s}", "command", "status"), READ_TIMEOUT_USEC, &reply);

	if (r == EXIT_OK && metrics_format(json_object_get(reply, "status"), &text) < 0) {
		fprintf(stderr, "scxdctl: metrics: out of memory\n");
		r = EXIT_FAILED;
	}
	if (r == EXIT_OK)
		fputs(text, stdout);
	json_decref(reply);
	return r;
}

/* ---- describe, list ---- */

static void print_sched(const json_t *s)
{
	const json_t *t;
	size_t i;

	if (json_object_get(s, "error")) {
		printf("%-12s %-6s cannot read %s: %s\n", reply_str(s, "name"), "?", reply_str(s, "path"),
		       reply_str(s, "error"));
		return;
	}
	printf("%-12s %-6s %s\n", reply_str(s, "name"), reply_str(s, "role"), reply_str(s, "path"));
	printf("  hosts children: %s; grants CPUs: %s\n",
	       json_is_true(json_object_get(s, "sub_attach")) ? "yes (sets sub_attach)" :
	       json_is_true(json_object_get(s, "can_host_children")) ?
			"yes (marked; no sub_attach in this build)" : "no",
	       json_is_true(json_object_get(s, "grants_cpus")) ? "yes (calls scx_bpf_sub_grant)" : "no");
	json_array_foreach(json_object_get(s, "tunables"), i, t) {
		const json_t *def = json_object_get(t, "default"), *v;
		const char *name;

		printf("  %-24s %-5s default ", reply_str(t, "name"), reply_str(t, "type"));
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
			printf("  kernel: %s\n", reply_str(reply, "kernel"));
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
		const char *action = reply_str(c, "action");

		if (streq(action, "replace"))
			printf("replace %s: %s -> %s (%s)\n", reply_term(c, "cgroup"), reply_term(c, "from"),
			       reply_term(c, "scheduler"), reply_str(c, "reason"));
		else
			printf("%s %s: %s (%s)\n", action, reply_term(c, "cgroup"), reply_term(c, "scheduler"),
			       reply_str(c, "reason"));
	}
	json_array_foreach(json_object_get(reply, "blocked"), i, c)
		printf("blocked %s: %s (a scheduler scxd did not attach runs there)\n",
		       reply_term(c, "cgroup"), reply_term(c, "scheduler"));
	if (json_array_size(json_object_get(reply, "changes")) == 0)
		printf("no changes: a reload with %s would leave every cgroup as it is\n", file);
	return reply_done(o, reply, r);
}

static int cmd_reload(const struct options *o)
{
	json_t *reply = NULL;
	int r = call(o, json_pack("{s:s}", "command", "reload"), 0, &reply);

	if (r == EXIT_OK && !o->json)
		printf("%s: policy reloaded, %" JSON_INTEGER_FORMAT " entries\n", reply_str(reply, "policy"),
		       reply_num(reply, "entries"));
	return reply_done(o, reply, r);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "socket", required_argument, NULL, 'S' },
		{ "sched-dir", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
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

	while ((c = getopt_long(argc, argv, "S:s:jvt:h", options, NULL)) >= 0) {
		switch (c) {
		case 'S': o.socket_path = optarg; break;
		case 's': o.sched_dir = optarg; break;
		case 'j': o.json = true; break;
		case 'v': o.verbose = true; break;
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
	if (streq(cmd, "metrics") && nargs == 0)
		return cmd_metrics(&o);
	if (streq(cmd, "reload") && nargs == 0)
		return cmd_reload(&o);
	if (streq(cmd, "list") && nargs == 0)
		return cmd_list(&o);
	if (streq(cmd, "describe") && nargs == 1)
		return cmd_describe(&o, arg);
	if (streq(cmd, "diff") && nargs == 1)
		return cmd_diff(&o, arg);
	fprintf(stderr, "scxdctl: \"%s\" with %d argument%s: see scxdctl --help "
		"(status, metrics, describe SCHEDULER, diff FILE, reload, check [FILE], list)\n",
		cmd, nargs, nargs == 1 ? "" : "s");
	return EXIT_USAGE;
}
