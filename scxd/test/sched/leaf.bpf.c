// SPDX-License-Identifier: GPL-2.0
/*
 * Not a scheduler: the globals of a leaf-only scheduler (no
 * scxd_can_host_children marker) for the host tests.
 */
typedef unsigned int u32;
typedef unsigned long long u64;

const volatile u32 slice_us = 5000;
const volatile u64 sub_cgroup_id;

u64 sink;

__attribute__((section("tc"), used))
int read_all(void *ctx)
{
	sink = slice_us + sub_cgroup_id;
	return 0;
}

char _license[] __attribute__((section("license"), used)) = "GPL";
