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
 * enqueue on the child). A wake-up that finds an idle CPU goes straight
 * onto it (the child holds ENQ, below). One that finds every CPU busy
 * with a sibling's tasks would wait for one of their slices to end and
 * then for its place in the tree, up to 2^@idle_backoff_max slices of
 * virtual time: a lat child beside a fifo sibling running hackbench
 * waited up to 1-2 s. So every @wake_check_us a timer looks at the
 * front of the tree, and when that entity holds no CPU and is more
 * than an eighth of a slice of virtual time behind an entity that has held a
 * CPU for an eighth of a slice (counting what it has run there since
 * its turn began), preempts that CPU: the front entity gets its turn,
 * or, if it had nothing to run after all, is pushed back as for any
 * miss and the holder goes on. Only a child that missed at most once
 * since its last turn is preempted for (an idle child costs one wasted
 * preemption when it goes idle, then waits for ordinary turns), and our
 * own entity only with a task queued. tests/bench/isolation measures it
 * (README there).
 *
 * Trade-offs: shares are accurate for children that keep CPUs busy,
 * approximate for ones that run for microseconds at a time, and a
 * child's tasks put straight onto idle CPUs are charged to nobody. Nor does it
 * see where a child's tasks may run: a child whose tasks are confined to
 * one CPU looks idle to the others, which push it back, and two such
 * children of 100:300 on the same CPU got 34:66. Letting busy children
 * step aside instead fixed that case but, without knowing which
 * children are truly idle, let idle ones clog the front of the tree and
 * starve per-CPU kernel threads: confine such workloads with a child
 * scheduler (pin) rather than across siblings.
 *
 * CPU delegation: where the kernel has it, each child is granted
 * ENQ_IMMED (kicks) and ENQ (local inserts) on every CPU when it
 * attaches, never PREEMPT. Shares hold for children that insert locally
 * only onto idle CPUs and in their turns, as ours do; a child that
 * inserts onto busy CPUs' local DSQs jumps the tree (ENQ_IMMED alone
 * stopped that, at the cost of every wake-up waiting for a turn).
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
 *  wake_check_us	     period of the check that preempts for an entity
 *			     owed a turn; 0: never (1000)
 *  tree_always		     use the entity tree even without children, to
 *			     exercise it where there are no sub-schedulers
 *			     (false)
 *  sub_cgroup_id	     set by the loader when run as a child
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
const volatile u64 wake_check_us = 1000;
const volatile bool tree_always;
const volatile u64 sub_cgroup_id;

UEI_DEFINE(uei);

#define SELF_DSQ	0
#define SELF_ID		0	/* entity id of our own tasks; cgroup ids are > 1 */
#define MAX_CHILDREN	1024
#define MAX_TRIES	16
#define MAX_CPUS	512	/* power of two */

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
	u64 key;		/* its node's key when last put in the tree */
	u64 pending;		/* charges not yet folded into the key */
	u32 weight;
	u32 misses;		/* consecutive turns with nothing to run */
	u32 turns;		/* turns since weight was read */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_CHILDREN + 1);
	__type(key, u64);
	__type(value, struct entity_info);
} entities SEC(".maps");

/*
 * Which entity the CPU last gave a turn to, and since when; by CPU handle
 * (scxd_this_cpu()), so that the turn check (check_turns()) can read every
 * CPU's.
 */
struct cpu_ctx {
	u64 id_plus1;		/* 0: none */
	u64 since;
};

static struct cpu_ctx cpu_ctxs[MAX_CPUS];

struct turn_timer {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct turn_timer);
} timers SEC(".maps");

private(TREE) struct bpf_spin_lock tree_lock;
private(TREE) struct bpf_rb_root tree __contains(entity_node, rb);


static u64 vtime_now;		/* key of the last entity given a turn */
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
	struct entity_info info = { .weight = weight ?: 1 };
	struct entity_node *n;
	s32 ret;

	info.gen = __sync_fetch_and_add(&next_gen, 1);
	info.key = vtime_now;
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

/*
 * Charge the entity that had this CPU since its last turn began; returns
 * its id plus one, 0 if none had it.
 */
static struct cpu_ctx *this_cpu_ctx(void)
{
	return &cpu_ctxs[(u32)scxd_this_cpu() & (MAX_CPUS - 1)];
}

static u64 charge_cpu(u64 now)
{
	struct entity_info *info;
	struct cpu_ctx *cctx;
	u64 id;

	cctx = this_cpu_ctx();
	if (!cctx->id_plus1)
		return 0;
	id = cctx->id_plus1 - 1;
	cctx->id_plus1 = 0;
	info = bpf_map_lookup_elem(&entities, &id);
	if (info)
		__sync_fetch_and_add(&info->pending,
				     scxd_scale_inv(now - cctx->since,
						    info->weight));
	return id + 1;
}

static void cpu_took(u64 id, u64 now)
{
	struct cpu_ctx *cctx = this_cpu_ctx();

	cctx->since = now;
	cctx->id_plus1 = id + 1;
}

/* Give @id a turn on this CPU; true if it put something on it. */
static bool entity_dispatch(u64 id)
{
	if (id == SELF_ID)
		return scxd_shared_serve(SELF_DSQ);
	return scxd_sub_dispatch(id);
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
	u64 id, pending, key;
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
		info->key = n->vtime;
		tree_add(n);
		return 2;
	}

	key = n->vtime;
	if (scxd_vtime_before(vtime_now, key))
		vtime_now = key;

	ok = entity_dispatch(id) || id + 1 == holder_plus1;
	if (ok) {
		info->misses = 0;
		entity_weight(id, info);
		cpu_took(id, now);
	} else {
		backoff = info->misses < idle_backoff_max ? info->misses
							  : idle_backoff_max;
		if (info->misses < 31)
			info->misses++;
		/* an entity with nothing to run banks no credit either */
		n->vtime = scxd_max(n->vtime, vtime_now) +
			   (scxd_scale_inv(slice_ns(), info->weight) << (backoff & 15));
	}
	info->key = n->vtime;
	tree_add(n);
	return ok;
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
	u64 holder_plus1;
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

	holder_plus1 = charge_cpu(now);
	if (!scxd_prev_is_queued(prev))
		holder_plus1 = 0;
	else if (keep_prev(prev, now, false))
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

/*
 * The turn check, every @wake_check_us: a child's wake-up never reaches
 * us, and on CPUs all busy with a sibling's tasks it would wait for one
 * of their slices to end and then for its place in the tree. So look at
 * the front of the tree (tree_front()): if that entity holds no CPU and is behind, by
 * more than an eighth of a slice of virtual time, an entity that has held a
 * CPU for an eighth of a slice or more (counting the time it has run
 * there since), preempt the CPU of the one furthest ahead. The CPU asks
 * us for work, the front entity gets its turn; if it had nothing to run
 * after all, it is pushed back as for any miss and the holder goes on.
 * Our own entity is preempted for only when our queue holds a task; a
 * child's queue we cannot see, so only for a child that missed at most
 * once since its last turn: an idle one costs one wasted preemption.
 */
/*
 * The entity at the front of the tree once the charges of those in front
 * of it are folded into their keys, as dispatch_one() does: a holder
 * sits at the front with its charges unfolded until a CPU next asks us
 * for work. False if there is none, or still charges after a few folds.
 */
static bool tree_front(u64 *id, u64 *key)
{
	struct entity_info *info;
	struct entity_node *n;
	u64 nid, pending;
	u32 i;

	for (i = 0; i < 4; i++) {
		n = tree_pop();
		if (!n)
			return false;
		nid = n->id;
		info = bpf_map_lookup_elem(&entities, &nid);
		if (!info || info->gen != n->gen) {
			bpf_obj_drop(n);
			continue;
		}
		pending = __sync_lock_test_and_set(&info->pending, 0);
		n->vtime += pending;
		info->key = n->vtime;
		*id = nid;
		*key = n->vtime;
		tree_add(n);
		if (!pending)
			return true;
	}
	return false;
}

static void check_turns(u64 now)
{
	u64 fid = 0, fkey = 0, hid_plus1, since, hkey, lag, best_lag = 0;
	struct entity_info *front, *held;
	u32 nr = scxd_nr_cpus();
	s32 cpu, best = -1;

	if (nr_entities <= 1 || !tree_front(&fid, &fkey))
		return;
	front = bpf_map_lookup_elem(&entities, &fid);
	if (!front)
		return;
	fkey += slice_ns() / 8;

	bpf_for(cpu, 0, nr) {
		struct cpu_ctx *c = &cpu_ctxs[(u32)cpu & (MAX_CPUS - 1)];
		u64 hid;

		hid_plus1 = c->id_plus1;
		since = c->since;
		if (hid_plus1 == fid + 1)
			return;		/* it is running already */
		if (!hid_plus1 || now < since || now - since < slice_ns() / 8)
			continue;
		hid = hid_plus1 - 1;
		held = bpf_map_lookup_elem(&entities, &hid);
		if (!held)
			continue;
		hkey = held->key + held->pending + scxd_scale_inv(now - since, held->weight);
		if (!scxd_vtime_before(fkey, hkey))
			continue;
		lag = hkey - fkey;
		if (lag > best_lag) {
			best_lag = lag;
			best = cpu;
		}
	}
	/*
	 * Only for an entity that has work or may well have: our own with a
	 * task queued, a child that missed at most once since its last turn
	 * (its turn ended when its tasks went to sleep). A child that keeps
	 * missing is idle and waits for ordinary turns, its push-back
	 * growing as before.
	 */
	if (fid == SELF_ID ? !scx_bpf_dsq_nr_queued(SELF_DSQ) : front->misses > 1)
		return;
	if (best >= 0)
		scxd_kick_cpu(best, SCX_KICK_PREEMPT);
}

static int turn_timerfn(void *map, int *key, struct bpf_timer *timer)
{
	check_turns(bpf_ktime_get_ns());
	bpf_timer_start(timer, wake_check_us * SCXD_NSEC_PER_USEC, 0);
	return 0;
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

	if (nr_entities <= 1 && !tree_always)
		return;
	cctx = this_cpu_ctx();
	if (!cctx->id_plus1)
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
 * Let child @cgid insert its wake-ups straight onto the local DSQ of an
 * idle CPU, wherever we may (ENQ; upstream scxd_grant_lent() granted it
 * already): otherwise they wait in its global DSQ for its turn in the
 * tree while the CPU they woke runs whoever is in front, which kept a
 * lat child beside a busy fifo sibling waiting up to seconds. Not
 * PREEMPT: on a busy CPU the tree still decides.
 */
static void grant_idle_inserts(u64 cgid)
{
	scxd_mask *held;

	if (SCXD_CAP_DISPATCH & SCXD_CAP_ENQ)
		return;
	if (!scxd_caps_supported())
		return;
	held = scxd_mask_new(1);
	if (!held)
		return;
	if (!scxd_sub_caps(0, SCXD_CAP_ENQ, held))
		scxd_sub_grant(cgid, SCXD_CAP_ENQ, held);
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
	grant_idle_inserts(cgid);
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
	u32 weight = self_weight, zero = 0;
	struct turn_timer *t;
	s32 ret;

	ret = scxd_init_cpus() ?: scx_bpf_create_dsq(SELF_DSQ, -1);
	if (ret)
		return ret;
	if (!weight)
		weight = sub_cgroup_id ? scxd_cgroup_weight_by_id(sub_cgroup_id)
				       : SCXD_WEIGHT_DFL;
	ret = entity_add(SELF_ID, weight);
	if (ret || !wake_check_us)
		return ret;
	t = bpf_map_lookup_elem(&timers, &zero);
	if (!t)
		return -ENOENT;
	bpf_timer_init(&t->timer, &timers, CLOCK_MONOTONIC);
	bpf_timer_set_callback(&t->timer, turn_timerfn);
	return bpf_timer_start(&t->timer, wake_check_us * SCXD_NSEC_PER_USEC, 0);
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
