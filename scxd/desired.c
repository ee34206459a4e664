// SPDX-License-Identifier: GPL-2.0
/*
 * Desired state: for every existing cgroup the winning policy entry, then
 * each node's parent is its nearest ancestor cgroup that also has a node,
 * as the kernel will nest them.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "desired.h"
#include "match.h"
#include "util.h"

int sched_node_init(struct sched_node *n, const char *cgroup, const char *scheduler,
		    const struct tunable_value *tunables, size_t n_tunables)
{
	*n = (struct sched_node){
		.entry_index = SIZE_MAX, .parent = NODE_NO_PARENT,
		.cgroup = strdup(cgroup), .scheduler = strdup(scheduler),
		.tunables = calloc(n_tunables ?: 1, sizeof(*n->tunables)),
	};
	if (!n->cgroup || !n->scheduler || !n->tunables)
		return -ENOMEM;
	for (size_t i = 0; i < n_tunables; i++) {
		n->tunables[i] = tunables[i];
		n->tunables[i].name = strdup(tunables[i].name);
		if (!n->tunables[i].name)
			return -ENOMEM;
		n->n_tunables = i + 1;
	}
	return 0;
}

void sched_node_done(struct sched_node *n)
{
	for (size_t i = 0; i < n->n_tunables; i++)
		free(n->tunables[i].name);
	free(n->tunables);
	free(n->cgroup);
	free(n->scheduler);
	*n = (struct sched_node){};
}

bool sched_node_same_config(const struct sched_node *a, const struct sched_node *b)
{
	if (!streq(a->scheduler, b->scheduler) || a->n_tunables != b->n_tunables)
		return false;
	for (size_t i = 0; i < a->n_tunables; i++)
		if (!streq(a->tunables[i].name, b->tunables[i].name) ||
		    a->tunables[i].raw != b->tunables[i].raw)
			return false;
	return true;
}

bool cgroup_is_below(const char *path, const char *ancestor)
{
	size_t n = strlen(ancestor);

	if (streq(ancestor, "/"))
		return path[0] == '/';
	return strncmp(path, ancestor, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int node_order_cmp(const void *a, const void *b)
{
	const struct sched_node *x = a, *y = b;
	size_t dx = path_depth(x->cgroup), dy = path_depth(y->cgroup);

	if (dx != dy)
		return dx < dy ? -1 : 1;
	return strcmp(x->cgroup, y->cgroup);
}

const struct sched_node *sched_tree_find(const struct sched_tree *t, const char *cgroup)
{
	struct sched_node key = { .cgroup = (char *)cgroup };

	if (t->n == 0)
		return NULL;
	return bsearch(&key, t->nodes, t->n, sizeof(*t->nodes), node_order_cmp);
}

int sched_tree_link(struct sched_tree *t)
{
	if (t->n == 0)
		return 0;
	qsort(t->nodes, t->n, sizeof(*t->nodes), node_order_cmp);
	/* A cgroup listed twice keeps one node. */
	for (size_t i = 1; i < t->n;) {
		if (!streq(t->nodes[i].cgroup, t->nodes[i - 1].cgroup)) {
			i++;
			continue;
		}
		sched_node_done(&t->nodes[i]);
		memmove(&t->nodes[i], &t->nodes[i + 1], (t->n - i - 1) * sizeof(*t->nodes));
		t->n--;
	}
	for (size_t i = 0; i < t->n; i++) {
		struct sched_node *n = &t->nodes[i];
		_cleanup_free_ char *up = strdup(n->cgroup);

		if (!up)
			return -ENOMEM;
		n->parent = NODE_NO_PARENT;
		n->depth = 1;
		while (!streq(up, "/")) {
			char *slash = strrchr(up, '/');
			const struct sched_node *p;

			if (slash == up)
				slash[1] = '\0';
			else
				*slash = '\0';
			p = sched_tree_find(t, up);
			if (p) {
				n->parent = p - t->nodes;
				n->depth = p->depth + 1;
				break;
			}
		}
	}
	return 0;
}

void sched_tree_done(struct sched_tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		sched_node_done(&t->nodes[i]);
	free(t->nodes);
	*t = (struct sched_tree){};
}

static int add_note(struct desired_result *r, const char *cgroup, const char *message)
{
	struct desired_note *v = realloc(r->notes, (r->n_notes + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	r->notes = v;
	v[r->n_notes] = (struct desired_note){ strdup(cgroup), strdup(message) };
	if (!v[r->n_notes].cgroup || !v[r->n_notes].message)
		return -ENOMEM;
	r->n_notes++;
	return 0;
}

/*
 * Drop nodes that cannot be attached where they ended up: under a parent
 * that cannot host children, or deeper than the kernel allows. One pass,
 * parents first: a dropped node's children move up to its own parent
 * (up[]), as the kernel would nest them, before they are looked at.
 */
static int prune(const struct policy *p, struct desired_result *r)
{
	struct sched_tree *t = &r->tree;
	_cleanup_free_ size_t *up = calloc(t->n + 1, sizeof(*up));
	_cleanup_free_ size_t *depth = calloc(t->n + 1, sizeof(*depth));
	_cleanup_free_ bool *dropped = calloc(t->n + 1, sizeof(*dropped));
	size_t kept = 0;
	char msg[512];

	if (!up || !depth || !dropped)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++) {
		const struct sched_node *n = &t->nodes[i];
		size_t parent = n->parent;
		const char *why = NULL;

		if (parent != NODE_NO_PARENT && dropped[parent])
			parent = up[parent];
		up[i] = parent;
		depth[i] = parent == NODE_NO_PARENT ? 1 : depth[parent] + 1;
		if (parent != NODE_NO_PARENT &&
		    !p->entries[t->nodes[parent].entry_index].can_host_children)
			why = "cannot host children";
		if (!why && depth[i] > SCX_SUB_MAX_DEPTH)
			why = "is already nested as deep as the kernel allows";
		if (!why)
			continue;
		snprintf(msg, sizeof(msg), "%s: not attached, its parent %s (%s) %s",
			 policy_entry_name(&p->entries[n->entry_index]),
			 t->nodes[parent].cgroup, t->nodes[parent].scheduler, why);
		if (add_note(r, n->cgroup, msg) < 0)
			return -ENOMEM;
		dropped[i] = true;
	}
	for (size_t i = 0; i < t->n; i++) {
		if (dropped[i])
			sched_node_done(&t->nodes[i]);
		else
			t->nodes[kept++] = t->nodes[i];
	}
	t->n = kept;
	return sched_tree_link(t);
}

int desired_check_kernel(const struct policy *p, enum kernel_api api, struct diag_list *diags)
{
	int r = 0;

	if (api != KERNEL_API_ROOT_ONLY)
		return 0;
	for (size_t i = 0; i < p->n_entries; i++) {
		const struct policy_entry *e = &p->entries[i];

		if (e == p->root)
			continue;
		if (diag_add(diags, e->file, e->target_line, e->target_column,
			     "%s (%s): a sub-scheduler, but the %s", policy_entry_name(e),
			     e->scheduler, kernel_api_limit(api)) < 0)
			return -ENOMEM;
		r = -EINVAL;
	}
	return r;
}

int desired_build(const struct policy *p, const char *const *cgroups, size_t n_cgroups,
		  const struct desired_opts *opts, struct desired_result *ret)
{
	_cleanup_(desired_result_done) struct desired_result r = {};
	int err;

	*ret = (struct desired_result){};
	r.tree.nodes = calloc(n_cgroups + 1, sizeof(*r.tree.nodes));
	if (!r.tree.nodes)
		return -ENOMEM;

	if (p->root) {
		err = sched_node_init(&r.tree.nodes[r.tree.n], "/", p->root->scheduler,
				      p->root->tunables, p->root->n_tunables);
		r.tree.nodes[r.tree.n++].entry_index = p->root->index;
		if (err < 0)
			return err;
	}
	for (size_t i = 0; p->root && i < n_cgroups; i++) {
		const struct policy_entry *e;

		if (streq(cgroups[i], "/"))
			continue;
		e = policy_match(p, cgroups[i]);
		if (!e)
			continue;
		if (!kernel_api_has_children(opts->api)) {
			r.unsupported_children++;
			continue;
		}
		err = sched_node_init(&r.tree.nodes[r.tree.n], cgroups[i], e->scheduler,
				      e->tunables, e->n_tunables);
		r.tree.nodes[r.tree.n++].entry_index = e->index;
		if (err < 0)
			return err;
	}
	err = sched_tree_link(&r.tree);
	if (err < 0)
		return err;
	err = prune(p, &r);
	if (err < 0)
		return err;
	*ret = r;
	r = (struct desired_result){};
	return 0;
}

void desired_result_done(struct desired_result *r)
{
	sched_tree_done(&r->tree);
	for (size_t i = 0; i < r->n_notes; i++) {
		free(r->notes[i].cgroup);
		free(r->notes[i].message);
	}
	free(r->notes);
	*r = (struct desired_result){};
}
