/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * A scheduler catalog in memory, shaped like the collection: wparent can
 * host children and has tunables of every kind, the leaves cannot.
 */

#include "sched-tunable.h"
#include "util.h"

static struct sched_enumerator fake_modes[] = {
	{ "MODE_FAIR", 0 }, { "MODE_STRICT", 5 }, { "MODE_NEG", -2 },
};

static struct sched_tunable fake_wparent_tunables[] = {
	{ .name = "slice_us", .kind = TUNABLE_INT, .size = 8, .default_raw = 20000 },
	{ .name = "weight_max", .kind = TUNABLE_INT, .size = 4, .default_raw = 10000 },
	{ .name = "nice_bias", .kind = TUNABLE_INT, .size = 1, .is_signed = true },
	{ .name = "boost", .kind = TUNABLE_BOOL, .size = 1, .default_raw = 1 },
	{ .name = "mode", .kind = TUNABLE_ENUM, .size = 4, .is_signed = true,
	  .enumerators = fake_modes, .n_enumerators = 3 },
};

static struct sched_tunable fake_leaf_tunables[] = {
	{ .name = "slice_us", .kind = TUNABLE_INT, .size = 4, .default_raw = 5000 },
};

static struct sched_info fake_scheds[] = {
	{ .name = "wparent", .can_host_children = true, .tunables = fake_wparent_tunables,
	  .n_tunables = ELEMENTSOF(fake_wparent_tunables) },
	{ .name = "vtime", .tunables = fake_leaf_tunables, .n_tunables = 1 },
	{ .name = "fifo", .tunables = fake_leaf_tunables, .n_tunables = 1 },
	{ .name = "lat" },
};

static int fake_lookup(struct sched_catalog *c, const char *name,
		       const struct sched_info **ret, const char **reason)
{
	for (size_t i = 0; i < ELEMENTSOF(fake_scheds); i++)
		if (streq(fake_scheds[i].name, name)) {
			*ret = &fake_scheds[i];
			return 0;
		}
	*reason = "no object /test/sched/<name>.bpf.o";
	return -ENOENT;
}

static struct sched_catalog fake_catalog = { .lookup = fake_lookup };
