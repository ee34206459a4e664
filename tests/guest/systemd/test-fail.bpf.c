/* SPDX-License-Identifier: GPL-2.0 */
/*
 * test-fail: a TEST-ONLY leaf scheduler that fails when a test asks it to.
 * Never part of the collection, never installed: tests/guest/systemd/run
 * hands the object into the guest and checks.sh copies it into scxd's
 * scheduler directory for as long as its checks run.
 *
 * What it is for: none of the collection's schedulers can be made to
 * error or stall on purpose, but scxd's handling of a child that exits
 * (exit reason in the journal, reattach with backoff, the cgroup's tasks
 * running on the parent meanwhile) needs one that does. The test controls
 * the failure by the name (comm) of a task it starts in the cgroup:
 *  - "scxd-fail":  every time such a task wakes up or is queued, the
 *    scheduler calls scx_bpf_error(): the kernel disables it with
 *    SCX_EXIT_ERROR_BPF;
 *  - "scxd-stall": such a task is queued on a DSQ nobody consumes; after
 *    timeout_ms (2 s) the per-scheduler watchdog disables it with
 *    SCX_EXIT_ERROR_STALL.
 * Every other task is served first come, first served as in fifo's leaf
 * role: an idle CPU is taken directly, everything else waits on our one
 * queue, which the parent drains when it picks us.
 *
 * Roles: leaf only (no sub_attach: the kernel refuses children below it).
 * As root it would work the same way, but a failure there takes the whole
 * machine back to the fair class; the tests never do that.
 *
 * Tunables:
 *  slice_us	  slice of every task (default 5000)
 *  sub_cgroup_id set by the loader to the cgroup id
 */
#include <scxd/common.bpf.h>

char _license[] SEC("license") = "GPL";

const volatile u64 slice_us = 5000;
const volatile u64 sub_cgroup_id;

UEI_DEFINE(uei);

#define RUN_DSQ		0
#define STALL_DSQ	1

/* Tasks that asked for trouble, for the exit message. */
u64 nr_failed_tasks, nr_stalled_tasks;

static __always_inline bool comm_is(const struct task_struct *p, const char *want)
{
	for (int i = 0; i < 16; i++) {
		if (p->comm[i] != want[i])
			return false;
		if (!want[i])
			return true;
	}
	return true;
}

/* True if @p was handled here (an error was raised or it was parked). */
static __always_inline bool trouble(struct task_struct *p, u64 enq_flags, bool enqueue)
{
	if (comm_is(p, "scxd-fail")) {
		__sync_fetch_and_add(&nr_failed_tasks, 1);
		scx_bpf_error("test-fail: task %d is named scxd-fail", p->pid);
		return false; /* still queue it: the kernel moves it to the parent */
	}
	if (comm_is(p, "scxd-stall")) {
		if (enqueue) {
			__sync_fetch_and_add(&nr_stalled_tasks, 1);
			scxd_dsq_insert(p, STALL_DSQ, SCX_SLICE_DFL, enq_flags);
		}
		return true;
	}
	return false;
}

static u64 slice_ns(void)
{
	return slice_us * SCXD_NSEC_PER_USEC;
}

s32 BPF_STRUCT_OPS(test_fail_select_cpu, struct task_struct *p, s32 prev_cpu,
		   u64 wake_flags)
{
	/* no direct dispatch for a task that must reach ops.enqueue */
	if (trouble(p, 0, false))
		return prev_cpu;
	return scxd_select_cpu(p, prev_cpu, wake_flags, slice_ns(), SCXD_NO_FOLLOW, 0);
}

void BPF_STRUCT_OPS(test_fail_enqueue, struct task_struct *p, u64 enq_flags)
{
	if (trouble(p, enq_flags, true))
		return;
	scxd_dsq_insert(p, RUN_DSQ, slice_ns(), enq_flags);
	scxd_kick_idle_for(p);
}

void BPF_STRUCT_OPS(test_fail_dispatch, s32 cpu, struct task_struct *prev)
{
	if (!scxd_dsq_move_to_local(RUN_DSQ))
		scxd_dispatch_empty(cpu, prev);
}

s32 BPF_STRUCT_OPS_SLEEPABLE(test_fail_init)
{
	s32 ret = scxd_init_cpus() ?: scx_bpf_create_dsq(RUN_DSQ, -1);

	return ret ?: scx_bpf_create_dsq(STALL_DSQ, -1);
}

void BPF_STRUCT_OPS(test_fail_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCXD_OPS_DEFINE(test_fail_ops,
	       .SCXD_OP(select_cpu)	= (void *)test_fail_select_cpu,
	       .enqueue			= (void *)test_fail_enqueue,
	       .dispatch		= (void *)test_fail_dispatch,
	       SCXD_OPS_CID_TRACKING
	       .init			= (void *)test_fail_init,
	       .exit			= (void *)test_fail_exit,
	       .timeout_ms		= 2000,
	       .name			= "scxd_test_fail");
