// SPDX-License-Identifier: GPL-2.0
/*
 * apply_open() on the host: the object is opened and configured, never
 * loaded. Proves tunables land at their .rodata offsets and the cgroup id
 * at sched_ext_ops.sub_cgroup_id's offset, found by BTF name — the part of
 * attaching a child that no guest without the patched kernel can reach.
 */

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>

#include "apply.h"
#include "strict.h"
#include "tests.h"
#include "util.h"

static uint64_t read_le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static struct bpf_map *rodata_map(struct bpf_object *obj)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		const char *n = bpf_map__name(m);
		size_t l = strlen(n);

		if (bpf_map__is_internal(m) && l >= 7 && streq(n + l - 7, ".rodata"))
			return m;
	}
	return NULL;
}

static void test_child_gets_tunables_and_cgroup_id(const char *obj_path)
{
	struct tunable_value tv[] = { { "preempt", 0, 1 }, { "slice_us", 777, 4 } };
	struct sched_node node;
	struct apply_object o;
	char *reason = NULL;
	const unsigned char *ro, *st;
	size_t ro_size = 0, st_size = 0;

	sched_node_init(&node, "/w/a", "child", tv, 2);
	CHECK_INTEQ(apply_open(obj_path, NULL, &node, 4242, &o, &reason), 0);
	if (reason)
		fprintf(stderr, "apply_open: %s\n", reason);
	free(reason);
	if (!o.obj) {
		sched_node_done(&node);
		return;
	}
	CHECK_STREQ(o.ops_name, "scxd_child");
	CHECK(o.uei_offset != SIZE_MAX);

	ro = bpf_map__initial_value(rodata_map(o.obj), &ro_size);
	CHECK(ro && ro_size >= 16);
	/* slice_us at 0 (u32), preempt at 4 (bool), sub_cgroup_id at 8 (u64) */
	CHECK_INTEQ(read_le(ro + 0, 4), 777);
	CHECK_INTEQ(ro[4], 0);
	CHECK_INTEQ(read_le(ro + 8, 8), 4242);

	st = bpf_map__initial_value(o.st, &st_size);
	CHECK(st && st_size >= 24);
	/* sub_cgroup_id is the third member, after two 8-byte ones */
	CHECK_INTEQ(read_le(st + 16, 8), 4242);
	CHECK_INTEQ(read_le(st + 8, 8), 0);
	apply_object_done(&o);
	sched_node_done(&node);
}

static void test_root_leaves_sub_cgroup_id_zero(const char *obj_path)
{
	struct sched_node node;
	struct apply_object o;
	char *reason = NULL;
	const unsigned char *st;
	size_t st_size = 0;

	sched_node_init(&node, "/", "child", NULL, 0);
	CHECK_INTEQ(apply_open(obj_path, NULL, &node, 1, &o, &reason), 0);
	free(reason);
	if (!o.obj) {
		sched_node_done(&node);
		return;
	}
	st = bpf_map__initial_value(o.st, &st_size);
	CHECK(st && read_le(st + 16, 8) == 0);
	apply_object_done(&o);
	sched_node_done(&node);
}

static void test_unknown_tunable_is_refused(const char *obj_path)
{
	struct tunable_value tv[] = { { "nope", 1, 4 } };
	struct sched_node node;
	struct apply_object o;
	char *reason = NULL;

	sched_node_init(&node, "/", "child", tv, 1);
	CHECK_INTEQ(apply_open(obj_path, NULL, &node, 1, &o, &reason), -ENOENT);
	CHECK(reason && strstr(reason, "tunable nope not in .rodata"));
	free(reason);
	sched_node_done(&node);
}

static void test_child_needs_sub_cgroup_id_in_ops(const char *leaf_obj)
{
	struct sched_node node;
	struct apply_object o;
	char *reason = NULL;
	int r;

	/* the leaf test object has no struct_ops at all */
	sched_node_init(&node, "/w/a", "fifo", NULL, 0);
	r = apply_open(leaf_obj, NULL, &node, 4242, &o, &reason);
	CHECK_INTEQ(r, -ENOENT);
	CHECK(reason && strstr(reason, "has no struct_ops map"));
	free(reason);
	sched_node_done(&node);
}

/*
 * The maps apply_commit() pins beside the link: those the kernel empties
 * with their last user reference. In the collection only cells has one,
 * its layout timer's: unpinned, it stopped as soon as scxd closed the
 * object, and cells never laid its children out.
 */
static void test_timer_maps_are_pinned(const char *dir)
{
	static const char *const names[] = { "fifo", "vtime", "lat", "wparent", "pin", "cells" };

	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		_cleanup_free_ char *path = NULL, *pinned = NULL;
		struct bpf_object *obj;
		struct bpf_map *m;

		CHECK(asprintf(&path, "%s/%s.bpf.o", dir, names[i]) > 0);
		obj = bpf_object__open_file(path, NULL);
		CHECK(obj != NULL);
		if (!obj)
			continue;
		bpf_object__for_each_map(m, obj)
			if (apply_map_needs_pin(obj, m)) {
				char *n = NULL;

				CHECK(asprintf(&n, "%s%s", pinned ?: "", bpf_map__name(m)) > 0);
				free(pinned);
				pinned = n;
			}
		printf("%s: pins %s\n", names[i], pinned ?: "(no map)");
		if (streq(names[i], "cells"))
			CHECK_STREQ(pinned, "timers");
		else
			CHECK(pinned == NULL);
		bpf_object__close(obj);
	}
}

int main(int argc, char **argv)
{
	char child[4096], leaf[4096];

	if (argc < 2) {
		fprintf(stderr, "usage: %s SCHED_DIR [COLLECTION_DIR]\n", argv[0]);
		return 2;
	}
	strict_modes = false;
	snprintf(child, sizeof(child), "%s/child.bpf.o", argv[1]);
	snprintf(leaf, sizeof(leaf), "%s/fifo.bpf.o", argv[1]);
	test_child_gets_tunables_and_cgroup_id(child);
	test_root_leaves_sub_cgroup_id_zero(child);
	test_unknown_tunable_is_refused(child);
	test_child_needs_sub_cgroup_id_in_ops(leaf);
	if (argc > 2)
		test_timer_maps_are_pinned(argv[2]);
	return test_main_end("test-apply");
}
