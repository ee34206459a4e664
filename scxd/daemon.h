/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * The daemon's state and the rooms it is kept in: scxd.c (main, the
 * policy's load and reload, the lock, the exit), sources.c (the sd-event
 * sources: inotify watches, uevents, timers, signals), reconcile.c (read,
 * desired, plan, apply: one reconcile), report.c (what a reconcile
 * tells the journal and systemd), backoff.c (failed cgroups and their
 * retry times), replies.c (what scxdctl is answered). Data flows one way
 * through reconcile(): policy -> desired -> plan -> apply.
 */

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "actual.h"
#include "control.h"
#include "events.h"
#include "kernel-api.h"
#include "plan.h"
#include "policy.h"
#include "sched-info.h"
#include "sched-stats.h"
#include "scope.h"

#ifndef SCXD_VERSION
#define SCXD_VERSION "unknown"
#endif

/* The "schema" member of `scxdctl status --json`: conf/status.schema.json. */
#define SCXD_STATUS_SCHEMA 1

/* Before READY=1, ask systemd for this much more time every third of it. */
#define EXTEND_TIMEOUT_USEC (30 * 1000000ULL)

#define BACKOFF_FIRST_USEC (1 * 1000000ULL)
#define BACKOFF_CAP_USEC (60 * 1000000ULL)
#define STABLE_USEC (60 * 1000000ULL)	/* up this long: failures are forgiven */
#define DEBOUNCE_QUIET_USEC (50 * 1000ULL)	/* a burst of events: wait for this much quiet, */
#define DEBOUNCE_MAX_USEC (250 * 1000ULL)	/* but no longer than this after its first event */
#define RESYNC_DEFAULT_SEC 300		/* the safety resync, after the last reconcile */
#define LOAD_WORKERS_DEFAULT 1		/* objects loaded at once (--load-workers) */
#define METRICS_DIR_DEFAULT "/var/lib/prometheus/node-exporter"	/* Debian's textfile directory */
#define METRICS_INTERVAL_DEFAULT_SEC 60	/* the metrics file, at least this often */

struct backoff {
	char *cgroup;
	unsigned failures;
	uint64_t retry_at;	/* CLOCK_MONOTONIC usec */
	uint64_t attached_at;
	char *reason;
	/* The last exit the kernel recorded for the cgroup's scheduler, kept across reattaches. */
	struct sched_exit *last_exit;
	uint64_t last_exit_at;	/* CLOCK_REALTIME usec */
	uint64_t rescues_logged;	/* SCX_EV_SUB_RESCUE when last logged */
};

struct counters {
	unsigned reconciles, attaches, detaches, exits, parent_kills, attach_failures;
	unsigned reloads, reloads_rejected, cgroup_events, kernel_events;
	unsigned resyncs, safety_resyncs, scoped_reconciles;
	/*
	 * Where attaching goes, in CLOCK_MONOTONIC microseconds: opening and
	 * loading objects (the kernel verifies them), the kernel enabling
	 * them (the struct_ops link), and whole reconciles, which hold both
	 * and scxd's own work (reading, planning, pinning, recording).
	 */
	uint64_t load_usec, enable_usec, reconcile_usec;
};

struct daemon {
	struct scxd_paths paths;
	const char *policy_file;
	const char *control_path;
	gid_t control_group;		/* (gid_t)-1: root only */
	struct control_server *control;
	int lock_fd;			/* <state dir>/scxd.lock, flock()ed while we run */
	int lock_sock;			/* the abstract socket named after the state dir */
	bool serve_dry_run;		/* --dry-run --serve: run the loop, apply nothing */
	bool ready;			/* READY=1 sent */
	uint64_t extend_last;		/* when EXTEND_TIMEOUT_USEC was last sent */
	char *reload_error;		/* why the last policy load was rejected */
	char *status_line;		/* what runs, for STATUS= */
	struct sched_dir_catalog *catalog;
	struct policy *policy;
	const char *sched_base;		/* --sched-dir: cpu-form objects, cid-form in its cid/ */
	enum kernel_api api;		/* what the kernel offers; paths.sched_dir is its objects' */
	bool unsupported_reported;
	bool log_notes;
	char *blocked_reported;		/* "cgroup\tsched\n"... already warned about */
	char *strays_reported;		/* pins and records matched to no cgroup, warned about */

	sd_event *event;
	sd_event_source *reconcile_source;
	sd_event_source *retry_timer;
	sd_event_source *debounce_timer;
	sd_event_source *resync_timer;
	struct debounce debounce;
	uint64_t resync_usec;		/* safety resync interval, 0: none */
	bool resync_pending;		/* a resync is scheduled: say why only once */
	size_t last_steps;		/* steps the last reconcile planned */
	int inotify_fd;
	struct watch_table watches;	/* inotify wd → cgroup */
	struct reconcile_scope pending;	/* what the next reconcile reads */
	struct path_set known;		/* cgroups with a scheduler after the last reconcile */

	struct backoff *backoffs;
	size_t n_backoffs;
	struct counters counters;

	uint64_t settle_at;		/* look again: the kernel was mid-transition */
	uint64_t watchdog_usec;		/* WatchdogSec=, 0 if none */
	uint64_t watchdog_last;		/* when we last pinged it ourselves */
	unsigned load_workers;		/* objects loaded at once, 1: one by one */

	struct policy_job *jobs;	/* reloads and diffs; the first one runs (policy-worker.c) */
	bool job_running;
	pthread_t job_thread;
	int job_efd;			/* the thread says it is done */
	sd_event_source *job_source;

	const char *metrics_dir;	/* the textfile collector's directory, NULL: none */
	uint64_t metrics_usec;		/* written at least this often */
	sd_event_source *metrics_timer;	/* NULL: no metrics file */
	char *metrics_last;		/* what was written last */
	uint64_t metrics_written_at;
	bool metrics_error_logged;
};

/* scxd.c */
void watchdog_ping(struct daemon *d);
/*
 * What a load of the policy found (r, diags): logged, then p and catalog
 * kept (r >= 0), or the load rejected, the old policy kept with 'keep'.
 * Takes p and catalog either way.
 */
int policy_take(struct daemon *d, int r, const struct diag_list *diags, struct policy *p,
		struct sched_dir_catalog *catalog, bool keep);

/* policy-worker.c: reloads and diffs parsed and checked off the loop */
int policy_jobs_init(struct daemon *d);
void policy_jobs_done(struct daemon *d);
/* c (or NULL: SIGHUP) gets the outcome with control_client_reply(). */
int policy_job_reload(struct daemon *d, struct control_client *c, pid_t pid);
/* The main file's text, or fd (a sealed memfd) to read it from. */
int policy_job_diff(struct daemon *d, struct control_client *c, pid_t pid, const char *name,
		    const char *text, size_t len, int fd);

/* backoff.c: per cgroup, what failed and when to try again */
struct backoff *backoff_find(struct daemon *d, const char *cgroup);
struct backoff *backoff_get(struct daemon *d, const char *cgroup);
uint64_t backoff_fail(struct daemon *d, const char *cgroup, const char *reason);
void backoff_attached(struct daemon *d, const char *cgroup);
void backoff_forget(struct daemon *d, const char *cgroup);
void backoffs_done(struct daemon *d);
void arm_retry_timer(struct daemon *d);
void remember_exit(struct daemon *d, const char *cgroup, const struct sched_exit *e);

/* replies.c: the status scxdctl gets (conf/status.schema.json) */
int status_json(struct daemon *d, json_t **ret);

/* metrics-file.c: <metrics_dir>/scxd.prom for node-exporter */
int metrics_file_init(struct daemon *d);
void metrics_file_changed(struct daemon *d);

/* reconcile.c */
const struct sched_node *parent_sched(const struct actual_state *a, const char *cgroup);
bool below_failed(const char *const *failed, size_t n, const char *cgroup);
int reconcile(struct daemon *d, bool dry_run);

/* report.c */
void notify_send_status(struct daemon *d);
void notify_status(struct daemon *d, const struct sched_tree *want, const struct plan *plan,
		   const char *const *failed, size_t n_failed);
void report_blocked(struct daemon *d, const struct plan *plan);
void report_strays(struct daemon *d, const struct actual_state *a);
void report_rescues(struct daemon *d, const struct actual_state *a,
		    const struct cgroup_list *cgroups);

/* replies.c */
/* The catalog of the kernel's objects (*catalog, even on failure) and name's entry in it. */
int describe_lookup(struct daemon *d, const char *name, struct sched_dir_catalog **catalog,
		    const struct sched_info **ret, const char **reason);
int diff_json(struct daemon *d, const char *file, const struct policy *p, json_t **ret);
json_t *diff_invalid_json(const struct diag_list *diags);
json_t *reload_errors_json(struct daemon *d);
int on_control_request(void *userdata, struct control_client *c, const struct control_peer *peer,
		       const char *command, json_t *request, json_t **reply);

/* sources.c */
void watch_cgroups(struct daemon *d, const struct cgroup_list *cgroups);
int setup_events(struct daemon *d);
