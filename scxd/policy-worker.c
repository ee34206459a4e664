// SPDX-License-Identifier: GPL-2.0
/*
 * Policies parsed and checked off the loop. A large policy takes a
 * second or more to read, parse and check (tests/bench/policy-check); in
 * the loop that would keep status requests and the watchdog waiting, and
 * anyone who may send `scxdctl diff` could do it at will. So a reload
 * (SIGHUP, scxdctl reload) or a diff is a job: a thread of its own
 * builds the catalog, reads the files and parses and checks them, which
 * are pure and log nothing; the loop hears of the result through an
 * eventfd and takes it from there (installs the policy and reconciles, or
 * plans the diff), then answers the scxdctl that asked.
 *
 * Jobs run one at a time, reloads before diffs. A diff's policy comes as
 * a sealed memfd (scxdctl diff) or, from an older scxdctl, as text in the
 * request.
 */

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "daemon.h"
#include "desired.h"
#include "file.h"
#include "log.h"
#include "util.h"

#ifndef F_GET_SEALS
#define F_GET_SEALS 1034
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#define F_SEAL_WRITE 0x0008
#endif

struct policy_job {
	struct policy_job *next;
	bool diff;
	struct control_client *client;	/* who waits for the outcome, NULL for SIGHUP */
	pid_t pid;			/* its pid, for the log */
	uint64_t queued_at;
	/* in: what the thread reads (the daemon's fields are not touched while it runs) */
	const char *policy_file;
	const char *sched_base;
	enum kernel_api api;
	char *name;			/* a diff's main file, as scxdctl named it */
	char *text;			/* its text, or NULL and fd */
	size_t len;
	int fd;
	int efd;
	/* out */
	int r;
	char *error;			/* set when there are no diags to say why */
	struct diag_list diags;
	struct policy *policy;
	struct sched_dir_catalog *catalog;
};

static void job_free(struct policy_job *j)
{
	if (!j)
		return;
	free(j->name);
	free(j->text);
	if (j->fd >= 0)
		close(j->fd);
	free(j->error);
	diag_list_done(&j->diags);
	policy_free(j->policy);
	sched_dir_catalog_free(j->catalog);
	free(j);
}

/* A diff's policy from its descriptor: a sealed memfd, so that reading it cannot block nor change. */
static int read_sealed(struct policy_job *j)
{
	const int want = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
	struct stat st;
	int seals = fcntl(j->fd, F_GET_SEALS);

	if (fstat(j->fd, &st) < 0 || !S_ISREG(st.st_mode) || seals < 0 || (seals & want) != want) {
		j->error = strdup("the policy must come as a sealed memfd (scxdctl diff sends one)");
		return -EINVAL;
	}
	if ((size_t)st.st_size > FILE_POLICY_MAX) {
		if (asprintf(&j->error, "%s: %jd bytes, more than the %u a policy file may have",
			     j->name, (intmax_t)st.st_size, FILE_POLICY_MAX) < 0)
			j->error = NULL;
		return -EFBIG;
	}
	if (lseek(j->fd, 0, SEEK_SET) < 0)
		return -errno;
	return file_read_fd(j->fd, st.st_size, FILE_POLICY_MAX, &j->text, &j->len);
}

static void *job_thread(void *arg)
{
	struct policy_job *j = arg;
	struct sched_catalog *base;

	j->r = sched_dir_catalog_new_for(j->sched_base, j->api, &j->catalog);
	if (j->r >= 0 && j->diff && !j->text)
		j->r = read_sealed(j);
	if (j->r >= 0) {
		base = sched_dir_catalog_base(j->catalog);
		j->r = j->diff ? policy_load_text(j->policy_file, j->name, j->text, j->len, base,
						  &j->diags, &j->policy) :
				 policy_load(j->policy_file, base, &j->diags, &j->policy);
	}
	if (j->r >= 0)	/* what this kernel cannot run is refused like any error */
		j->r = desired_check_kernel(j->policy, j->api, &j->diags);
	if (eventfd_write(j->efd, 1) < 0)
		abort();	/* the loop would wait for it forever */
	return NULL;
}

static void job_start(struct daemon *d)
{
	struct policy_job *j = d->jobs;
	int r;

	if (!j || d->job_running)
		return;
	r = pthread_create(&d->job_thread, NULL, job_thread, j);
	if (r != 0) {
		/* as if it had run and failed */
		j->r = -r;
		eventfd_write(d->job_efd, 1);
		return;
	}
	d->job_running = true;
}

/* A reload's outcome: the policy kept or rejected, then a reconcile; READY=1 either way. */
static json_t *reload_finish(struct daemon *d, struct policy_job *j)
{
	int r = policy_take(d, j->r, &j->diags, TAKE_PTR(j->policy), TAKE_PTR(j->catalog), true);

	if (r < 0)
		d->counters.reloads_rejected++;
	else
		d->counters.reloads++;
	if (r == 0) {
		scope_set_full(&d->pending);
		reconcile(d, d->serve_dry_run);
	} else {
		notify_send_status(d);
	}
	sd_notify(false, "READY=1");
	if (r < 0)
		return json_pack("{s:b, s:s, s:o}", "ok", 0,
				 "error", "policy rejected, the running policy stays",
				 "errors", reload_errors_json(d));
	return json_pack("{s:s, s:I}", "policy", d->policy_file,
			 "entries", (json_int_t)d->policy->n_entries);
}

static json_t *diff_finish(struct daemon *d, struct policy_job *j)
{
	json_t *reply = NULL;

	if (j->r < 0 && !j->diags.n && j->error)
		diag_add_line(&j->diags, "%s", j->error);
	if (j->r < 0 && !j->diags.n)
		diag_add_line(&j->diags, "%s: %s", j->name, strerror(-j->r));
	if (j->r < 0)
		return diff_invalid_json(&j->diags);
	if (diff_json(d, j->name, j->policy, &reply) < 0)
		return NULL;
	return reply;
}

static int on_job_done(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct daemon *d = userdata;
	struct policy_job *j = d->jobs;
	uint64_t start;
	eventfd_t v;
	json_t *reply;

	if (eventfd_read(fd, &v) < 0 || !j)
		return 0;
	if (d->job_running)
		pthread_join(d->job_thread, NULL);
	d->job_running = false;
	d->jobs = j->next;
	start = now_usec();
	reply = j->diff ? diff_finish(d, j) : reload_finish(d, j);
	if (j->client)
		control_client_reply(j->client, reply);
	json_decref(reply);
	log_debug(ABOUT(.file = d->policy_file),
		  "%s of %s for pid %d: read and checked in %" PRIu64 " ms off the loop, then %" PRIu64 " ms on it",
		  j->diff ? "diff" : "reload", j->diff ? j->name : d->policy_file, (int)j->pid,
		  (start - j->queued_at) / 1000, (now_usec() - start) / 1000);
	job_free(j);
	log_debug(ABOUT(.file = d->policy_file), "policy job done in %" PRIu64 " ms on the loop",
		  (now_usec() - start) / 1000);
	job_start(d);
	return 0;
}

int policy_jobs_init(struct daemon *d)
{
	int r;

	d->job_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->job_efd < 0)
		return -errno;
	r = sd_event_add_io(d->event, &d->job_source, d->job_efd, EPOLLIN, on_job_done, d);
	return r < 0 ? r : 0;
}

void policy_jobs_done(struct daemon *d)
{
	if (d->job_running)
		pthread_join(d->job_thread, NULL);
	d->job_running = false;
	while (d->jobs) {
		struct policy_job *j = d->jobs;

		d->jobs = j->next;
		job_free(j);
	}
	sd_event_source_disable_unref(d->job_source);
	d->job_source = NULL;
	if (d->job_efd >= 0)
		close(d->job_efd);
	d->job_efd = -1;
}

static struct policy_job *job_new(struct daemon *d, bool diff, struct control_client *c, pid_t pid)
{
	struct policy_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	*j = (struct policy_job){ .diff = diff, .client = c, .pid = pid, .fd = -1,
				  .policy_file = d->policy_file, .sched_base = d->sched_base,
				  .api = d->api, .efd = d->job_efd, .queued_at = now_usec() };
	return j;
}

/* Reloads go before the diffs that wait (not before the one running). */
static void job_queue(struct daemon *d, struct policy_job *j)
{
	struct policy_job **p = &d->jobs;

	if (*p)
		p = &(*p)->next;	/* running, or its failure to start is due */
	while (*p && (j->diff || !(*p)->diff))
		p = &(*p)->next;
	j->next = *p;
	*p = j;
	job_start(d);
}

int policy_job_reload(struct daemon *d, struct control_client *c, pid_t pid)
{
	struct policy_job *j = job_new(d, false, c, pid);

	if (!j)
		return -ENOMEM;
	sd_notifyf(false, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, now_usec());
	job_queue(d, j);
	return 0;
}

int policy_job_diff(struct daemon *d, struct control_client *c, pid_t pid, const char *name,
		    const char *text, size_t len, int fd)
{
	struct policy_job *j = job_new(d, true, c, pid);

	if (!j) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	j->name = strdup(name);
	j->fd = fd;
	if (text) {
		j->text = malloc(len + 1);
		if (j->text) {
			memcpy(j->text, text, len);
			j->text[len] = '\0';
			j->len = len;
		}
	}
	if (!j->name || (text && !j->text)) {
		job_free(j);
		return -ENOMEM;
	}
	job_queue(d, j);
	return 0;
}
