/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scxd fifo: first come, first served, with the least work per decision.
 *
 * For whom: cgroups (or whole machines) whose tasks are alike and where
 * scheduling overhead matters more than fairness between them: batch
 * workers, build farms, pipelines of threads handing work to each other.
 *
 * Policy. A waking task that finds an idle CPU goes straight to that
 * CPU's local queue. A task woken synchronously (the waker is about to
 * block, as in a pipe or futex hand-off) is queued behind the waker on
 * the waker's CPU when fewer than @sync_depth tasks wait there and the
 * FIFO is being served (empty, or a CPU took from it in the last quarter
 * of a slice), so a ping-pong pair stays on one CPU and hands over
 * without an IPI or a migration, the way EEVDF's wake-affine does.
 * Everything else joins one FIFO queue that every CPU serves when its
 * local queue runs dry; a task whose slice ran out goes back to its own
 * CPU only while nobody waits in the FIFO, otherwise to the FIFO's tail,
 * so CPU-bound tasks rotate over all CPUs in arrival order. Every slice
 * is @slice_us long, with no weights.
 *
 * Why "being served" and not "empty": a pair that kept handing its CPU
 * over through the local queue would keep that CPU from ever running
 * dry, so the FIFO would only be served by the other CPUs at their slice
 * ends. With 4 ping-pong pairs, 4 spinners and 4 tasks sleeping 2 ms
 * every 0.5 ms on 4 vCPUs (TCG), following whenever the local queue was
 * short starved the sleepers (8-23 cycles/s between the four, once none
 * in 3 s). Never following while anyone waited kept them at 90-260 but
 * cost the pairs a migration at almost every hand-off: 8 pairs ran at
 * half EEVDF's rate. Following while the FIFO is served keeps both:
 * about 190 sleeper cycles/s, and about EEVDF's rate for the pairs.
 *
 * Trade-off: nice and cpu.weight are ignored; a task that never sleeps
 * gets as much as one that sleeps often. Pick vtime for that.
 *
 * Figure: on 8 pipe ping-pong pairs over 4 vCPUs (TCG) this is the
 * fastest of the collection; tests/bench/sched-ratio prints the ratio to
 * EEVDF measured on the same run.
 *
 * Roles.
 *  - root: as above, for every task not owned by a child.
 *  - leaf: the same over the cgroup's tasks. Set sub_cgroup_id (the
 *    loader does) so that a busy CPU is never taken by queueing behind
 *    its current task: only idle CPUs are taken directly, the rest goes
 *    through our FIFO, which the parent drains when it chooses us.
 *  - parent: no; it does not implement sub_attach, so children below it
 *    are refused by the kernel.
 *
 * Tunables:
 *  slice_us	  length of every slice (default 20000)
 *  sync_depth	  tasks allowed to wait on a waker's CPU for a synchronous
 *		  wake-up to be placed there, with the FIFO served
 *		  (default 1; 0 disables)
 *  sub_cgroup_id set by the loader to the cgroup id when run as a leaf
 */
#include <scxd/common.bpf.h>

char _license[] SEC("license") = "GPL";

const volatile u64 slice_us = 20000;
const volatile u32 sync_depth = 1;
const volatile u64 sub_cgroup_id;

UEI_DEFINE(uei);

#define FIFO_DSQ 0

static u64 slice_ns(void)
{
	return slice_us * SCXD_NSEC_PER_USEC;
}

s32 BPF_STRUCT_OPS(fifo_select_cpu, struct task_struct *p, s32 prev_cpu,
		   u64 wake_flags)
{
	return scxd_select_cpu(p, prev_cpu, wake_flags, slice_ns(),
			       sub_cgroup_id ? SCXD_NO_FOLLOW : FIFO_DSQ,
			       sync_depth);
}

void BPF_STRUCT_OPS(fifo_enqueue, struct task_struct *p, u64 enq_flags)
{
	s32 cpu = scxd_task_cpu(p);

	/* a waking task is better off where any CPU can take it */
	if (!sub_cgroup_id && !(enq_flags & SCX_ENQ_WAKEUP) &&
	    !scx_bpf_dsq_nr_queued(FIFO_DSQ) &&
	    !scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL_ON | cpu)) {
		scxd_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns(), enq_flags);
		return;
	}

	scxd_shared_queueing(FIFO_DSQ);
	scxd_dsq_insert(p, FIFO_DSQ, slice_ns(), enq_flags);
	scxd_kick_idle_for(p);
}

void BPF_STRUCT_OPS(fifo_dispatch, s32 cpu, struct task_struct *prev)
{
	if (!scxd_shared_serve(FIFO_DSQ))
		scxd_dispatch_empty(cpu, prev);
}

s32 BPF_STRUCT_OPS_SLEEPABLE(fifo_init)
{
	return scxd_init_cpus() ?: scx_bpf_create_dsq(FIFO_DSQ, -1);
}

void BPF_STRUCT_OPS(fifo_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCXD_OPS_DEFINE(fifo_ops,
	       .SCXD_OP(select_cpu)	= (void *)fifo_select_cpu,
	       .enqueue			= (void *)fifo_enqueue,
	       .dispatch		= (void *)fifo_dispatch,
	       SCXD_OPS_CID_TRACKING
	       .init			= (void *)fifo_init,
	       .exit			= (void *)fifo_exit,
	       .name			= "scxd_fifo");
