// SPDX-License-Identifier: GPL-2.0
/*
 * Not a scheduler: an object with the globals a parent-capable scheduler
 * exposes, so the host tests can read real BTF without a kernel build.
 * One variable of each kind the tunable reader knows, plus one it must
 * skip (an array) and scxd's own (sub_cgroup_id, the marker).
 *
 * Built twice: with -DSETS_SUB_ATTACH as "wparent", a stand-in struct_ops
 * whose sub_attach is a program calling the kfunc scx_bpf_sub_grant (as a
 * parent that grants CPUs is built for a kernel with sub-schedulers); and
 * without, as "marked", whose struct_ops leaves sub_attach unset and which
 * only carries the marker (a parent built for a kernel without them).
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

struct sched_ext_ops {
	void *select_cpu;
	void *sub_attach;
	void *sub_detach;
	u64 flags;
	char name[128];
};

#ifdef SETS_SUB_ATTACH
extern int scx_bpf_sub_grant(u64 cgroup_id, u64 caps, const void *cpus)
	__attribute__((section(".ksyms")));

__attribute__((section("struct_ops/parent_sub_attach"), used))
int parent_sub_attach(void *ctx)
{
	return scx_bpf_sub_grant(sub_cgroup_id, 1, 0);
}
#endif

__attribute__((section("struct_ops/parent_select_cpu"), used))
int parent_select_cpu(void *ctx)
{
	return 0;
}

__attribute__((section(".struct_ops.link"), used))
struct sched_ext_ops parent_ops = {
	.select_cpu = (void *)parent_select_cpu,
#ifdef SETS_SUB_ATTACH
	.sub_attach = (void *)parent_sub_attach,
#endif
	.name = "scxd_parent",
};

char _license[] __attribute__((section("license"), used)) = "GPL";
