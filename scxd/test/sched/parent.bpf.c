// SPDX-License-Identifier: GPL-2.0
/*
 * Not a scheduler: an object with the globals a parent-capable scheduler
 * exposes, so the host tests can read real BTF without a kernel build.
 * One variable of each kind the tunable reader knows, plus one it must
 * skip (an array) and scxd's own (sub_cgroup_id, the marker).
 */
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed char s8;

enum test_mode { MODE_FAIR, MODE_STRICT = 5, MODE_NEG = -2 };

const volatile u64 slice_us = 20000;
const volatile u32 weight_max = 10000;
const volatile s8 nice_bias = -3;
const volatile _Bool boost = 1;
const volatile enum test_mode mode = MODE_STRICT;
const volatile char label[8] = "x";
const volatile u64 sub_cgroup_id;
const volatile _Bool scxd_can_host_children = 1;

u64 sink;

__attribute__((section("tc"), used))
int read_all(void *ctx)
{
	sink = slice_us + weight_max + nice_bias + boost + mode + label[0] + sub_cgroup_id +
	       scxd_can_host_children;
	return 0;
}

char _license[] __attribute__((section("license"), used)) = "GPL";
