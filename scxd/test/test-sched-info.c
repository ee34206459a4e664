// SPDX-License-Identifier: GPL-2.0
/*
 * The BTF tunable reader on real objects built by clang -target bpf
 * (test/sched/), and the StrictModes check.
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

	CHECK_INTEQ(sched_dir_catalog_base(c)->lookup(sched_dir_catalog_base(c), "nope",
						      &s, &reason), -ENOENT);
	CHECK(reason && strstr(reason, "nope.bpf.o"));
	CHECK_INTEQ(sched_dir_catalog_base(c)->lookup(sched_dir_catalog_base(c), "../x",
						      &s, &reason), -ENOENT);
	CHECK_STREQ(reason, "not a valid scheduler name");
	sched_dir_catalog_free(c);
}

static void test_strict_modes_refuse_writable_files(const char *dir)
{
	char path[4096];
	char *reason = NULL;
	int fd;

	strict_modes = true;
	snprintf(path, sizeof(path), "%s/strict-test.json", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	CHECK(fd >= 0);
	close(fd);

	CHECK_INTEQ(chmod(path, 0666), 0);
	CHECK_INTEQ(strict_check_path(path, &reason), -EPERM);
	/* the file itself is checked first, so the message names it */
	CHECK(reason && strstr(reason, "strict-test.json is writable by others (mode 0666)"));
	free(reason);

	CHECK_INTEQ(chmod(path, 0620), 0);
	CHECK_INTEQ(strict_check_path(path, &reason), -EPERM);
	CHECK(reason && strstr(reason, "is writable by its group (mode 0620)"));
	free(reason);

	/* a root-owned 0644 file passes unless a directory above it is lax */
	CHECK_INTEQ(chmod(path, 0644), 0);
	if (strict_check_path(path, &reason) < 0) {
		CHECK(reason && strstr(reason, "directory "));
		fprintf(stderr, "note: %s\n", reason);
	}
	free(reason);

	strict_modes = false;
	CHECK_INTEQ(chmod(path, 0666), 0);
	CHECK_INTEQ(strict_check_path(path, &reason), 0);
	unlink(path);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SCHED_DIR\n", argv[0]);
		return 2;
	}
	test_parent_object_tunables_from_btf(argv[1]);
	if (geteuid() == 0)
		test_strict_modes_refuse_writable_files(argv[1]);
	else
		printf("not root: ownership checks skipped\n");
	return test_main_end("test-sched-info");
}
