/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * What scxd keeps about a node it attached, and the names it keeps it
 * under, and their files: written and removed here, read here for
 * actual.c, which judges what they say.
 *
 * A node's pin directory (/sys/fs/bpf/scxd/<pin>) and its record
 * (/run/scxd/nodes/<pin>.json) are named after the cgroup path by
 * pin_name(): a hash, so any path the kernel allows has a short name
 * bpffs takes. A name is never decoded: the path is read from the record,
 * or found by hashing the cgroup paths that exist and comparing.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "paths.h"
#include "policy.h"

/* A cgroup path, relative to the cgroup root, is shorter than this. */
#define CGROUP_PATH_MAX 4096
/* A record file is read up to this size; a bigger one is refused. */
#define PIN_RECORD_MAX (256 * 1024)
#define PIN_RECORD_VERSION 1
/* uei lives in a .data map: an offset beyond this is not one */
#define UEI_OFFSET_MAX (1 << 24)

/* 32 hex digits: the first 128 bits of SHA-256 of the path. */
#define PIN_NAME_LEN 32

struct pin_record {
	char *cgroup;
	char *scheduler;
	char *ops;
	uint64_t cgid;
	size_t uei_offset;	/* of 'uei' in the pinned .data map, SIZE_MAX if none */
	struct tunable_value *tunables;	/* sorted by name */
	size_t n_tunables;
	char *pin;		/* its directory name under the pin directory */
	bool legacy;		/* a text record left by scxd before JSON records */
};

void pin_name(const char *cgroup, char ret[PIN_NAME_LEN + 1]);

/*
 * The name scxd used before hashed names (the path %-escaped, or "~" and
 * a 64-bit FNV-1a hash when that was over 240 bytes), so that pins it
 * left behind are still found by their cgroup. Computed from the path,
 * never decoded.
 */
char *pin_name_legacy(const char *cgroup);

/* "/" or "/a/b": no empty, "." or ".." component, none over 255 bytes. */
bool cgroup_path_valid(const char *path);

/* The record as JSON (one object, newline-terminated). */
int pin_record_format(const struct pin_record *rec, char **ret);

/*
 * Parse a record. On -EINVAL *why says what is wrong with it. rec->pin is
 * left NULL: the caller knows the file's name.
 */
int pin_record_parse(const char *buf, size_t len, struct pin_record *ret, const char **why);

/* The "key value" lines of a record written before JSON records. */
int pin_record_parse_legacy(const char *buf, size_t len, struct pin_record *ret,
			    const char **why);

bool pin_record_equal(const struct pin_record *a, const struct pin_record *b);
void pin_record_done(struct pin_record *rec);

/* ---- the files ---- */

/* <state_dir>/nodes: the records. */
int record_dir(const char *state_dir, char **ret);

/*
 * The record goes to <state_dir>/nodes/<pin name>.json: written to a
 * temporary file, synced, renamed over the old one.
 */
int pin_record_write(const struct scxd_paths *paths, const struct pin_record *rec);
/* Both the record and one an older scxd left for the cgroup. */
int pin_record_remove(const struct scxd_paths *paths, const char *cgroup);

/*
 * Read the records directory's file 'file' (dir_fd): "<pin name>.json",
 * or a text record an older scxd left, named by its legacy pin name.
 * Returns 1 with *rec filled (rec->pin its name); 0 for a name no scxd
 * writes a record under (temporary files); -ENOMEM; or another -errno
 * with *why (allocated) saying what is wrong: unreadable, over
 * PIN_RECORD_MAX, not parsing, or naming a cgroup whose record it is not.
 */
int pin_record_read_at(int dir_fd, const char *file, struct pin_record *rec, char **why);

/* Whether <pin_dir>/<name>/link exists. */
bool pin_exists(const struct scxd_paths *paths, const char *name);
/*
 * The pin directory name of what is attached on cgroup: its pin_name(),
 * or the legacy name an older scxd pinned it under if only that exists.
 */
int pin_dir_find(const struct scxd_paths *paths, const char *cgroup, char **ret);
