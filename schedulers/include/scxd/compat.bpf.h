/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One source, three kernels.
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
 *  (c) upstream kernels carrying the seeds' API in its cpu-form
 *      struct sched_ext_ops (7.1): the renamed kfuncs (scx_bpf_dsq_insert,
 *      scx_bpf_dsq_insert_vtime, scx_bpf_dsq_move_to_local) and the
 *      sub-scheduler API.
 *
 * Two things differ and they are settled at two different times:
 *
 *  - Whether struct sched_ext_ops has the sub-scheduler members is a
 *    property of the vmlinux.h we compile against: a designated
 *    initialiser for .sub_attach does not compile without it. meson greps
 *    vmlinux.h for struct scx_sub_attach_args and passes
 *    -DSCXD_HAVE_SUB_SCHED=1. An object built that way still loads on a
 *    pristine kernel as long as sub_cgroup_id is left at zero: libbpf
 *    skips struct_ops members the running kernel lacks when they are zero
 *    and turns off autoload of programs bound to them.
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
 * Kernels that want the cid-form ops (7.3) are not handled yet.
 */
#ifndef __SCXD_COMPAT_BPF_H
#define __SCXD_COMPAT_BPF_H

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
	scx_bpf_dsq_move_to_local((dsq), 0)
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

#endif	/* __SCXD_COMPAT_BPF_H */
