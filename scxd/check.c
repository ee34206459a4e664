// SPDX-License-Identifier: GPL-2.0
/* scxd --check and scxdctl check: validate a policy file as the daemon would. */

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "policy.h"
#include "sched-info.h"
#include "util.h"

int scxd_check(const char *file, const char *sched_dir)
{
	_cleanup_(sched_dir_catalog_freep) struct sched_dir_catalog *c = NULL;
	_cleanup_(diag_list_donep) struct diag_list diags = {};
	_cleanup_(policy_freep) struct policy *p = NULL;
	int r;

	r = sched_dir_catalog_new(sched_dir, &c);
	if (r < 0)
		return r;
	r = policy_load(file, sched_dir_catalog_base(c), &diags, &p);
	for (size_t i = 0; i < diags.n; i++)
		fprintf(stderr, "%s\n", diags.lines[i]);
	if (r < 0)
		return r;
	printf("%s: valid, %zu entries (schedulers from %s)\n", file, p->n_entries, sched_dir);
	for (size_t i = 1; i < p->n_files; i++)
		printf("  with drop-in %s\n", p->files[i]);
	return 0;
}
