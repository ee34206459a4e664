/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scxd wparent: share CPU between our own tasks and child schedulers by
 * weight.
 *
 * For whom: the cgroup (or the root) that holds workloads administrators
 * want divided in fixed proportions, each child cgroup running its own
 * scheduler (fifo for a batch tier, lat for a serving tier, ...).
 *
 * Policy. The contenders are our own tasks, counted as one entity of
 * weight @self_weight, and every attached child scheduler, of weight
 * equal to its cgroup's cpu.weight (re-read every @weight_refresh turns)
 * or @child_weight when @child_weight_from_cgroup is off. Each entity has
 * a virtual time kept in a red-black tree; a CPU looking for work takes
 * the entity with the earliest, lets it dispatch (our own: the earliest
 * of our tasks by their own virtual time; a child: scx_bpf_sub_dispatch()),
 * and charges it, when that CPU next asks for work or goes idle, the time
 * it spent, divided by the entity's weight. Charges land in the entity's
 * record and are folded into its key when it next reaches the front of
 * the tree, so CPUs never need to find an entity in the tree by id;
 * picking one costs O(log n) in the number of children, not a scan.
 *
 * An entity with nothing to run is pushed behind the current virtual
 * time by one slice, doubling with each consecutive miss up to
 * 2^@idle_backoff_max slices, and a CPU gives up after @max_tries
 * entities per dispatch: idle children cost a bounded, shrinking number
 * of misses instead of a scan over all of them. A CPU that gives up runs
 * our own tasks, if any, rather than idle while they wait behind
 * hundreds of idle children.
 *
 * Example: children A (cpu.weight 200) and B (100) both saturated and
 * our own tasks idle: A gets 2/3 of the CPUs and B 1/3. If B goes idle,
 * A gets everything (work-conserving); when B wakes up, it is back in
 * turn within a few slices. tests/guest/sched checks saturated children
 * beside our own tasks to 10%: 1 child and ours at 100:100, 4 children
 * of 100..400, 16 of 100 and 200 (worst 1-5%); our own tasks' nice
 * shares, with and without the tree; and with 64 children every entity
 * gets a fifth of the entities' mean (ours, holding the system's other
 * tasks and the idle CPUs' wake-ups, about 3x).
 *
 * Our own entity is always charged for what it ran: for a turn of the
 * tree, for a task kept past its slice, and for a task put straight onto
 * an idle CPU, which no turn of the tree gave it.
 *
 * Wake-ups. The parent does not see a child's wake-ups (v1 keeps
 * enqueue on the child), and the tree pushes an entity it found idle
 * back by up to 2^@idle_backoff_max slices of virtual time, so that
 * hundreds of idle children cost a bounded number of misses. A
 * latency-sensitive child beside a busy sibling paid for both: its
 * waking task waited for one of the sibling's slices to end on some CPU
 * and then for the tree to come round to it. Two paths serve it now:
 *  - a child found idle, none of its tasks running, within
 *    2^@idle_backoff_max slices of its last turn, whose last turn
 *    ended within a quarter slice (it sleeps after short runs; a busy
 *    child found idle between CPUs is not one), is kept among up to 8
 *    wakers, which a CPU asking us for work offers a turn before the
 *    tree while the child is owed CPU time: its charged virtual time
 *    before that of the entity it would take the CPU from. Those turns
 *    are charged like any other and idling banks at most a quarter
 *    slice of credit behind the entity furthest ahead, so a child that
 *    wakes often loses its precedence once it has had its share. Both
 *    sides of that test are charges (entity_info.fair), never the
 *    tree's keys, which the push-backs of idle entities move ahead of
 *    what anyone was given: measured against those, a lat child using
 *    1% of the machine was found not owed on most of its kicks;
 *  - children hold SCX_CAP_PREEMPT on our CPUs (@child_preempt), so a
 *    child can ask for a turn with a preempting kick of the CPU its
 *    waking task is to run on (lat does): that CPU asks us for work at
 *    once, not when its task's slice ends, and the wakers come first.
 * tests/bench/isolation measures it: a lat child's wake-up latency
 * beside a fifo sibling saturating 4 vCPUs, against EEVDF's with
 * cpu.weight, and the same pair's 2:1 shares (tests/bench/README.md
 * has the figures). With the owed test on charges, 72% of the lat
 * child's kicked wake-ups beside spinners ran on the CPU it kicked
 * within 512 us (before: 29-54%, most of the rest waiting for the
 * sibling's slice to end); its p99 median was below the previous
 * gate's in five of six comparisons (three runs, two neighbours), but
 * parity with EEVDF's is not shown through this lab's noise. The cost: beside a ping-pong sibling, every
 * dispatch offers the lat child a turn first, mostly in vain.
 *
 * Trade-offs: PREEMPT implies ENQ, so a child may insert into any
 * CPU's local DSQ, preempting, and take the CPU without a turn of the
 * tree, uncharged; shares hold for children that insert locally only
 * onto idle CPUs and ask for turns by kicking, as the collection's do.
 * Each kick costs the sibling whose task it preempts a context switch.
 * Shares are accurate for children that keep CPUs busy, approximate for
 * ones that run for microseconds at a time. Nor does it
 * see where a child's tasks may run: a child whose tasks are confined to
 * one CPU looks idle to the others, which push it back, and two such
 * children of 100:300 on the same CPU got 34:66. Letting busy children
 * step aside instead fixed that case but, without knowing which
 * children are truly idle, let idle ones clog the front of the tree and
 * starve per-CPU kernel threads: confine such workloads with a child
 * scheduler (pin) rather than across siblings.
 *
 * CPU delegation: where the kernel has it, each child is granted, on
 * every CPU we hold them on, ENQ_IMMED (kicks) when it attaches, ENQ as
 * well upstream (cid form), which gates the moves a child makes in the
 * turns we lend it, and PREEMPT (above) unless @child_preempt is off;
 * without PREEMPT on our series a child's direct inserts onto a CPU wait
 * in its global DSQ for the turn the tree gives it, and its wake-ups for
 * a slice to end.
 *
 * Roles.
 *  - root: our own tasks are all the system's tasks not in a child; on a
 *    kernel without sub-schedulers (pristine 6.12) that is every task and
 *    this is a weighted vtime scheduler. While no child is attached the
 *    tree is skipped altogether and wake-ups take vtime's fast paths
 *    (a synchronous wakee waits behind its waker only while none of our
 *    tasks waits, and slices shrink with the number waiting).
 *  - parent: hosts up to MAX_CHILDREN (1024) direct children, at any
 *    depth the kernel allows (SCX_SUB_MAX_DEPTH).
 *  - leaf: as a child of another wparent, the same again one level down.
 *
 * Tunables:
 *  slice_us		     unit of charge, and slice of our own tasks,
 *			     shrunk while many wait as in vtime when we
 *			     have no children (20000)
 *  self_weight		     weight of our own tasks as one entity; 0: our
 *			     cgroup's cpu.weight (100)
 *  child_weight_from_cgroup child weight from its cgroup's cpu.weight (true)
 *  child_weight	     child weight otherwise (100)
 *  weight_refresh	     turns between re-reading cpu.weight (64)
 *  max_tries		     entities tried per dispatch, 1..16 (8)
 *  idle_backoff_max	     cap of the idle push-back exponent, 0..10 (3)
 *  child_preempt	     grant children PREEMPT, see Wake-ups (true)
 *  serve_wakers	     offer owed wakers a turn before the tree (true)
 *  waker_slack_us	     a waker is owed while its charges are at most
 *			     this far past the furthest entity's; 0: while
 *			     behind the CPU's holder (0)
 *  tree_always		     use the entity tree even without children, to
 *			     exercise it where there are no sub-schedulers
 *			     (false)
 *  sub_cgroup_id	     set by the loader when run as a child
 *
 * Counters (stat_*): tree_turns and tree_misses, turns of the tree that
 * dispatched or found the entity idle; waker_turns and waker_misses, the
 * same for the wakers' turns; waker_not_owed, wakers passed over as not
 * owed.
 */
#define SCXD_OWN_UPDATE_IDLE	/* ops.update_idle() is ours */
#include <scxd/common.bpf.h>
#include <scxd/own-tasks.bpf.h>

char _license[] SEC("license") = "GPL";

const volatile bool scxd_can_host_children = true;
const volatile bool scxd_grants_cpus = true;

const volatile u64 slice_us = 20000;
const volatile u32 self_weight = 100;
const volatile bool child_weight_from_cgroup = true;
const volatile u32 child_weight = 100;
const volatile u32 weight_refresh = 64;
const volatile u32 max_tries = 8;
const volatile u32 idle_backoff_max = 3;
const volatile bool child_preempt = true;
const volatile bool serve_wakers = true;
const volatile u64 waker_slack_us;
const volatile bool tree_always;
const volatile u64 sub_cgroup_id;

UEI_DEFINE(uei);

#define SELF_DSQ	0
#define SELF_ID		0	/* entity id of our own tasks; cgroup ids are > 1 */
#define MAX_CHILDREN	1024
#define MAX_TRIES	16
#define NR_WAKERS	8	/* power of two */

/* An entity's place in the tree. */
struct entity_node {
	struct bpf_rb_node rb;
	u64 vtime;
	u64 id;			/* SELF_ID or the child's cgroup id */
	u64 gen;		/* matches entity_info.gen while attached */
};

/* What we know about an entity, by id. */
struct entity_info {
	u64 gen;
	u64 pending;		/* charges not yet folded into the key */
	u64 fair;		/* charged vtime, see serve_waker() */
	u64 last_ok;		/* when it last put something on a CPU */
	u64 last_turn;		/* how long its last charged turn lasted */
	u32 weight;
	u32 held;		/* CPUs whose turn it holds */
	u32 misses;		/* consecutive turns with nothing to run */
	u32 turns;		/* turns since weight was read */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_CHILDREN + 1);
	__type(key, u64);
	__type(value, struct entity_info);
} entities SEC(".maps");

/* Which entity the CPU last gave a turn to, and since when. */
struct cpu_ctx {
	u64 id_plus1;		/* 0: none */
	u64 since;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cpu_ctx);
} cpu_ctxs SEC(".maps");

private(TREE) struct bpf_spin_lock tree_lock;
private(TREE) struct bpf_rb_root tree __contains(entity_node, rb);


static u64 vtime_now;		/* key of the last entity given a turn */
/*
 * The furthest any entity's charged vtime (entity_info.fair) has got: the
 * clock of what entities were given, free of the tree's push-backs, which
 * move keys and vtime_now ahead of every entity's charges.
 */
static u64 fair_now;
/* children that went idle after a turn lately, id + 1; 0: free */
static u64 wakers[NR_WAKERS];

u64 stat_tree_turns, stat_tree_misses, stat_waker_turns, stat_waker_misses;
u64 stat_waker_not_owed;
static u64 next_gen = 1;
static u32 nr_entities;		/* attached, ours included */

static u64 slice_ns(void)
{
	return slice_us * SCXD_NSEC_PER_USEC;
}

/* Slice of one of our own tasks; with children, whole: turns are the tree's. */
static u64 own_slice(void)
{
	if (nr_entities > 1)
		return slice_ns();
	return scxd_queue_slice(slice_ns(), SELF_DSQ);
}

static bool node_less(struct bpf_rb_node *a, const struct bpf_rb_node *b)
{
	struct entity_node *na = container_of(a, struct entity_node, rb);
	struct entity_node *nb = container_of(b, struct entity_node, rb);

	return na->vtime < nb->vtime;
}

static void tree_add(struct entity_node *n)
{
	bpf_spin_lock(&tree_lock);
	bpf_rbtree_add(&tree, &n->rb, node_less);
	bpf_spin_unlock(&tree_lock);
}

static struct entity_node *tree_pop(void)
{
	struct bpf_rb_node *rb;

	bpf_spin_lock(&tree_lock);
	rb = bpf_rbtree_first(&tree);
	if (rb)
		rb = bpf_rbtree_remove(&tree, rb);
	bpf_spin_unlock(&tree_lock);
	return rb ? container_of(rb, struct entity_node, rb) : NULL;
}

static s32 entity_add(u64 id, u32 weight)
{
	struct entity_info info = { .weight = weight ?: 1, .fair = fair_now };
	struct entity_node *n;
	s32 ret;

	info.gen = __sync_fetch_and_add(&next_gen, 1);
	ret = bpf_map_update_elem(&entities, &id, &info, BPF_NOEXIST);
	if (ret)
		return ret == -E2BIG ? -ENOSPC : ret;

	n = bpf_obj_new(struct entity_node);
	if (!n) {
		bpf_map_delete_elem(&entities, &id);
		return -ENOMEM;
	}
	n->id = id;
	n->gen = info.gen;
	n->vtime = vtime_now;
	tree_add(n);
	__sync_fetch_and_add(&nr_entities, 1);
	return 0;
}

static u32 entity_weight(u64 id, struct entity_info *info)
{
	if (id == SELF_ID || !child_weight_from_cgroup)
		return info->weight;
	if (++info->turns >= weight_refresh) {
		info->turns = 0;
		info->weight = scxd_cgroup_weight_by_id(id);
	}
	return info->weight;
}

static void holds_one_less(struct entity_info *info)
{
	if (info->held)
		__sync_fetch_and_sub(&info->held, 1);
}

static void fair_advance(u64 fair)
{
	u64 old = fair_now;

	if (scxd_vtime_before(old, fair))
		__sync_val_compare_and_swap(&fair_now, old, fair);
}

/*
 * Charge the entity that had this CPU since its last turn began; returns
 * its id plus one, 0 if none had it.
 */
static u64 charge_cpu(u64 now)
{
	struct entity_info *info;
	struct cpu_ctx *cctx;
	u32 zero = 0;
	u64 id;

	cctx = bpf_map_lookup_elem(&cpu_ctxs, &zero);
	if (!cctx || !cctx->id_plus1)
		return 0;
	id = cctx->id_plus1 - 1;
	cctx->id_plus1 = 0;
	info = bpf_map_lookup_elem(&entities, &id);
	if (info) {
		u64 charge = scxd_scale_inv(now - cctx->since, info->weight);

		__sync_fetch_and_add(&info->pending, charge);
		__sync_fetch_and_add(&info->fair, charge);
		fair_advance(info->fair);
		info->last_turn = now - cctx->since;
		holds_one_less(info);
	}
	return id + 1;
}

static void cpu_took(u64 id, u64 now)
{
	struct entity_info *info;
	struct cpu_ctx *cctx;
	u32 zero = 0;
	u64 old;

	cctx = bpf_map_lookup_elem(&cpu_ctxs, &zero);
	if (!cctx)
		return;
	if (cctx->id_plus1) {
		/* not charged, e.g. a detached child's: it holds it no more */
		old = cctx->id_plus1 - 1;
		info = bpf_map_lookup_elem(&entities, &old);
		if (info)
			holds_one_less(info);
	}
	cctx->id_plus1 = id + 1;
	cctx->since = now;
	info = bpf_map_lookup_elem(&entities, &id);
	if (info)
		__sync_fetch_and_add(&info->held, 1);
}

/* Give @id a turn on this CPU; true if it put something on it. */
static bool entity_dispatch(u64 id)
{
	if (id == SELF_ID)
		return scxd_shared_serve(SELF_DSQ);
	return scxd_sub_dispatch(id);
}

/*
 * How long a child that went idle stays among the wakers without
 * dispatching anything: as long as the longest push-back of an idle
 * entity, after which the tree comes round to it anyway.
 */
static u64 waker_window(void)
{
	return slice_ns() << (idle_backoff_max & 15);
}

/*
 * Did @info's last turn end well within a slice? A child that sleeps
 * after short runs is what the wakers are for; one whose turns last
 * whole slices is busy, and found idle only between CPUs (its task
 * charged on one CPU while another looked), so it gets no turns before
 * the tree: with 16 such children, some child was always owed against
 * the holder and the tree, where our own tasks wait, was skipped for
 * seconds.
 */
static bool short_turns(const struct entity_info *info)
{
	return info->last_turn < slice_ns() / 4;
}

/* Note child @id as one that may wake soon, see serve_waker(). */
static void waker_add(u64 id)
{
	u32 i;

	for (i = 0; i < NR_WAKERS; i++)
		if (wakers[i] == id + 1)
			return;
	for (i = 0; i < NR_WAKERS; i++)
		if (!wakers[i] &&
		    __sync_val_compare_and_swap(&wakers[i], 0, id + 1) == 0)
			return;
}

/*
 * One turn of the tree: pop the earliest entity, fold its pending
 * charges (and put it back, to be looked at again in its new place, if
 * there were any), let it dispatch and put it back. Returns 1 when
 * something was dispatched, 0 when the entity had nothing, 2 when it was
 * only moved back or was a detached child's leftover, -1 when the tree
 * is empty.
 *
 * @holder_plus1 names the child whose task used up its slice on this CPU
 * and is still runnable: that task is on no DSQ, so the child finds
 * nothing to dispatch, yet it has work. Its turn then is to keep its task
 * running, which the kernel does when we dispatch nothing (1, with
 * nothing dispatched).
 *
 * A global function, so that the verifier checks it once rather than in
 * each of ops.dispatch()'s turns: inlined, the loop over up to
 * 2 * MAX_TRIES turns exceeded 7.2's and 7.3's million-instruction limit.
 */
__noinline int dispatch_one(u64 now, u64 holder_plus1)
{
	struct entity_info *info;
	struct entity_node *n;
	u64 id, pending, key, front;
	u32 backoff;
	bool ok;

	n = tree_pop();
	if (!n)
		return -1;

	id = n->id;
	info = bpf_map_lookup_elem(&entities, &id);
	if (!info || info->gen != n->gen) {
		/* detached since; this is the node's last trip */
		bpf_obj_drop(n);
		return 2;
	}

	pending = __sync_lock_test_and_set(&info->pending, 0);
	if (pending) {
		n->vtime += pending;
		tree_add(n);
		return 2;
	}

	key = n->vtime;
	if (scxd_vtime_before(vtime_now, key))
		vtime_now = key;

	ok = entity_dispatch(id) || id + 1 == holder_plus1;
	if (ok) {
		info->misses = 0;
		info->last_ok = now;
		entity_weight(id, info);
		cpu_took(id, now);
		__sync_fetch_and_add(&stat_tree_turns, 1);
	} else {
		/*
		 * Idling banks a quarter slice of credit behind the entity
		 * furthest ahead; one that ran lately may wake.
		 */
		front = fair_now - scxd_min(fair_now, scxd_scale_inv(slice_ns() / 4,
								      info->weight));
		if (scxd_vtime_before(info->fair, front))
			info->fair = front;
		/*
		 * Only a child none of whose tasks runs: one found idle
		 * because its tasks all run on CPUs it holds is busy, and
		 * 16 saturated children let in as wakers took a fifth of our
		 * own tasks' share.
		 */
		if (id != SELF_ID && !info->held && short_turns(info) &&
		    now - info->last_ok <= waker_window())
			waker_add(id);
		__sync_fetch_and_add(&stat_tree_misses, 1);
		backoff = info->misses < idle_backoff_max ? info->misses
							  : idle_backoff_max;
		if (info->misses < 31)
			info->misses++;
		/* an entity with nothing to run banks no credit either */
		n->vtime = scxd_max(n->vtime, vtime_now) +
			   (scxd_scale_inv(slice_ns(), info->weight) << (backoff & 15));
	}
	tree_add(n);
	return ok;
}

/*
 * Before the tree: a waker, a child found idle within waker_window() of
 * its last turn, none of its tasks running, gets this CPU if it is owed
 * CPU time and has something to run now. Its place in the tree was
 * pushed back when it was found idle, and its wake-up would otherwise
 * wait for the tree to come round to it. Owed: its charged vtime
 * (info->fair: the charges of every turn it had, raised when it is found
 * idle to a quarter slice behind fair_now, so that idling banks at most
 * that much credit) before that of the entity that just had this CPU,
 * whom it would displace (on a CPU nobody had: before fair_now); with
 * @waker_slack_us, at most that much past fair_now instead. Its turn is charged like any
 * other, so a child that wakes often stops being owed once it has had
 * its share. Returns true if it dispatched. Global for the verifier, as
 * dispatch_one().
 */
__noinline int serve_waker(u64 now, u64 holder_plus1, u64 charged_plus1)
{
	struct entity_info *info;
	u64 slot, id, ref = 0;
	u32 i;

	/* without slack: whom it would take the CPU from, who just had it */
	if (!waker_slack_us) {
		id = charged_plus1 - 1;
		info = charged_plus1 ? bpf_map_lookup_elem(&entities, &id) : NULL;
		ref = info ? info->fair : fair_now;
	}

	for (i = 0; i < NR_WAKERS; i++) {
		slot = wakers[i];
		if (!slot || slot == holder_plus1)
			continue;
		id = slot - 1;
		info = bpf_map_lookup_elem(&entities, &id);
		if (!info || now - info->last_ok > waker_window()) {
			__sync_val_compare_and_swap(&wakers[i], slot, 0);
			continue;
		}
		if (!short_turns(info))
			continue;
		if (waker_slack_us)
			ref = fair_now + scxd_scale_inv(waker_slack_us *
							 SCXD_NSEC_PER_USEC,
							 info->weight);
		if (!scxd_vtime_before(info->fair, ref)) {
			__sync_fetch_and_add(&stat_waker_not_owed, 1);
			continue;
		}
		if (!scxd_sub_dispatch(id)) {
			__sync_fetch_and_add(&stat_waker_misses, 1);
			continue;
		}
		info->misses = 0;
		info->last_ok = now;
		cpu_took(id, now);
		__sync_fetch_and_add(&stat_waker_turns, 1);
		return 1;
	}
	return 0;
}

s32 BPF_STRUCT_OPS(wparent_select_cpu, struct task_struct *p, s32 prev_cpu,
		   u64 wake_flags)
{
	/*
	 * Alone (no children, not a child ourselves), a synchronous wakee
	 * may wait behind its waker while our queue is served, as in
	 * vtime; with children that would let our tasks jump the turn the
	 * tree gives them.
	 */
	bool alone = nr_entities <= 1 && !tree_always && !sub_cgroup_id;

	return scxd_select_cpu(p, prev_cpu, wake_flags, slice_ns(),
			       alone ? SELF_DSQ : SCXD_NO_FOLLOW, 1);
}

void BPF_STRUCT_OPS(wparent_enqueue, struct task_struct *p, u64 enq_flags)
{
	own_task_enqueue(p, enq_flags, SELF_DSQ, own_slice(), slice_ns());
}

/* Is our own entity the one at the front of the tree? */
static bool self_in_front(void)
{
	struct bpf_rb_node *rb;
	bool front = false;

	bpf_spin_lock(&tree_lock);
	rb = bpf_rbtree_first(&tree);
	if (rb)
		front = container_of(rb, struct entity_node, rb)->id == SELF_ID;
	bpf_spin_unlock(&tree_lock);
	return front;
}

/*
 * @prev, one of our own tasks, used up its slice and is still runnable:
 * let it go on if it is ahead of our other tasks and it is our turn.
 */
static bool keep_prev(struct task_struct *prev, u64 now, bool alone)
{
	if (!own_prev_charged(prev, now))
		return false;
	if ((!alone && !self_in_front()) ||
	    !scxd_prev_before_head(prev->scx.dsq_vtime, SELF_DSQ))
		return false;
	scxd_set_slice(prev, own_slice());
	if (!alone)
		cpu_took(SELF_ID, now);
	return true;
}

void BPF_STRUCT_OPS(wparent_dispatch, s32 cpu, struct task_struct *prev)
{
	u64 now = bpf_ktime_get_ns();
	u64 holder_plus1, charged_plus1;
	u32 i, misses;
	int ret = -1;

	/*
	 * Without children there is nobody to share with: skip the tree and
	 * its lock, and serve our own tasks like vtime does.
	 */
	if (nr_entities <= 1 && !tree_always) {
		if ((!scxd_prev_is_queued(prev) || !keep_prev(prev, now, true)) &&
		    !scxd_shared_serve(SELF_DSQ))
			scxd_dispatch_empty(cpu, prev);
		return;
	}

	charged_plus1 = holder_plus1 = charge_cpu(now);
	if (!scxd_prev_is_queued(prev))
		holder_plus1 = 0;
	if (serve_wakers && serve_waker(now, holder_plus1, charged_plus1))
		return;
	if (scxd_prev_is_queued(prev) && keep_prev(prev, now, false))
		return;
	if (holder_plus1 == SELF_ID + 1)
		holder_plus1 = 0;
	/*
	 * Give up after @max_tries entities with nothing to run; more than
	 * there are entities would only meet the same ones again. Moving an
	 * entity back for its charges is not a try, but bounded too.
	 */
	for (i = 0, misses = 0; i < 2 * MAX_TRIES; i++) {
		ret = dispatch_one(now, holder_plus1);
		if (ret == 1 || ret < 0)
			break;		/* dispatched, or nothing in the tree */
		if (ret == 0 && (++misses >= max_tries || misses >= nr_entities))
			break;
	}

	/*
	 * Given up, the CPU would idle while our own tasks wait for their
	 * entity to come round, which takes a dispatch for every @max_tries
	 * entities in front of it: hundreds of idle children left the
	 * system's kernel threads (the sched_ext watchdog's worker among
	 * them) waiting for seconds. Run ours instead, charged to us.
	 */
	if (ret == 1)
		return;
	if (scxd_shared_serve(SELF_DSQ))
		cpu_took(SELF_ID, now);
	else
		scxd_dispatch_empty(cpu, prev);
}

void BPF_STRUCT_OPS(wparent_update_idle, s32 cpu, bool idle)
{
	scxd_note_idle(cpu, idle);
	if (idle)
		charge_cpu(bpf_ktime_get_ns());
}

/*
 * One of our own tasks starts on a CPU no entity holds: it came there
 * straight from ops.select_cpu() onto a CPU that was idle, without a turn
 * of the tree. Its time is ours to pay, or our own tasks would take more
 * than their weight whenever CPUs go idle now and then.
 */
static void own_took_idle_cpu(u64 now)
{
	struct cpu_ctx *cctx;
	u32 zero = 0;

	if (nr_entities <= 1 && !tree_always)
		return;
	cctx = bpf_map_lookup_elem(&cpu_ctxs, &zero);
	if (cctx && !cctx->id_plus1)
		cpu_took(SELF_ID, now);
}

void BPF_STRUCT_OPS(wparent_running, struct task_struct *p)
{
	u64 now = bpf_ktime_get_ns();

	own_task_running(p, now);
	own_took_idle_cpu(now);
}

/* stopping, disable, init_task, enable: our own tasks (own-tasks.bpf.h) */
SCXD_OWN_TASK_OPS(wparent)

#if SCXD_HAVE_SUB_SCHED
/*
 * SCX_CAP_PREEMPT on every CPU we hold it on, so that a child can ask
 * for a turn with a preempting kick (see Wake-ups in the header).
 */
static void grant_preempt(u64 cgid)
{
	scxd_mask *held;

	if (!scxd_caps_supported())
		return;
	held = scxd_mask_new(1);
	if (!held)
		return;
	if (!scxd_sub_caps(0, SCXD_CAP_PREEMPT, held))
		scxd_sub_grant(cgid, SCXD_CAP_PREEMPT, held);
	scxd_mask_free(held);
}

s32 BPF_STRUCT_OPS(wparent_sub_attach, struct scx_sub_attach_args *args)
{
	u64 cgid = args->ops->sub_cgroup_id;
	u32 weight = child_weight;
	s32 ret;

	if (child_weight_from_cgroup)
		weight = scxd_cgroup_weight_by_id(cgid);
	ret = entity_add(cgid, weight);
	if (ret) {
		bpf_printk("wparent: refusing child on cgroup %llu (%s): %d",
			   cgid, args->cgroup_path, ret);
		return ret;
	}
	scxd_grant_lent(cgid);
	if (child_preempt)
		grant_preempt(cgid);
	return 0;
}

void BPF_STRUCT_OPS(wparent_sub_detach, struct scx_sub_detach_args *args)
{
	u64 cgid = args->ops->sub_cgroup_id;

	/* its tree node is dropped when it next reaches the front */
	if (!bpf_map_delete_elem(&entities, &cgid))
		__sync_fetch_and_sub(&nr_entities, 1);
}
#endif

s32 BPF_STRUCT_OPS_SLEEPABLE(wparent_init)
{
	u32 weight = self_weight;
	s32 ret;

	ret = scxd_init_cpus() ?: scx_bpf_create_dsq(SELF_DSQ, -1);
	if (ret)
		return ret;
	if (!weight)
		weight = sub_cgroup_id ? scxd_cgroup_weight_by_id(sub_cgroup_id)
				       : SCXD_WEIGHT_DFL;
	return entity_add(SELF_ID, weight);
}

void BPF_STRUCT_OPS(wparent_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCXD_OPS_DEFINE(wparent_ops,
	       .SCXD_OP(select_cpu)	= (void *)wparent_select_cpu,
	       .enqueue			= (void *)wparent_enqueue,
	       .dispatch		= (void *)wparent_dispatch,
	       .update_idle		= (void *)wparent_update_idle,
	       .running			= (void *)wparent_running,
	       .stopping		= (void *)wparent_stopping,
	       .enable			= (void *)wparent_enable,
	       .disable			= (void *)wparent_disable,
	       .init_task		= (void *)wparent_init_task,
	       SCXD_OPS_CID_TRACKING
#if SCXD_HAVE_SUB_SCHED
	       .sub_attach		= (void *)wparent_sub_attach,
	       .sub_detach		= (void *)wparent_sub_detach,
#endif
	       .init			= (void *)wparent_init,
	       .exit			= (void *)wparent_exit,
	       .flags			= SCX_OPS_KEEP_BUILTIN_IDLE |
					  SCXD_OPS_HAS_CGROUP_WEIGHT,
	       .name			= "scxd_wparent");
