/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

#include "kernel-api.h"

/*
 * Validate a policy file against the scheduler objects a kernel with api
 * loads (sched_dir, or sched_dir/cid for cid: sched_dir_catalog_new_for())
 * and against what that kernel can give (desired_check_kernel()), with the
 * StrictModes check: errors to stderr as file:line:column: message, a
 * one-line summary to stdout when valid. Returns 0 only for a valid
 * policy. KERNEL_API_NONE checks the policy alone, against sched_dir.
 */
int scxd_check(const char *file, const char *sched_dir, enum kernel_api api);

/*
 * The kernel API for --kernel-api=NAME: a kernel_api_name(), or "auto"
 * (and NULL): the running kernel's, from btf_path (NULL: its own BTF),
 * KERNEL_API_NONE when there is no BTF to read. -EINVAL for another name.
 */
int kernel_api_option(const char *name, const char *btf_path, enum kernel_api *ret);
