// SPDX-License-Identifier: GPL-2.0
/*
 * Failed cgroups: how often, why, and when to try again (doubling up to a
 * minute; a scheduler up a minute is forgiven), and the last exit the
 * kernel recorded for each, kept across reattaches for status.
 */

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon.h"
#include "util.h"

struct backoff *backoff_find(struct daemon *d, const char *cgroup)
{
	for (size_t i = 0; i < d->n_backoffs; i++)
		if (streq(d->backoffs[i].cgroup, cgroup))
			return &d->backoffs[i];
	return NULL;
}

struct backoff *backoff_get(struct daemon *d, const char *cgroup)
{
	struct backoff *b = backoff_find(d, cgroup), *v;

	if (b)
		return b;
	v = realloc(d->backoffs, (d->n_backoffs + 1) * sizeof(*v));
	if (!v)
		return NULL;
	d->backoffs = v;
	b = &d->backoffs[d->n_backoffs];
	*b = (struct backoff){ .cgroup = strdup(cgroup) };
	if (!b->cgroup)
		return NULL;
	d->n_backoffs++;
	return b;
}

/* A failure (attach error or exit): double the wait, up to the cap. */
uint64_t backoff_fail(struct daemon *d, const char *cgroup, const char *reason)
{
	struct backoff *b = backoff_get(d, cgroup);
	uint64_t delay, now = now_usec();

	if (!b)
		return BACKOFF_CAP_USEC;
	if (b->attached_at && now - b->attached_at > STABLE_USEC)
		b->failures = 0;
	b->failures++;
	b->attached_at = 0;
	delay = b->failures >= 7 ? BACKOFF_CAP_USEC : BACKOFF_FIRST_USEC << (b->failures - 1);
	if (delay > BACKOFF_CAP_USEC)
		delay = BACKOFF_CAP_USEC;
	b->retry_at = now + delay;
	free(b->reason);
	b->reason = reason ? strdup(reason) : NULL;
	return delay;
}

void backoff_attached(struct daemon *d, const char *cgroup)
{
	struct backoff *b = backoff_find(d, cgroup);

	if (b) {
		b->attached_at = now_usec();
		b->retry_at = 0;
	}
}

void backoff_forget(struct daemon *d, const char *cgroup)
{
	struct backoff *b = backoff_find(d, cgroup);

	if (!b)
		return;
	free(b->cgroup);
	free(b->reason);
	free(b->last_exit);
	*b = d->backoffs[--d->n_backoffs];
}

void arm_retry_timer(struct daemon *d)
{
	uint64_t next = d->settle_at;

	for (size_t i = 0; i < d->n_backoffs; i++)
		if (d->backoffs[i].retry_at && (!next || d->backoffs[i].retry_at < next))
			next = d->backoffs[i].retry_at;
	if (!d->retry_timer)
		return;
	if (!next) {
		sd_event_source_set_enabled(d->retry_timer, SD_EVENT_OFF);
		return;
	}
	sd_event_source_set_time(d->retry_timer, next);
	sd_event_source_set_enabled(d->retry_timer, SD_EVENT_ONESHOT);
}

/* Keep what the kernel recorded for cgroup's last exit, for status. */
void remember_exit(struct daemon *d, const char *cgroup, const struct sched_exit *e)
{
	struct backoff *b = backoff_get(d, cgroup);
	struct timespec ts;

	if (!b)
		return;
	if (!b->last_exit)
		b->last_exit = malloc(sizeof(*b->last_exit));
	if (!b->last_exit)
		return;
	*b->last_exit = *e;
	clock_gettime(CLOCK_REALTIME, &ts);
	b->last_exit_at = (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void backoffs_done(struct daemon *d)
{
	for (size_t i = 0; i < d->n_backoffs; i++) {
		free(d->backoffs[i].cgroup);
		free(d->backoffs[i].reason);
		free(d->backoffs[i].last_exit);
	}
	free(d->backoffs);
	d->backoffs = NULL;
	d->n_backoffs = 0;
}
