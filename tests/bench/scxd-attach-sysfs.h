/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What tests/bench's attach timers (scxd-attach-time, scxd-attach-split)
 * share: a monotonic clock in milliseconds, the kernel's view of which
 * sub-schedulers exist and are enabled (sysfs root/sub/sub-<cgid>), a
 * process's CPU time and a qsort() comparison of doubles.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SCX_SYSFS "/sys/kernel/sched_ext"
#define MAX_IDS 8192

double now_ms(void);
void sleep_ms(unsigned int ms);
int read_line(const char *path, char *buf, size_t len);
/*
 * How many of want[0..n) have an enabled sub-<cgid> (present), or have
 * none at all, enabled or not (!present).
 */
unsigned int count_subs(const uint64_t *want, unsigned int n, bool present);
/* user and system time of @pid in clock ticks, 0 if it can't be read */
unsigned long long cpu_ticks(pid_t pid);
int cmp_double(const void *a, const void *b);
