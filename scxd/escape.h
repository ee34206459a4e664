/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * Cgroup names are bytes: anything but '/' and NUL, chosen by whoever may
 * create cgroups (a delegated subtree's owner). Before they go where text
 * is expected:
 *
 * - JSON: a path that is valid UTF-8 is a string as it is (JSON escapes
 *   control characters itself); one that is not is the string of
 *   escape_text() under the key, and the raw bytes in hex under
 *   "<key>_hex", from which json_get_cgroup() gets them back.
 * - A terminal: escape_text(): backslash, control characters and bytes
 *   that are not UTF-8 as \\ and \xHH, everything else as it is.
 */

#include <jansson.h>
#include <stdbool.h>

bool utf8_valid(const char *s);

/* s with '\\', control characters and non-UTF-8 bytes escaped; NULL on -ENOMEM. */
char *escape_text(const char *s);

/* Lowercase hex of the bytes of s, and back (-EINVAL: not hex, or a NUL byte). */
char *hex_encode(const char *s);
int hex_decode(const char *hex, char **ret);

/* o[key] = path as above; 0 or -ENOMEM. */
int json_set_cgroup(json_t *o, const char *key, const char *path);

/* A string for text that may hold a path: escape_text() of it if it is not UTF-8. */
json_t *json_text(const char *s);

/* The raw path json_set_cgroup() stored under key (allocated), NULL if none. */
char *json_get_cgroup(json_t *o, const char *key);
