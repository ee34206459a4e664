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
 *
 * This file is main and the daemon's lifecycle (the policy's load and
 * reload, the instance lock, the exit); the rest is in the rooms
 * daemon.h lists.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <jansson.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include "apply.h"
#include "check.h"
#include "daemon.h"
#include "desired.h"
#include "kernel-api.h"
#include "log.h"
#include "policy.h"
#include "sched-info.h"
#include "sha256.h"
#include "strict.h"
#include "util.h"

#ifndef SCXD_SCHED_DIR
#define SCXD_SCHED_DIR "/usr/lib/scxd"
#endif
#ifndef SCXD_POLICY
#define SCXD_POLICY "/etc/scxd/policy.json"
#endif

/*
 * sd-event pings the service watchdog from the loop, but one reconcile can
 * attach hundreds of schedulers (a burst of new cgroups), each a BPF load;
 * under a slow machine that outlasts WatchdogSec=. Ping between steps.
 * Before READY=1 the first reconcile runs against TimeoutStartSec=
 * instead: ask for more time as it goes (EXTEND_TIMEOUT_USEC).
 */
void watchdog_ping(struct daemon *d)
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

int policy_take(struct daemon *d, int r, const struct diag_list *diags, struct policy *p,
		struct sched_dir_catalog *catalog, bool keep)
{
	_cleanup_(sched_dir_catalog_freep) struct sched_dir_catalog *c = catalog;
	_cleanup_(policy_freep) struct policy *policy = p;

	free(d->reload_error);
	d->reload_error = NULL;
	for (size_t i = 0; i < diags->n; i++)
		log_error(0, ABOUT(.file = d->policy_file), "%s", diags->lines[i]);
	if (r < 0) {
		policy_error_from_diags(d, r, diags);
		return policy_rejected(d, r, keep);
	}
	policy_free(d->policy);
	sched_dir_catalog_free(d->catalog);
	d->policy = TAKE_PTR(policy);
	d->catalog = TAKE_PTR(c);
	d->log_notes = true;
	log_info(ABOUT(.file = d->policy_file, .message_id = keep ? SCXD_MESSAGE_RELOAD_APPLIED : NULL),
		 "%s: policy loaded, %zu entries (%zu drop-ins)", d->policy_file,
		 d->policy->n_entries, d->policy->n_files - 1);
	return 0;
}

/* The policy at start, in the loop's stead: there is no loop yet. */
static int load_policy(struct daemon *d)
{
	_cleanup_(diag_list_donep) struct diag_list diags = {};
	struct sched_dir_catalog *catalog = NULL;
	struct policy *p = NULL;
	int r;

	r = sched_dir_catalog_new_for(d->sched_base, d->api, &catalog);
	if (r < 0)
		return log_error(r, ABOUT(.file = d->policy_file), "out of memory");
	r = policy_load(d->policy_file, sched_dir_catalog_base(catalog), &diags, &p);
	if (r >= 0)	/* what this kernel cannot run is refused like any error */
		r = desired_check_kernel(p, d->api, &diags);
	return policy_take(d, r, &diags, p, catalog, false);
}

static void daemon_done(struct daemon *d)
{
	policy_jobs_done(d);
	backoffs_done(d);
	free(d->blocked_reported);
	free(d->strays_reported);
	free(d->reload_error);
	free(d->status_line);
	control_server_free(d->control);
	sd_event_source_unref(d->reconcile_source);
	sd_event_source_unref(d->retry_timer);
	sd_event_source_unref(d->debounce_timer);
	sd_event_source_unref(d->resync_timer);
	sd_event_source_unref(d->metrics_timer);
	free(d->metrics_last);
	sd_event_unref(d->event);
	if (d->inotify_fd >= 0)
		close(d->inotify_fd);
	watch_table_done(&d->watches);
	scope_done(&d->pending);
	path_set_done(&d->known);
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	if (d->lock_sock >= 0)
		close(d->lock_sock);
	policy_free(d->policy);
	sched_dir_catalog_free(d->catalog);
}

/*
 * The lock that outlives the state directory: an abstract unix socket
 * named after the state directory's path (its SHA-256), bound for as
 * long as scxd runs. Removing the directory, and the lock file with it,
 * does not free the name: a second scxd for the same path finds it taken,
 * and asks the holder's pid of the socket (SO_PEERCRED).
 */
static int instance_name_lock(struct daemon *d, pid_t *holder)
{
	_cleanup_free_ char *dir = realpath(d->paths.state_dir, NULL);
	_cleanup_close_ int fd = -1, probe = -1;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint8_t hash[SHA256_DIGEST_SIZE];
	struct ucred cred;
	socklen_t len = sizeof(cred);
	socklen_t sa_len;
	int n;

	if (!dir)
		return -errno;
	sha256(dir, strlen(dir), hash);
	n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "scxd/");
	for (size_t i = 0; i < 16; i++)
		n += snprintf(sa.sun_path + 1 + n, sizeof(sa.sun_path) - 1 - n, "%02x", hash[i]);
	sa_len = offsetof(struct sockaddr_un, sun_path) + 1 + n;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sa_len) < 0) {
		if (errno != EADDRINUSE)
			return -errno;
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		*holder = 0;
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sa_len) == 0 &&
		    getsockopt(probe, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
			*holder = cred.pid;
		return -EBUSY;
	}
	if (listen(fd, 4) < 0)
		return -errno;
	d->lock_sock = TAKE_FD(fd);
	return 0;
}

/*
 * Take <state dir>/scxd.lock: an flock() on an fd kept open for as long as
 * scxd runs (the kernel drops it when the process dies, however it dies),
 * with the holder's pid written in the file for the next one's message,
 * and the name lock above. Returns -EBUSY with *holder set when another
 * scxd has either; the caller then leaves the control socket, which is the
 * other one's, alone.
 */
static int instance_lock(struct daemon *d, pid_t *holder)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	char buf[32];
	ssize_t n;
	int len, r;

	if (asprintf(&path, "%s/scxd.lock", d->paths.state_dir) < 0)
		return -ENOMEM;
	if (mkdir(d->paths.state_dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	r = instance_name_lock(d, holder);
	if (r < 0)
		return r;
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

static int describe(struct daemon *d, const char *name)
{
	_cleanup_(sched_dir_catalog_freep) struct sched_dir_catalog *c = NULL;
	const struct sched_info *s;
	const char *reason = NULL;
	int r = describe_lookup(d, name, &c, &s, &reason);

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
	       "     --metrics-dir DIR write DIR/scxd.prom for node-exporter's textfile collector,\n"
	       "                       if DIR exists (default %s; \"\": none)\n"
	       "     --metrics-interval SEC  write it at least every SEC s (default %d)\n"
	       "     --resync-interval SEC  read the whole state again SEC s after the last\n"
	       "                       reconcile, in case an event was missed (default %d, 0: never)\n"
	       "  -v --verbose         log debug messages\n"
	       "  -h --help            this text\n"
	       "     --version         print the version and exit\n",
	       SCXD_POLICY, SCXD_SCHED_DIR, LOAD_WORKERS_DEFAULT, METRICS_DIR_DEFAULT,
	       METRICS_INTERVAL_DEFAULT_SEC, RESYNC_DEFAULT_SEC);
}

enum { OPT_CHECK = 256, OPT_DESCRIBE, OPT_DRY_RUN, OPT_CGROUP_ROOT, OPT_PIN_DIR,
       OPT_STATE_DIR, OPT_NO_STRICT, OPT_SYSFS, OPT_SUB_SCHED, OPT_RESYNC_INTERVAL, OPT_SERVE,
       OPT_CONTROL_GROUP, OPT_VERSION, OPT_LOAD_WORKERS, OPT_KERNEL_API, OPT_BTF,
       OPT_METRICS_DIR, OPT_METRICS_INTERVAL };

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
		{ "metrics-dir", required_argument, NULL, OPT_METRICS_DIR },
		{ "metrics-interval", required_argument, NULL, OPT_METRICS_INTERVAL },
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
		.metrics_usec = METRICS_INTERVAL_DEFAULT_SEC * 1000000ULL,
		.lock_fd = -1,
		.lock_sock = -1,
		.job_efd = -1,
		.control_group = (gid_t)-1,
	};
	const char *check = NULL, *describe_name = NULL, *control_group = NULL;
	bool serve = false;
	pid_t holder = 0;
	_cleanup_free_ char *control = NULL, *sched_dir = NULL;
	const char *kernel_api = "auto";
	bool dry_run = false, metrics_dir_set = false;
	int c, r;

	/*
	 * Buffers of a few MiB (control requests, policy texts) come and go:
	 * a fixed threshold keeps them mmap()ed, so that freeing one gives its
	 * memory back instead of raising glibc's threshold and keeping it.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
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
			if (!streq(optarg, "yes") && !streq(optarg, "no")) {
				fprintf(stderr, "scxd: --sub-sched=%s: not yes or no (or use --kernel-api=)\n",
					optarg);
				return 2;
			}
			kernel_api = streq(optarg, "yes") ? "cpu" : "root-only";
			break;
		case OPT_KERNEL_API: kernel_api = optarg; break;
		case OPT_BTF: d.paths.kernel_btf = optarg; break;
		case OPT_RESYNC_INTERVAL: {
			unsigned long long sec;

			if (parse_seconds(optarg, 7 * 24 * 3600, &sec) < 0) {
				fprintf(stderr, "scxd: --resync-interval: \"%s\" is not a number of seconds up to a week\n",
					optarg);
				return 2;
			}
			d.resync_usec = sec * 1000000ULL;
			break;
		}
		case OPT_METRICS_DIR: d.metrics_dir = optarg; metrics_dir_set = true; break;
		case OPT_METRICS_INTERVAL: {
			unsigned long long sec;

			if (parse_seconds(optarg, 24 * 3600, &sec) < 0 || sec == 0) {
				fprintf(stderr, "scxd: --metrics-interval: \"%s\" is not a number of seconds from 1 to a day\n",
					optarg);
				return 2;
			}
			d.metrics_usec = sec * 1000000ULL;
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
	if (load_policy(&d) < 0) {
		log_error(0, ABOUT(.file = d.policy_file), "%s: no valid policy, exiting", d.policy_file);
		return 1;
	}
	if (dry_run && !serve) {
		r = reconcile(&d, true);
		daemon_done(&d);
		return r < 0 ? 1 : 0;
	}
	d.serve_dry_run = serve;
	/* --dry-run --serve writes metrics only where it is told to */
	if (!metrics_dir_set && !serve)
		d.metrics_dir = METRICS_DIR_DEFAULT;
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
	if (metrics_file_init(&d) < 0) {
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

