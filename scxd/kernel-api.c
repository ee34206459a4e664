// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's sched_ext API from its BTF (kernel-api.h), and the values
 * of its enumerators for objects built the upstream way (SCX_ENUM_INIT).
 * Types are looked up by name only, so a fake BTF built in a test answers
 * as a kernel's would.
 */

#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernel-api.h"
#include "util.h"

static bool has_struct(const struct btf *btf, const char *name)
{
	return btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT) > 0;
}

enum kernel_api kernel_api_from_btf(const struct btf *vmlinux)
{
	if (!has_struct(vmlinux, "sched_ext_ops"))
		return KERNEL_API_NONE;
	if (!has_struct(vmlinux, "scx_sub_attach_args"))
		return KERNEL_API_ROOT_ONLY;
	if (has_struct(vmlinux, "sched_ext_ops_cid"))
		return KERNEL_API_CID;
	return KERNEL_API_CPU;
}

static void btf_freep(struct btf **b)
{
	btf__free(*b);
}

int kernel_api_detect(const char *btf_path, enum kernel_api *ret)
{
	_cleanup_(btf_freep) struct btf *btf = NULL;

	errno = 0;
	btf = btf_path ? btf__parse(btf_path, NULL) : btf__load_vmlinux_btf();
	if (!btf)
		return errno ? -errno : -ENODATA;
	*ret = kernel_api_from_btf(btf);
	return 0;
}

char *kernel_api_sched_dir(enum kernel_api api, const char *sched_dir)
{
	char *dir = NULL;

	if (api != KERNEL_API_CID)
		return strdup(sched_dir);
	if (asprintf(&dir, "%s/%s", sched_dir, KERNEL_API_CID_SUBDIR) < 0)
		return NULL;
	return dir;
}

/* The enumerator name of enum type t, at position i, and its value. */
static const char *enumerator(const struct btf *btf, const struct btf_type *t, unsigned i,
			      unsigned long long *value)
{
	if (btf_is_enum64(t)) {
		const struct btf_enum64 *e = btf_enum64(t) + i;

		*value = btf_enum64_value(e);
		return btf__name_by_offset(btf, e->name_off);
	}
	if (btf_kflag(t))	/* signed */
		*value = (unsigned long long)(long long)(int)btf_enum(t)[i].val;
	else
		*value = (__u32)btf_enum(t)[i].val;
	return btf__name_by_offset(btf, btf_enum(t)[i].name_off);
}

int kernel_enum_value(const struct btf *btf, const char *name, unsigned long long *ret)
{
	__u32 n = btf__type_cnt(btf);

	for (__u32 id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		if (!btf_is_enum(t) && !btf_is_enum64(t))
			continue;
		for (unsigned i = 0; i < btf_vlen(t); i++) {
			unsigned long long value;
			const char *e = enumerator(btf, t, i, &value);

			if (!e || !streq(e, name))
				continue;
			if (btf_is_enum(t) && t->size == 8)
				return -ERANGE;
			*ret = value;
			return 0;
		}
	}
	return -ENOENT;
}
