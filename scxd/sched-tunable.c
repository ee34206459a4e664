// SPDX-License-Identifier: GPL-2.0
/*
 * sched-tunable.h: describing tunables for messages and range checks,
 * finding one by name, freeing a sched_info. No libbpf: the validator and
 * the host tests use these.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched-tunable.h"
#include "util.h"

const char *sched_tunable_type_name(const struct sched_tunable *t, char *buf, size_t len)
{
	if (t->kind == TUNABLE_BOOL)
		snprintf(buf, len, "bool");
	else if (t->kind == TUNABLE_ENUM)
		snprintf(buf, len, "enum");
	else
		snprintf(buf, len, "%c%u", t->is_signed ? 's' : 'u', t->size * 8);
	return buf;
}

void sched_tunable_range(const struct sched_tunable *t, int64_t *min, uint64_t *max)
{
	unsigned bits = t->size * 8;

	if (t->kind == TUNABLE_BOOL) {
		*min = 0;
		*max = 1;
	} else if (t->is_signed) {
		*max = bits >= 64 ? INT64_MAX : (UINT64_C(1) << (bits - 1)) - 1;
		*min = -(int64_t)*max - 1;
	} else {
		*min = 0;
		*max = bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
	}
}

const struct sched_tunable *sched_info_find_tunable(const struct sched_info *s,
						     const char *name)
{
	for (size_t i = 0; i < s->n_tunables; i++)
		if (streq(s->tunables[i].name, name))
			return &s->tunables[i];
	return NULL;
}

char *sched_info_tunable_list(const struct sched_info *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (s->n_tunables == 0)
		return strdup("none");
	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	for (size_t i = 0; i < s->n_tunables; i++)
		fprintf(f, "%s%s", i ? ", " : "", s->tunables[i].name);
	fclose(f);
	return buf;
}

void sched_info_free(struct sched_info *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_tunables; i++) {
		struct sched_tunable *t = &s->tunables[i];

		for (size_t e = 0; e < t->n_enumerators; e++)
			free(t->enumerators[e].name);
		free(t->enumerators);
		free(t->name);
	}
	free(s->tunables);
	free(s->name);
	free(s->path);
	free(s);
}
