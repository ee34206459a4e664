// SPDX-License-Identifier: GPL-2.0
/*
 * The BTF tunable reader on real objects built by clang -target bpf
 * (test/sched/), read as the daemon reads them (file.h; the owner and mode
 * checks themselves are in test-file.c).
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "sched-info.h"
#include "strict.h"
#include "tests.h"
#include "util.h"

static void test_parent_object_tunables_from_btf(const char *dir)
{
	struct sched_dir_catalog *c;
	const struct sched_info *s = NULL;
	const struct sched_tunable *t;
	const char *reason = NULL;
	char type[16];

	CHECK_INTEQ(sched_dir_catalog_new(dir, &c), 0);
	strict_modes = false;
	CHECK_INTEQ(sched_dir_catalog_base(c)->lookup(sched_dir_catalog_base(c), "wparent",
						      &s, &reason), 0);
	if (!s) {
		fprintf(stderr, "wparent: %s\n", reason);
		return;
	}
	CHECK(s->can_host_children);
	CHECK(s->has_sub_attach);
	CHECK(s->grants_cpus);
	CHECK(s->has_sub_cgroup_id_var);
	/* label (an array), sub_cgroup_id and the marker are not tunables */
	CHECK_INTEQ(s->n_tunables, 5);
	CHECK(sched_info_find_tunable(s, "label") == NULL);
	CHECK(sched_info_find_tunable(s, "sub_cgroup_id") == NULL);
	CHECK(sched_info_find_tunable(s, "scxd_can_host_children") == NULL);

	t = sched_info_find_tunable(s, "slice_us");
	CHECK(t && t->kind == TUNABLE_INT && t->size == 8 && !t->is_signed);
	CHECK(t && t->default_raw == 20000 && t->offset == 0);
	CHECK_STREQ(t ? sched_tunable_type_name(t, type, sizeof(type)) : NULL, "u64");
	t = sched_info_find_tunable(s, "weight_max");
	CHECK(t && t->size == 4 && t->default_raw == 10000);
	t = sched_info_find_tunable(s, "nice_bias");
	CHECK(t && t->size == 1 && t->is_signed && (int8_t)t->default_raw == -3);
	CHECK_STREQ(t ? sched_tunable_type_name(t, type, sizeof(type)) : NULL, "s8");
	t = sched_info_find_tunable(s, "boost");
	CHECK(t && t->kind == TUNABLE_BOOL && t->default_raw == 1);
	t = sched_info_find_tunable(s, "mode");
	CHECK(t && t->kind == TUNABLE_ENUM && t->n_enumerators == 3 && t->default_raw == 5);
	CHECK(t && streq(t->enumerators[2].name, "MODE_NEG") && t->enumerators[2].value == -2);

	CHECK_INTEQ(sched_dir_catalog_base(c)->lookup(sched_dir_catalog_base(c), "fifo",
						      &s, &reason), 0);
	CHECK(s && !s->can_host_children && s->n_tunables == 1);
	CHECK(s && !s->has_sub_attach && !s->grants_cpus);

	/* the marker alone (built without sub_attach): hosts children, grants nothing */
	CHECK_INTEQ(sched_dir_catalog_base(c)->lookup(sched_dir_catalog_base(c), "marked",
						      &s, &reason), 0);
	CHECK(s && s->can_host_children && !s->has_sub_attach && !s->grants_cpus);
	/* a struct_ops whose type has no sub_attach at all */
	CHECK_INTEQ(sched_dir_catalog_base(c)->lookup(sched_dir_catalog_base(c), "child",
						      &s, &reason), 0);
	CHECK(s && !s->can_host_children && !s->has_sub_attach && !s->grants_cpus);

	CHECK_INTEQ(sched_dir_catalog_base(c)->lookup(sched_dir_catalog_base(c), "nope",
						      &s, &reason), -ENOENT);
	CHECK(reason && strstr(reason, "nope.bpf.o"));
	CHECK_INTEQ(sched_dir_catalog_base(c)->lookup(sched_dir_catalog_base(c), "../x",
						      &s, &reason), -ENOENT);
	CHECK_STREQ(reason, "not a valid scheduler name");
	sched_dir_catalog_free(c);
}

/* The catalog reads objects through file_read(): a symbolic link is refused. */
static void test_symlinked_object_is_refused(const char *dir)
{
	struct sched_dir_catalog *c;
	const struct sched_info *s = NULL;
	const char *reason = NULL;
	char path[4096];

	snprintf(path, sizeof(path), "%s/symlinked.bpf.o", dir);
	unlink(path);
	CHECK_INTEQ(symlink("fifo.bpf.o", path), 0);
	CHECK_INTEQ(sched_dir_catalog_new(dir, &c), 0);
	CHECK_INTEQ(sched_dir_catalog_base(c)->lookup(sched_dir_catalog_base(c), "symlinked",
						      &s, &reason), -ENOENT);
	CHECK(s == NULL);
	CHECK(reason && strstr(reason, "symlinked.bpf.o is a symbolic link, not a regular file"));
	printf("symlinked object: %s\n", reason ?: "(accepted)");
	sched_dir_catalog_free(c);
	unlink(path);
}

/*
 * The collection's schedulers as built (schedulers/): the leaves neither
 * host children nor grant CPUs; wparent sets sub_attach exactly when built
 * for a kernel with sub-schedulers (have_sub); and for any scheduler, one
 * that grants CPUs hosts children, and with sub-schedulers the marker and
 * sub_attach agree. Prints what describe says of each.
 */
static void test_built_schedulers(const char *dir, bool have_sub)
{
	static const char *const leaves[] = { "fifo", "vtime", "lat", "pin" };
	_cleanup_closedir_ DIR *d = opendir(dir);
	struct dirent *de;
	unsigned seen = 0;

	CHECK(d != NULL);
	while (d && (de = readdir(d))) {
		struct sched_info *s = NULL;
		size_t len = strlen(de->d_name);
		char path[4096], name[256];
		bool leaf = false;

		if (len <= 6 || !streq(de->d_name + len - 6, ".bpf.o") || len - 6 >= sizeof(name))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(len - 6), de->d_name);
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		CHECK_INTEQ(sched_info_load(path, name, &s), 0);
		if (!s)
			continue;
		seen++;
		printf("describe %s: role %s, hosts children: %s, grants CPUs: %s\n", name,
		       s->can_host_children ? "parent" : "leaf",
		       s->has_sub_attach ? "yes (sets sub_attach)" :
		       s->can_host_children ? "yes (marker only)" : "no",
		       s->grants_cpus ? "yes" : "no");
		for (size_t i = 0; i < ELEMENTSOF(leaves); i++)
			leaf = leaf || streq(name, leaves[i]);
		if (leaf)
			CHECK(!s->can_host_children && !s->has_sub_attach && !s->grants_cpus);
		if (streq(name, "wparent"))
			CHECK(s->can_host_children && s->has_sub_attach == have_sub);
		if (s->grants_cpus)
			CHECK(s->can_host_children);
		if (have_sub)
			CHECK(s->can_host_children == s->has_sub_attach);
		sched_info_free(s);
	}
	CHECK(seen >= 5);
}

int main(int argc, char **argv)
{
	if (argc == 4 && streq(argv[1], "--built")) {
		test_built_schedulers(argv[2], streq(argv[3], "1"));
		return test_main_end("test-sched-info --built");
	}
	if (argc < 2) {
		fprintf(stderr, "usage: %s SCHED_DIR | --built DIR HAVE_SUB\n", argv[0]);
		return 2;
	}
	test_parent_object_tunables_from_btf(argv[1]);
	test_symlinked_object_is_refused(argv[1]);
	return test_main_end("test-sched-info");
}
