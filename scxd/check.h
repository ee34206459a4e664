/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * Validate a policy file against the scheduler objects in sched_dir, with
 * the StrictModes check: errors to stderr as file:line:column: message, a
 * one-line summary to stdout when valid. Returns 0 only for a valid policy.
 */
int scxd_check(const char *file, const char *sched_dir);
