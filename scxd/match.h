/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * Cgroup path patterns: a pattern is an absolute path whose components may
 * hold '*' (any run of characters within that component) and '?' (exactly
 * one character). A pattern matches paths with the same number of
 * components. "/" is the root pattern with zero components.
 */

#include <stdbool.h>
#include <stddef.h>

#define PATTERN_MAX_COMPONENTS 64
#define PATTERN_MAX_LENGTH 4095	/* bytes, as a cgroup path below the mount (PATH_MAX) */

/* Check a pattern's syntax; on error *reason says why. */
int pattern_validate(const char *pattern, const char **reason);

/* Number of components of a path or pattern ("/" has none). */
size_t path_depth(const char *path);

bool pattern_match(const char *pattern, const char *path);

/*
 * Rank two patterns with the same number of components: > 0 if a is more
 * specific, < 0 if b is, 0 if they rank equal. Components are compared from
 * the left; the first difference decides: a literal beats a glob, fewer '*'
 * beat more, then more literal characters beat fewer.
 */
int pattern_specificity_cmp(const char *a, const char *b);

/* Whether some path of the same depth matches both patterns. */
bool pattern_overlap(const char *a, const char *b);

/*
 * Whether a pattern with fewer components can match an ancestor of a path
 * matched by 'descendant': each of ancestor's components overlaps the
 * corresponding leading component of 'descendant'.
 */
bool pattern_prefix_overlap(const char *ancestor, const char *descendant);

/*
 * One component against another, given as (pointer, length): whether the
 * glob 'pat' matches the name, whether two globs can match a common name,
 * whether a component holds no glob. For the pattern index.
 */
bool pattern_component_match(const char *pat, size_t pat_len, const char *name, size_t name_len);
bool pattern_component_overlap(const char *a, size_t a_len, const char *b, size_t b_len);
bool pattern_component_is_literal(const char *c, size_t len);

/*
 * systemd unit names (globs allowed) → cgroup patterns, the way systemd
 * lays units out: a slice's place follows from its name, by dashes
 * ("a-b-c.slice" is /a.slice/a-b.slice/a-b-c.slice, "-.slice" is "/"); a
 * scope or service lives directly under its slice. Given 'slice' (a slice
 * name, NULL if none), a .scope or .service unit resolves to
 * <slice's path>/<unit>; without one its place is unknown and
 * *any_depth is set: *ret is then "/<unit>", to be matched against the
 * last component of a cgroup path at any depth. Only .slice, .scope and
 * .service units are taken; escaped names ('\') are refused. On error
 * *reason says why.
 */
#define UNIT_NAME_MAX 255

int unit_pattern(const char *unit, const char *slice, char **ret, bool *any_depth,
		 const char **reason);

/* The last component of a path ("" for "/"). */
const char *path_last_component(const char *path);
