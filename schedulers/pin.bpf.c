/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scxd pin: keep tasks on a subset of the CPUs.
 *
 * For whom: a cgroup that must stay off some CPUs or keep to its own
 * (a noisy batch job kept to two cores, a latency-critical service given
 * cores nobody else uses when the root also runs pin for everyone else
 * with the complementary set), without touching each task's affinity or
 * cpuset configuration.
 *
 * Policy. @cpus is a bitmask of allowed CPUs (bit N = CPU N, CPUs 0-63;
 * 0, the default, means all). A waking task goes to an idle allowed CPU
 * when there is one, else it is queued in one FIFO that only allowed
 * CPUs serve, so it runs nowhere else; a synchronous wakee (pipe or
 * futex hand-off) waits behind its waker when nobody else waits there
 * and the FIFO is being served, as in fifo. Tasks whose own affinity has no
 * CPU in common with @cpus (per-CPU kernel threads as root) are run where
 * they are, in FIFO order, since refusing them would stall them.
 *
 * Example: cpus=0x3 on a 4-CPU guest: spinners of the cgroup share CPUs
 * 0 and 1 and are never seen on 2 or 3 (tests/guest/sched checks this
 * with sched_getcpu() samples from every task).
 *
 * Trade-off: no weights; an allowed CPU's idle time is not lent to the
 * other CPUs' tasks.
 *
 * Roles.
 *  - root: confines every task that can run on the set.
 *  - leaf: confines the cgroup's tasks; the parent decides when the
 *    cgroup runs on those CPUs.
 *  - parent: no (no sub_attach).
 *
 * Tunables:
 *  cpus	  allowed CPUs as a bitmask, 0 = all (default 0)
 *  slice_us  slice length (default 20000)
 *  sub_cgroup_id set by the loader when run as a leaf
 */
#include <scxd/common.bpf.h>

char _license[] SEC("license") = "GPL";

const volatile u64 cpus;
const volatile u64 slice_us = 20000;
const volatile u64 sub_cgroup_id;

UEI_DEFINE(uei);

#define PIN_DSQ 0
#define MAX_MASK_CPUS 64

static u64 slice_ns(void)
{
	return slice_us * SCXD_NSEC_PER_USEC;
}

#if SCXD_CID
/* The allowed set, as cids. */
struct scxd_cmask_buf __arena_global allowed;

static const scxd_cpus *allowed_cpus(void)
{
	return &allowed.mask;
}

static s32 allowed_init(void)
{
	u32 i;

	cmask_init(&allowed.mask, 0, scxd_nr_cpus());
	bpf_for(i, 0, MAX_MASK_CPUS) {
		s32 cid;

		if (i >= scx_bpf_nr_cpu_ids())
			break;
		if (cpus && !(cpus & (1ULL << i)))
			continue;
		cid = scx_bpf_cpu_to_cid(i);
		if (cid >= 0)
			__cmask_set(cid, &allowed.mask);
	}
	return 0;
}
#else
struct allowed {
	struct bpf_cpumask __kptr *mask;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct allowed);
} allowed_map SEC(".maps");

/* The allowed set; valid for the rest of this (RCU-protected) callback. */
static const scxd_cpus *allowed_cpus(void)
{
	struct allowed *a;
	u32 zero = 0;

	a = bpf_map_lookup_elem(&allowed_map, &zero);
	if (!a || !a->mask)
		return NULL;
	return cast_mask(a->mask);
}

static s32 allowed_init(void)
{
	struct bpf_cpumask *mask;
	struct allowed *a;
	u32 zero = 0, i;

	mask = bpf_cpumask_create();
	if (!mask)
		return -ENOMEM;
	for (i = 0; i < MAX_MASK_CPUS; i++)
		if (!cpus || (cpus & (1ULL << i)))
			bpf_cpumask_set_cpu(i, mask);

	a = bpf_map_lookup_elem(&allowed_map, &zero);
	if (!a) {
		bpf_cpumask_release(mask);
		return -ENOENT;
	}
	mask = bpf_kptr_xchg(&a->mask, mask);
	if (mask)
		bpf_cpumask_release(mask);
	return 0;
}
#endif

/* May @p run on any allowed CPU? */
static __always_inline bool allows_task(const scxd_cpus *mask, struct task_struct *p)
{
	return mask && scxd_cpus_any_for_task(mask, p, -1) < scxd_nr_cpus();
}

s32 BPF_STRUCT_OPS(pin_select_cpu, struct task_struct *p, s32 prev_cpu,
		   u64 wake_flags)
{
	const scxd_cpus *mask = allowed_cpus();
	s32 cpu, this_cpu;

	if (!allows_task(mask, p))
		return prev_cpu;

	cpu = scxd_pick_idle(p, prev_cpu, mask);
	if (cpu >= 0) {
		scxd_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns(), SCXD_ENQ_IDLE);
		return cpu;
	}

	/* a synchronous wakee waits behind its waker, as in fifo */
	this_cpu = scxd_this_cpu();
	if (!sub_cgroup_id && (wake_flags & SCX_WAKE_SYNC) &&
	    !scxd_shared_starving(PIN_DSQ, slice_ns()) &&
	    scxd_cpus_test(this_cpu, mask) && scxd_task_allows(p, this_cpu) &&
	    !scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL_ON | this_cpu)) {
		scxd_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns(), 0);
		return this_cpu;
	}

	if (scxd_cpus_test(prev_cpu, mask))
		return prev_cpu;
	cpu = scxd_cpus_any_for_task(mask, p, prev_cpu);
	return cpu < scxd_nr_cpus() ? cpu : prev_cpu;
}

void BPF_STRUCT_OPS(pin_enqueue, struct task_struct *p, u64 enq_flags)
{
	const scxd_cpus *mask = allowed_cpus();
	s32 cpu;

	if (!allows_task(mask, p)) {
		scxd_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns(), enq_flags);
		return;
	}

	scxd_shared_queueing(PIN_DSQ);
	scxd_dsq_insert(p, PIN_DSQ, slice_ns(), enq_flags);
	cpu = scxd_pick_idle(p, SCXD_CID ? scxd_task_cpu(p) : -1, mask);
	if (cpu >= 0)
		scxd_kick_cpu(cpu, SCX_KICK_IDLE);
}

void BPF_STRUCT_OPS(pin_dispatch, s32 cpu, struct task_struct *prev)
{
	const scxd_cpus *mask = allowed_cpus();

	if (!mask || !scxd_cpus_test(cpu, mask) || !scxd_shared_serve(PIN_DSQ))
		scxd_dispatch_empty(cpu, prev);
}

s32 BPF_STRUCT_OPS_SLEEPABLE(pin_init)
{
	return scxd_init_cpus() ?: scx_bpf_create_dsq(PIN_DSQ, -1) ?: allowed_init();
}

void BPF_STRUCT_OPS(pin_exit, struct scx_exit_info *ei)
{
	UEI_RECORD(uei, ei);
}

SCXD_OPS_DEFINE(pin_ops,
	       .SCXD_OP(select_cpu)	= (void *)pin_select_cpu,
	       .enqueue			= (void *)pin_enqueue,
	       .dispatch		= (void *)pin_dispatch,
	       SCXD_OPS_CID_TRACKING
	       .init			= (void *)pin_init,
	       .exit			= (void *)pin_exit,
	       .name			= "scxd_pin");
