/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scxd cells: give each child scheduler its own CPUs, sized by its weight.
 *
 * For whom: a cgroup (or the root) whose children must not disturb each
 * other's caches and run queues: each child cgroup runs its own scheduler
 * on CPUs no sibling uses, the way scx_qmap splits off exclusive CPUs and
 * sched-ext's mitosis builds cells.
 *
 * Policy. The CPUs we may use (all of them at root; as a child, the ones
 * our parent granted us, or all of them where the kernel has no CPU
 * delegation) are laid out in id order on a line, each CPU one unit long.
 * Every attached child gets a stretch of that line proportional to its
 * cgroup's cpu.weight, children in attach order, none shorter than an
 * eighth of a CPU. A CPU wholly inside a child's stretch is that child's
 * alone; a CPU where two stretches meet (or holds several short ones) is
 * time-shared by their owners in proportion to the part each covers, by a
 * per-CPU virtual time. A CPU runs nothing of a child that does not own
 * part of it. The layout is recomputed every @refresh_ms, and at once when
 * a child attaches or detaches or our own grant changes; weights are
 * re-read each time.
 *
 * Our own tasks (@self_weight 0, the default) have no stretch: they run
 * on a CPU whose owners have nothing to run, and on any CPU once they
 * have waited @starve_us, so per-CPU kernel threads and the loader never
 * starve. With @self_weight > 0 they are one more contender laid out
 * after the children. Among themselves they are ordered by virtual time
 * as in vtime.
 *
 * Enforcement. Where the kernel has CPU delegation (scxd_caps_supported())
 * each child is granted ENQ_IMMED and ENQ on its CPUs and PREEMPT on the
 * ones it has alone, and everything is revoked elsewhere, so its local
 * inserts, kicks and preemptions elsewhere are refused by the kernel and
 * land in its global DSQ, which we serve only on its CPUs. Without it
 * (compat) we only choose where to call scx_bpf_sub_dispatch(): a child's
 * ops.select_cpu() can still put a waking task straight onto an idle CPU
 * of a sibling, for one slice.
 *
 * Example: on 4 CPUs, children A (cpu.weight 200) and B (100) get 2.67 and
 * 1.33 CPUs: A has CPUs 0-1, B has CPU 3, and CPU 2 runs A two thirds and
 * B one third of the time. Eight children of equal weight share each CPU
 * in pairs. tests/guest/sched checks 1, 2, 4 and 8 saturated children to
 * 10% of their weight's share and that no child's tasks are seen on CPUs
 * it does not own.
 *
 * Trade-offs: not work-conserving between children, by design: a child's
 * idle CPUs stay idle for its siblings (they go to our own tasks). A
 * child whose tasks may not run on its CPUs (affinity) waits for the
 * rescue the kernel gives starved children, or forever without it.
 *
 * Roles.
 *  - root: over every CPU; with no child attached it is a plain weighted
 *    vtime scheduler for all tasks.
 *  - parent: up to MAX_CHILDREN (64) children, at most 8 per CPU we have.
 *  - leaf: as a child (of wparent, of another cells), the same over the
 *    cgroup's tasks and the CPUs granted to it.
 *
 * Tunables:
 *  slice_us	 slice of a child's turn and of our own tasks (20000)
 *  fill_slice_us slice of our own tasks while children are attached (5000)
 *  starve_us	 longest wait of our own tasks before any CPU serves them
 *		 (20000)
 *  self_weight	 our own tasks' weight as a contender for CPUs; 0: none,
 *		 they fill idle CPUs (0)
 *  refresh_ms	 period of re-reading weights and grants (100)
 *  sub_cgroup_id set by the loader when run as a child
 */
#include <scxd/common.bpf.h>

char _license[] SEC("license") = "GPL";

const volatile bool scxd_can_host_children = true;
const volatile bool scxd_grants_cpus = true;

const volatile u64 slice_us = 20000;
const volatile u64 fill_slice_us = 5000;
const volatile u64 starve_us = 20000;
const volatile u32 self_weight;
const volatile u32 refresh_ms = 100;
const volatile u64 sub_cgroup_id;

UEI_DEFINE(uei);

#define SELF_DSQ	0
#define MAX_CHILDREN	64
#define SELF		MAX_CHILDREN	/* contender index of our own tasks */
#define NR_CONTENDERS	(MAX_CHILDREN + 1)
#define CSLOTS		128		/* arrays by contender, power of two */
#define CI(x)		((x) & (CSLOTS - 1))
#define MAX_CPUS	512		/* power of two */
#define UNIT		1024		/* one CPU on the line */
#define MIN_STRETCH	(UNIT / 8)
#define MAX_OWNERS	10		/* 8 whole minimal stretches + 2 ends */

/* An attached child; slot order is the layout order. */
struct child {
	u64 cgid;			/* 0: free slot */
	u32 weight;
};

static struct child children[MAX_CHILDREN];
static u32 nr_children;

/* Who owns how much of one CPU. */
struct cell_cpu {
	u32 nr;
	u16 who[MAX_OWNERS];		/* contender index */
	u16 share[MAX_OWNERS];		/* of UNIT */
};

struct layout {
	u64 gen;
	struct cell_cpu cpu[MAX_CPUS];
	u64 cgid[CSLOTS];	/* cgroup of each child contender */
};

/* Two layouts: CPUs read layouts[cur], the timer writes the other one. */
static struct layout layouts[2];
static u32 cur;
static u64 layout_gen;
static bool dirty = true;
static bool grants_pending;
static u64 nr_grant_retries;	/* grants to a child not found yet */

/* What the CPU gave its last turn to, and each contender's vtime on it. */
struct cpu_ctx {
	u64 vtime[CSLOTS];
	u64 vnow;
	u64 since;
	u64 gen;			/* layout the vtimes belong to */
	u32 running_plus1;		/* contender + 1; 0: none */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cpu_ctx);
} cpu_ctxs SEC(".maps");

struct refresh_timer {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct refresh_timer);
} timers SEC(".maps");

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

static u64 self_vtime_now;

static u64 slice_ns(void)
{
	return slice_us * SCXD_NSEC_PER_USEC;
}

static u64 own_slice(void)
{
	if (nr_children)
		return fill_slice_us * SCXD_NSEC_PER_USEC;
	return scxd_queue_slice(slice_ns(), SELF_DSQ);
}

static struct cpu_ctx *this_cpu_ctx(void)
{
	u32 zero = 0;

	return bpf_map_lookup_elem(&cpu_ctxs, &zero);
}

static struct cell_cpu *cell_of(struct layout *l, s32 cpu)
{
	if (cpu < 0 || cpu >= MAX_CPUS)
		return NULL;
	return &l->cpu[cpu & (MAX_CPUS - 1)];
}

/* ---- layout (timer) ---- */

static u32 nr_cpus(void)
{
	u32 n = scx_bpf_nr_cpu_ids();

	return n < MAX_CPUS ? n : MAX_CPUS;
}

/*
 * The CPUs we may lay out: what our parent granted us (ENQ_IMMED, the base
 * cap) where the kernel delegates CPUs and the grant is not empty, else
 * all of them. Bit i of @avail[i / 64].
 */
static u32 read_avail(u64 *avail)
{
	struct bpf_cpumask *mask;
	u32 i, n = nr_cpus(), cnt = 0;
	bool all = true;

	if (sub_cgroup_id && scxd_caps_supported()) {
		mask = bpf_cpumask_create();
		if (mask) {
			if (!scxd_sub_caps(0, SCXD_CAP_ENQ_IMMED, mask) &&
			    !bpf_cpumask_empty((const struct cpumask *)mask))
				all = false;
			if (!all)
				bpf_for(i, 0, n)
					if (bpf_cpumask_test_cpu(i, (const struct cpumask *)mask))
						avail[(i / 64) & (MAX_CPUS / 64 - 1)] |= 1ULL << (i % 64);
			bpf_cpumask_release(mask);
		}
	}
	bpf_for(i, 0, n) {
		if (all)
			avail[(i / 64) & (MAX_CPUS / 64 - 1)] |= 1ULL << (i % 64);
		if (avail[(i / 64) & (MAX_CPUS / 64 - 1)] & (1ULL << (i % 64)))
			cnt++;
	}
	return cnt;
}

static void cell_add(struct cell_cpu *c, u32 who, u32 share)
{
	u32 nr = c->nr;

	if (nr >= MAX_OWNERS || !share)
		return;
	c->who[nr] = who;
	c->share[nr] = share;
	c->nr = nr + 1;
}

/*
 * Stretch lengths in UNITs: proportional to @w, none below MIN_STRETCH,
 * summing to @total exactly.
 */
static void size_stretches(u64 *q, const u32 *w, u32 nr, u64 total)
{
	u64 wsum = 0, raised = 0, above = 0, sum = 0, biggest = 0;
	u32 i, big = 0;

	bpf_for(i, 0, nr)
		wsum += w[CI(i)];
	if (!wsum)
		return;
	bpf_for(i, 0, nr) {
		u32 k = CI(i);

		q[k] = total * w[k] / wsum;
		if (q[k] < MIN_STRETCH) {
			raised += MIN_STRETCH - q[k];
			q[k] = MIN_STRETCH;
		} else {
			above += q[k] - MIN_STRETCH;
		}
	}
	/* take what the short ones were raised by from the longer ones */
	bpf_for(i, 0, nr) {
		u32 k = CI(i);

		if (raised && above && q[k] > MIN_STRETCH)
			q[k] -= (q[k] - MIN_STRETCH) * scxd_min(raised, above) / above;
		sum += q[k];
		if (q[k] > biggest) {
			biggest = q[k];
			big = k;
		}
	}
	/* rounding: the longest absorbs the difference */
	if (sum < total)
		q[CI(big)] += total - sum;
	else if (sum - total < q[CI(big)])
		q[CI(big)] -= sum - total;
}

/* Contender indices, weights and stretches of the next layout. */
struct plan {
	u32 who[CSLOTS];
	u32 w[CSLOTS];
	u64 q[CSLOTS];
	u64 avail[MAX_CPUS / 64];
	u32 cpu_at[MAX_CPUS];		/* n-th available CPU */
};

static struct plan plan;

/* Lay @nr contenders out over the available CPUs into @l. */
static void lay_out(struct layout *l, u32 nr, u32 n)
{
	u64 pos = 0, end, lo, hi;
	u32 i, k, who;

	bpf_for(i, 0, nr) {
		u32 c = CI(i);

		who = plan.who[c];
		end = pos + plan.q[c];
		bpf_for(k, pos / UNIT, n) {
			struct cell_cpu *cell;

			if ((u64)k * UNIT >= end)
				break;
			lo = scxd_max(pos, (u64)k * UNIT);
			hi = scxd_min(end, (u64)(k + 1) * UNIT);
			cell = cell_of(l, plan.cpu_at[k & (MAX_CPUS - 1)]);
			if (cell && hi > lo)
				cell_add(cell, who, hi - lo);
		}
		pos = end;
	}
}

/*
 * Grant each child ENQ_IMMED and ENQ where it owns part of a CPU and
 * PREEMPT where it owns all of it; revoke the rest of our CPUs. Each cap
 * is granted on its own: a parent that holds only some of them (wparent
 * grants ENQ_IMMED) passes on those. Revokes come first, so no CPU is
 * ever granted to two children exclusively.
 */
static u32 apply_grants(struct layout *l, u32 n, bool grant)
{
	struct bpf_cpumask *part, *whole, *other;
	u32 i, c, j, missed = 0;

	part = bpf_cpumask_create();
	whole = bpf_cpumask_create();
	other = bpf_cpumask_create();
	if (!part || !whole || !other)
		goto out;

	bpf_for(i, 0, MAX_CHILDREN) {
		u64 cgid = l->cgid[i];

		if (!cgid)
			continue;
		bpf_cpumask_clear(part);
		bpf_cpumask_clear(whole);
		bpf_cpumask_clear(other);
		bpf_for(c, 0, n) {
			u32 cpu = plan.cpu_at[c & (MAX_CPUS - 1)];
			struct cell_cpu *cell = cell_of(l, cpu);
			bool owns = false;

			if (!cell)
				continue;
			bpf_for(j, 0, MAX_OWNERS) {
				if (j >= cell->nr)
					break;
				if (cell->who[j] == i)
					owns = true;
			}
			if (!owns)
				bpf_cpumask_set_cpu(cpu, other);
			else if (cell->nr == 1)
				bpf_cpumask_set_cpu(cpu, whole);
			else
				bpf_cpumask_set_cpu(cpu, part);
		}
		if (!grant) {
			scxd_sub_revoke(cgid, SCXD_CAP_ALL, (const struct cpumask *)other);
			scxd_sub_revoke(cgid, SCXD_CAP_PREEMPT | SCXD_CAP_PERF,
					(const struct cpumask *)part);
			continue;
		}
		bpf_cpumask_or(part, (const struct cpumask *)part,
			       (const struct cpumask *)whole);
		/* -EPERM: we do not hold that cap everywhere, which is fine */
		if (scxd_sub_grant(cgid, SCXD_CAP_ENQ_IMMED, (const struct cpumask *)part) == -ENODEV ||
		    scxd_sub_grant(cgid, SCXD_CAP_ENQ, (const struct cpumask *)part) == -ENODEV ||
		    scxd_sub_grant(cgid, SCXD_CAP_PREEMPT, (const struct cpumask *)whole) == -ENODEV)
			missed++;
	}
out:
	if (part)
		bpf_cpumask_release(part);
	if (whole)
		bpf_cpumask_release(whole);
	if (other)
		bpf_cpumask_release(other);
	return missed;
}

/* Re-read weights and grants; build and publish a new layout if changed. */
static void refresh(void)
{
	struct layout *next = &layouts[(cur + 1) & 1], *now = &layouts[cur & 1];
	u32 i, k, n, nr = 0, cpus = nr_cpus();
	bool changed = dirty;

	dirty = false;
	__builtin_memset(plan.avail, 0, sizeof(plan.avail));
	n = read_avail(plan.avail);
	k = 0;
	bpf_for(i, 0, cpus)
		if (plan.avail[(i / 64) & (MAX_CPUS / 64 - 1)] & (1ULL << (i % 64)))
			plan.cpu_at[k++ & (MAX_CPUS - 1)] = i;

	bpf_for(i, 0, MAX_CHILDREN) {
		struct child *ch = &children[i];
		u64 cgid = ch->cgid;
		u32 w;

		if (!cgid)
			continue;
		w = scxd_cgroup_weight_by_id(cgid);
		if (w != ch->weight || now->cgid[i] != cgid)
			changed = true;
		ch->weight = w;
		plan.who[CI(nr)] = i;
		plan.w[CI(nr)] = w;
		nr++;
	}
	bpf_for(i, 0, MAX_CHILDREN)
		if (now->cgid[i] && children[i].cgid != now->cgid[i])
			changed = true;
	if (self_weight && nr) {
		plan.who[CI(nr)] = SELF;
		plan.w[CI(nr)] = self_weight;
		nr++;
	}
	if (!n)
		return;
	if (!changed)
		goto grant;

	bpf_for(i, 0, cpus)
		next->cpu[i & (MAX_CPUS - 1)].nr = 0;
	bpf_for(i, 0, MAX_CHILDREN)
		next->cgid[i] = children[i].cgid;
	if (nr) {
		size_stretches(plan.q, plan.w, nr, (u64)n * UNIT);
		lay_out(next, nr, n);
	}
	next->gen = ++layout_gen;

	/* take CPUs away first, so none is ever any two children's alone */
	if (scxd_caps_supported())
		apply_grants(next, n, false);
	cur = (cur + 1) & 1;
	grants_pending = true;
grant:
	/* a child is not always findable yet when it attaches: retry */
	if (scxd_caps_supported() && grants_pending) {
		grants_pending = apply_grants(&layouts[cur & 1], n, true) != 0;
		if (grants_pending)
			__sync_fetch_and_add(&nr_grant_retries, 1);
	}
}

static int refresh_timerfn(void *map, int *key, struct bpf_timer *timer)
{
	refresh();
	bpf_timer_start(timer, (u64)(refresh_ms ?: 1) * SCXD_NSEC_PER_MSEC, 0);
	return 0;
}

/* Re-lay out as soon as possible, from any context. */
static void refresh_soon(void)
{
	struct refresh_timer *t;
	u32 zero = 0;

	dirty = true;
	t = bpf_map_lookup_elem(&timers, &zero);
	if (t)
		bpf_timer_start(&t->timer, 0, 0);
}

/* ---- dispatch ---- */

static s32 owner_slot(struct cell_cpu *cell, u32 who)
{
	u32 j;

	bpf_for(j, 0, MAX_OWNERS) {
		if (j >= cell->nr)
			break;
		if (cell->who[j] == who)
			return j;
	}
	return -1;
}

/* Charge the contender that had this CPU since its turn began. */
static u32 charge_cpu(struct cpu_ctx *cctx, struct cell_cpu *cell, u64 now)
{
	u32 who_plus1 = cctx->running_plus1;
	s32 j;

	cctx->running_plus1 = 0;
	if (!who_plus1 || !cell)
		return who_plus1;
	j = owner_slot(cell, who_plus1 - 1);
	if (j >= 0 && j < MAX_OWNERS && cell->share[j])
		cctx->vtime[CI((who_plus1 - 1))] +=
			(now - cctx->since) * UNIT / cell->share[j];
	return who_plus1;
}

static void cpu_took(struct cpu_ctx *cctx, u32 who, u64 now)
{
	cctx->running_plus1 = who + 1;
	cctx->since = now;
	if (scxd_vtime_before(cctx->vnow, cctx->vtime[CI(who)]))
		cctx->vnow = cctx->vtime[CI(who)];
}

static void charge_task(struct task_struct *p, struct task_ctx *tctx, u64 now)
{
	p->scx.dsq_vtime += scxd_scale_inv(now - tctx->started_at, p->scx.weight);
	tctx->started_at = now;
}

/* @prev is one of ours, still runnable: keep it if ahead of our queue. */
static bool keep_own_prev(struct task_struct *prev, u64 now)
{
	struct task_ctx *tctx;

	if (!scxd_prev_is_queued(prev))
		return false;
	tctx = bpf_task_storage_get(&task_ctxs, prev, 0, 0);
	if (!tctx || !tctx->started_at)
		return false;
	charge_task(prev, tctx, now);
	if (!scxd_prev_before_head(prev->scx.dsq_vtime, SELF_DSQ))
		return false;
	prev->scx.slice = own_slice();
	return true;
}

static bool serve_own(struct task_struct *prev, u64 now)
{
	return keep_own_prev(prev, now) || scxd_shared_serve(SELF_DSQ);
}

static bool own_starving(u64 now)
{
	return scx_bpf_dsq_nr_queued(SELF_DSQ) &&
	       now - scxd_shared_served_at > starve_us * SCXD_NSEC_PER_USEC;
}

/*
 * Give the owners of this CPU their turns, earliest virtual time first;
 * true once one put something on it. @holder_plus1 is the contender
 * whose task used up its slice here and is still runnable: its child
 * finds nothing to dispatch, yet it has work, and keeping that task
 * running is its turn.
 */
static bool dispatch_owners(struct cpu_ctx *cctx, struct layout *l,
			    struct cell_cpu *cell, struct task_struct *prev,
			    u32 holder_plus1, u64 now)
{
	u32 tried = 0, t, j, best, who;
	bool ok;

	bpf_for(t, 0, MAX_OWNERS) {
		u64 best_vt = 0;

		if (t >= cell->nr)
			break;
		best = MAX_OWNERS;
		bpf_for(j, 0, MAX_OWNERS) {
			u64 vt;

			if (j >= cell->nr)
				break;
			if (tried & (1U << j))
				continue;
			vt = cctx->vtime[CI(cell->who[j])];
			if (best == MAX_OWNERS || scxd_vtime_before(vt, best_vt)) {
				best = j;
				best_vt = vt;
			}
		}
		if (best >= MAX_OWNERS)
			break;
		tried |= 1U << best;
		who = cell->who[best];
		if (who == SELF)
			ok = serve_own(prev, now);
		else if (who < MAX_CHILDREN && l->cgid[who])
			ok = scxd_sub_dispatch(l->cgid[who]) || who + 1 == holder_plus1;
		else
			ok = false;
		if (ok) {
			cpu_took(cctx, who, now);
			return true;
		}
		/* nothing to run banks no credit */
		if (scxd_vtime_before(cctx->vtime[CI(who)], cctx->vnow))
			cctx->vtime[CI(who)] = cctx->vnow;
	}
	return false;
}

void BPF_STRUCT_OPS(cells_dispatch, s32 cpu, struct task_struct *prev)
{
	struct layout *l = &layouts[cur & 1];
	struct cell_cpu *cell = cell_of(l, cpu);
	struct cpu_ctx *cctx = this_cpu_ctx();
	u64 now = bpf_ktime_get_ns();
	u32 holder_plus1, i;

	if (!cctx || !cell || !cell->nr) {
		/* nobody owns this CPU: all ours */
		if (cctx)
			cctx->running_plus1 = 0;
		serve_own(prev, now);
		return;
	}
	if (cctx->gen != l->gen) {
		/* new owners start even */
		cctx->gen = l->gen;
		cctx->running_plus1 = 0;
		bpf_for(i, 0, NR_CONTENDERS)
			cctx->vtime[CI(i)] = cctx->vnow;
	}
	holder_plus1 = charge_cpu(cctx, cell, now);
	if (!scxd_prev_is_queued(prev))
		holder_plus1 = 0;

	if (own_starving(now) && serve_own(prev, now))
		return;
	if (dispatch_owners(cctx, l, cell, prev, holder_plus1, now))
		return;
	/* the owners have nothing: our own tasks fill the CPU */
	serve_own(prev, now);
}

void BPF_STRUCT_OPS(cells_update_idle, s32 cpu, bool idle)
{
	struct cpu_ctx *cctx;

	if (!idle)
		return;
	cctx = this_cpu_ctx();
	if (cctx)
		charge_cpu(cctx, cell_of(&layouts[cur & 1], cpu), bpf_ktime_get_ns());
}

/* ---- our own tasks ---- */

s32 BPF_STRUCT_OPS(cells_select_cpu, struct task_struct *p, s32 prev_cpu,
		   u64 wake_flags)
{
	/* alone, a synchronous wakee may follow its waker as in vtime */
	bool alone = !nr_children && !sub_cgroup_id;

	return scxd_select_cpu(p, prev_cpu, wake_flags, own_slice(),
			       alone ? SELF_DSQ : SCXD_NO_FOLLOW, 1);
}

void BPF_STRUCT_OPS(cells_enqueue, struct task_struct *p, u64 enq_flags)
{
	u64 vtime = p->scx.dsq_vtime;

	if (scxd_vtime_before(vtime, self_vtime_now - slice_ns()))
		vtime = self_vtime_now - slice_ns();
	scxd_shared_queueing(SELF_DSQ);
	scxd_dsq_insert_vtime(p, SELF_DSQ, own_slice(), vtime, enq_flags);
	scxd_kick_idle_for(p);
}

void BPF_STRUCT_OPS(cells_running, struct task_struct *p)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (tctx)
		tctx->started_at = bpf_ktime_get_ns();
	if (scxd_vtime_before(self_vtime_now, p->scx.dsq_vtime))
		self_vtime_now = p->scx.dsq_vtime;
}

void BPF_STRUCT_OPS(cells_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (tctx && tctx->started_at)
		charge_task(p, tctx, bpf_ktime_get_ns());
}

/* @p is no longer ours: ops.dispatch()'s @prev may be a child's task now */
void BPF_STRUCT_OPS(cells_disable, struct task_struct *p)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (tctx)
		tctx->started_at = 0;
}

s32 BPF_STRUCT_OPS(cells_init_task, struct task_struct *p,
		   struct scx_init_task_args *args)
{
	if (!bpf_task_storage_get(&task_ctxs, p, 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE))
		return -ENOMEM;
	return 0;
}

void BPF_STRUCT_OPS(cells_enable, struct task_struct *p)
{
	p->scx.dsq_vtime = self_vtime_now;
}

/* ---- children ---- */

#if SCXD_HAVE_SUB_SCHED
s32 BPF_STRUCT_OPS(cells_sub_attach, struct scx_sub_attach_args *args)
{
	u64 cgid = args->ops->sub_cgroup_id;
	u32 i, max = nr_cpus() * (UNIT / MIN_STRETCH);

	if (nr_children >= max) {
		bpf_printk("cells: refusing child on cgroup %llu (%s): %u children on %u CPUs",
			   cgid, args->cgroup_path, nr_children, nr_cpus());
		return -ENOSPC;
	}
	bpf_for(i, 0, MAX_CHILDREN) {
		if (__sync_val_compare_and_swap(&children[i].cgid, 0, cgid) == 0) {
			children[i].weight = scxd_cgroup_weight_by_id(cgid);
			__sync_fetch_and_add(&nr_children, 1);
			refresh_soon();
			return 0;
		}
	}
	bpf_printk("cells: refusing child on cgroup %llu (%s): all %d slots taken",
		   cgid, args->cgroup_path, MAX_CHILDREN);
	return -ENOSPC;
}

void BPF_STRUCT_OPS(cells_sub_detach, struct scx_sub_detach_args *args)
{
	u64 cgid = args->ops->sub_cgroup_id;
	u32 i;

	bpf_for(i, 0, MAX_CHILDREN) {
		if (children[i].cgid == cgid) {
			children[i].cgid = 0;
			__sync_fetch_and_sub(&nr_children, 1);
			refresh_soon();
			return;
		}
	}
}
#endif

#if SCXD_HAVE_SUB_SCHED && SCXD_HAVE_SUB_CAPS_UPDATED
/* our parent changed what it grants us: lay our CPUs out again */
void BPF_STRUCT_OPS(cells_sub_caps_updated, const struct cpumask *cpus, u64 caps)
{
	refresh_soon();
}
#endif

s32 BPF_STRUCT_OPS_SLEEPABLE(cells_init)
{
	struct refresh_timer *t;
	u32 zero = 0;
	s32 ret;

	ret = scx_bpf_create_dsq(SELF_DSQ, -1);
	if (ret)
		return ret;
	t = bpf_map_lookup_elem(&timers, &zero);
	if (!t)
		return -ENOENT;
	bpf_timer_init(&t->timer, &timers, CLOCK_MONOTONIC);
	bpf_timer_set_callback(&t->timer, refresh_timerfn);
	return bpf_timer_start(&t->timer, 0, 0);
}

void BPF_STRUCT_OPS(cells_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCX_OPS_DEFINE(cells_ops,
	       .select_cpu		= (void *)cells_select_cpu,
	       .enqueue			= (void *)cells_enqueue,
	       .dispatch		= (void *)cells_dispatch,
	       .update_idle		= (void *)cells_update_idle,
	       .running			= (void *)cells_running,
	       .stopping		= (void *)cells_stopping,
	       .enable			= (void *)cells_enable,
	       .disable			= (void *)cells_disable,
	       .init_task		= (void *)cells_init_task,
#if SCXD_HAVE_SUB_SCHED
	       .sub_attach		= (void *)cells_sub_attach,
	       .sub_detach		= (void *)cells_sub_detach,
#endif
	       SCXD_OPS_SUB_CAPS_UPDATED(cells_sub_caps_updated)
	       .init			= (void *)cells_init,
	       .exit			= (void *)cells_exit,
	       .flags			= SCX_OPS_KEEP_BUILTIN_IDLE |
					  SCXD_OPS_HAS_CGROUP_WEIGHT,
	       .name			= "scxd_cells");
