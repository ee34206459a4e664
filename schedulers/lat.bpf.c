/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scxd lat: short slices and a head start for tasks that sleep often.
 *
 * For whom: interactive and request-serving cgroups (desktops, RPC
 * servers, databases answering queries) that share CPUs with batch work
 * and care about wake-up-to-run latency more than throughput.
 *
 * Policy. Tasks are ordered by a deadline: their weighted virtual time
 * (as in vtime) plus their average burst, the CPU time they use between
 * waking up and going back to sleep, scaled by weight. A request handler
 * that runs 200us per request sorts ahead of a compiler that runs until
 * its slice ends, without being able to starve it: the compiler's
 * virtual time stops advancing while it waits, the handler's does not.
 * Slices are short (@slice_us) so a waiting task is never far from a
 * CPU. A task whose average burst is under @interactive_us that wakes up
 * and finds no idle CPU preempts the current task on its previous CPU
 * when nothing else is queued there (with @preempt).
 *
 * Example: 4 spinners and 4 tasks doing 1 ms of work every 10 ms on 4
 * CPUs: the spinners' bursts average 3 ms (the slice), the workers'
 * 1 ms, so a waking worker runs before any spinner waiting, and with
 * preemption within a few microseconds of its wake-up instead of up to
 * a 20 ms slice later under fifo.
 *
 * Trade-off: more context switches (3 ms slices instead of 20 ms) cost
 * CPU-bound tasks a few percent of throughput.
 *
 * Roles.
 *  - root: as above.
 *  - leaf: the same within the cgroup, but the parent decides when the
 *    cgroup runs: no queueing on busy CPUs and no preempting inserts.
 *    A waking task that finds no idle CPU asks for a turn instead: it
 *    waits in our queue and, where the parent granted SCX_CAP_PREEMPT,
 *    the CPU it is to run on is kicked with SCX_KICK_PREEMPT (or, when
 *    a task waits in that CPU's local queue, which the CPU would run
 *    without asking the parent, the next of the first 8 with none), so
 *    the parent's ops.dispatch() runs there now rather than when the
 *    task on it ends its slice, and the parent decides whether this
 *    cgroup's turn has come (wparent: yes while it is owed CPU time).
 *    Every wake-up asks, not only interactive ones: the parent's
 *    accounting, not ours, keeps a busy cgroup to its share, and 28% of
 *    the probe's wake-ups beside spinners (tests/bench/isolation) came
 *    after bursts measured past @interactive_us under a loaded TCG host
 *    and waited for a slice. Without the cap the kick is a plain one and
 *    changes nothing.
 *  - parent: no (no sub_attach).
 *
 * Tunables:
 *  slice_us	    slice length (default 3000)
 *  interactive_us  average burst below which a waking task may preempt
 *		    (default 1000)
 *  preempt	    allow that preemption (default true)
 *  sub_cgroup_id   set by the loader when run as a leaf
 *
 * Counters (stat_*): wake_hist, a log2 histogram in microseconds of the
 * delay from a task's wake-up to its running; turn_kicks, the kicks a
 * leaf made to ask its parent for a turn, and kicked_hist, wake_hist of
 * the wake-ups that kicked; kicked_here_hist, those of them that ran on
 * the CPU they kicked; kick_dispatch_hist, from a kick to our
 * ops.dispatch() on the kicked CPU (its parent's answer), and
 * kick_lost, kicks of a CPU whose previous kick got no such answer yet.
 */
#include <scxd/common.bpf.h>

char _license[] SEC("license") = "GPL";

const volatile u64 slice_us = 3000;
const volatile u64 interactive_us = 1000;
const volatile bool preempt = true;
const volatile u64 sub_cgroup_id;

UEI_DEFINE(uei);

u64 stat_wake_hist[SCXD_HIST_BUCKETS];
u64 stat_turn_kicks;
u64 stat_kicked_hist[SCXD_HIST_BUCKETS];
u64 stat_kick_dispatch_hist[SCXD_HIST_BUCKETS];
u64 stat_kicked_here_hist[SCXD_HIST_BUCKETS];
u64 stat_kick_lost;

#define MAX_KICK_CPUS	512
/* when we last kicked a CPU for a turn, until our ops.dispatch() runs there */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_KICK_CPUS);
	__type(key, u32);
	__type(value, u64);
} kicked_at SEC(".maps");

#define LAT_DSQ 0

static u64 vtime_now;

struct task_ctx {
	u64 vtime;		/* weighted CPU time; dsq_vtime holds the deadline */
	u64 started_at;		/* when it last got a CPU */
	u64 burst;		/* CPU time since it last woke up */
	u64 avg_burst;		/* EWMA of burst, 1/4 new */
	u64 woke_at;		/* when it last became runnable; 0 once running */
	bool kicked;		/* its wake-up kicked the parent for a turn */
	s32 kick_cpu;		/* the CPU it kicked */
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

/* Queue key: virtual time plus the average burst, both weighted. */
static u64 deadline_of(struct task_struct *p, struct task_ctx *tctx)
{
	return tctx->vtime + scxd_scale_inv(tctx->avg_burst, p->scx.weight);
}

static bool is_interactive(struct task_ctx *tctx)
{
	return tctx->avg_burst < interactive_us * SCXD_NSEC_PER_USEC;
}

s32 BPF_STRUCT_OPS(lat_select_cpu, struct task_struct *p, s32 prev_cpu,
		   u64 wake_flags)
{
	/* wake-ups that find no idle CPU are lat_enqueue()'s to place */
	return scxd_select_cpu(p, prev_cpu, wake_flags, slice_ns(),
			       SCXD_NO_FOLLOW, 0);
}

/*
 * The CPU a leaf kicks to ask its parent for a turn: @cpu, or the next
 * of the first few after it that @p may run on, whose local DSQ is
 * empty: a CPU with a task waiting there runs it without asking the
 * parent. -1 if none.
 */
static s32 turn_cpu(const struct task_struct *p, s32 cpu)
{
	u32 nr = scxd_nr_cpus(), i;
	s32 c;

	for (i = 0; i < 8 && i < nr; i++) {
		c = (cpu + i) % nr;
		if (scxd_task_allows(p, c) &&
		    !scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL_ON | c))
			return c;
	}
	return -1;
}

void BPF_STRUCT_OPS(lat_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);
	u64 credit = slice_ns();
	u64 vtime, *at;
	s32 cpu;
	u32 key;

	if (!tctx) {
		scxd_dsq_insert(p, LAT_DSQ, slice_ns(), enq_flags);
		return;
	}

	cpu = scxd_task_cpu(p);
	if (preempt && !sub_cgroup_id && (enq_flags & SCX_ENQ_WAKEUP) &&
	    is_interactive(tctx) &&
	    !scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL_ON | cpu)) {
		scxd_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns(),
				enq_flags | SCX_ENQ_PREEMPT);
		return;
	}
	/* a leaf asks its parent for a turn, see Roles */
	if (preempt && sub_cgroup_id && (enq_flags & SCX_ENQ_WAKEUP) &&
	    (cpu = turn_cpu(p, cpu)) >= 0) {
		scxd_kick_cpu(cpu, SCX_KICK_PREEMPT);
		tctx->kicked = true;
		tctx->kick_cpu = cpu;
		key = cpu;
		at = bpf_map_lookup_elem(&kicked_at, &key);
		if (at && __sync_lock_test_and_set(at, bpf_ktime_get_ns()))
			__sync_fetch_and_add(&stat_kick_lost, 1);
		__sync_fetch_and_add(&stat_turn_kicks, 1);
	}

	vtime = tctx->vtime;
	if (scxd_vtime_before(vtime, vtime_now - credit))
		vtime = vtime_now - credit;
	tctx->vtime = vtime;

	scxd_dsq_insert_vtime(p, LAT_DSQ, slice_ns(), deadline_of(p, tctx),
			      enq_flags);
	scxd_kick_idle_for(p);
}

static void charge(struct task_struct *p, struct task_ctx *tctx, u64 now)
{
	u64 ran = now - tctx->started_at;

	tctx->vtime += scxd_scale_inv(ran, p->scx.weight);
	tctx->burst += ran;
	tctx->started_at = now;
}

void BPF_STRUCT_OPS(lat_dispatch, s32 cpu, struct task_struct *prev)
{
	struct task_ctx *tctx;
	u32 key = scxd_this_cpu();
	u64 *at, t;

	at = bpf_map_lookup_elem(&kicked_at, &key);
	if (at && (t = __sync_lock_test_and_set(at, 0)))
		scxd_stat_hist(stat_kick_dispatch_hist, bpf_ktime_get_ns() - t);

	if (scxd_prev_is_queued(prev) && (tctx = lookup_task_ctx(prev)) &&
	    tctx->started_at) {
		charge(prev, tctx, bpf_ktime_get_ns());
		if (scxd_prev_before_head(deadline_of(prev, tctx), LAT_DSQ)) {
			scxd_set_slice(prev, slice_ns());
			return;
		}
	}
	if (!scxd_dsq_move_to_local(LAT_DSQ))
		scxd_dispatch_empty(cpu, prev);
}

void BPF_STRUCT_OPS(lat_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (tctx) {
		tctx->burst = 0;
		tctx->woke_at = bpf_ktime_get_ns();
	}
}

void BPF_STRUCT_OPS(lat_running, struct task_struct *p)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (!tctx)
		return;
	tctx->started_at = bpf_ktime_get_ns();
	if (tctx->woke_at) {
		scxd_stat_hist(stat_wake_hist, tctx->started_at - tctx->woke_at);
		if (tctx->kicked)
			scxd_stat_hist(stat_kicked_hist,
				       tctx->started_at - tctx->woke_at);
		if (tctx->kicked && tctx->kick_cpu == scxd_this_cpu())
			scxd_stat_hist(stat_kicked_here_hist,
				       tctx->started_at - tctx->woke_at);
		tctx->woke_at = 0;
		tctx->kicked = false;
	}
	if (scxd_vtime_before(vtime_now, tctx->vtime))
		vtime_now = tctx->vtime;
}

void BPF_STRUCT_OPS(lat_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (!tctx || !tctx->started_at)
		return;
	charge(p, tctx, bpf_ktime_get_ns());
	/*
	 * A task still runnable at the end of its slice has not finished its
	 * burst yet; let the average see it grow now rather than only when
	 * it finally sleeps, so a spinner loses its head start quickly.
	 */
	if (!runnable || tctx->burst > tctx->avg_burst)
		tctx->avg_burst = (tctx->avg_burst * 3 + tctx->burst) / 4;
}

void BPF_STRUCT_OPS(lat_enable, struct task_struct *p)
{
	struct task_ctx *tctx = lookup_task_ctx(p);

	if (tctx)
		tctx->vtime = vtime_now;
}

s32 BPF_STRUCT_OPS(lat_init_task, struct task_struct *p,
		   struct scx_init_task_args *args)
{
	if (!bpf_task_storage_get(&task_ctxs, p, 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE))
		return -ENOMEM;
	return 0;
}

s32 BPF_STRUCT_OPS_SLEEPABLE(lat_init)
{
	return scxd_init_cpus() ?: scx_bpf_create_dsq(LAT_DSQ, -1);
}

void BPF_STRUCT_OPS(lat_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCXD_OPS_DEFINE(lat_ops,
	       .SCXD_OP(select_cpu)	= (void *)lat_select_cpu,
	       .enqueue			= (void *)lat_enqueue,
	       .dispatch		= (void *)lat_dispatch,
	       .runnable		= (void *)lat_runnable,
	       .running			= (void *)lat_running,
	       .stopping		= (void *)lat_stopping,
	       .enable			= (void *)lat_enable,
	       .init_task		= (void *)lat_init_task,
	       SCXD_OPS_CID_TRACKING
	       .init			= (void *)lat_init,
	       .exit			= (void *)lat_exit,
	       .name			= "scxd_lat");
