/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One source, several kernels.
 *
 * The schedulers in this directory build against:
 *
 *  (a) pristine Debian 6.12: the 2024 kfunc names (scx_bpf_dispatch,
 *      scx_bpf_dispatch_vtime, scx_bpf_consume) and no sub-scheduler
 *      support at all: struct sched_ext_ops has no sub_cgroup_id,
 *      sub_attach or sub_detach, and there is no scx_bpf_sub_dispatch().
 *      Only the root role exists.
 *  (b) this project's patched 6.12: the same kfunc names plus the seeds'
 *      sub-scheduler API.
 *  (c) upstream 7.1, which carries the seeds' sub-scheduler API in the
 *      cpu-form struct sched_ext_ops: the renamed kfuncs
 *      (scx_bpf_dsq_insert, scx_bpf_dsq_insert_vtime,
 *      scx_bpf_dsq_move_to_local with the @enq_flags 7.1 added) and the
 *      sub-scheduler API in all three roles.
 *  (d) upstream 7.2 and 7.3, which keep the cpu-form struct sched_ext_ops
 *      beside a cid-form struct sched_ext_ops_cid, and refuse at enable
 *      any cpu-form scheduler that is a child or sets sub_attach or
 *      sub_detach, even as root. Against a vmlinux.h with
 *      struct sched_ext_ops_cid, meson passes -DSCXD_CID=1 and every
 *      object is cid-form, in all three roles (see "CPU handles" below).
 *
 * What has been compiled and run against what:
 *  (b): built against its vmlinux.h and tree headers and run in all
 *      three roles by tests/run (tests/guest).
 *  (d): built in cid form against the vmlinux.h of Debian's
 *      linux-source-7.3 (7.3.4, trixie-backports) and its
 *      tools/sched_ext/include, and run in all three roles, unpatched, by
 *      tests/compat-upstream (kernel/build-upstream.sh), scxd included.
 *      7.2 (sid) builds the same way (--series 7.2) but is not in
 *      tests/run.
 *  (a): the root role by hand (tests/guest/sched/run --variant
 *      guest-pristine, after kernel/build.sh --pristine); not part of
 *      tests/run.
 *  (c): never compiled: no 7.1 tree is available to the lab.
 *
 * What differs is settled at one of two times:
 *
 *  - The form and the roles are properties of the vmlinux.h we compile
 *    against: a designated initialiser for .sub_attach does not compile
 *    without the member. meson greps vmlinux.h for struct
 *    sched_ext_ops_cid (cid form, all roles) and else for struct
 *    scx_sub_attach_args (-DSCXD_HAVE_SUB_SCHED=1: cpu form, all roles).
 *    An object built with SCXD_HAVE_SUB_SCHED=1 still loads as root on a
 *    pristine 6.12 as long as sub_cgroup_id is left at zero: libbpf skips
 *    struct_ops members the running kernel lacks when they are zero and
 *    turns off autoload of programs bound to them. Build the objects
 *    against the kind of kernel they are to run on; a package carries a
 *    set of each and scxd picks by the running kernel's BTF.
 *
 *  - Which kfunc names the running kernel exports is decided at load
 *    time. We declare every name we might use as a weak ksym carrying the
 *    "___scxd" flavour suffix (libbpf strips it when resolving), so our
 *    declarations never collide with whatever the kernel tree's own
 *    common.bpf.h declares, and pick one with bpf_ksym_exists(). The
 *    verifier drops the branch for the absent one. When the kernel tree's
 *    headers are upstream ones that already wrap the names themselves
 *    (meson sees scx_bpf_dsq_insert in its compat.bpf.h and passes
 *    -DSCXD_TREE_HAS_DSQ_INSERT=1), we use the tree's wrappers so later
 *    argument-passing changes stay the tree's business.
 *
 * The SCX_* enum constants (SCX_DSQ_LOCAL, SCX_ENQ_WAKEUP, SCX_KICK_IDLE,
 * ...) are, in cpu form, compile-time values from the vmlinux.h we build
 * against (common.bpf.h defines the include guard of the tree's
 * scx/enums.bpf.h). In cid form they are upstream's .rodata variables
 * (scx/enums.autogen.bpf.h), which scxd and sched-run fill from the
 * running kernel's BTF before load, as upstream's SCX_ENUM_INIT() does
 * (scxd/kernel-api.c), so a cid-form object is not tied to the exact
 * build its vmlinux.h came from; a name its code uses that the kernel
 * lacks refuses it.
 */
#ifndef __SCXD_COMPAT_BPF_H
#define __SCXD_COMPAT_BPF_H

#ifndef SCXD_CID
#define SCXD_CID 0
#endif

#ifndef SCXD_HAVE_SUB_SCHED
#define SCXD_HAVE_SUB_SCHED 0
#endif

#ifndef SCXD_TREE_HAS_DSQ_INSERT
#define SCXD_TREE_HAS_DSQ_INSERT 0
#endif

#ifndef SCXD_TREE_MOVE_TO_LOCAL_FLAGS
#define SCXD_TREE_MOVE_TO_LOCAL_FLAGS 0
#endif

#ifndef SCXD_HAVE_OPS_HAS_CGROUP_WEIGHT
#define SCXD_HAVE_OPS_HAS_CGROUP_WEIGHT 0
#endif

#if SCXD_TREE_HAS_DSQ_INSERT

#define scxd_dsq_insert(p, dsq, slice, flags)				\
	scx_bpf_dsq_insert((p), (dsq), (slice), (flags))
#define scxd_dsq_insert_vtime(p, dsq, slice, vtime, flags)		\
	scx_bpf_dsq_insert_vtime((p), (dsq), (slice), (vtime), (flags))
#if SCXD_TREE_MOVE_TO_LOCAL_FLAGS	/* 7.1 added @enq_flags */
#define scxd_dsq_move_to_local(dsq)					\
	scx_bpf_dsq_move_to_local((dsq), scxd_enq_dispatch())
#else
#define scxd_dsq_move_to_local(dsq)					\
	scx_bpf_dsq_move_to_local((dsq))
#endif

/* later trees dropped the __COMPAT_ form, their macro does the check */
#define scxd_task_cgroup(p)	scx_bpf_task_cgroup((p))

#else	/* 6.12-era kernel tree headers */

void scx_bpf_dispatch___scxd(struct task_struct *p, u64 dsq_id, u64 slice,
			     u64 enq_flags) __ksym __weak;
void scx_bpf_dsq_insert___scxd(struct task_struct *p, u64 dsq_id, u64 slice,
			       u64 enq_flags) __ksym __weak;
void scx_bpf_dispatch_vtime___scxd(struct task_struct *p, u64 dsq_id,
				   u64 slice, u64 vtime,
				   u64 enq_flags) __ksym __weak;
void scx_bpf_dsq_insert_vtime___scxd(struct task_struct *p, u64 dsq_id,
				     u64 slice, u64 vtime,
				     u64 enq_flags) __ksym __weak;
bool scx_bpf_consume___scxd(u64 dsq_id) __ksym __weak;
bool scx_bpf_dsq_move_to_local___scxd(u64 dsq_id) __ksym __weak;

static __always_inline void
scxd_dsq_insert(struct task_struct *p, u64 dsq, u64 slice, u64 flags)
{
	if (bpf_ksym_exists(scx_bpf_dsq_insert___scxd))
		scx_bpf_dsq_insert___scxd(p, dsq, slice, flags);
	else
		scx_bpf_dispatch___scxd(p, dsq, slice, flags);
}

static __always_inline void
scxd_dsq_insert_vtime(struct task_struct *p, u64 dsq, u64 slice, u64 vtime,
		      u64 flags)
{
	if (bpf_ksym_exists(scx_bpf_dsq_insert_vtime___scxd))
		scx_bpf_dsq_insert_vtime___scxd(p, dsq, slice, vtime, flags);
	else
		scx_bpf_dispatch_vtime___scxd(p, dsq, slice, vtime, flags);
}

static __always_inline bool scxd_dsq_move_to_local(u64 dsq)
{
	if (bpf_ksym_exists(scx_bpf_dsq_move_to_local___scxd))
		return scx_bpf_dsq_move_to_local___scxd(dsq);
	return scx_bpf_consume___scxd(dsq);
}

#define scxd_task_cgroup(p)	__COMPAT_scx_bpf_task_cgroup((p))

#endif	/* SCXD_TREE_HAS_DSQ_INSERT */

/*
 * SCX_OPS_HAS_CGROUP_WEIGHT tells 6.12 that a scheduler honours
 * cpu.weight (else it logs that it does not); later kernels dropped the
 * flag. meson passes -DSCXD_HAVE_OPS_HAS_CGROUP_WEIGHT=1 when vmlinux.h
 * has it.
 */
#if SCXD_HAVE_OPS_HAS_CGROUP_WEIGHT
#define SCXD_OPS_HAS_CGROUP_WEIGHT	SCX_OPS_HAS_CGROUP_WEIGHT
#else
#define SCXD_OPS_HAS_CGROUP_WEIGHT	0
#endif

/*
 * The cpu.weight sched_ext keeps per task_group under
 * CONFIG_EXT_GROUP_SCHED moved: task_group::scx_weight on 6.12,
 * task_group::scx.weight (struct scx_task_group) on 7.2. vmlinux.h has
 * only one of them, so the field is named through local "___scxd"
 * flavours of both layouts and picked by CO-RE at load time: one object
 * reads whichever the running kernel has, and 0 when it has neither.
 */
struct task_group___scxd_flat {
	u32 scx_weight;
} __attribute__((preserve_access_index));

struct scx_task_group___scxd {
	u32 weight;
} __attribute__((preserve_access_index));

struct task_group___scxd_nested {
	struct scx_task_group___scxd scx;
} __attribute__((preserve_access_index));

static __always_inline u32 scxd_task_group_weight(struct task_group *tg)
{
	struct task_group___scxd_flat *flat = (void *)tg;
	struct task_group___scxd_nested *nested = (void *)tg;

	if (bpf_core_field_exists(flat->scx_weight))
		return BPF_CORE_READ(flat, scx_weight);
	if (bpf_core_field_exists(nested->scx.weight))
		return BPF_CORE_READ(nested, scx.weight);
	return 0;
}

/*
 * CPU handles: one source for the cpu form and the cid form.
 *
 * A cid-form scheduler sees no CPU ids: ops.select_cid(), ops.dispatch()
 * and ops.update_idle() take cids (CPU ids renumbered densely in topology
 * order), SCX_DSQ_LOCAL_ON | cid names a local DSQ, CPU sets are
 * struct scx_cmask in the scheduler's BPF arena, and the kernel refuses
 * every cpu-form kfunc to it at load (scx_bpf_kick_cpu(),
 * scx_bpf_task_cpu(), the idle kfuncs, scx_bpf_select_cpu_dfl() among
 * them) and every direct write of p->scx.slice or p->scx.dsq_vtime. So
 * the schedulers never name either form. A "cpu" in their code is the
 * kernel's handle for a CPU, an id or a cid, and they use:
 *
 *   SCXD_OPS_DEFINE(name, ...)	  SCX_OPS_DEFINE or SCX_OPS_CID_DEFINE
 *   .SCXD_OP(select_cpu), .SCXD_OP(cgroup_move), ...
 *				  the ops member names that differ
 *   SCXD_OPS_CID_TRACKING	  in every scheduler's ops: idle and caps
 *				  tracking in cid form
 *   scxd_init_cpus()		  first thing in ops.init()
 *   scxd_note_idle(cpu, idle)	  first thing in an own ops.update_idle(),
 *				  whose scheduler defines SCXD_OWN_UPDATE_IDLE
 *				  before including common.bpf.h (libbpf
 *				  refuses an object with a struct_ops program
 *				  that no ops use)
 *   SCXD_CAP_DISPATCH		  the caps a parent grants a child for the
 *				  CPUs it lends it with scx_bpf_sub_dispatch()
 *   scxd_nr_cpus(), scxd_this_cpu(), scxd_task_cpu(p), scxd_kick_cpu(),
 *   scxd_task_allows(p, cpu), scxd_cpu_id(cpu)
 *   scxd_pick_idle(p, from, within), scxd_select_cpu_dfl()
 *   scxd_set_slice(p, ns), scxd_set_vtime(p, vtime)
 *   scxd_mask and scxd_mask_*()  CPU sets for grants, see below
 *
 * What the cid form costs. There is no kernel idle pick for cids: every
 * cid-form object keeps the idle cids it holds a cap on in an arena
 * cmask (the kernel calls ops.update_idle() of each scheduler holding
 * SCX_CAP_ENQ_IMMED on a cid) and claims from it with an atomic
 * test-and-clear, as upstream's scx_qmap does. A CPU claimed and kicked
 * that then finds nothing goes idle again without a transition the kernel
 * reports, so ops.dispatch() hands it back (scxd_dispatch_empty() in
 * common.bpf.h).
 *
 * Upstream also gates a child's moves in ops.dispatch() by its caps, where
 * our series lends the CPU with the call: a move needs SCX_CAP_ENQ on the
 * CPU, or is an SCX_ENQ_IMMED insert (ENQ_IMMED), which the kernel
 * re-enqueues if the CPU then runs anything else first, and ends the
 * child after 256 in a row. So in cid form each object keeps the caps it
 * holds per cid (ops.sub_ecaps_updated(); the root holds all), moves with
 * SCX_ENQ_IMMED only where it lacks ENQ, and a parent grants ENQ with
 * ENQ_IMMED on the CPUs it lends (SCXD_CAP_DISPATCH). The pick prefers the task's previous CPU, then the next
 * idle one after it in cid order, and gives up after a few CPUs the task
 * may not run on; where the kernel's pick also looks for idle SMT cores
 * and the waker's LLC, ours does not.
 */
#if SCXD_CID

#define SCXD_OPS_DEFINE(name, ...)	SCX_OPS_CID_DEFINE(name, __VA_ARGS__)
#define SCXD_OP(op)			SCXD_CID_OP_##op
#define SCXD_CID_OP_select_cpu		select_cid
#define SCXD_CID_OP_cgroup_move		cpuctl_move
#define SCXD_CID_OP_cgroup_set_weight	cpuctl_set_weight

#define SCXD_MAX_CPUS		512	/* cids an object can hold */
#define SCXD_MASK_SLOTS		4	/* scratch CPU sets, power of two */
#define SCXD_IDLE_PICK_TRIES	8

/*
 * The arena every cid-form scheduler must have exactly one of. Its user
 * address is left to the kernel (no map_extra): scxd loads many objects
 * into one process, and fixed addresses would collide.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 256);	/* pages: ours and the kernel's cmasks */
} arena SEC(".maps");

/* A cmask with room for SCXD_MAX_CPUS cids (header, then the words). */
struct scxd_cmask_buf {
	union {
		struct scx_cmask mask;
		u64 words[CMASK_NR_WORDS(SCXD_MAX_CPUS) + 2];
	};
};

/* cids we hold a cap on that were idle when the kernel last said so */
struct scxd_cmask_buf __arena_global scxd_idle;
/* the caps we hold on each cid, as ops.sub_ecaps_updated() last said */
static u8 scxd_ecaps[SCXD_MAX_CPUS];
/* scratch CPU sets of scxd_mask_new() */
struct scxd_cmask_buf __arena_global scxd_masks[SCXD_MASK_SLOTS];

static __always_inline u32 scxd_nr_cpus(void)
{
	u32 n = scx_bpf_nr_cids();

	return n < SCXD_MAX_CPUS ? n : SCXD_MAX_CPUS;
}

static __always_inline s32 scxd_this_cpu(void)
{
	return scx_bpf_this_cid();
}

static __always_inline s32 scxd_task_cpu(const struct task_struct *p)
{
	return scx_bpf_task_cid(p);
}

static __always_inline void scxd_kick_cpu(s32 cpu, u64 flags)
{
	scx_bpf_kick_cid(cpu, flags);
}

/* The CPU id of handle @cpu, to compare with CPU numbers and cpumasks. */
static __always_inline s32 scxd_cpu_id(s32 cpu)
{
	return scx_bpf_cid_to_cpu(cpu);
}

/* Set up what the cid form keeps; 0 or -errno, from ops.init(). */
static __always_inline s32 scxd_init_cpus(void)
{
	if (scx_bpf_nr_cids() > SCXD_MAX_CPUS) {
		scx_bpf_error("%u CPUs, more than the %d this object can hold",
			      scx_bpf_nr_cids(), SCXD_MAX_CPUS);
		return -E2BIG;
	}
	cmask_init(&scxd_idle.mask, 0, scxd_nr_cpus());
	/* a root starts with every cap, a child with none */
	cmask_init(&scxd_masks[0].mask, 0, scxd_nr_cpus());
	if (!scx_bpf_sub_caps(0, SCX_CAP_ENQ, &scxd_masks[0].mask)) {
		u32 i;

		bpf_for(i, 0, SCXD_MAX_CPUS) {
			if (i >= scxd_nr_cpus())
				break;
			if (cmask_test(i, &scxd_masks[0].mask))
				scxd_ecaps[i] = SCX_CAP_ENQ | SCX_CAP_ENQ_IMMED;
		}
	}
	return 0;
}

static __always_inline void scxd_note_idle(s32 cpu, bool idle)
{
	if (idle)
		cmask_set(cpu, &scxd_idle.mask);
	else
		cmask_clear(cpu, &scxd_idle.mask);
}

void BPF_STRUCT_OPS(scxd_sub_ecaps_updated, s32 cpu, u64 before, u64 after)
{
	if (cpu >= 0 && cpu < SCXD_MAX_CPUS)
		scxd_ecaps[cpu] = after;
}

#ifndef SCXD_OWN_UPDATE_IDLE
void BPF_STRUCT_OPS(scxd_update_idle, s32 cpu, bool idle)
{
	scxd_note_idle(cpu, idle);
}

#define SCXD_OPS_CID_TRACKING						\
	.update_idle = (void *)scxd_update_idle,			\
	.sub_ecaps_updated = (void *)scxd_sub_ecaps_updated,
#else
#define SCXD_OPS_CID_TRACKING						\
	.sub_ecaps_updated = (void *)scxd_sub_ecaps_updated,
#endif

/* enq_flags of a move onto the local DSQ of the CPU we dispatch for */
static __always_inline u64 scxd_enq_dispatch(void)
{
	s32 cpu = scxd_this_cpu();

	if (cpu >= 0 && cpu < SCXD_MAX_CPUS && (scxd_ecaps[cpu] & SCX_CAP_ENQ))
		return 0;
	return SCX_ENQ_IMMED;
}

/*
 * In a program whose arena pointers all come from the kernel (an
 * argument), so that the verifier associates the arena with it.
 */
#define SCXD_TOUCH_ARENA()	asm volatile("" :: "r"(&arena))

/*
 * A local insert onto a CPU just claimed idle: the task runs there at
 * once, so SCX_ENQ_IMMED, which a child needs only SCX_CAP_ENQ_IMMED for.
 */
#define SCXD_ENQ_IDLE		SCX_ENQ_IMMED

static __always_inline void scxd_set_slice(struct task_struct *p, u64 slice)
{
	scx_bpf_task_set_slice(p, slice);
}

static __always_inline void scxd_set_vtime(struct task_struct *p, u64 vtime)
{
	scx_bpf_task_set_dsq_vtime(p, vtime);
}

#else	/* cpu form */

#define SCXD_OPS_DEFINE(name, ...)	SCX_OPS_DEFINE(name, __VA_ARGS__)
#define SCXD_OP(op)			op
#define SCXD_OPS_CID_TRACKING
#define SCXD_TOUCH_ARENA()
#define SCXD_ENQ_IDLE			0

static __always_inline u64 scxd_enq_dispatch(void)
{
	return 0;
}

static __always_inline u32 scxd_nr_cpus(void)
{
	return scx_bpf_nr_cpu_ids();
}

static __always_inline s32 scxd_this_cpu(void)
{
	return bpf_get_smp_processor_id();
}

static __always_inline s32 scxd_task_cpu(const struct task_struct *p)
{
	return scx_bpf_task_cpu(p);
}

static __always_inline void scxd_kick_cpu(s32 cpu, u64 flags)
{
	scx_bpf_kick_cpu(cpu, flags);
}

static __always_inline s32 scxd_cpu_id(s32 cpu)
{
	return cpu;
}

static __always_inline s32 scxd_init_cpus(void)
{
	return 0;
}

static __always_inline void scxd_note_idle(s32 cpu, bool idle)
{
}

/*
 * A kernel with the kfuncs refuses a sub-scheduler that writes p->scx.slice
 * or p->scx.dsq_vtime directly; the verifier drops the branch not taken, so
 * the object has the direct write only where the kfunc is missing.
 */
bool scx_bpf_task_set_slice(struct task_struct *p, u64 slice) __ksym __weak;
bool scx_bpf_task_set_dsq_vtime(struct task_struct *p, u64 vtime) __ksym __weak;

static __always_inline void scxd_set_slice(struct task_struct *p, u64 slice)
{
	if (bpf_ksym_exists(scx_bpf_task_set_slice))
		scx_bpf_task_set_slice(p, slice);
	else
		p->scx.slice = slice;
}

static __always_inline void scxd_set_vtime(struct task_struct *p, u64 vtime)
{
	if (bpf_ksym_exists(scx_bpf_task_set_dsq_vtime))
		scx_bpf_task_set_dsq_vtime(p, vtime);
	else
		p->scx.dsq_vtime = vtime;
}

#endif	/* SCXD_CID */

/* May @p run on CPU handle @cpu? */
static __always_inline bool scxd_task_allows(const struct task_struct *p, s32 cpu)
{
	s32 id = scxd_cpu_id(cpu);

	return id >= 0 && bpf_cpumask_test_cpu(id, p->cpus_ptr);
}

/*
 * CPU sets a parent grants and revokes with, and a scheduler keeps.
 * scxd_mask is struct bpf_cpumask (cpu form) or an arena cmask (cid
 * form). scxd_mask_new(slot) gives an empty one: a new bpf_cpumask, or
 * scratch set @slot (< SCXD_MASK_SLOTS), which the caller must not use
 * from two contexts at once; NULL on failure. Every set from
 * scxd_mask_new() goes back with scxd_mask_free().
 */
#if SCXD_CID
/*
 * Macros, not typedefs: a field access through a typedef'd pointer becomes
 * a CO-RE relocation against the typedef, which the kernel's BTF lacks.
 */
#define scxd_mask	struct scx_cmask __arena
#define scxd_cpus	struct scx_cmask __arena	/* a read-only CPU set */

static __always_inline scxd_mask *scxd_mask_new(u32 slot)
{
	scxd_mask *m = &scxd_masks[slot & (SCXD_MASK_SLOTS - 1)].mask;

	cmask_init(m, 0, scxd_nr_cpus());
	return m;
}

static __always_inline void scxd_mask_free(scxd_mask *m)
{
}

static __always_inline void scxd_mask_set(s32 cpu, scxd_mask *m)
{
	__cmask_set(cpu, m);
}

static __always_inline bool scxd_mask_test(s32 cpu, const scxd_mask *m)
{
	return cmask_test(cpu, m);
}

static __always_inline bool scxd_mask_empty(const scxd_mask *m)
{
	return cmask_first_set(m) >= m->base + m->nr_cids;
}

static __always_inline void scxd_mask_or(scxd_mask *dst, const scxd_mask *src)
{
	cmask_or(dst, src);
}

static __always_inline void scxd_mask_fill(scxd_mask *m)
{
	u32 i;

	bpf_for(i, 0, SCXD_MAX_CPUS) {
		if (i >= m->nr_cids)
			break;
		__cmask_set(i, m);
	}
}

/*
 * Claim an idle CPU @p may run on, within @within unless NULL: @from
 * first, then the next ones after it in cid order; -1 if none.
 */
static __always_inline s32 scxd_pick_idle(const struct task_struct *p, s32 from,
					  const scxd_cpus *within)
{
	const scxd_mask *idle = &scxd_idle.mask;
	u32 nr = scxd_nr_cpus(), i;
	s32 cpu = from;

	if (from >= 0 && (!within || cmask_test(from, within)) &&
	    scxd_task_allows(p, from) && cmask_test_and_clear(from, &scxd_idle.mask))
		return from;
	if (p->nr_cpus_allowed == 1)
		return -1;
	if (cpu < 0)
		cpu = -1;
	bpf_for(i, 0, SCXD_IDLE_PICK_TRIES) {
		cpu = within ? cmask_next_and_set_wrap(idle, within, cpu + 1)
			     : cmask_next_set_wrap(idle, cpu + 1);
		if (cpu >= nr)
			return -1;
		if (scxd_task_allows(p, cpu) &&
		    cmask_test_and_clear(cpu, &scxd_idle.mask))
			return cpu;
	}
	return -1;
}

static __always_inline bool scxd_cpus_test(s32 cpu, const scxd_cpus *m)
{
	return cpu >= 0 && cmask_test(cpu, m);
}

/*
 * The first CPU of @m after @from (wrapping) that @p may run on;
 * scxd_nr_cpus() or more if none.
 */
static __always_inline s32 scxd_cpus_any_for_task(const scxd_cpus *m,
						  const struct task_struct *p,
						  s32 from)
{
	u32 nr = scxd_nr_cpus(), i;
	s32 cpu = from;

	bpf_for(i, 0, SCXD_MAX_CPUS) {
		if (i >= nr)
			break;
		cpu = cmask_next_set_wrap(m, cpu + 1);
		if (cpu >= nr || scxd_task_allows(p, cpu))
			return cpu;
	}
	return nr;
}

/* scx_bpf_select_cpu_dfl() without its SMT and LLC preferences. */
static __always_inline s32 scxd_select_cpu_dfl(struct task_struct *p, s32 prev_cpu,
					       u64 wake_flags, bool *is_idle)
{
	s32 cpu = scxd_pick_idle(p, prev_cpu, NULL);

	*is_idle = cpu >= 0;
	return cpu >= 0 ? cpu : prev_cpu;
}
#else
#define scxd_mask	struct bpf_cpumask
#define scxd_cpus	struct cpumask			/* a read-only CPU set */

static __always_inline scxd_mask *scxd_mask_new(u32 slot)
{
	return bpf_cpumask_create();
}

static __always_inline void scxd_mask_free(scxd_mask *m)
{
	bpf_cpumask_release(m);
}

static __always_inline void scxd_mask_set(s32 cpu, scxd_mask *m)
{
	bpf_cpumask_set_cpu(cpu, m);
}

static __always_inline bool scxd_mask_test(s32 cpu, const scxd_mask *m)
{
	return bpf_cpumask_test_cpu(cpu, (const struct cpumask *)m);
}

static __always_inline bool scxd_mask_empty(const scxd_mask *m)
{
	return bpf_cpumask_empty((const struct cpumask *)m);
}

static __always_inline void scxd_mask_or(scxd_mask *dst, const scxd_mask *src)
{
	bpf_cpumask_or(dst, (const struct cpumask *)dst, (const struct cpumask *)src);
}

static __always_inline void scxd_mask_fill(scxd_mask *m)
{
	bpf_cpumask_setall(m);
}

/*
 * The kernel's idle pick over @p's CPUs, or over @within; a CPU of
 * @within that @p may not run on is kicked to go idle again and -1
 * returned.
 */
static __always_inline s32 scxd_pick_idle(const struct task_struct *p, s32 from,
					  const scxd_cpus *within)
{
	s32 cpu = scx_bpf_pick_idle_cpu(within ?: p->cpus_ptr, 0);

	if (cpu >= 0 && within && !bpf_cpumask_test_cpu(cpu, p->cpus_ptr)) {
		scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		return -1;
	}
	return cpu;
}

static __always_inline bool scxd_cpus_test(s32 cpu, const scxd_cpus *m)
{
	return cpu >= 0 && bpf_cpumask_test_cpu(cpu, m);
}

static __always_inline s32 scxd_cpus_any_for_task(const scxd_cpus *m,
						  const struct task_struct *p,
						  s32 from)
{
	return bpf_cpumask_any_and_distribute(m, p->cpus_ptr);
}

static __always_inline s32 scxd_select_cpu_dfl(struct task_struct *p, s32 prev_cpu,
					       u64 wake_flags, bool *is_idle)
{
	return scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, is_idle);
}
#endif	/* SCXD_CID */

/*
 * Sub-scheduler support. Everything a scheduler writes for the parent
 * role sits under "#if SCXD_HAVE_SUB_SCHED"; the helpers below are
 * always defined so the common code paths need no #if of their own.
 *
 * scx_bpf_sub_dispatch(): the seeds take the calling program from an
 * implicit argument (KF_IMPLICIT_ARGS), so BPF passes only the cgroup id.
 * A 6.12 kernel without KF_IMPLICIT_ARGS may expose a trailing pointer
 * that the verifier fills in (the aux__ign pattern); meson passes
 * -DSCXD_SUB_DISPATCH_AUX=1 when the kernel tree declares it that way.
 */
#if SCXD_HAVE_SUB_SCHED
#ifdef SCXD_SUB_DISPATCH_AUX
bool scx_bpf_sub_dispatch___scxd(u64 cgroup_id, void *aux__ign) __ksym __weak;
#define __scxd_sub_dispatch(cgid) scx_bpf_sub_dispatch___scxd((cgid), NULL)
#else
bool scx_bpf_sub_dispatch___scxd(u64 cgroup_id) __ksym __weak;
#define __scxd_sub_dispatch(cgid) scx_bpf_sub_dispatch___scxd((cgid))
#endif

/* Can this kernel run children under us? Settled at load time. */
static __always_inline bool scxd_sub_sched_supported(void)
{
	return bpf_ksym_exists(scx_bpf_sub_dispatch___scxd);
}

/* Let child scheduler @cgid dispatch onto this CPU; false if it had none. */
static __always_inline bool scxd_sub_dispatch(u64 cgid)
{
	if (!bpf_ksym_exists(scx_bpf_sub_dispatch___scxd))
		return false;
	return __scxd_sub_dispatch(cgid);
}
#else
static __always_inline bool scxd_sub_sched_supported(void)
{
	return false;
}

static __always_inline bool scxd_sub_dispatch(u64 cgid)
{
	return false;
}
#endif	/* SCXD_HAVE_SUB_SCHED */

/*
 * Kill and rescue (issue 21; kernel patches "Add scx_bpf_sub_kill()" and
 * "Rescue sub-schedulers their parent doesn't serve"). Neither is used by
 * the schedulers here yet; what differs from upstream 7.3:
 *
 *  - scx_bpf_sub_kill(cgid, fmt, args...) is the common.bpf.h macro over
 *    scx_bpf_sub_kill_bstr(); SCX_EXIT_PARENT_KILL is 69; killing the
 *    root's cgroup (id 1) is the caller's error here.
 *  - ops.rescue_bandwidth_ppt and ops.rescue_quantum_us are read from each
 *    parent for its own children (upstream: the root's only), and
 *    SCX_RESCUE_DISABLE on any ancestor turns rescue off for its whole
 *    subtree (so on the root, everywhere, as upstream). Limits are
 *    upstream's (250 ppt, SCX_RESCUE_DISABLE, 100 ms), the default quantum
 *    is 1 ms (upstream 5 ms), at least a tick. Pristine 6.12 has neither
 *    field: a scheduler setting them must not build for kernel (a).
 *  - A rescue calls the starved child's ops.dispatch() (after its own
 *    global DSQ) from balance, where upstream queues starved tasks on a
 *    rescue DSQ; the bandwidth is charged per CPU with the time rescued
 *    tasks ran; there is no overload ejection, the watchdog blames the
 *    parent for what rescue can't cover.
 */

/*
 * CPU delegation (issue 21): a parent grants its direct children
 * per-CPU capabilities and revokes them. Our kernel series carries the
 * cpu-form port of upstream 7.3's model (kernel/sched/ext/sub.c there);
 * on kernels without it every wrapper below reports "not supported" and
 * a parent enforces what it can by where it calls scx_bpf_sub_dispatch().
 *
 * Differences from upstream 7.3's cid-form API, all of them from the
 * port (see its changelogs):
 *  - CPU ids and struct cpumask (bpf_cpumask) where 7.3 takes cids and
 *    arena cmasks: scx_bpf_sub_grant(cgid, caps, const struct cpumask *),
 *    scx_bpf_sub_revoke(cgid, caps, const struct cpumask *),
 *    scx_bpf_sub_caps(cgid, caps, struct bpf_cpumask *out) and
 *    ops.sub_caps_updated(const struct cpumask *, u64 caps).
 *  - scx_bpf_sub_grant() has no denied_out mask: a CPU is granted only
 *    if the caller literally holds every requested cap on it, the
 *    return is -EPERM when any CPU was refused; read the result back
 *    with scx_bpf_sub_caps().
 *  - SCX_CAP_ENQ_IMMED covers kicks only (6.12 has no SCX_ENQ_IMMED
 *    insert flag); SCX_CAP_ENQ covers local inserts, PREEMPT preempting
 *    inserts and kicks, PERF scx_bpf_cpuperf_set().
 *  - scx_bpf_sub_dispatch() is not gated by caps: a parent calling it on
 *    a CPU lends that CPU, so parents that grant nothing keep working,
 *    and a child dispatching onto SCX_DSQ_LOCAL of the lent CPU needs no
 *    cap.
 *  - scx_bpf_sub_kill() is scx_bpf_sub_kill_bstr() under a printf-like
 *    macro, as scx_bpf_exit(); the child ends with SCX_EXIT_PARENT_KILL.
 *
 * Which of these the running kernel has is settled at load time
 * (bpf_ksym_exists() on weak "___scxd" ksyms, as above):
 * scxd_caps_supported() is true when scx_bpf_sub_grant() resolves. The
 * SCXD_CAP_* values are the contract's (enum scx_cap_flags); where
 * vmlinux.h has the enum (meson passes -DSCXD_HAVE_SCX_CAPS=1) and is
 * one of our series' (SCXD_HAVE_SUB_SCHED), they are checked against it
 * at compile time. ops.sub_caps_updated() is a
 * struct_ops member only on such a kernel's vmlinux.h: meson passes
 * -DSCXD_HAVE_SUB_CAPS_UPDATED=1 when it is there, and a scheduler sets
 * it under that #if (SCXD_OPS_SUB_CAPS_UPDATED() below).
 */
#ifndef SCXD_HAVE_SCX_CAPS
#define SCXD_HAVE_SCX_CAPS 0
#endif

#ifndef SCXD_HAVE_SUB_CAPS_UPDATED
#define SCXD_HAVE_SUB_CAPS_UPDATED 0
#endif

#define SCXD_CAP_ENQ_IMMED	(1ULL << 0)	/* kick the CPU */
#define SCXD_CAP_ENQ		(1ULL << 1)	/* insert into its local DSQ */
#define SCXD_CAP_PREEMPT	(1ULL << 2)	/* preempting inserts and kicks */
#define SCXD_CAP_PERF		(1ULL << 3)	/* scx_bpf_cpuperf_set() */
#define SCXD_CAP_ALL		0xfULL

/*
 * What a parent grants a child on the CPUs it lends it. Our series lends
 * a CPU with scx_bpf_sub_dispatch() itself: kicks (ENQ_IMMED) are all a
 * child needs beyond its turns. Upstream gates the child's moves in
 * ops.dispatch() by ENQ, so there the parent grants it too.
 */
#if SCXD_CID
#define SCXD_CAP_DISPATCH	(SCXD_CAP_ENQ_IMMED | SCXD_CAP_ENQ)
#else
#define SCXD_CAP_DISPATCH	SCXD_CAP_ENQ_IMMED
#endif

#if SCXD_HAVE_SCX_CAPS && SCXD_HAVE_SUB_SCHED
_Static_assert(SCX_CAP_ENQ_IMMED == SCXD_CAP_ENQ_IMMED &&
	       SCX_CAP_ENQ == SCXD_CAP_ENQ &&
	       SCX_CAP_PREEMPT == SCXD_CAP_PREEMPT &&
	       SCX_CAP_PERF == SCXD_CAP_PERF,
	       "SCX_CAP_* differ from the issue 21 contract");
#endif

#if SCXD_HAVE_SUB_SCHED && SCXD_CID
/* upstream's own kfuncs, declared __weak by the tree's common.bpf.h */
static __always_inline bool scxd_caps_supported(void)
{
	return bpf_ksym_exists(scx_bpf_sub_grant);
}

static __always_inline s32 scxd_sub_grant(u64 cgid, u64 caps, const scxd_mask *cpus)
{
	if (!bpf_ksym_exists(scx_bpf_sub_grant))
		return -EOPNOTSUPP;
	return scx_bpf_sub_grant(cgid, caps, cpus, NULL);
}

static __always_inline void scxd_sub_revoke(u64 cgid, u64 caps, const scxd_mask *cpus)
{
	if (bpf_ksym_exists(scx_bpf_sub_revoke))
		scx_bpf_sub_revoke(cgid, caps, cpus);
}

static __always_inline s32 scxd_sub_caps(u64 cgid, u64 caps, scxd_mask *out)
{
	if (!bpf_ksym_exists(scx_bpf_sub_caps))
		return -EOPNOTSUPP;
	return scx_bpf_sub_caps(cgid, caps, out);
}

#define scxd_sub_kill(cgid, fmt, args...)				\
({									\
	scx_bpf_bstr_preamble(fmt, args)				\
	if (bpf_ksym_exists(scx_bpf_sub_kill_bstr))			\
		scx_bpf_sub_kill_bstr((cgid), ___fmt, ___param,		\
				      sizeof(___param));		\
	___scx_bpf_bstr_format_checker(fmt, ##args);			\
})
#elif SCXD_HAVE_SUB_SCHED
s32 scx_bpf_sub_grant___scxd(u64 cgroup_id, u64 caps,
			     const struct cpumask *cpus) __ksym __weak;
void scx_bpf_sub_revoke___scxd(u64 cgroup_id, u64 caps,
			       const struct cpumask *cpus) __ksym __weak;
s32 scx_bpf_sub_caps___scxd(u64 cgroup_id, u64 caps,
			    struct bpf_cpumask *out) __ksym __weak;
void scx_bpf_sub_kill_bstr___scxd(u64 cgroup_id, char *fmt,
				  unsigned long long *data,
				  u32 data__sz) __ksym __weak;

/* Does this kernel have CPU delegation? Settled at load time. */
static __always_inline bool scxd_caps_supported(void)
{
	return bpf_ksym_exists(scx_bpf_sub_grant___scxd);
}

/* Grant @caps on @cpus to direct child @cgid; -EOPNOTSUPP without caps. */
static __always_inline s32 scxd_sub_grant(u64 cgid, u64 caps, const scxd_mask *cpus)
{
	if (!bpf_ksym_exists(scx_bpf_sub_grant___scxd))
		return -EOPNOTSUPP;
	return scx_bpf_sub_grant___scxd(cgid, caps, (const struct cpumask *)cpus);
}

/* Take @caps on @cpus back from child @cgid and its descendants. */
static __always_inline void scxd_sub_revoke(u64 cgid, u64 caps, const scxd_mask *cpus)
{
	if (bpf_ksym_exists(scx_bpf_sub_revoke___scxd))
		scx_bpf_sub_revoke___scxd(cgid, caps, (const struct cpumask *)cpus);
}

/*
 * Where @cgid (0: ourselves) holds any of @caps, into @out;
 * -EOPNOTSUPP without caps, when @out is left alone.
 */
static __always_inline s32 scxd_sub_caps(u64 cgid, u64 caps, scxd_mask *out)
{
	if (!bpf_ksym_exists(scx_bpf_sub_caps___scxd))
		return -EOPNOTSUPP;
	return scx_bpf_sub_caps___scxd(cgid, caps, out);
}

/*
 * End direct child @cgid with SCX_EXIT_PARENT_KILL and a formatted
 * reason. Without caps there is no such kfunc and this does nothing: the
 * caller tells the child's loader some other way, or stops serving it.
 */
#define scxd_sub_kill(cgid, fmt, args...)				\
({									\
	scx_bpf_bstr_preamble(fmt, args)				\
	if (bpf_ksym_exists(scx_bpf_sub_kill_bstr___scxd))		\
		scx_bpf_sub_kill_bstr___scxd((cgid), ___fmt, ___param,	\
					     sizeof(___param));		\
	___scx_bpf_bstr_format_checker(fmt, ##args);			\
})
#else
static __always_inline bool scxd_caps_supported(void)
{
	return false;
}

static __always_inline s32 scxd_sub_grant(u64 cgid, u64 caps, const scxd_mask *cpus)
{
	return -EOPNOTSUPP;
}

static __always_inline void scxd_sub_revoke(u64 cgid, u64 caps, const scxd_mask *cpus)
{
}

static __always_inline s32 scxd_sub_caps(u64 cgid, u64 caps, scxd_mask *out)
{
	return -EOPNOTSUPP;
}

#define scxd_sub_kill(cgid, fmt, args...)	do { } while (0)
#endif	/* SCXD_HAVE_SUB_SCHED */

/* ".sub_caps_updated = fn," in SCX_OPS_DEFINE() where the member exists */
#if SCXD_HAVE_SUB_SCHED && SCXD_HAVE_SUB_CAPS_UPDATED
#define SCXD_OPS_SUB_CAPS_UPDATED(fn)	.sub_caps_updated = (void *)(fn),
#else
#define SCXD_OPS_SUB_CAPS_UPDATED(fn)
#endif

#endif	/* __SCXD_COMPAT_BPF_H */
