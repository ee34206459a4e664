/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * A scheduler as the policy's validator sees it: its tunables and
 * whether it hosts children (struct sched_info, filled from an object by
 * sched-info.c or by a test's table), how the validator finds one
 * (struct sched_catalog), and the helpers over them (sched-tunable.c).
 * Pure: no object is read here.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tunable_kind {
	TUNABLE_INT,
	TUNABLE_BOOL,
	TUNABLE_ENUM,
};

struct sched_enumerator {
	char *name;
	int64_t value;
};

struct sched_tunable {
	char *name;
	enum tunable_kind kind;
	unsigned size;		/* bytes: 1, 2, 4 or 8 */
	bool is_signed;
	uint64_t default_raw;	/* little-endian value read from .rodata */
	size_t offset;		/* within .rodata */
	struct sched_enumerator *enumerators;
	size_t n_enumerators;
};

struct sched_info {
	char *name;
	char *path;
	bool can_host_children;
	bool has_sub_attach;		/* its struct_ops sets sub_attach */
	bool grants_cpus;		/* it calls scx_bpf_sub_grant() */
	bool has_sub_cgroup_id_var;	/* .rodata sub_cgroup_id exists */
	struct sched_tunable *tunables;
	size_t n_tunables;
};

/*
 * How the validator finds schedulers: the daemon reads objects from the
 * scheduler directory, tests hand in tables. On failure the lookup returns
 * -errno and sets *reason (static or owned by the catalog): -ENOENT for a
 * scheduler there is no object of, -EOPNOTSUPP for one that has an
 * object only of the form the running kernel does not take (*reason says
 * it all, naming the scheduler).
 */
struct sched_catalog {
	int (*lookup)(struct sched_catalog *c, const char *name,
		      const struct sched_info **ret, const char **reason);
};

/* "u32", "s64", "bool", "enum" — for messages. */
const char *sched_tunable_type_name(const struct sched_tunable *t, char *buf, size_t len);

/* Range of values a tunable's type can hold. */
void sched_tunable_range(const struct sched_tunable *t, int64_t *min, uint64_t *max);

const struct sched_tunable *sched_info_find_tunable(const struct sched_info *s,
						     const char *name);

/* Comma-separated tunable names, "none" when there are none. */
char *sched_info_tunable_list(const struct sched_info *s);

void sched_info_free(struct sched_info *s);
