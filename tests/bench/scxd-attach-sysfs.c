/* SPDX-License-Identifier: GPL-2.0 */
/* See scxd-attach-sysfs.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "scxd-attach-sysfs.h"
#include "util.h"

double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int read_line(const char *path, char *buf, size_t len)
{
	_cleanup_(fclosep) FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		return -ENODATA;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/*
 * Is the instance in sysfs directory @dir enabled? Its state file says
 * (kernel/patches, "Tell in sysfs whether a scheduler instance is enabled
 * yet"); the directory itself appears while the instance is still
 * enabling. Without the file, an older series, presence is all
 * there is to go by.
 */
static bool sub_enabled(const char *dir)
{
	char path[PATH_MAX + 8], state[32];
	int r;

	snprintf(path, sizeof(path), "%s/state", dir);
	r = read_line(path, state, sizeof(state));
	if (r == -ENOENT)
		return access(dir, F_OK) == 0;
	return r == 0 && !strcmp(state, "enabled");
}

/* The cgroup ids of the sub-schedulers below @dir (only enabled ones: @enabled). */
static void collect_subs(const char *dir, uint64_t *ids, unsigned int *n,
			 bool enabled)
{
	_cleanup_(closedirp) DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char sub[PATH_MAX];

		if (strncmp(de->d_name, "sub-", 4))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		if (*n < MAX_IDS && (!enabled || sub_enabled(sub)))
			ids[(*n)++] = strtoull(de->d_name + 4, NULL, 10);
		snprintf(sub, sizeof(sub), "%s/%s/sub", dir, de->d_name);
		collect_subs(sub, ids, n, enabled);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * How many of @want[0..@n) have an enabled sub-<cgid> (@present), or have
 * none at all, enabled or not (!@present). Sorted and searched: with a
 * thousand children a poll must not cost a million compares.
 */
unsigned int count_subs(const uint64_t *want, unsigned int n, bool present)
{
	static uint64_t have[MAX_IDS];
	unsigned int n_have = 0, hits = 0;

	collect_subs(SCX_SYSFS "/root/sub", have, &n_have, present);
	qsort(have, n_have, sizeof(*have), cmp_u64);
	for (unsigned int i = 0; i < n; i++) {
		bool found = bsearch(&want[i], have, n_have, sizeof(*have), cmp_u64);

		hits += found == present;
	}
	return hits;
}

unsigned long long cpu_ticks(pid_t pid)
{
	char path[64], stat[1024];
	unsigned long long ut = 0, st = 0;
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_line(path, stat, sizeof(stat)) < 0 || !(p = strrchr(stat, ')')))
		return 0;
	sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st);
	return ut + st;
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}
