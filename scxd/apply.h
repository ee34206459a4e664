/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * Plan steps → kernel. The only stage that is not pure: it opens a
 * scheduler's .bpf.o with libbpf, writes its tunables into .rodata and
 * sub_cgroup_id into its struct_ops, loads and attaches it, and pins the
 * link (and the .data map holding its exit info) under bpffs.
 */

#include <stdint.h>

#include "actual.h"
#include "desired.h"
#include "sched-stats.h"

/* An object opened and configured for one node, not loaded yet. */
struct bpf_object;
struct bpf_map;
struct apply_object {
	struct bpf_object *obj;
	struct bpf_map *st;		/* the struct_ops map */
	struct bpf_map *data;		/* .data, where uei lives; may be NULL */
	char *ops_name;			/* sched_ext_ops.name */
	size_t uei_offset;		/* SIZE_MAX if none */
	uint64_t enable_usec;		/* apply_commit(): the kernel's attach, in µs */
};

/*
 * Open obj_path and write node's tunables and the cgroup id into it:
 * .rodata variables by name, sched_ext_ops.sub_cgroup_id by its BTF member
 * offset (cgid 1, the root, leaves it 0); and the kernel's enumerators
 * (apply_set_kernel_enums()) from the BTF at kernel_btf_path (NULL: the
 * running kernel's). Exposed for the host tests.
 */
int apply_open(const char *obj_path, const char *kernel_btf_path, const struct sched_node *node,
	       uint64_t cgid, struct apply_object *ret, char **reason);

/*
 * SCX_ENUM_INIT for any object, before it is loaded
 * (kernel_api_set_enums() with image, the object's bytes): the kernel's
 * BTF is read once, the first time an object has such a variable.
 */
int apply_set_kernel_enums(struct bpf_object *obj, const char *obj_path, char *image,
			   size_t image_size, const char *kernel_btf_path, char **reason);
void apply_object_done(struct apply_object *o);

/*
 * The two halves of an attach. apply_load() opens, configures and loads
 * (the kernel verifies) node's object; it touches nothing shared, so
 * several run at once. apply_commit() attaches what was loaded, pins the
 * link and writes the record: in plan order, parents first.
 */
int apply_load(const struct scxd_paths *paths, const struct sched_node *node, uint64_t cgid,
	       struct apply_object *ret, char **reason);
int apply_commit(const struct scxd_paths *paths, const struct sched_node *node, uint64_t cgid,
		 struct apply_object *o, char **reason);

#define APPLY_LOAD_WORKERS_MAX 16

/*
 * One apply_load() of apply_load_many(): in node and cgid, out obj, r,
 * reason and how long the load took (the kernel's verifier, mostly).
 */
struct apply_load_job {
	const struct sched_node *node;
	uint64_t cgid;
	struct apply_object obj;
	int r;
	char *reason;
	uint64_t load_usec;
};

/*
 * apply_load() every job, up to 'workers' at a time on threads of its
 * own, while the caller's thread calls tick at least once a second (to
 * ping the watchdog: the kernel's verifier can take longer over one
 * object than it allows). Each job's outcome is in its r and reason.
 */
int apply_load_many(const struct scxd_paths *paths, struct apply_load_job *jobs, size_t n,
		    unsigned workers, void (*tick)(void *), void *userdata);

/*
 * Whether a map of obj must be pinned for the scheduler to keep working
 * once scxd closes the object: its values hold timers, wqs or task_works,
 * or it is a program array (the kernel drops those with the map's last
 * user reference). apply_commit() pins them beside the link.
 */
struct bpf_object;
struct bpf_map;
bool apply_map_needs_pin(const struct bpf_object *obj, const struct bpf_map *map);

/* Unpin and detach what scxd attached on cgroup. */
int apply_detach(const struct scxd_paths *paths, const char *cgroup);

/*
 * The exit info a scheduler recorded (UEI) in its pinned .data map, into
 * *ret: 0, or -ENODATA if it recorded none (or the map cannot be read).
 */
int apply_read_exit(const struct scxd_paths *paths, const struct pin_record *rec,
		    struct sched_exit *ret);
