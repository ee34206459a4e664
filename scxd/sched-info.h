/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * What scxd knows about a scheduler object before loading it: read from the
 * .bpf.o's BTF and .rodata alone, so it works on any host.
 *
 * - Tunables are the 'const volatile' globals of .rodata: integers, bools and
 *   enums, with their default value from the section data. sub_cgroup_id and
 *   names starting with "scxd_" or '_' are scxd's own and not tunables.
 * - A scheduler can host children iff its struct_ops sets sub_attach (a
 *   relocation at that member of the struct_ops variable, as libbpf reads
 *   it), or its BTF has the variable scxd_can_host_children (the
 *   convention shared with schedulers/, which also marks objects built
 *   for a kernel without sub-schedulers, where sub_attach cannot be set).
 * - It grants CPUs to its children iff its code calls the kfunc
 *   scx_bpf_sub_grant (an undefined symbol of that name with relocations
 *   against it: the extern __ksym the call compiles to).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel-api.h"
#include "sched-tunable.h"

/*
 * Read an object's BTF and .rodata from its bytes (image, as read by
 * file_read(); libelf may write to it); path is for messages. No kernel
 * involved.
 */
int sched_info_load_mem(const char *path, const char *name, char *image, size_t size,
			struct sched_info **ret);

/* The same from a file, read without owner checks (tests, tools). */
int sched_info_load(const char *path, const char *name, struct sched_info **ret);

/* A catalog over a directory of <name>.bpf.o files, caching what it read. */
struct sched_dir_catalog;
int sched_dir_catalog_new(const char *dir, struct sched_dir_catalog **ret);
/*
 * The catalog of the objects a kernel with this API loads: sched_dir's
 * cid-form ones in sched_dir/cid on a cid kernel, else sched_dir's own
 * (kernel-api.h); a scheduler found only in the other directory has "no
 * cid-form (cpu-form) object" here. KERNEL_API_NONE: sched_dir, unsaid.
 */
int sched_dir_catalog_new_for(const char *sched_dir, enum kernel_api api,
			      struct sched_dir_catalog **ret);
struct sched_catalog *sched_dir_catalog_base(struct sched_dir_catalog *c);
const char *sched_dir_catalog_dir(const struct sched_dir_catalog *c);
void sched_dir_catalog_free(struct sched_dir_catalog *c);

/* For _cleanup_() */
static inline void sched_info_freep(struct sched_info **s)
{
	sched_info_free(*s);
}

static inline void sched_dir_catalog_freep(struct sched_dir_catalog **c)
{
	sched_dir_catalog_free(*c);
}
