/* SPDX-License-Identifier: GPL-2.0 */
/*
 * skip-busy-fentry.so: an LD_PRELOAD library for upstream's scx_qmap in the
 * lab guest (tests/compat-upstream/interop), never for a host.
 *
 * 7.3's tools/sched_ext/include/scx/common.bpf.h gives every scheduler built
 * with it an fentry program on bpf_scx_reg() (scx_lib_init_probe), and
 * SCX_OPS_ATTACH attaches the whole skeleton, so scx_qmap refuses to start
 * when that attach fails. On a kernel without CONFIG_FUNCTION_TRACER, like
 * the lab's tinyconfig-based guest kernel, no fentry program can attach
 * (the kernel answers EBUSY: there is no patchable call site). The probe
 * only records whether the BPF prolog disables migration, which common.bpf.h
 * consults on kernels older than 6.18 only.
 *
 * This library wraps libc's syscall(), through which the statically linked
 * libbpf makes every bpf() call: a BPF_LINK_CREATE of an fentry program
 * that the kernel refuses with EBUSY returns a descriptor of /dev/null in
 * place of a link, and says so on stderr ("skip-busy-fentry: ..."), which
 * the test reports as a difference. Every other call, and that one on a
 * kernel that can attach it, goes through untouched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef long (*syscall_fn)(long, ...);

long syscall(long nr, ...)
{
	static syscall_fn real;
	union bpf_attr *attr;
	long arg[6], ret;
	va_list ap;
	int i, err;

	/* the kernel takes six register arguments; read them all as glibc does */
	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		arg[i] = va_arg(ap, long);
	va_end(ap);

	if (!real)
		real = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	ret = real(nr, arg[0], arg[1], arg[2], arg[3], arg[4], arg[5]);
	if (ret >= 0 || errno != EBUSY || nr != __NR_bpf || arg[0] != BPF_LINK_CREATE)
		return ret;

	attr = (union bpf_attr *)arg[1];
	if (attr->link_create.attach_type != BPF_TRACE_FENTRY)
		return ret;

	err = errno;
	ret = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (ret < 0) {
		errno = err;
		return -1;
	}
	fprintf(stderr, "skip-busy-fentry: fentry attach of BPF program fd %u refused with EBUSY, left unattached\n",
		attr->link_create.prog_fd);
	return ret;
}
