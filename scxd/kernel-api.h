/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * Which sched_ext API the running kernel offers, read from its BTF once at
 * start and handed to every stage that depends on it (policy check,
 * desired state, the object directory, status):
 *
 *   none       no struct sched_ext_ops: no sched_ext at all
 *   root-only  sched_ext_ops but no struct scx_sub_attach_args: one root
 *              scheduler (pristine 6.12)
 *   cpu        scx_sub_attach_args, no struct sched_ext_ops_cid: scxd's
 *              6.12 series, cpu-form children (objects in SCHED_DIR)
 *   cid        struct sched_ext_ops_cid: upstream >= 7.2, only cid-form
 *              objects are parents or children (objects in SCHED_DIR/cid)
 *
 * The names and the directory rule are inline here, for the pure stages;
 * reading BTF is in kernel-api.c (libbpf).
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

enum kernel_api {
	KERNEL_API_NONE,
	KERNEL_API_ROOT_ONLY,
	KERNEL_API_CPU,
	KERNEL_API_CID,
};

/* Where cid-form objects are, below the scheduler directory. */
#define KERNEL_API_CID_SUBDIR "cid"

/* "none", "root-only", "cpu", "cid": the JSON "kernel_api" and --kernel-api. */
static inline const char *kernel_api_name(enum kernel_api api)
{
	switch (api) {
	case KERNEL_API_ROOT_ONLY: return "root-only";
	case KERNEL_API_CPU: return "cpu";
	case KERNEL_API_CID: return "cid";
	default: return "none";
	}
}

/* For people: status, describe, log lines. */
static inline const char *kernel_api_describe(enum kernel_api api)
{
	switch (api) {
	case KERNEL_API_ROOT_ONLY: return "root only";
	case KERNEL_API_CPU: return "sub-schedulers (cpu-form, scxd series)";
	case KERNEL_API_CID: return "sub-schedulers (cid-form, upstream)";
	default: return "none";
	}
}

/* The kernel's limit, as a refusal names it. */
static inline const char *kernel_api_limit(enum kernel_api api)
{
	return api == KERNEL_API_NONE ? "kernel has no sched_ext"
				      : "kernel has sched_ext without sub-schedulers (root only)";
}

/* The older "kernel" member of status: "sub-schedulers", "root-only", "none". */
static inline const char *kernel_api_support_name(enum kernel_api api)
{
	return api >= KERNEL_API_CPU ? "sub-schedulers" : kernel_api_name(api);
}

static inline bool kernel_api_has_children(enum kernel_api api)
{
	return api == KERNEL_API_CPU || api == KERNEL_API_CID;
}

/* The form of the objects this kernel loads: "cid-form" or "cpu-form" (NULL: none). */
static inline const char *kernel_api_form(enum kernel_api api)
{
	return api == KERNEL_API_CID ? "cid-form" : api == KERNEL_API_NONE ? NULL : "cpu-form";
}

/* 0 and *ret for a kernel_api_name(), -EINVAL for anything else. */
static inline int kernel_api_from_name(const char *name, enum kernel_api *ret)
{
	for (int a = KERNEL_API_NONE; a <= KERNEL_API_CID; a++)
		if (strcmp(name, kernel_api_name(a)) == 0) {
			*ret = a;
			return 0;
		}
	return -EINVAL;
}

/*
 * The object directory for api below the scheduler directory sched_dir:
 * sched_dir/cid for a cid kernel, else sched_dir itself. Allocated.
 */
char *kernel_api_sched_dir(enum kernel_api api, const char *sched_dir);

struct btf;

/* What a kernel with this BTF offers. */
enum kernel_api kernel_api_from_btf(const struct btf *vmlinux);

/*
 * Read the kernel's BTF (btf_path, or NULL for the running kernel's,
 * /sys/kernel/btf/vmlinux) and say what it offers. -errno when there is
 * no BTF to read; the caller then knows nothing (and says so).
 */
int kernel_api_detect(const char *btf_path, enum kernel_api *ret);

/*
 * The value of the enumerator called name in any BTF_KIND_ENUM or
 * BTF_KIND_ENUM64 of btf (the kernel's), sign-extended from a signed
 * 32-bit enum. -ENOENT if no enum has it, -ERANGE if it is in an 8-byte
 * BTF_KIND_ENUM (BTF written without ENUM64: its upper half is lost).
 */
int kernel_enum_value(const struct btf *btf, const char *name, unsigned long long *ret);

struct bpf_object;

/* Has obj .rodata variables named __SCX_*, which kernel_api_set_enums() fills? */
bool kernel_api_has_enum_vars(struct bpf_object *obj);

/*
 * SCX_ENUM_INIT for any object, before it is loaded: every .rodata
 * variable named __SCX_<X> (upstream's scx/enums.autogen.bpf.h) gets the
 * value of the kernel's enumerator SCX_<X> (kernel_enum_value()) from
 * kbtf. The header declares them all, so an object carries names no
 * kernel has (upstream's table still lists some 7.3 dropped): one the
 * kernel lacks is left 0 if no program of the object uses it, which the
 * relocations of its code sections in image (the object file's bytes;
 * libelf may write to it) tell; one it uses refuses the object, naming it
 * and the variable, since a 0 there would be silently wrong. 0, or -errno
 * with *reason set (allocated).
 */
int kernel_api_set_enums(struct bpf_object *obj, const char *obj_path, char *image,
			 size_t image_size, const struct btf *kbtf, char **reason);

struct bpf_map;

/*
 * Upstream refuses a child that sets SCX_OPS_TID_TO_TASK (scx_qmap does)
 * under a root without it. Where the kernel's BTF kbtf has the flag, OR
 * it into the flags of st, the struct_ops map of an object about to be
 * loaded as root, so that such children can attach below it; the kernel
 * then keeps its tid table. 0, or -errno when st has no 8-byte flags.
 */
int kernel_api_set_root_flags(struct bpf_map *st, const struct btf *obj_btf,
			      const struct btf *kbtf);
