// SPDX-License-Identifier: GPL-2.0
/*
 * Policies of N entries in the shapes that made `scxd --check` quadratic
 * (policy-shapes.h), for tests/bench/policy-gen and scxd's host test
 * test-policy-scale.c.
 */

#include <stdio.h>
#include <string.h>

#include "policy-shapes.h"

static void entry(FILE *f, const char *key, const char *value, const char *extra,
		  const char *sched)
{
	fprintf(f, ",\n  {\"%s\": \"%s\"%s, \"scheduler\": \"%s\"}", key, value, extra, sched);
}

static void one(FILE *f, const char *shape, size_t i)
{
	char buf[128];

	if (!strcmp(shape, "globs-one-dir")) {
		snprintf(buf, sizeof(buf), "/x/%06zu*", i);
		entry(f, "cgroup", buf, "", "fifo");
	} else if (!strcmp(shape, "realistic")) {
		if (i % 10 == 9)
			snprintf(buf, sizeof(buf), "t%zu-*.scope", i / 10);
		else
			snprintf(buf, sizeof(buf), "s%zu.scope", i);
		entry(f, "unit", buf, ", \"slice\": \"work.slice\"", "fifo");
	} else if (!strcmp(shape, "literals")) {
		snprintf(buf, sizeof(buf), "/w%zu/c%zu", i % 100, i);
		entry(f, "cgroup", buf, "", "fifo");
	} else if (!strcmp(shape, "any-depth")) {
		snprintf(buf, sizeof(buf), "u%zu-*.service", i);
		entry(f, "unit", buf, "", "fifo");
	} else if (!strcmp(shape, "star-middle")) {
		snprintf(buf, sizeof(buf), "/y/a%zu*b*", i);
		entry(f, "cgroup", buf, "", "fifo");
	} else if (!strcmp(shape, "question")) {
		snprintf(buf, sizeof(buf), "/q/%zu??", i);
		entry(f, "cgroup", buf, "", "fifo");
	} else if (!strcmp(shape, "nested")) {
		if (i < 50) {
			snprintf(buf, sizeof(buf), "/n%zu/*", i);
			entry(f, "cgroup", buf, "", "wparent");
		} else {
			snprintf(buf, sizeof(buf), "/n%zu/%zu/x*", i % 50, i);
			entry(f, "cgroup", buf, "", "fifo");
		}
	} else {
		static const char *const shapes[] = { "globs-one-dir", "realistic", "literals",
						      "any-depth", "star-middle", "question" };

		one(f, shapes[i % 6], i);
	}
}

const char *const policy_shapes[] = { "globs-one-dir", "realistic", "literals", "any-depth",
				     "star-middle", "question", "nested", "mixed", NULL };

bool policy_shape_known(const char *shape)
{
	for (size_t k = 0; policy_shapes[k]; k++)
		if (!strcmp(shape, policy_shapes[k]))
			return true;
	return false;
}

int policy_shape_write(FILE *f, const char *shape, size_t n)
{
	if (!policy_shape_known(shape))
		return -1;
	fprintf(f, "{\"version\": 1, \"entries\": [\n  {\"cgroup\": \"/\", \"scheduler\": \"wparent\"}");
	for (size_t i = 0; i < n; i++)
		one(f, shape, i);
	fprintf(f, "\n]}\n");
	return ferror(f) ? -1 : 0;
}
