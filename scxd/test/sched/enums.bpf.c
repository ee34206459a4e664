// SPDX-License-Identifier: GPL-2.0
/*
 * Not a scheduler: the globals an object built the upstream way carries
 * for SCX_ENUM_INIT (scx/enums.autogen.bpf.h: one __weak const volatile
 * u64 __SCX_<NAME> per kernel enumerator it may use), beside a tunable, for
 * the host test of kernel_api_set_enums(). __SCX_ONLY_DECLARED is one the
 * test's kernel BTF lacks and no code uses (left 0); -DWITH_MISSING adds
 * one it lacks that the code uses (refused). Never loaded.
 */
typedef unsigned int u32;
typedef unsigned long long u64;

const volatile u32 slice_us = 5000;
const volatile u64 __SCX_DSQ_LOCAL __attribute__((weak));
const volatile u64 __SCX_SLICE_DFL __attribute__((weak));
const volatile u64 __SCX_OPS_NAME_LEN __attribute__((weak));
const volatile u64 __SCX_ONLY_DECLARED __attribute__((weak));
#ifdef WITH_MISSING
const volatile u64 __SCX_NOT_IN_KERNEL __attribute__((weak));
#endif

u64 sink;

__attribute__((section("tc"), used))
int read_all(void *ctx)
{
	sink = slice_us + __SCX_DSQ_LOCAL + __SCX_SLICE_DFL + __SCX_OPS_NAME_LEN;
#ifdef WITH_MISSING
	sink += __SCX_NOT_IN_KERNEL;
#endif
	return 0;
}

char _license[] __attribute__((section("license"), used)) = "GPL";
