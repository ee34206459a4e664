/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "prog-assoc.h"

/*
 * The command and its attributes, as upstream numbers and lays them out:
 * not in the uapi headers Debian 12 builds against, so spelt out here.
 */
#define SCXD_BPF_PROG_ASSOC_STRUCT_OPS 38

struct scxd_assoc_attr {
	__u32 map_fd;
	__u32 prog_fd;
	__u32 flags;
};

static int assoc_one(int prog_fd, int map_fd)
{
	struct scxd_assoc_attr attr = { .map_fd = map_fd, .prog_fd = prog_fd };

	if (syscall(__NR_bpf, SCXD_BPF_PROG_ASSOC_STRUCT_OPS, &attr, sizeof(attr)) < 0)
		return -errno;
	return 0;
}

int prog_assoc_struct_ops(struct bpf_object *obj, struct bpf_map *st,
			  const char **prog_name)
{
	struct bpf_program *prog;
	int n = 0, r;

	*prog_name = NULL;
	bpf_object__for_each_program(prog, obj) {
		if (bpf_program__type(prog) == BPF_PROG_TYPE_STRUCT_OPS ||
		    bpf_program__fd(prog) < 0)
			continue;
		r = assoc_one(bpf_program__fd(prog), bpf_map__fd(st));
		if (r == -EINVAL && n == 0)
			return 0;	/* a kernel without the command */
		if (r < 0) {
			*prog_name = bpf_program__name(prog);
			return r;
		}
		n++;
	}
	return n;
}
