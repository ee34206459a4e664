// SPDX-License-Identifier: GPL-2.0
/*
 * A policy from its files' entries: drop-ins replace the entries of
 * earlier files for the same target, the survivors are checked together
 * (policy-check.c), kept in order and indexed for policy_match().
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pattern-index.h"
#include "policy-check.h"
#include "util.h"

static int target_cmp(const void *x, const void *y)
{
	const struct policy_entry *a = *(const struct policy_entry *const *)x;
	const struct policy_entry *b = *(const struct policy_entry *const *)y;
	int r;

	if (a->any_depth != b->any_depth)
		return a->any_depth ? 1 : -1;
	r = strcmp(a->pattern, b->pattern);
	if (r)
		return r;
	return a->index < b->index ? -1 : a->index > b->index;
}

/*
 * Drop-ins over the main file: an entry is replaced by an entry of a
 * later file with the same target. Sorted by target, then by position
 * (files in order), each run of one target keeps the entries of its last
 * file. *left says how many survive; replaced[], by position in
 * p->entries, marks the others.
 */
int policy_apply_replacements(struct policy_entry **valid, size_t n, bool *replaced,
			      size_t *left)
{
	_cleanup_free_ struct policy_entry **by_target = calloc(n ?: 1, sizeof(*by_target));

	if (!by_target)
		return -ENOMEM;
	memcpy(by_target, valid, n * sizeof(*valid));
	qsort(by_target, n, sizeof(*by_target), target_cmp);
	*left = n;
	for (size_t i = 0, end; i < n; i = end) {
		const char *last_file;

		for (end = i + 1; end < n && policy_entry_same_target(by_target[i], by_target[end]); end++)
			;
		last_file = by_target[end - 1]->file;
		for (size_t k = i; k < end; k++)
			if (by_target[k]->file != last_file) {
				replaced[by_target[k]->index] = true;
				(*left)--;
			}
	}
	return 0;
}

static void policy_entry_done(struct policy_entry *e)
{
	for (size_t t = 0; t < e->n_tunables; t++)
		free(e->tunables[t].name);
	free(e->tunables);
	free(e->pattern);
	free(e->unit);
	free(e->scheduler);
	*e = (struct policy_entry){};
}

/* The index policy_match() looks entries up in. */
static int policy_index(struct policy *p)
{
	int r;

	pattern_index_free(p->index);
	p->index = NULL;
	r = pattern_index_new(&p->index);
	for (size_t i = 0; r == 0 && i < p->n_entries; i++)
		r = pattern_index_add(p->index, p->entries[i].pattern, p->entries[i].any_depth, i);
	return r;
}

/* Keep the entries that survived, in order, renumbered. */
int policy_keep(struct policy *p, struct policy_entry **valid, size_t n_valid,
		       const bool *replaced, size_t n_left)
{
	struct policy_entry *kept = calloc(n_left ?: 1, sizeof(*kept));
	size_t k = 0;

	if (!kept)
		return -ENOMEM;
	for (size_t i = 0; i < n_valid; i++)
		if (!replaced[valid[i]->index]) {
			kept[k] = *valid[i];
			kept[k].index = k;
			*valid[i] = (struct policy_entry){};
			k++;
		}
	for (size_t i = 0; i < p->n_entries; i++)
		policy_entry_done(&p->entries[i]);
	free(p->entries);
	p->entries = kept;
	p->n_entries = k;
	p->root = NULL;
	for (size_t i = 0; i < k; i++)
		if (kept[i].components == 0 && !kept[i].any_depth)
			p->root = &kept[i];
	return policy_index(p);
}

/* The policy's own copies of the file names, the main file first. */
int policy_set_files(struct policy *p, const struct policy_source *sources, size_t n)
{
	p->files = calloc(n, sizeof(*p->files));
	if (!p->files)
		return -ENOMEM;
	for (size_t f = 0; f < n; f++) {
		p->files[f] = strdup(sources[f].file);
		if (!p->files[f])
			return -ENOMEM;
		p->n_files++;
	}
	p->file = strdup(sources[0].file);
	return p->file ? 0 : -ENOMEM;
}

/* Ties and nesting over the entries that survived the drop-ins. */
int policy_check_merged(struct policy_entry **valid, size_t n_valid, const bool *replaced,
			size_t left, struct diag_list *diags)
{
	_cleanup_free_ struct policy_entry **live = calloc(left ?: 1, sizeof(*live));
	size_t k = 0;
	int r;

	if (!live)
		return -ENOMEM;
	for (size_t i = 0; i < n_valid; i++)
		if (!replaced[valid[i]->index])
			live[k++] = valid[i];
	r = policy_check_ties(live, k, diags);
	if (r == 0)
		r = policy_check_nesting(live, k, diags);
	return r;
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_entries; i++)
		policy_entry_done(&p->entries[i]);
	free(p->entries);
	for (size_t i = 0; i < p->n_files; i++)
		free(p->files[i]);
	free(p->files);
	free(p->file);
	pattern_index_free(p->index);
	free(p);
}
