/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * StrictModes, as sshd has it: scxd loads BPF into the kernel from files
 * named by its policy. If anyone but root could write the policy, a
 * scheduler object or any directory on the way to them, that person could
 * choose what runs in the kernel. Such files are refused.
 */

#include <stdbool.h>

/*
 * Check path and every directory above it: owned by root, not writable by
 * group or others. On refusal returns -EPERM and *reason (allocated) says
 * which file and why.
 */
int strict_check_path(const char *path, char **reason);

/* Test hook and developer escape: --no-strict-modes turns the check off. */
extern bool strict_modes;
