// SPDX-License-Identifier: GPL-2.0
/*
 * What a reconcile tells others: STATUS= for systemd, and the journal's
 * warnings about foreign schedulers in the way, stray pins and records,
 * and children their parent left to the kernel, each said once until it
 * changes.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <systemd/sd-daemon.h>

#include "daemon.h"
#include "log.h"
#include "util.h"

/* STATUS=: what runs (d->status_line), and why the last reload was rejected. */
void notify_send_status(struct daemon *d)
{
	const char *e = d->reload_error, *nl = e ? strchr(e, '\n') : NULL;

	sd_notifyf(false, "STATUS=%s%s%.*s", d->status_line ?: "starting",
		   e ? "; last reload rejected: " : "",
		   e ? (int)(nl ? nl - e : (ptrdiff_t)strlen(e)) : 0, e ?: "");
}

/*
 * By position in want: whether the plan blocks the node (plan->blocked
 * points into want); NULL on -ENOMEM.
 */
static bool *blocked_mask(const struct sched_tree *want, const struct plan *plan)
{
	bool *mask = calloc(want->n + 1, sizeof(*mask));

	for (size_t i = 0; mask && i < plan->n_blocked; i++)
		mask[plan->blocked[i] - want->nodes] = true;
	return mask;
}

/*
 * STATUS= for systemctl status: "3 schedulers on 5 cgroups, policy FILE",
 * what waits to be retried, and why the last reload was rejected.
 */
void notify_status(struct daemon *d, const struct sched_tree *want, const struct plan *plan,
		   const char *const *failed, size_t n_failed)
{
	_cleanup_free_ const char **names = calloc(want->n + 1, sizeof(*names));
	_cleanup_free_ bool *blocked = blocked_mask(want, plan);
	size_t n_names = 0, n_cgroups = 0, n_waiting = 0;
	char retry[64];

	if (!names || !blocked)
		return;
	for (size_t i = 0; i < want->n; i++) {
		const struct sched_node *n = &want->nodes[i];
		size_t j;

		if (blocked[i] || below_failed(failed, n_failed, n->cgroup))
			continue;
		n_cgroups++;
		for (j = 0; j < n_names && !streq(names[j], n->scheduler); j++)
			;
		if (j == n_names)
			names[n_names++] = n->scheduler;
	}
	for (size_t i = 0; i < d->n_backoffs; i++)
		n_waiting += d->backoffs[i].retry_at != 0;
	snprintf(retry, sizeof(retry), ", %zu waiting to retry", n_waiting);
	free(d->status_line);
	if (asprintf(&d->status_line, "%zu scheduler%s on %zu cgroup%s, policy %s%s",
		     n_names, n_names == 1 ? "" : "s", n_cgroups, n_cgroups == 1 ? "" : "s",
		     d->policy_file, n_waiting ? retry : "") < 0)
		d->status_line = NULL;
	notify_send_status(d);
}

/* The blocked nodes of one foreign node: how many, the first, and the policy's node on it. */
struct blocked_group {
	const struct sched_node *by, *on_it;
	size_t first, n;
};

static int by_blocker_cmp(const void *x, const void *y, void *userdata)
{
	const struct plan *plan = userdata;
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	uintptr_t pa = (uintptr_t)plan->blocked_by[a], pb = (uintptr_t)plan->blocked_by[b];

	if (pa != pb)
		return pa < pb ? -1 : 1;
	return a < b ? -1 : a > b;
}

static int group_first_cmp(const void *x, const void *y)
{
	const struct blocked_group *a = x, *b = y;

	return a->first < b->first ? -1 : a->first > b->first;
}

/*
 * The foreign nodes that block, each once, in the order the plan first
 * names them: sorted by blocker rather than compared pairwise (a foreign
 * root blocks every cgroup). *ret allocated; returns how many, or -ENOMEM.
 */
static ssize_t blocked_groups(const struct plan *plan, struct blocked_group **ret)
{
	_cleanup_free_ size_t *order = calloc(plan->n_blocked + 1, sizeof(*order));
	struct blocked_group *g = calloc(plan->n_blocked + 1, sizeof(*g));
	size_t n = 0;

	if (!order || !g) {
		free(g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < plan->n_blocked; i++)
		order[i] = i;
	qsort_r(order, plan->n_blocked, sizeof(*order), by_blocker_cmp, (void *)plan);
	for (size_t k = 0; k < plan->n_blocked; k++) {
		size_t i = order[k];

		if (!n || g[n - 1].by != plan->blocked_by[i])
			g[n++] = (struct blocked_group){ .by = plan->blocked_by[i], .first = i };
		g[n - 1].n++;
		if (streq(plan->blocked[i]->cgroup, plan->blocked_by[i]->cgroup))
			g[n - 1].on_it = plan->blocked[i];
	}
	qsort(g, n, sizeof(*g), group_first_cmp);
	*ret = g;
	return n;
}

/*
 * Foreign schedulers that block what the policy wants (their subtrees):
 * one warning per foreign scheduler, once, again only after the set of
 * blocking schedulers changes. New cgroups below one do not repeat it.
 */
void report_blocked(struct daemon *d, const struct plan *plan)
{
	_cleanup_free_ struct blocked_group *g = NULL;
	_cleanup_free_ char *now = NULL;
	size_t len = 0;
	ssize_t n = blocked_groups(plan, &g);
	FILE *f;

	if (n < 0)
		return;
	f = open_memstream(&now, &len);
	if (!f)
		return;
	for (ssize_t k = 0; k < n; k++)
		fprintf(f, "%s\t%s\n", g[k].by->cgroup, g[k].by->scheduler);
	if (fclose(f) != 0)
		return;
	if (d->blocked_reported ? streq(d->blocked_reported, now) : !*now)
		return;
	for (ssize_t k = 0; k < n; k++) {
		const struct sched_node *by = g[k].by, *on_it = g[k].on_it;

		if (on_it)
			log_warning(0, ABOUT(.cgroup = by->cgroup, .scheduler = on_it->scheduler),
				    "%s: runs %s, which scxd did not attach; not replacing it with %s, nor attaching the %zu scheduler(s) the policy wants below it, until it is gone",
				    by->cgroup, by->scheduler, on_it->scheduler, g[k].n - 1);
		else
			log_warning(0, ABOUT(.cgroup = by->cgroup, .scheduler = by->scheduler),
				    "%s: runs %s, which scxd did not attach; not attaching the %zu scheduler(s) the policy wants below it, until it is gone",
				    by->cgroup, by->scheduler, g[k].n);
	}
	free(d->blocked_reported);
	d->blocked_reported = TAKE_PTR(now);
}

/*
 * Pins and records that name no cgroup (see actual.c): never acted on,
 * warned about once, again only after the set changes.
 */
void report_strays(struct daemon *d, const struct actual_state *a)
{
	_cleanup_free_ char *now = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&now, &len);

	if (!f)
		return;
	for (size_t i = 0; i < a->n_strays; i++)
		fprintf(f, "%s\n", a->strays[i]);
	if (fclose(f) != 0)
		return;
	if (d->strays_reported ? streq(d->strays_reported, now) : !*now)
		return;
	for (size_t i = 0; i < a->n_strays; i++)
		log_warning(0, ABOUT(.file = d->paths.state_dir), "%s", a->strays[i]);
	free(d->strays_reported);
	d->strays_reported = TAKE_PTR(now);
}

/*
 * Children their parent left unserved long enough for the kernel to run
 * them itself (SCX_EV_SUB_RESCUE): logged when the count has grown since
 * the last reconcile that saw it. A reattached scheduler starts again
 * from 0.
 */
void report_rescues(struct daemon *d, const struct actual_state *a,
		    const struct cgroup_list *cgroups)
{
	for (size_t i = 0; i < a->n_kernel; i++) {
		const struct kernel_sched *k = &a->kernel[i];
		const struct sched_node *n, *parent;
		const char *cgroup;
		struct backoff *b;
		uint64_t rescues;

		if (!k->events || sched_events_get(k->events, "SCX_EV_SUB_RESCUE", &rescues) < 0)
			continue;
		cgroup = k->cgid == 1 ? "/" : cgroup_list_path(cgroups, k->cgid);
		b = cgroup ? backoff_find(d, cgroup) : NULL;
		if (b && rescues < b->rescues_logged)
			b->rescues_logged = 0;
		if (!cgroup || rescues == (b ? b->rescues_logged : 0))
			continue;
		n = sched_tree_find(&a->tree, cgroup);
		if (!n || n->foreign)
			continue;	/* not scxd's to report */
		b = backoff_get(d, cgroup);
		if (!b)
			continue;
		parent = parent_sched(a, cgroup);
		log_notice(ABOUT(.cgroup = cgroup, .scheduler = n->scheduler),
			   "%s: scheduler %s rescued by the kernel %" PRIu64 " times (%" PRIu64 " since last logged): its parent scheduler %s on %s left its tasks unserved",
			   cgroup, n->scheduler, rescues, rescues - b->rescues_logged,
			   parent ? parent->scheduler : "?", parent ? parent->cgroup : "?");
		b->rescues_logged = rescues;
	}
}
