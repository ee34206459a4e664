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
 * on a CPU whose owners have nothing to run, and every CPU gives them a
 * turn of @fill_slice_us at least every @starve_us while they wait, so
 * per-CPU kernel threads, daemons and the loaders never starve (a
 * CPU-bound task of ours takes up to a fifth of every CPU that way). With @self_weight > 0 they are one more contender laid out
 * after the children. Among themselves they are ordered by virtual time
 * as in vtime.
 *
 * Enforcement. Where the kernel has CPU delegation (scxd_caps_supported())
 * each child is granted ENQ_IMMED on its CPUs and ENQ and PREEMPT on the
 * ones it has alone, and everything is revoked elsewhere, so its local
 * inserts, kicks and preemptions elsewhere are refused by the kernel and
 * land in its global DSQ, which we serve only on its CPUs. Upstream (cid
 * form) a child also needs ENQ for the moves of the turns we lend it, so
 * there it holds ENQ on its shared CPUs too. Without delegation
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
 *  starve_us	 longest a CPU makes our own waiting tasks wait for a
 *		 turn of fill_slice_us (20000)
 *  self_weight	 our own tasks' weight as a contender for CPUs; 0: none,
 *		 they fill idle CPUs (0)
 *  refresh_ms	 period of re-reading weights and grants (100)
 *  sub_cgroup_id set by the loader when run as a child
 */
#define SCXD_OWN_UPDATE_IDLE	/* ops.update_idle() is ours */
#include <scxd/common.bpf.h>
#include <scxd/own-tasks.bpf.h>

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

/*
 * A layout: the contenders' stretches end to end on the line of our
 * available CPUs. Each CPU works out its own owners from it when the
 * layout changes (cell_refresh()).
 */
struct layout {
	u64 gen;
	u32 nr;				/* contenders */
	u32 who[CSLOTS];		/* contender index, in line order */
	u64 edge[CSLOTS];		/* where each stretch ends, in UNITs */
	u64 cgid[CSLOTS];		/* by child slot */
	u32 pos_of[MAX_CPUS];		/* CPU's place on the line, NO_POS if none */
	u32 cpu_at[MAX_CPUS];		/* CPU at each place */
	u32 n;				/* places */
};

#define NO_POS		(~0U)

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
	u64 own_turn_at;		/* our own tasks' last turn here began */
	u64 gen;			/* layout .cell and the vtimes belong to */
	struct cell_cpu cell;		/* this CPU's owners under it */
	u32 running_plus1;		/* contender + 1; 0: none */
	/* pick_owner()'s loop state, in memory: see struct plan */
	volatile u32 tried;		/* owners tried in this dispatch */
	volatile u32 best;
	volatile u64 best_vt;
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

/* ---- layout (timer) ---- */

/*
 * The timer's working state. Loop-carried values live here, in memory
 * (volatile), not in registers: the verifier tracks a register exactly,
 * so no two iterations of a loop carrying one would look alike to it and
 * it would unroll the loop to its limits.
 */
struct plan {
	u32 w[CSLOTS];
	u64 q[CSLOTS];			/* stretch, in UNITs */
	volatile u64 wsum, raised, above, sum, biggest, pos;
	volatile u32 big, nr, n, missed;
	volatile bool changed;
};

static struct plan plan;

static u32 nr_cpus(void)
{
	u32 n = scxd_nr_cpus();

	return n < MAX_CPUS ? n : MAX_CPUS;
}

/*
 * The CPUs we may lay out, into @l's places: what our parent granted us
 * (ENQ_IMMED, the base cap) where the kernel delegates CPUs and the grant
 * is not empty, else all of them. Returns how many.
 */
static u32 read_avail(struct layout *l)
{
	scxd_mask *mask = NULL;
	u32 i, n = nr_cpus();

	if (sub_cgroup_id && scxd_caps_supported()) {
		mask = scxd_mask_new(0);
		if (mask && (scxd_sub_caps(0, SCXD_CAP_ENQ_IMMED, mask) ||
			     scxd_mask_empty(mask))) {
			scxd_mask_free(mask);
			mask = NULL;
		}
	}
	plan.n = 0;
	bpf_for(i, 0, MAX_CPUS) {
		l->pos_of[i] = NO_POS;
		if (i >= n)
			continue;
		if (mask && !scxd_mask_test(i, mask))
			continue;
		l->pos_of[i] = plan.n;
		l->cpu_at[plan.n & (MAX_CPUS - 1)] = i;
		plan.n++;
	}
	if (mask)
		scxd_mask_free(mask);
	l->n = plan.n;
	return plan.n;
}

/* Children in slot order with their weights re-read, into @l and plan. */
static u32 weigh(struct layout *l, struct layout *now)
{
	u32 i;

	plan.nr = 0;
	bpf_for(i, 0, MAX_CHILDREN) {
		struct child *ch = &children[i];
		u64 cgid = ch->cgid;
		u32 w;

		l->cgid[i] = cgid;
		if (now->cgid[i] != cgid)
			plan.changed = true;
		if (!cgid)
			continue;
		w = scxd_cgroup_weight_by_id(cgid);
		if (w != ch->weight)
			plan.changed = true;
		ch->weight = w;
		l->who[CI(plan.nr)] = i;
		plan.w[CI(plan.nr)] = w;
		plan.nr++;
	}
	if (self_weight && plan.nr) {
		l->who[CI(plan.nr)] = SELF;
		plan.w[CI(plan.nr)] = self_weight;
		plan.nr++;
	}
	l->nr = plan.nr;
	return plan.nr;
}

/*
 * Stretch lengths in UNITs over @n places, into @l's edges: proportional
 * to the weights, none below MIN_STRETCH (taken from the longer ones),
 * summing to @n * UNIT exactly (the longest absorbs the rounding).
 */
static void size_stretches(struct layout *l, u32 nr, u32 n)
{
	u64 total = (u64)n * UNIT;
	u32 i;

	plan.wsum = plan.raised = plan.above = plan.sum = plan.biggest = 0;
	plan.big = 0;
	bpf_for(i, 0, nr)
		plan.wsum += plan.w[CI(i)];
	if (!plan.wsum)
		return;
	bpf_for(i, 0, nr) {
		u64 q = total * plan.w[CI(i)] / plan.wsum;

		if (q < MIN_STRETCH) {
			plan.raised += MIN_STRETCH - q;
			q = MIN_STRETCH;
		} else {
			plan.above += q - MIN_STRETCH;
		}
		plan.q[CI(i)] = q;
	}
	bpf_for(i, 0, nr) {
		u64 q = plan.q[CI(i)], raised = plan.raised, above = plan.above;

		if (raised && above && q > MIN_STRETCH)
			q -= (q - MIN_STRETCH) * scxd_min(raised, above) / above;
		plan.q[CI(i)] = q;
		plan.sum += q;
		if (q > plan.biggest) {
			plan.biggest = q;
			plan.big = i;
		}
	}
	if (plan.sum < total)
		plan.q[CI(plan.big)] += total - plan.sum;
	else if (plan.sum - total < plan.q[CI(plan.big)])
		plan.q[CI(plan.big)] -= plan.sum - total;
	plan.pos = 0;
	bpf_for(i, 0, nr) {
		plan.pos += plan.q[CI(i)];
		l->edge[CI(i)] = plan.pos;
	}
}

/*
 * Grant child @c (line order) of layout @l ENQ_IMMED on the CPUs its
 * stretch touches and ENQ and PREEMPT on those it covers whole (@grant),
 * or revoke what it must not have: everything elsewhere, all but
 * ENQ_IMMED where it shares. Upstream (cid form) the moves a child makes
 * in the turns we lend it need ENQ, so there it gets ENQ where it shares
 * too (SCXD_CAP_DISPATCH). On a shared CPU its inserts then wait in its
 * global DSQ for the turn the per-CPU vtime gives it. Each cap is granted on its own, so a parent that
 * holds only some of them (wparent grants ENQ_IMMED) passes on those;
 * -EPERM for the rest is expected. True if the child was not found.
 */
static bool grant_one(struct layout *l, u32 c, bool grant)
{
	scxd_mask *part, *whole, *other;
	u32 who = l->who[CI(c)], k;
	u64 start = c ? l->edge[CI(c - 1)] : 0, end = l->edge[CI(c)], cgid;
	bool missed = false;

	if (who >= MAX_CHILDREN)
		return false;
	cgid = l->cgid[CI(who)];
	if (!cgid)
		return false;
	part = scxd_mask_new(0);
	whole = scxd_mask_new(1);
	other = scxd_mask_new(2);
	if (!part || !whole || !other)
		goto out;
	bpf_for(k, 0, l->n) {
		u64 lo = (u64)k * UNIT, hi = lo + UNIT;
		u32 cpu = l->cpu_at[k & (MAX_CPUS - 1)];

		if (end <= lo || start >= hi)
			scxd_mask_set(cpu, other);
		else if (start <= lo && end >= hi)
			scxd_mask_set(cpu, whole);
		else
			scxd_mask_set(cpu, part);
	}
	if (!grant) {
		scxd_sub_revoke(cgid, SCXD_CAP_ALL, other);
		scxd_sub_revoke(cgid, (SCXD_CAP_ENQ | SCXD_CAP_PREEMPT | SCXD_CAP_PERF) &
				~SCXD_CAP_DISPATCH, part);
		goto out;
	}
	scxd_mask_or(part, whole);
	if (scxd_sub_grant(cgid, SCXD_CAP_ENQ_IMMED, part) == -ENODEV ||
	    scxd_sub_grant(cgid, SCXD_CAP_ENQ,
			   SCXD_CAP_DISPATCH & SCXD_CAP_ENQ ? part : whole) == -ENODEV ||
	    scxd_sub_grant(cgid, SCXD_CAP_PREEMPT, whole) == -ENODEV)
		missed = true;
out:
	if (part)
		scxd_mask_free(part);
	if (whole)
		scxd_mask_free(whole);
	if (other)
		scxd_mask_free(other);
	return missed;
}

/* Grant or revoke for every child of layout @l; how many were not found. */
static u32 apply_grants(struct layout *l, bool grant)
{
	u32 c;

	if (!scxd_caps_supported())
		return 0;
	plan.missed = 0;
	bpf_for(c, 0, l->nr)
		if (grant_one(l, c, grant))
			plan.missed++;
	return plan.missed;
}

/* Re-read weights and grants; build and publish a new layout if changed. */
static void refresh(void)
{
	struct layout *next = &layouts[(cur + 1) & 1], *now = &layouts[cur & 1];
	u32 n, nr;

	plan.changed = dirty;
	dirty = false;
	n = read_avail(next);
	if (n != now->n)
		plan.changed = true;
	nr = weigh(next, now);
	if (!n)
		return;
	if (!plan.changed) {
		/* a child is not always findable yet when it attaches: retry */
		if (grants_pending && !apply_grants(now, true))
			grants_pending = false;
		return;
	}
	if (nr)
		size_stretches(next, nr, n);
	next->gen = ++layout_gen;

	/* take CPUs away first, so that no CPU is two children's alone */
	apply_grants(next, false);
	cur = (cur + 1) & 1;
	grants_pending = apply_grants(next, true) != 0;
	if (grants_pending)
		__sync_fetch_and_add(&nr_grant_retries, 1);
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

/*
 * This CPU's owners under layout @l, into @cctx->cell: the stretches
 * that overlap its place on the line, and by how much. Each CPU does
 * this for itself once per layout; owners start even on their vtimes.
 */
static void cell_refresh(struct cpu_ctx *cctx, struct layout *l, s32 cpu)
{
	struct cell_cpu *cell = &cctx->cell;
	u32 c, k = cpu >= 0 && cpu < MAX_CPUS ? l->pos_of[cpu & (MAX_CPUS - 1)] : NO_POS;
	u64 lo = (u64)k * UNIT, hi = lo + UNIT;

	cctx->gen = l->gen;
	cctx->running_plus1 = 0;
	cell->nr = 0;
	if (k == NO_POS)
		return;
	bpf_for(c, 0, l->nr) {
		u64 start = c ? l->edge[CI(c - 1)] : 0, end = l->edge[CI(c)];
		u32 nr = cell->nr;

		if (start >= hi)
			break;
		if (end <= lo || nr >= MAX_OWNERS)
			continue;
		cell->who[nr] = l->who[CI(c)];
		cell->share[nr] = scxd_min(end, hi) - scxd_max(start, lo);
		cctx->vtime[CI(l->who[CI(c)])] = cctx->vnow;
		cell->nr = nr + 1;
	}
}

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
static u32 charge_cpu(struct cpu_ctx *cctx, u64 now)
{
	struct cell_cpu *cell = &cctx->cell;
	u32 who_plus1 = cctx->running_plus1;
	s32 j;

	cctx->running_plus1 = 0;
	if (!who_plus1)
		return 0;
	j = owner_slot(cell, who_plus1 - 1);
	if (j >= 0 && j < MAX_OWNERS && cell->share[j])
		cctx->vtime[CI(who_plus1 - 1)] += (now - cctx->since) * UNIT / cell->share[j];
	return who_plus1;
}

static void cpu_took(struct cpu_ctx *cctx, u32 who, u64 now)
{
	cctx->running_plus1 = who + 1;
	cctx->since = now;
	if (scxd_vtime_before(cctx->vnow, cctx->vtime[CI(who)]))
		cctx->vnow = cctx->vtime[CI(who)];
}

/* @prev is one of ours, still runnable: keep it if ahead of our queue. */
static bool keep_own_prev(struct task_struct *prev, u64 now)
{
	if (!scxd_prev_is_queued(prev) || !own_prev_charged(prev, now))
		return false;
	if (!scxd_prev_before_head(prev->scx.dsq_vtime, SELF_DSQ))
		return false;
	scxd_set_slice(prev, own_slice());
	return true;
}

static bool serve_own(struct task_struct *prev, u64 now)
{
	return keep_own_prev(prev, now) || scxd_shared_serve(SELF_DSQ);
}

/*
 * Is it our own tasks' turn on this CPU, whoever owns it? While they
 * wait, every CPU gives them a turn of @fill_slice_us at least every
 * @starve_us, during which they go first: they are per-CPU kernel
 * threads, the loaders, and at root the whole system's daemons. Short
 * ones all get through in one turn; a CPU-bound one takes at most
 * fill/(starve + fill) of each CPU, a fifth by default.
 */
static bool own_turn(struct cpu_ctx *cctx, u64 now)
{
	if (!scx_bpf_dsq_nr_queued(SELF_DSQ))
		return false;
	if (now - cctx->own_turn_at > (starve_us + fill_slice_us) * SCXD_NSEC_PER_USEC)
		cctx->own_turn_at = now;
	return now - cctx->own_turn_at < fill_slice_us * SCXD_NSEC_PER_USEC;
}

/*
 * The owner of this CPU with the earliest vtime not tried yet in this
 * dispatch, as an index into the cell; MAX_OWNERS if none is left.
 * Loop-carried values are kept in @cctx, see struct plan.
 */
static u32 pick_owner(struct cpu_ctx *cctx)
{
	struct cell_cpu *cell = &cctx->cell;
	u32 j;

	cctx->best = MAX_OWNERS;
	bpf_for(j, 0, MAX_OWNERS) {
		u64 vt;

		if (j >= cell->nr)
			break;
		if (cctx->tried & (1U << j))
			continue;
		vt = cctx->vtime[CI(cell->who[j])];
		if (cctx->best == MAX_OWNERS || scxd_vtime_before(vt, cctx->best_vt)) {
			cctx->best = j;
			cctx->best_vt = vt;
		}
	}
	return cctx->best;
}

/*
 * Give the owners of this CPU their turns, earliest vtime first; true
 * once one put something on it. @holder_plus1 is the contender whose task
 * used up its slice here and is still runnable: its child finds nothing
 * to dispatch, yet it has work, and keeping that task running is its
 * turn.
 */
static bool dispatch_owners(struct cpu_ctx *cctx, struct layout *l,
			    struct task_struct *prev, u32 holder_plus1, u64 now)
{
	struct cell_cpu *cell = &cctx->cell;
	u32 t, best, who;
	bool ok;

	cctx->tried = 0;
	bpf_for(t, 0, MAX_OWNERS) {
		if (t >= cell->nr)
			break;
		best = pick_owner(cctx);
		if (best >= MAX_OWNERS)
			break;
		cctx->tried |= 1U << best;
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
	struct cpu_ctx *cctx = this_cpu_ctx();
	u64 now = bpf_ktime_get_ns();
	u32 holder_plus1;

	if (!cctx) {
		if (!serve_own(prev, now))
			scxd_dispatch_empty(cpu, prev);
		return;
	}
	if (cctx->gen != l->gen)
		cell_refresh(cctx, l, cpu);
	if (!cctx->cell.nr) {
		/* nobody owns this CPU: all ours */
		if (!serve_own(prev, now))
			scxd_dispatch_empty(cpu, prev);
		return;
	}
	holder_plus1 = charge_cpu(cctx, now);
	if (!scxd_prev_is_queued(prev))
		holder_plus1 = 0;

	if (own_turn(cctx, now) && serve_own(prev, now))
		return;
	if (dispatch_owners(cctx, l, prev, holder_plus1, now))
		return;
	/* the owners have nothing: our own tasks fill the CPU */
	if (!serve_own(prev, now))
		scxd_dispatch_empty(cpu, prev);
}

void BPF_STRUCT_OPS(cells_update_idle, s32 cpu, bool idle)
{
	struct cpu_ctx *cctx;

	scxd_note_idle(cpu, idle);
	if (!idle)
		return;
	cctx = this_cpu_ctx();
	if (cctx && cctx->gen == layouts[cur & 1].gen)
		charge_cpu(cctx, bpf_ktime_get_ns());
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
	own_task_enqueue(p, enq_flags, SELF_DSQ, own_slice(), slice_ns());
}

void BPF_STRUCT_OPS(cells_running, struct task_struct *p)
{
	own_task_running(p, bpf_ktime_get_ns());
}

/* stopping, disable, init_task, enable: our own tasks (own-tasks.bpf.h) */
SCXD_OWN_TASK_OPS(cells)

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
void BPF_STRUCT_OPS(cells_sub_caps_updated, const scxd_cpus *cpus, u64 caps)
{
	SCXD_TOUCH_ARENA();
	refresh_soon();
}
#endif

s32 BPF_STRUCT_OPS_SLEEPABLE(cells_init)
{
	struct refresh_timer *t;
	u32 zero = 0;
	s32 ret;

	ret = scxd_init_cpus() ?: scx_bpf_create_dsq(SELF_DSQ, -1);
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

SCXD_OPS_DEFINE(cells_ops,
	       .SCXD_OP(select_cpu)	= (void *)cells_select_cpu,
	       .enqueue			= (void *)cells_enqueue,
	       .dispatch		= (void *)cells_dispatch,
	       .update_idle		= (void *)cells_update_idle,
	       .running			= (void *)cells_running,
	       .stopping		= (void *)cells_stopping,
	       .enable			= (void *)cells_enable,
	       .disable			= (void *)cells_disable,
	       .init_task		= (void *)cells_init_task,
	       SCXD_OPS_CID_TRACKING
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
