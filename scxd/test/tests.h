/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * A minimal harness: CHECK*() count and report failures with file:line,
 * test_main_end() prints "N passed, N failed" and sets the exit status.
 */

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static unsigned tests_passed, tests_failed;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (cond) {                                                    \
			tests_passed++;                                        \
		} else {                                                       \
			tests_failed++;                                        \
			fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__,       \
				__LINE__, #cond);                              \
		}                                                              \
	} while (0)

#define CHECK_STREQ(a, b)                                                      \
	do {                                                                   \
		const char *_a = (a), *_b = (b);                               \
		if (_a && _b && strcmp(_a, _b) == 0) {                         \
			tests_passed++;                                        \
		} else {                                                       \
			tests_failed++;                                        \
			fprintf(stderr, "%s:%d: FAILED: %s == %s\n  got:      %s\n  expected: %s\n", \
				__FILE__, __LINE__, #a, #b, _a ?: "(null)", _b ?: "(null)"); \
		}                                                              \
	} while (0)

#define CHECK_INTEQ(a, b)                                                      \
	do {                                                                   \
		long long _a = (long long)(a), _b = (long long)(b);            \
		if (_a == _b) {                                                \
			tests_passed++;                                        \
		} else {                                                       \
			tests_failed++;                                        \
			fprintf(stderr, "%s:%d: FAILED: %s == %s (%lld != %lld)\n", \
				__FILE__, __LINE__, #a, #b, _a, _b);           \
		}                                                              \
	} while (0)

static inline int test_main_end(const char *name)
{
	printf("%s: %u passed, %u failed\n", name, tests_passed, tests_failed);
	return tests_failed ? 1 : 0;
}
