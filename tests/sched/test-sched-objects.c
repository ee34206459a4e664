/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host test: the scheduler objects keep the contract scxd relies on.
 *
 * Reads each .bpf.o's BTF from the file (btf__parse_elf(), nothing is
 * loaded anywhere) and checks, per scheduler, that its documented
 * tunables are .rodata globals, that exit info is recorded in a .data
 * "uei", that it defines a struct_ops, and that only schedulers that
 * can host children say so with scxd_can_host_children.
 *
 *   test-sched-objects DIR
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>

struct expectation {
	const char *name;
	const char *tunables[10];
	bool hosts_children;
};

static const struct expectation expected[] = {
	{ "fifo", { "slice_us", "sync_depth", "sub_cgroup_id" }, false },
	{ "vtime", { "slice_us", "sleep_credit_us", "cgroup_weight", "sync_depth",
		     "sub_cgroup_id" }, false },
	{ "lat", { "slice_us", "interactive_us", "preempt", "sub_cgroup_id" }, false },
	{ "pin", { "cpus", "slice_us", "sub_cgroup_id" }, false },
	{ "wparent", { "slice_us", "self_weight", "child_weight_from_cgroup",
		       "child_weight", "weight_refresh", "max_tries",
		       "idle_backoff_max", "tree_always", "sub_cgroup_id",
		       "scxd_can_host_children" },
	  true },
	{ "cells", { "slice_us", "fill_slice_us", "starve_us", "self_weight",
		     "refresh_ms", "sub_cgroup_id", "scxd_can_host_children",
		     "scxd_grants_cpus" },
	  true },
};

static bool has_var(const struct btf *btf, const char *sec, const char *name)
{
	const struct btf_var_secinfo *vsi;
	const struct btf_type *ds;
	int id, i;

	id = btf__find_by_name_kind(btf, sec, BTF_KIND_DATASEC);
	if (id < 0)
		return false;
	ds = btf__type_by_id(btf, id);
	vsi = btf_var_secinfos(ds);
	for (i = 0; i < btf_vlen(ds); i++, vsi++) {
		const struct btf_type *var = btf__type_by_id(btf, vsi->type);

		if (!strcmp(btf__name_by_offset(btf, var->name_off), name))
			return true;
	}
	return false;
}

static int check_object(const char *dir, const struct expectation *e)
{
	char path[4096];
	struct btf *btf;
	int failures = 0;
	unsigned int i;

	snprintf(path, sizeof(path), "%s/%s.bpf.o", dir, e->name);
	btf = btf__parse_elf(path, NULL);
	if (!btf) {
		fprintf(stderr, "%s: cannot read BTF: %s\n", path, strerror(errno));
		return 1;
	}
	for (i = 0; i < sizeof(e->tunables) / sizeof(e->tunables[0]) && e->tunables[i]; i++) {
		if (!has_var(btf, ".rodata", e->tunables[i])) {
			fprintf(stderr, "%s: tunable %s is not a .rodata global\n", path, e->tunables[i]);
			failures++;
		}
	}
	if (!has_var(btf, ".data", "uei")) {
		fprintf(stderr, "%s: no .data global \"uei\" for exit info\n", path);
		failures++;
	}
	if (btf__find_by_name_kind(btf, ".struct_ops.link", BTF_KIND_DATASEC) < 0) {
		fprintf(stderr, "%s: no struct_ops in .struct_ops.link\n", path);
		failures++;
	}
	if (!e->hosts_children && has_var(btf, ".rodata", "scxd_can_host_children")) {
		fprintf(stderr, "%s: says it can host children but implements no sub_attach\n", path);
		failures++;
	}
	printf("%s %s: %s\n", failures ? "FAIL" : "ok", e->name, path);
	btf__free(btf);
	return failures;
}

int main(int argc, char **argv)
{
	int failures = 0;
	unsigned int i;

	if (argc != 2) {
		fprintf(stderr, "usage: test-sched-objects DIR\n");
		return 2;
	}
	for (i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
		failures += check_object(argv[1], &expected[i]);
	return failures ? 1 : 0;
}
