/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What tests/bench's attach timers (scxd-attach-time, scxd-attach-split)
 * share: a monotonic clock in milliseconds, and the kernel's view of which
 * sub-schedulers exist and are enabled (sysfs root/sub/sub-<cgid>).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
