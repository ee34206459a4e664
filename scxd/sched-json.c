// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched-json.h"
#include "util.h"

static json_t *tunable_json(const struct sched_tunable *t)
{
	char type[16];
	json_t *o, *def;

	sched_tunable_type_name(t, type, sizeof(type));
	if (t->kind == TUNABLE_BOOL)
		def = json_boolean(t->default_raw != 0);
	else if (t->is_signed || t->kind == TUNABLE_ENUM) {
		unsigned shift = 64 - 8 * t->size;

		def = json_integer((json_int_t)((int64_t)(t->default_raw << shift) >> shift));
	} else
		def = json_integer((json_int_t)t->default_raw);
	o = json_pack("{s:s, s:s, s:o}", "name", t->name, "type", type, "default", def);
	if (o && t->kind == TUNABLE_ENUM) {
		json_t *values = json_object();

		for (size_t e = 0; e < t->n_enumerators; e++)
			json_object_set_new(values, t->enumerators[e].name,
					    json_integer(t->enumerators[e].value));
		json_object_set_new(o, "values", values);
	}
	return o;
}

json_t *sched_info_json(const struct sched_info *s)
{
	json_t *tunables = json_array();

	for (size_t i = 0; tunables && i < s->n_tunables; i++)
		json_array_append_new(tunables, tunable_json(&s->tunables[i]));
	return json_pack("{s:s, s:s, s:s, s:b, s:b, s:b, s:o}", "name", s->name, "path", s->path,
			 "role", s->can_host_children ? "parent" : "leaf",
			 "can_host_children", s->can_host_children,
			 "sub_attach", s->has_sub_attach, "grants_cpus", s->grants_cpus,
			 "tunables", tunables);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct names {
	char **v;
	size_t n, cap;
};

static void names_done(struct names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* The <name> of every <name>.bpf.o in dir, sorted. */
static int sched_dir_names(const char *dir, struct names *l)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len <= 6 || !streq(de->d_name + len - 6, ".bpf.o"))
			continue;
		if (l->n == l->cap) {
			char **p = realloc(l->v, (l->cap = 2 * l->cap + 16) * sizeof(*p));

			if (!p)
				return -ENOMEM;
			l->v = p;
		}
		l->v[l->n] = strndup(de->d_name, len - 6);
		if (!l->v[l->n])
			return -ENOMEM;
		l->n++;
	}
	qsort(l->v, l->n, sizeof(*l->v), name_cmp);
	return 0;
}

int sched_dir_list_json(const char *dir, json_t **ret)
{
	_cleanup_(names_done) struct names names = {};
	json_t *list;
	int r;

	r = sched_dir_names(dir, &names);
	if (r < 0)
		return r;
	list = json_array();
	if (!list)
		return -ENOMEM;
	for (size_t i = 0; i < names.n; i++) {
		_cleanup_(sched_info_freep) struct sched_info *s = NULL;
		_cleanup_free_ char *path = NULL;

		if (asprintf(&path, "%s/%s.bpf.o", dir, names.v[i]) < 0) {
			json_decref(list);
			return -ENOMEM;
		}
		r = sched_info_load(path, names.v[i], &s);
		if (r < 0)
			json_array_append_new(list, json_pack("{s:s, s:s, s:s}", "name", names.v[i],
							      "path", path, "error", strerror(-r)));
		else
			json_array_append_new(list, sched_info_json(s));
	}
	*ret = list;
	return 0;
}
