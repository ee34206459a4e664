/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * A scheduler's object may hold programs besides its struct_ops ones
 * (SEC("syscall"), tracing, ...). On a kernel with sub-schedulers, such a
 * program acts for no scheduler unless associated with one: associate
 * each with the scheduler's struct_ops map, BPF_PROG_ASSOC_STRUCT_OPS, so
 * that it acts for the scheduler it was loaded with and for nothing else.
 */

struct bpf_object;
struct bpf_map;

/*
 * Associate every loaded program of obj that is not a struct_ops program
 * with the struct_ops map st. Returns the number associated, or -errno
 * with *prog_name set to the program that failed. A kernel without the
 * command (-EINVAL on the first program) is not an error: returns 0.
 */
int prog_assoc_struct_ops(struct bpf_object *obj, struct bpf_map *st,
			  const char **prog_name);
