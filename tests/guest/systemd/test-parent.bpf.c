/* SPDX-License-Identifier: GPL-2.0 */
/*
 * test-parent: a TEST-ONLY parent scheduler that kills or starves its
 * children when a test asks it to. Never part of the collection, never
 * installed: detach-exit.sh copies it into scxd's scheduler directory for
 * as long as its checks run, as it does test-fail.
 *
 * What it is for: none of the collection's parents kills a child or
 * leaves one unserved, but scxd's reports of both (a child ended with
 * SCX_EXIT_PARENT_KILL, a child the kernel rescues) need one that does.
 * The test marks a child by its cgroup's cpu.weight, read when the child
 * attaches:
 *  - 7: killed with scx_bpf_sub_kill() by the first dispatch at least
 *    KILL_AFTER_NS after it attached, so that it runs a little first;
 *  - 9: never served: only the kernel's rescue runs its tasks.
 * Every other child is served round-robin after our own tasks, which are
 * served first come, first served.
 *
 * Roles: parent (of up to MAX_KIDS children) below a parent that serves
 * it; the tests never make it the root. Without sub-schedulers in the
 * kernel it is a FIFO leaf, which no test uses.
 */
#include <scxd/common.bpf.h>

char _license[] SEC("license") = "GPL";

const volatile bool scxd_can_host_children = true;
const volatile u64 sub_cgroup_id;

UEI_DEFINE(uei);

#define SELF_DSQ	0
#define MAX_KIDS	8
#define KILL_WEIGHT	7
#define STARVE_WEIGHT	9
#define KILL_AFTER_NS	(1000ULL * 1000 * 1000)
#define CLAIMING	((u64)-1)	/* a slot taken, its kid not written yet */

struct kid {
	u64 cgid;
	u64 attached_at;
	u32 weight;
};

struct kid kids[MAX_KIDS];
u32 next_kid;

s32 BPF_STRUCT_OPS(test_parent_select_cpu, struct task_struct *p, s32 prev_cpu,
		   u64 wake_flags)
{
	return scxd_select_cpu(p, prev_cpu, wake_flags, SCX_SLICE_DFL, SCXD_NO_FOLLOW, 0);
}

void BPF_STRUCT_OPS(test_parent_enqueue, struct task_struct *p, u64 enq_flags)
{
	scxd_dsq_insert(p, SELF_DSQ, SCX_SLICE_DFL, enq_flags);
	scxd_kick_idle_for(p);
}

#if SCXD_HAVE_SUB_SCHED
/* Serve kid @i, or kill it if it asked for that. True if a task was dispatched. */
static bool serve(u32 i, u64 now)
{
	struct kid *k = &kids[i % MAX_KIDS];
	u64 cgid = k->cgid;

	if (!cgid || cgid == CLAIMING || k->weight == STARVE_WEIGHT)
		return false;
	if (k->weight == KILL_WEIGHT) {
		if (now - k->attached_at >= KILL_AFTER_NS &&
		    __sync_val_compare_and_swap(&k->cgid, cgid, 0) == cgid) {
			scxd_sub_kill(cgid, "test-parent: cgroup %llu has cpu.weight %d", cgid,
				      KILL_WEIGHT);
			return false;
		}
	}
	return scxd_sub_dispatch(cgid);
}
#endif

void BPF_STRUCT_OPS(test_parent_dispatch, s32 cpu, struct task_struct *prev)
{
#if SCXD_HAVE_SUB_SCHED
	u64 now = bpf_ktime_get_ns();
	u32 i, start;
#endif

	if (scxd_dsq_move_to_local(SELF_DSQ))
		return;
#if SCXD_HAVE_SUB_SCHED
	start = __sync_fetch_and_add(&next_kid, 1);
	bpf_for(i, 0, MAX_KIDS) {
		if (serve(start + i, now))
			return;
	}
#endif
	scxd_dispatch_empty(cpu, prev);
}

#if SCXD_HAVE_SUB_SCHED
s32 BPF_STRUCT_OPS(test_parent_sub_attach, struct scx_sub_attach_args *args)
{
	u64 cgid = args->ops->sub_cgroup_id;
	u32 i;

	bpf_for(i, 0, MAX_KIDS) {
		/*
		 * Publish the cgroup id only once its mark is written: a slot
		 * freed by a kill and taken again must not show the new kid
		 * with the killed one's weight (on 7.3, where a child takes
		 * seconds to load, /tp/served was killed that way).
		 */
		if (__sync_val_compare_and_swap(&kids[i].cgid, 0, CLAIMING) == 0) {
			kids[i].weight = scxd_cgroup_weight_by_id(cgid);
			kids[i].attached_at = bpf_ktime_get_ns();
			__sync_lock_test_and_set(&kids[i].cgid, cgid);
			/* upstream, a child has no caps until granted */
			if (SCXD_CID)
				scxd_grant_lent(cgid);
			return 0;
		}
	}
	return -ENOSPC;
}

void BPF_STRUCT_OPS(test_parent_sub_detach, struct scx_sub_detach_args *args)
{
	u64 cgid = args->ops->sub_cgroup_id;
	u32 i;

	bpf_for(i, 0, MAX_KIDS) {
		if (kids[i].cgid == cgid)
			kids[i].cgid = 0;
	}
}
#endif

s32 BPF_STRUCT_OPS_SLEEPABLE(test_parent_init)
{
	return scxd_init_cpus() ?: scx_bpf_create_dsq(SELF_DSQ, -1);
}

void BPF_STRUCT_OPS(test_parent_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCXD_OPS_DEFINE(test_parent_ops,
	       .SCXD_OP(select_cpu)	= (void *)test_parent_select_cpu,
	       .enqueue			= (void *)test_parent_enqueue,
	       .dispatch		= (void *)test_parent_dispatch,
	       SCXD_OPS_CID_TRACKING
#if SCXD_HAVE_SUB_SCHED
	       .sub_attach		= (void *)test_parent_sub_attach,
	       .sub_detach		= (void *)test_parent_sub_detach,
#endif
	       .init			= (void *)test_parent_init,
	       .exit			= (void *)test_parent_exit,
	       .name			= "scxd_test_parent");
