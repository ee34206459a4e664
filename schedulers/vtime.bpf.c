/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scxd vtime: weighted fair sharing by virtual time.
 *
 * For whom: general-purpose cgroups and machines where nice levels and
 * cpu.weight should mean what they mean under EEVDF: a task gets CPU in
 * proportion to its weight, whatever its neighbours do.
 *
 * Policy. Each task carries a virtual time that advances by the CPU time
 * it used divided by its weight (nice 0 = 100, nice -5 = 335, nice 5 = 29).
 * With @cgroup_weight on, that weight is further multiplied by
 * cpu.weight/100 of the task's cgroup, so a task in a cgroup of weight
 * 200 counts double. Runnable tasks wait in one queue ordered by virtual
 * time and every CPU takes the earliest when its local queue is empty. A
 * task that slept keeps at most @sleep_credit_us of credit, so waking up
 * after a long sleep cannot monopolise a CPU. Waking tasks that find an
 * idle CPU skip the queue (there is nobody to be fair to). A slice is
 * @slice_us divided by the number of tasks waiting (at least an eighth
 * of it), so a task that wakes up behind a crowd of CPU-bound ones waits
 * for about one slice, not one per task ahead of it.
 *
 * Example: one nice -5 and one nice 5 spinner pinned to the same CPU get
 * 335:29, i.e. 92% and 8%; three spinners of weights 100, 200, 300 on one
 * CPU get 1/6, 2/6 and 3/6. tests/guest/sched checks such shares to 10%.
 *
 * Trade-off: cgroup weights scale each task rather than the cgroup as a
 * whole, so a cgroup with many tasks still gets more than one with few;
 * to divide CPU between cgroups, make them children of wparent.
 *
 * Roles.
 *  - root: as above over every task not owned by a child.
 *  - leaf: the same over the cgroup's tasks; the parent decides when the
 *    cgroup runs, we decide which of its tasks. With sub_cgroup_id set we
 *    never queue behind a busy CPU's current task.
 *  - parent: no (no sub_attach).
 *
 * Tunables:
 *  slice_us	    slice length with at most one task waiting (default 20000)
 *  sleep_credit_us most virtual time a sleeper can bank (default 20000)
 *  cgroup_weight   scale task weight by its cgroup's cpu.weight (default true)
 *  sync_depth	    as in fifo: queue a synchronous wakee on the waker's CPU
 *		    when fewer tasks wait there and our queue is served
 *		    (default 1, 0 disables)
 *  sub_cgroup_id   set by the loader when run as a leaf
 */
#include <scxd/common.bpf.h>

char _license[] SEC("license") = "GPL";

const volatile u64 slice_us = 20000;
const volatile u64 sleep_credit_us = 20000;
const volatile bool cgroup_weight = true;
const volatile u32 sync_depth = 1;
const volatile u64 sub_cgroup_id;

UEI_DEFINE(uei);

#define VTIME_DSQ 0

static u64 vtime_now;
static u64 weight_gen;		/* bumped when any cgroup's weight changes */

struct task_ctx {
	u64 started_at;
	u64 weight_gen;
	u32 cgroup_weight;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

static u64 slice_ns(void)
{
	return slice_us * SCXD_NSEC_PER_USEC;
}

static struct task_ctx *lookup_task_ctx(struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, p, 0, 0);
}

static void refresh_cgroup_weight(struct task_struct *p, struct task_ctx *tctx)
{
	struct cgroup *cgrp;

	tctx->weight_gen = weight_gen;
	tctx->cgroup_weight = SCXD_WEIGHT_DFL;
	if (!cgroup_weight)
		return;
	cgrp = scxd_task_cgroup(p);
	if (!cgrp)
		return;
	tctx->cgroup_weight = scxd_cgroup_weight(cgrp);
	bpf_cgroup_release(cgrp);
}

/*
 * @may_refresh: only from ops on @p itself; scx_bpf_task_cgroup() refuses
 * other tasks (ops.dispatch()'s @prev is not "being operated on").
 */
static u64 task_weight(struct task_struct *p, struct task_ctx *tctx,
		       bool may_refresh)
{
	if (may_refresh && tctx->weight_gen != weight_gen)
		refresh_cgroup_weight(p, tctx);
	return (u64)p->scx.weight * tctx->cgroup_weight / SCXD_WEIGHT_DFL ?: 1;
}

s32 BPF_STRUCT_OPS(vtime_select_cpu, struct task_struct *p, s32 prev_cpu,
		   u64 wake_flags)
{
	return scxd_select_cpu(p, prev_cpu, wake_flags, slice_ns(),
			       sub_cgroup_id ? SCXD_NO_FOLLOW : VTIME_DSQ,
			       sync_depth);
}

void BPF_STRUCT_OPS(vtime_enqueue, struct task_struct *p, u64 enq_flags)
{
	u64 credit = sleep_credit_us * SCXD_NSEC_PER_USEC;
	u64 vtime = p->scx.dsq_vtime;

	if (scxd_vtime_before(vtime, vtime_now - credit))
		vtime = vtime_now - credit;

	scxd_shared_queueing(VTIME_DSQ);
	scxd_dsq_insert_vtime(p, VTIME_DSQ, scxd_queue_slice(slice_ns(), VTIME_DSQ),
			      vtime, enq_flags);
	scxd_kick_idle_for(p);
}

static void charge(struct task_struct *p, struct task_ctx *tctx, u64 now,
		   bool may_refresh)
{
	scxd_set_vtime(p, p->scx.dsq_vtime +
		       (now - tctx->started_at) * SCXD_WEIGHT_DFL /
		       task_weight(p, tctx, may_refresh));
	tctx->started_at = now;
}

void BPF_STRUCT_OPS(vtime_dispatch, s32 cpu, struct task_struct *prev)
{
	struct task_ctx *tctx;

	if (scxd_prev_is_queued(prev) && (tctx = lookup_task_ctx(prev)) &&
	    tctx->started_at) {
		charge(prev, tctx, bpf_ktime_get_ns(), false);
		if (scxd_prev_before_head(prev->scx.dsq_vtime, VTIME_DSQ)) {
			scxd_set_slice(prev, scxd_queue_slice(slice_ns(), VTIME_DSQ));
			return;
		}
	}
	if (!scxd_shared_serve(VTIME_DSQ))
		scxd_dispatch_empty(cpu, prev);
}

void BPF_STRUCT_OPS(vtime_running, struct task_struct *p)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (tctx)
		tctx->started_at = bpf_ktime_get_ns();

	/* racy across CPUs; an error is bounded by one slice and temporary */
	if (scxd_vtime_before(vtime_now, p->scx.dsq_vtime))
		vtime_now = p->scx.dsq_vtime;
}

void BPF_STRUCT_OPS(vtime_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (tctx && tctx->started_at)
		charge(p, tctx, bpf_ktime_get_ns(), true);
}

void BPF_STRUCT_OPS(vtime_enable, struct task_struct *p)
{
	scxd_set_vtime(p, vtime_now);
}

s32 BPF_STRUCT_OPS(vtime_init_task, struct task_struct *p,
		   struct scx_init_task_args *args)
{
	struct task_ctx *tctx;

	tctx = bpf_task_storage_get(&task_ctxs, p, 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!tctx)
		return -ENOMEM;
	tctx->cgroup_weight = SCXD_WEIGHT_DFL;
	tctx->weight_gen = weight_gen - 1;	/* read it on first charge */
	return 0;
}

void BPF_STRUCT_OPS(vtime_cgroup_move, struct task_struct *p,
		    struct cgroup *from, struct cgroup *to)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (tctx)
		tctx->weight_gen = weight_gen - 1;
}

void BPF_STRUCT_OPS(vtime_cgroup_set_weight, struct cgroup *cgrp, u32 weight)
{
	__sync_fetch_and_add(&weight_gen, 1);
}

s32 BPF_STRUCT_OPS_SLEEPABLE(vtime_init)
{
	return scxd_init_cpus() ?: scx_bpf_create_dsq(VTIME_DSQ, -1);
}

void BPF_STRUCT_OPS(vtime_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCXD_OPS_DEFINE(vtime_ops,
	       .SCXD_OP(select_cpu)	= (void *)vtime_select_cpu,
	       .enqueue			= (void *)vtime_enqueue,
	       .dispatch		= (void *)vtime_dispatch,
	       .running			= (void *)vtime_running,
	       .stopping		= (void *)vtime_stopping,
	       .enable			= (void *)vtime_enable,
	       .init_task		= (void *)vtime_init_task,
	       SCXD_OPS_CID_TRACKING
	       .SCXD_OP(cgroup_move)	= (void *)vtime_cgroup_move,
	       .SCXD_OP(cgroup_set_weight) = (void *)vtime_cgroup_set_weight,
	       .init			= (void *)vtime_init,
	       .exit			= (void *)vtime_exit,
	       .flags			= SCXD_OPS_HAS_CGROUP_WEIGHT,
	       .name			= "scxd_vtime");
