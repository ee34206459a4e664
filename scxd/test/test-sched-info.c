// SPDX-License-Identifier: GPL-2.0
/*
 * The BTF tunable reader on real objects built by clang -target bpf
 * (test/sched/), read as the daemon reads them (file.h; the owner and mode
 * checks themselves are in test-file.c).
 */

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

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SCHED_DIR\n", argv[0]);
		return 2;
	}
	test_parent_object_tunables_from_btf(argv[1]);
	test_symlinked_object_is_refused(argv[1]);
	return test_main_end("test-sched-info");
}
