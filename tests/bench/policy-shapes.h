/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * Valid policies of a root and N entries in one of these shapes, each of
 * which once made `scxd --check` quadratic:
 *
 *   globs-one-dir   /x/NNNNNN*: N globs that share a parent and a rank
 *   realistic       90% literal scopes and 10% "t<i>-*.scope" globs in one
 *                   slice (issue 28: 45 000 + 5 000)
 *   literals        /w<i%100>/c<i>: literal paths two deep
 *   any-depth       "u<i>-*.service" units without a slice
 *   star-middle     /y/a<i>*b*: globs with two stars
 *   question        /q/<i>??: '?' globs of one length that never overlap
 *   nested          50 parents "/n<k>/" + "*" and their children "/n<k>/<i>/x*"
 *   mixed           the first six, an entry each in turn
 *
 * Entries are pairwise distinct and tie with none, so a check that passes
 * has compared them all.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

extern const char *const policy_shapes[];	/* NULL-terminated */

bool policy_shape_known(const char *shape);

/* The policy as JSON on f; -1 for an unknown shape or a write error. */
int policy_shape_write(FILE *f, const char *shape, size_t n);
