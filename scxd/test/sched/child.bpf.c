// SPDX-License-Identifier: GPL-2.0
/*
 * Not a scheduler: a struct_ops object shaped like a child scheduler built
 * for a kernel with sub-scheduler support, for the host test of apply_open():
 * a stand-in sched_ext_ops with name and sub_cgroup_id (at an offset that
 * is not the first), .rodata tunables and sub_cgroup_id, and uei in .data.
 * No vmlinux.h: libbpf only opens it, it is never loaded.
 */
typedef unsigned int u32;
typedef unsigned long long u64;

struct sched_ext_ops {
	void *select_cpu;
	u64 flags;
	u64 sub_cgroup_id;
	char name[128];
};

struct user_exit_info {
	int kind;
	long long exit_code;
	char reason[128];
	char msg[1024];
};

const volatile u32 slice_us = 5000;
const volatile _Bool preempt = 1;
const volatile u64 sub_cgroup_id;
struct user_exit_info uei __attribute__((section(".data")));
u64 sink;

__attribute__((section(".struct_ops.link"), used))
struct sched_ext_ops child_ops = {
	.name = "scxd_child",
};

__attribute__((section("tc"), used))
int read_all(void *ctx)
{
	sink = slice_us + preempt + sub_cgroup_id + uei.kind;
	return 0;
}

char _license[] __attribute__((section("license"), used)) = "GPL";
