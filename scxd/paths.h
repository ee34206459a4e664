/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/* Where scxd finds the kernel and keeps its state; tests point them at fake trees. */
struct scxd_paths {
	const char *cgroup_root;	/* /sys/fs/cgroup */
	const char *sysfs;		/* /sys/kernel/sched_ext */
	const char *pin_dir;		/* /sys/fs/bpf/scxd */
	const char *state_dir;		/* /run/scxd */
	const char *sched_dir;		/* <libdir>/scxd, or its cid/ on a cid kernel */
	const char *kernel_btf;		/* the kernel's BTF; NULL: /sys/kernel/btf/vmlinux */
};
