// SPDX-License-Identifier: GPL-2.0
/* scxd --check and scxdctl check: validate a policy file as the daemon would. */

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "desired.h"
#include "policy.h"
#include "sched-info.h"
#include "util.h"

int kernel_api_option(const char *name, const char *btf_path, enum kernel_api *ret)
{
	if (name && !streq(name, "auto"))
		return kernel_api_from_name(name, ret);
	if (kernel_api_detect(btf_path, ret) < 0)
		*ret = KERNEL_API_NONE;
	return 0;
}

int scxd_check(const char *file, const char *sched_dir, enum kernel_api api)
{
	_cleanup_(sched_dir_catalog_freep) struct sched_dir_catalog *c = NULL;
	_cleanup_(diag_list_donep) struct diag_list diags = {};
	_cleanup_(policy_freep) struct policy *p = NULL;
	int r;

	r = sched_dir_catalog_new_for(sched_dir, api, &c);
	if (r < 0)
		return r;
	r = policy_load(file, sched_dir_catalog_base(c), &diags, &p);
	if (r >= 0)
		r = desired_check_kernel(p, api, &diags);
	for (size_t i = 0; i < diags.n; i++)
		fprintf(stderr, "%s\n", diags.lines[i]);
	if (r < 0)
		return r;
	if (api == KERNEL_API_NONE)
		printf("%s: valid, %zu entries (schedulers from %s; not checked against a kernel: no sched_ext here, see --kernel-api)\n",
		       file, p->n_entries, sched_dir_catalog_dir(c));
	else
		printf("%s: valid, %zu entries (kernel: %s; schedulers from %s)\n", file,
		       p->n_entries, kernel_api_describe(api), sched_dir_catalog_dir(c));
	for (size_t i = 1; i < p->n_files; i++)
		printf("  with drop-in %s\n", p->files[i]);
	return 0;
}
