// SPDX-License-Identifier: GPL-2.0
/*
 * A policy from its files: the main file and the drop-ins of its
 * policy.d (sorted bytewise, *.json only), each read once with
 * file_read(), then parsed and merged by policy_parse_files(). The main
 * file's text may come from elsewhere (scxdctl diff): the drop-ins are
 * the same as a reload's.
 */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "file.h"
#include "policy.h"
#include "util.h"

char *policy_dropin_dir(const char *file)
{
	const char *slash = strrchr(file, '/');
	char *dir;

	if (!slash)
		return strdup("policy.d");
	if (asprintf(&dir, "%.*s/policy.d", (int)(slash - file), file) < 0)
		return NULL;
	return dir;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct name_list {
	char **v;
	size_t n;
};

static void name_list_done(struct name_list *l)
{
	for (size_t i = 0; l->v && i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	*l = (struct name_list){};
}

static int name_list_add(struct name_list *l, const char *name)
{
	char **v = realloc(l->v, (l->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	l->v = v;
	v[l->n] = strdup(name);
	if (!v[l->n])
		return -ENOMEM;
	l->n++;
	return 0;
}

/* The *.json names in dir, sorted; none if dir does not exist. */
static int list_dropins(const char *dir, struct diag_list *diags, struct name_list *ret)
{
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *de;
	int r;

	if (!d && errno == ENOENT)
		return 0;
	if (!d) {
		r = -errno;
		diag_add_line(diags, "%s: cannot read the drop-in directory: %s", dir, strerror(-r));
		return r;
	}
	while ((errno = 0, de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' || len < 6 || !streq(de->d_name + len - 5, ".json"))
			continue;
		if (ret->n == POLICY_MAX_DROPINS) {
			diag_add_line(diags, "%s: more than %d drop-ins; refusing them all", dir,
				      POLICY_MAX_DROPINS);
			return -E2BIG;
		}
		r = name_list_add(ret, de->d_name);
		if (r < 0)
			return r;
	}
	if (errno) {
		r = -errno;
		diag_add_line(diags, "%s: cannot read the drop-in directory: %s", dir, strerror(-r));
		return r;
	}
	if (ret->n)
		qsort(ret->v, ret->n, sizeof(*ret->v), name_cmp);
	return 0;
}

/* What policy_load() read: paths and their bytes, the main file first. */
struct loaded_files {
	struct policy_source *src;
	char **texts;
	size_t n;
};

static void loaded_files_done(struct loaded_files *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free((char *)l->src[i].file);
		free(l->texts[i]);
	}
	free(l->src);
	free(l->texts);
}

/* Room for n more files. */
static int loaded_files_grow(struct loaded_files *l, size_t n)
{
	struct policy_source *src = realloc(l->src, (l->n + n + 1) * sizeof(*src));
	char **texts;

	if (!src)
		return -ENOMEM;
	l->src = src;
	texts = realloc(l->texts, (l->n + n + 1) * sizeof(*texts));
	if (!texts)
		return -ENOMEM;
	l->texts = texts;
	return 0;
}

static int load_one(struct loaded_files *l, const char *path, struct diag_list *diags)
{
	_cleanup_free_ char *why = NULL, *text = NULL, *copy = strdup(path);
	size_t len;
	int r;

	if (!copy)
		return -ENOMEM;
	r = file_read(path, FILE_POLICY_MAX, FILE_TRUSTED, &text, &len, &why);
	if (r < 0) {
		diag_add_line(diags, "%s", why ?: strerror(-r));
		return r;
	}
	l->src[l->n] = (struct policy_source){ TAKE_PTR(copy), text, len };
	l->texts[l->n++] = TAKE_PTR(text);
	return 0;
}

/* The drop-ins of file's policy.d after what files holds already, and the whole parsed. */
static int load_dropins(struct loaded_files *files, const char *file, struct sched_catalog *catalog,
			struct diag_list *diags, struct policy **ret)
{
	_cleanup_free_ char *dir = policy_dropin_dir(file);
	_cleanup_(name_list_done) struct name_list names = {};
	int r;

	if (!dir)
		return -ENOMEM;
	r = list_dropins(dir, diags, &names);
	if (r < 0)
		return r;
	r = loaded_files_grow(files, names.n);
	for (size_t i = 0; i < names.n && r >= 0; i++) {
		_cleanup_free_ char *path = NULL;

		if (asprintf(&path, "%s/%s", dir, names.v[i]) < 0)
			return -ENOMEM;
		r = load_one(files, path, diags);
	}
	if (r < 0)
		return r;
	return policy_parse_files(files->src, files->n, catalog, diags, ret);
}

int policy_load(const char *file, struct sched_catalog *catalog,
		struct diag_list *diags, struct policy **ret)
{
	_cleanup_(loaded_files_done) struct loaded_files files = {};
	int r = loaded_files_grow(&files, 1);

	if (r == 0)
		r = load_one(&files, file, diags);
	if (r < 0)
		return r;
	return load_dropins(&files, file, catalog, diags, ret);
}

int policy_load_text(const char *file, const char *name, const char *text, size_t len,
		     struct sched_catalog *catalog, struct diag_list *diags, struct policy **ret)
{
	_cleanup_(loaded_files_done) struct loaded_files files = {};
	char *copy = strdup(name), *t = malloc(len + 1);
	int r = loaded_files_grow(&files, 1);

	if (r < 0 || !copy || !t) {
		free(copy);
		free(t);
		return -ENOMEM;
	}
	memcpy(t, text, len);
	t[len] = '\0';
	files.src[0] = (struct policy_source){ copy, t, len };
	files.texts[0] = t;
	files.n = 1;
	return load_dropins(&files, file, catalog, diags, ret);
}
