/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one header every scxd scheduler includes.
 *
 * It pulls in the generated vmlinux.h and the kernel tree's own
 * tools/sched_ext/include/scx/common.bpf.h (found through -I, never
 * copied here), then our compat layer and the few helpers the
 * schedulers share. Anything two schedulers would otherwise both write
 * belongs here; anything only one uses stays in its .bpf.c.
 *
 * Conventions every scheduler follows, relied on by scxd and the tests:
 *  - tunables are "const volatile" globals in .rodata with defaults that
 *    work, so a loader lists them from BTF and may set them before load;
 *  - exit information is recorded in a .data global named "uei"
 *    (struct user_exit_info) by ops.exit();
 *  - objects that can host child schedulers define
 *    "const volatile bool scxd_can_host_children = true";
 *  - parents that grant their children CPUs (scxd_sub_grant()) where the
 *    kernel delegates CPUs define "const volatile bool scxd_grants_cpus
 *    = true";
 *  - counters worth reading from outside are u64 globals (or arrays of
 *    them) in .bss named "stat_*"; sched-run prints them when the
 *    scheduler is detached, and the benchmarks keep them with their
 *    figures.
 */
#ifndef __SCXD_COMMON_BPF_H
#define __SCXD_COMMON_BPF_H

/*
 * In cpu form, keep the SCX_* enum constants vmlinux.h's own: newer trees'
 * scx/enums.bpf.h turns them into .rodata variables that a loader must
 * fill in. cid-form objects take those variables, and scxd and sched-run
 * fill them from the running kernel's BTF (see compat.bpf.h).
 */
#if !defined(SCXD_CID) || !SCXD_CID
#define __SCX_ENUMS_BPF_H
#endif
#include <scx/common.bpf.h>
#include <bpf/bpf_core_read.h>
#include "compat.bpf.h"

#define SCXD_WEIGHT_DFL		100	/* cgroup cpu.weight and task weight at nice 0 */
#define SCXD_NSEC_PER_USEC	1000ULL
#define SCXD_NSEC_PER_MSEC	1000000ULL

static __always_inline bool scxd_vtime_before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

/* @ns of CPU time charged at @weight, in the vtime of weight 100. */
static __always_inline u64 scxd_scale_inv(u64 ns, u32 weight)
{
	return ns * SCXD_WEIGHT_DFL / (weight ?: 1);
}

static __always_inline u64 scxd_min(u64 a, u64 b)
{
	return a < b ? a : b;
}

static __always_inline u64 scxd_max(u64 a, u64 b)
{
	return a > b ? a : b;
}

/* Count @ns in a log2 histogram of microseconds: bucket b holds [2^b, 2^(b+1)) us. */
#define SCXD_HIST_BUCKETS	20

static __always_inline void scxd_stat_hist(u64 *hist, u64 ns)
{
	u64 us = ns / SCXD_NSEC_PER_USEC;
	u32 b;

	for (b = 0; b < SCXD_HIST_BUCKETS - 1 && us > 1; b++)
		us >>= 1;
	__sync_fetch_and_add(&hist[b], 1);
}

/*
 * Wake an idle CPU @p may run on, so that a task we just queued on a
 * shared DSQ does not wait for a busy CPU to get round to it. Idle CPUs
 * in sched_ext do not look for work by themselves.
 */
static __always_inline void scxd_kick_idle_for(const struct task_struct *p)
{
	s32 cpu = scxd_pick_idle(p, SCXD_CID ? scxd_task_cpu(p) : -1, NULL);

	if (cpu >= 0)
		scxd_kick_cpu(cpu, SCX_KICK_IDLE);
}

/*
 * When the tasks waiting on a scheduler's shared queue were last served.
 * A CPU serves that queue only when its local DSQ runs dry, and a
 * synchronous wakee that follows its waker (below) keeps the waker's CPU
 * from running dry; so following is allowed only while the queue is
 * empty or some CPU took a task from it less than a quarter of a slice
 * ago. A waiter then waits at most about that long before hand-offs stop
 * passing it by, while a ping-pong pair keeps its CPU (and its caches,
 * and the IPIs a migration costs) as long as everyone is being served.
 * The clock is reset when the queue goes from empty to non-empty and
 * whenever a CPU takes a task from it; races between CPUs move it by a
 * few microseconds either way.
 */
static u64 scxd_shared_served_at;

/* Call before queueing a task on the shared queue @dsq_id. */
static __always_inline void scxd_shared_queueing(u64 dsq_id)
{
	if (!scx_bpf_dsq_nr_queued(dsq_id))
		scxd_shared_served_at = bpf_ktime_get_ns();
}

/* Take the head of the shared queue @dsq_id; true if there was one. */
static __always_inline bool scxd_shared_serve(u64 dsq_id)
{
	if (!scxd_dsq_move_to_local(dsq_id))
		return false;
	scxd_shared_served_at = bpf_ktime_get_ns();
	return true;
}

/* Has a task waited on @dsq_id unserved for over a quarter of @slice? */
static __always_inline bool scxd_shared_starving(u64 dsq_id, u64 slice)
{
	return scx_bpf_dsq_nr_queued(dsq_id) &&
	       bpf_ktime_get_ns() - scxd_shared_served_at > slice / 4;
}

/*
 * ops.select_cpu() of most of the collection. A task that finds an idle
 * CPU goes straight to its local DSQ with @slice. A synchronous wakee
 * (the waker is about to block, as in a pipe or futex hand-off) queues
 * behind its waker on the waker's CPU when fewer than @depth tasks wait
 * there and the scheduler's own queue @shared_dsq is being served
 * (!scxd_shared_starving()), so that it starves nobody; pass
 * SCXD_NO_FOLLOW for @shared_dsq where it must never (as a child: the
 * parent decides who runs on a busy CPU).
 */
#define SCXD_NO_FOLLOW	(~0ULL)

static __always_inline s32 scxd_select_cpu(struct task_struct *p, s32 prev_cpu,
					   u64 wake_flags, u64 slice,
					   u64 shared_dsq, u32 depth)
{
	bool is_idle = false;
	s32 cpu, this_cpu;

	cpu = scxd_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	if (is_idle) {
		scxd_dsq_insert(p, SCX_DSQ_LOCAL, slice, SCXD_ENQ_IDLE);
		return cpu;
	}
	if (shared_dsq == SCXD_NO_FOLLOW || !(wake_flags & SCX_WAKE_SYNC) ||
	    scxd_shared_starving(shared_dsq, slice))
		return cpu;

	this_cpu = scxd_this_cpu();
	if (scxd_task_allows(p, this_cpu) &&
	    scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL_ON | this_cpu) < depth) {
		scxd_dsq_insert(p, SCX_DSQ_LOCAL, slice, 0);
		return this_cpu;
	}
	return cpu;
}

/*
 * A slice for a task about to wait on @dsq_id: @slice divided by the
 * number of tasks already waiting there, so that a task queueing behind
 * n others waits for about one @slice in all rather than n of them,
 * but never below @slice / 8, which bounds the context switches paid
 * for it. With nobody waiting it is @slice.
 */
static __always_inline u64 scxd_queue_slice(u64 slice, u64 dsq_id)
{
	u64 n = scx_bpf_dsq_nr_queued(dsq_id);

	return n > 1 ? scxd_max(slice / n, slice / 8) : slice;
}

/*
 * ops.dispatch() runs when @prev's slice ran out but before @prev is
 * queued again, so a scheduler that always takes the head of its queue
 * alternates strictly between @prev and the head, whatever their
 * weights. Call this with @prev's current key (already charged for the
 * slice it just used): true if @prev should keep the CPU because it is
 * still ahead of everything queued on @dsq_id. The caller then refills
 * @prev's slice.
 */
static __always_inline bool scxd_prev_is_queued(const struct task_struct *prev)
{
	return prev && (prev->scx.flags & SCX_TASK_QUEUED);
}

/*
 * ops.dispatch() found nothing to run on @cpu. If @prev does not go on
 * either, the CPU goes idle; in cid form it may have been claimed from
 * our idle set and kicked, and an idle CPU that stays idle is no
 * transition the kernel reports, so give it back (compat.bpf.h).
 */
static __always_inline void scxd_dispatch_empty(s32 cpu, const struct task_struct *prev)
{
	if (SCXD_CID && !scxd_prev_is_queued(prev))
		scxd_note_idle(cpu, true);
}

static __always_inline bool scxd_prev_before_head(u64 prev_key, u64 dsq_id)
{
	struct task_struct *q;
	bool before = true;	/* nothing queued: keep it */

	bpf_for_each(scx_dsq, q, dsq_id, 0) {
		before = scxd_vtime_before(prev_key, q->scx.dsq_vtime);
		break;
	}
	return before;
}

/*
 * cpu.weight of cgroup @cgrp as the cpu controller sees it (1..10000,
 * 100 by default and for cgroups without the cpu controller enabled).
 * Reads the task group's weight, which CONFIG_EXT_GROUP_SCHED keeps up to
 * date (scxd_task_group_weight()); on kernels without it every cgroup
 * weighs the default.
 */
static __always_inline u32 scxd_cgroup_weight(struct cgroup *cgrp)
{
	struct cgroup_subsys_state *css;
	struct task_group *tg;
	u32 weight = 0;

	css = BPF_CORE_READ(cgrp, subsys[cpu_cgrp_id]);
	if (!css)
		return SCXD_WEIGHT_DFL;
	tg = container_of(css, struct task_group, css);
	weight = scxd_task_group_weight(tg);
	return weight ?: SCXD_WEIGHT_DFL;
}

/* Same, by cgroup id; SCXD_WEIGHT_DFL when the cgroup is gone. */
static __always_inline u32 scxd_cgroup_weight_by_id(u64 cgid)
{
	struct cgroup *cgrp;
	u32 weight;

	cgrp = bpf_cgroup_from_id(cgid);
	if (!cgrp)
		return SCXD_WEIGHT_DFL;
	weight = scxd_cgroup_weight(cgrp);
	bpf_cgroup_release(cgrp);
	return weight;
}

/*
 * A parent that gives its children turns on its CPUs rather than CPUs of
 * their own (wparent) grants each child, where the kernel delegates CPUs,
 * what those turns need on every CPU it holds (SCXD_CAP_DISPATCH): kicks
 * (ENQ_IMMED), and upstream ENQ for the moves its ops.dispatch() makes in
 * them; never PREEMPT. Without delegation this does nothing.
 */
static __always_inline void scxd_grant_lent(u64 cgid)
{
	scxd_mask *held;

	if (!scxd_caps_supported())
		return;
	held = scxd_mask_new(0);
	if (!held)
		return;
	/* what we hold ourselves: all CPUs at root */
	if (scxd_sub_caps(0, SCXD_CAP_ENQ_IMMED, held))
		scxd_mask_fill(held);
	scxd_sub_grant(cgid, SCXD_CAP_ENQ_IMMED, held);
	scxd_mask_free(held);
	if (!(SCXD_CAP_DISPATCH & SCXD_CAP_ENQ))
		return;
	held = scxd_mask_new(1);
	if (!held)
		return;
	if (!scxd_sub_caps(0, SCXD_CAP_ENQ, held))
		scxd_sub_grant(cgid, SCXD_CAP_ENQ, held);
	scxd_mask_free(held);
}

#endif	/* __SCXD_COMMON_BPF_H */
