/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A parent's own tasks, for the parents that also run the tasks of their
 * own cgroup (cells, wparent). Those tasks queue on the parent's own DSQ
 * in vtime order among themselves, and each is charged, when it stops
 * or is looked at again in ops.dispatch(), by the time it ran since it
 * got the CPU, scaled by its weight. The tasks' clock, self_vtime_now,
 * follows the vtime of the last one that ran; a task that slept does not
 * come back further behind it than a slice.
 *
 * What that takes is the same in every such parent: a task storage map
 * with when each task last got a CPU, the clock, and the steps its
 * running, stopping, enable, disable, init_task and enqueue ops take.
 * A scheduler includes this after common.bpf.h, defines the ops that are
 * only these steps with SCXD_OWN_TASK_OPS() and calls the others from
 * its own ops, next to what it does of its own (wparent: the idle CPU its own
 * entity took; the turns between own tasks and children).
 */
#ifndef __SCXD_OWN_TASKS_BPF_H
#define __SCXD_OWN_TASKS_BPF_H

/* Per task: when it last got a CPU, to charge it by the time it used. */
struct task_ctx {
	u64 started_at;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

static u64 self_vtime_now;	/* the vtime of the last own task that ran */

/* Charge our own task @p for the time it ran since @tctx->started_at. */
static void charge_task(struct task_struct *p, struct task_ctx *tctx, u64 now)
{
	scxd_set_vtime(p, p->scx.dsq_vtime +
		       scxd_scale_inv(now - tctx->started_at, p->scx.weight));
	tctx->started_at = now;
}

/*
 * @prev, seen again by ops.dispatch(): charge it if it is one of ours
 * that ran (it has a start time); false if it is not.
 */
static bool own_prev_charged(struct task_struct *prev, u64 now)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, prev, 0, 0);

	if (!tctx || !tctx->started_at)
		return false;
	charge_task(prev, tctx, now);
	return true;
}

/* Queue @p on @dsq by its vtime, at most @lag behind the clock, for @slice. */
static void own_task_enqueue(struct task_struct *p, u64 enq_flags, u64 dsq, u64 slice, u64 lag)
{
	u64 vtime = p->scx.dsq_vtime;

	if (scxd_vtime_before(vtime, self_vtime_now - lag))
		vtime = self_vtime_now - lag;
	scxd_shared_queueing(dsq);
	scxd_dsq_insert_vtime(p, dsq, slice, vtime, enq_flags);
	scxd_kick_idle_for(p);
}

static void own_task_running(struct task_struct *p, u64 now)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (tctx)
		tctx->started_at = now;
	if (scxd_vtime_before(self_vtime_now, p->scx.dsq_vtime))
		self_vtime_now = p->scx.dsq_vtime;
}

static void own_task_stopping(struct task_struct *p)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (tctx && tctx->started_at)
		charge_task(p, tctx, bpf_ktime_get_ns());
}

/*
 * @p is no longer ours (it exits, or its cgroup got a scheduler of its
 * own): forget when it started, so that ops.dispatch(), whose @prev may
 * be a child's task, never mistakes it for one of ours.
 */
static void own_task_disable(struct task_struct *p)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (tctx)
		tctx->started_at = 0;
}

static s32 own_task_init(struct task_struct *p)
{
	if (!bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE))
		return -ENOMEM;
	return 0;
}

/* A task that becomes ours starts at the clock. */
static void own_task_enable(struct task_struct *p)
{
	scxd_set_vtime(p, self_vtime_now);
}

/*
 * The ops that are only the steps above: <sched>_stopping, _disable,
 * _init_task and _enable, for the scheduler's SCXD_OPS_DEFINE().
 */
#define SCXD_OWN_TASK_OPS(sched)						\
	void BPF_STRUCT_OPS(sched##_stopping, struct task_struct *p, bool runnable) \
	{									\
		own_task_stopping(p);						\
	}									\
	void BPF_STRUCT_OPS(sched##_disable, struct task_struct *p)		\
	{									\
		own_task_disable(p);						\
	}									\
	s32 BPF_STRUCT_OPS(sched##_init_task, struct task_struct *p,		\
			   struct scx_init_task_args *args)			\
	{									\
		return own_task_init(p);					\
	}									\
	void BPF_STRUCT_OPS(sched##_enable, struct task_struct *p)		\
	{									\
		own_task_enable(p);						\
	}

#endif /* __SCXD_OWN_TASKS_BPF_H */
