/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * Small helpers shared by every part of scxd: cleanup attributes in the
 * systemd manner, and a couple of string helpers.
 */

#include <errno.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))

static inline void freep(void *p)
{
	free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

/* Hand ownership of a pointer to the caller: returns it, leaves NULL. */
#define TAKE_PTR(p)                          \
	({                                   \
		__typeof__(p) _p = (p);      \
		(p) = NULL;                  \
		_p;                          \
	})

#define TAKE_FD(fd)                          \
	({                                   \
		int _fd = (fd);              \
		(fd) = -1;                   \
		_fd;                         \
	})

/* CLOCK_MONOTONIC in microseconds. */
static inline uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* A hex digit's value, -1 for another character. */
static inline int unhexchar(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A whole number of seconds up to max: digits only (no sign, no unit); -EINVAL otherwise. */
static inline int parse_seconds(const char *s, unsigned long long max, unsigned long long *ret)
{
	char *end = NULL;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || !end || *end || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

static inline bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static inline bool startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Set *reason (allocated, NULL if out of memory) and return r (-errno). */
__attribute__((format(printf, 3, 4)))
static inline int refuse(int r, char **reason, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(reason, fmt, ap) < 0)
		*reason = NULL;
	va_end(ap);
	return r;
}
