/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * Schedulers as JSON, for `scxdctl list` and the daemon's describe reply:
 *   { "name", "path", "role": "parent" | "leaf", "can_host_children",
 *     "sub_attach", "grants_cpus",
 *     "tunables": [ { "name", "type", "default", "values": {NAME: N} } ] }
 * ("values" for enums only). A parent can host child schedulers on the
 * cgroups below its own; a leaf cannot. sub_attach: its struct_ops sets
 * ops.sub_attach; grants_cpus: it calls scx_bpf_sub_grant() to delegate
 * CPUs to its children (sched-info.h).
 */

#include <jansson.h>

#include "sched-info.h"

json_t *sched_info_json(const struct sched_info *s);

/*
 * Every <name>.bpf.o in dir, sorted by name; an object whose BTF cannot be
 * read is listed with "error" instead of role and tunables.
 */
int sched_dir_list_json(const char *dir, json_t **ret);
