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
