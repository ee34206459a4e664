/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * StrictModes, as sshd has it: scxd loads BPF into the kernel from files
 * named by its policy. If anyone but root could write the policy, a
 * scheduler object or any directory on the way to them, that person could
 * choose what runs in the kernel. Such files are refused. The check is
 * made on descriptors scxd then reads from: see file.h.
 */

#include <stdbool.h>
#include <sys/stat.h>

/*
 * Check one file or directory from its fstat(): owned by root, not
 * writable by group or others. On refusal returns -EPERM and *reason
 * (allocated) names path and says why. Always 0 with strict_modes off.
 */
int strict_check_stat(const char *path, const struct stat *st, char **reason);

/* Test hook and developer escape: --no-strict-modes turns the check off. */
extern bool strict_modes;
