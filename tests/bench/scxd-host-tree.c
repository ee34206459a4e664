// SPDX-License-Identifier: GPL-2.0
/*
 * Helper of tests/bench/scxd-host: writes the policies and the fake
 * cgroup, sysfs, pin and record trees scxd reads on the host, and times
 * desired_build(). Built by the script against one scxd source tree's pure
 * stages (the base and this tree in turn), so it uses only interfaces both
 * have: policy_parse(), desired_build(), pin_name(), pin_record_format().
 *
 *   scxd-host-tree policy N FILE     a valid policy of N entries
 *   scxd-host-tree tree DIR N        DIR/{cg,sys,pins,state,policy.json}: N adopted nodes
 *   scxd-host-tree desired FILE N    parse FILE, time desired_build() over N cgroups:
 *                                    "WALL CPU NODES" (seconds)
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "desired.h"
#include "policy.h"
#include "record.h"
#include "test/fake-catalog.h"

static double clock_sec(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The shape of a big real policy: a root and one parent slice, mostly
 * one literal scope each, every 50th a glob under a slice of its own and
 * every 100th a unit without its slice (matched at any depth).
 */
static int write_policy(size_t n, const char *file)
{
	FILE *f = fopen(file, "we");
	size_t written = 2;

	if (!f)
		return -errno;
	fprintf(f, "{\"version\": 1, \"entries\": [\n"
		   " {\"cgroup\": \"/\", \"scheduler\": \"wparent\"},\n"
		   " {\"cgroup\": \"/bench.slice\", \"scheduler\": \"wparent\"}");
	for (size_t i = 0; written < n; i++, written++) {
		if (i % 50 == 0)
			fprintf(f, ",\n {\"cgroup\": \"/glob-%zu.slice/*.scope\", \"scheduler\": \"vtime\"}", i);
		else if (i % 100 == 1)
			fprintf(f, ",\n {\"unit\": \"u%zu-*.service\", \"scheduler\": \"fifo\"}", i);
		else
			fprintf(f, ",\n {\"cgroup\": \"/bench.slice/job-%zu.scope\", \"scheduler\": \"fifo\", \"tunables\": {\"slice_us\": %zu}}",
				i, 1000 + i % 4000);
	}
	fprintf(f, "\n]}\n");
	return fclose(f) == 0 ? 0 : -errno;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -errno;
}

static int mkdirs(const char *path)
{
	char buf[4096];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0755) < 0 && errno != EEXIST)
				return -errno;
			*p = '/';
		}
	return mkdir(buf, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

static const char events_text[] =
	"SCX_EV_SELECT_CPU_FALLBACK 0\nSCX_EV_DISPATCH_LOCAL_DSQ_OFFLINE 0\n"
	"SCX_EV_DISPATCH_KEEP_LAST 12\nSCX_EV_ENQ_SKIP_EXITING 0\n"
	"SCX_EV_ENQ_SKIP_MIGRATION_DISABLED 0\nSCX_EV_REFILL_SLICE_DFL 3\n"
	"SCX_EV_BYPASS_DURATION 0\nSCX_EV_BYPASS_DISPATCH 0\nSCX_EV_BYPASS_ACTIVATE 0\n";

/*
 * One adopted node: the cgroup exists, the kernel runs ops under
 * sysfs_dir, and scxd's pin and record name it.
 */
static int adopt(const char *dir, const char *cgroup, const char *scheduler, uint64_t cgid,
		 const char *sysfs_dir)
{
	struct pin_record rec = { .cgroup = (char *)cgroup, .scheduler = (char *)scheduler,
				  .ops = (char *)scheduler, .cgid = cgid, .uei_offset = SIZE_MAX };
	char name[PIN_NAME_LEN + 1], path[4200];
	_cleanup_free_ char *text = NULL;
	int r;

	pin_name(cgroup, name);
	snprintf(path, sizeof(path), "%s/pins/%s", dir, name);
	r = mkdirs(path);
	if (r == 0) {
		snprintf(path, sizeof(path), "%s/pins/%s/link", dir, name);
		r = write_text(path, "");
	}
	if (r == 0)
		r = pin_record_format(&rec, &text);
	if (r == 0) {
		snprintf(path, sizeof(path), "%s/state/nodes/%s.json", dir, name);
		r = write_text(path, text);
	}
	if (r == 0)
		r = mkdirs(sysfs_dir);
	if (r == 0) {
		snprintf(path, sizeof(path), "%s/ops", sysfs_dir);
		r = write_text(path, scheduler);
	}
	if (r == 0) {
		snprintf(path, sizeof(path), "%s/events", sysfs_dir);
		r = write_text(path, events_text);
	}
	return r;
}

static uint64_t ino_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_ino : 0;
}

/* /, /bench.slice and n scopes under it, every one attached by a previous scxd. */
static int write_tree(const char *dir, size_t n)
{
	char path[4200], sys_slice[4200], sys_job[4400];
	uint64_t slice_id;
	int r;

	snprintf(path, sizeof(path), "%s/cg/bench.slice", dir);
	r = mkdirs(path);
	if (r < 0)
		return r;
	slice_id = ino_of(path);
	snprintf(path, sizeof(path), "%s/state/nodes", dir);
	if ((r = mkdirs(path)) < 0)
		return r;
	snprintf(path, sizeof(path), "%s/sys", dir);
	if ((r = mkdirs(path)) < 0)
		return r;
	snprintf(path, sizeof(path), "%s/sys/state", dir);
	if ((r = write_text(path, "enabled\n")) < 0)
		return r;
	snprintf(path, sizeof(path), "%s/sys/root", dir);
	if ((r = adopt(dir, "/", "wparent", 1, path)) < 0)
		return r;
	snprintf(sys_slice, sizeof(sys_slice), "%s/sys/root/sub/sub-%" PRIu64, dir, slice_id);
	if ((r = adopt(dir, "/bench.slice", "wparent", slice_id, sys_slice)) < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		char cgroup[128];

		snprintf(cgroup, sizeof(cgroup), "/bench.slice/job-%zu.scope", i);
		snprintf(path, sizeof(path), "%s/cg%s", dir, cgroup);
		if ((r = mkdirs(path)) < 0)
			return r;
		snprintf(sys_job, sizeof(sys_job), "%s/sub/sub-%" PRIu64, sys_slice, ino_of(path));
		if ((r = adopt(dir, cgroup, "fifo", ino_of(path), sys_job)) < 0)
			return r;
	}
	snprintf(path, sizeof(path), "%s/policy.json", dir);
	return write_text(path, "{\"version\": 1, \"entries\": [\n"
				" {\"cgroup\": \"/\", \"scheduler\": \"wparent\"},\n"
				" {\"cgroup\": \"/bench.slice\", \"scheduler\": \"wparent\"},\n"
				" {\"cgroup\": \"/bench.slice/*.scope\", \"scheduler\": \"fifo\"}\n]}\n");
}

static int read_all(const char *file, char **ret, size_t *len)
{
	FILE *f = fopen(file, "re");
	size_t cap = 1 << 20, n = 0, got;
	char *buf = malloc(cap);

	if (!f || !buf) {
		free(buf);
		if (f)
			fclose(f);
		return -errno;
	}
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *v = realloc(buf, cap *= 2);

			if (!v) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = v;
		}
	}
	fclose(f);
	*ret = buf;
	*len = n;
	return 0;
}

/* Seconds for desired_build() over n cgroups that the policy's entries name. */
static int time_desired(const char *file, size_t n)
{
	_cleanup_(diag_list_donep) struct diag_list diags = {};
	_cleanup_(policy_freep) struct policy *p = NULL;
	struct desired_result res = {};
	struct desired_opts opts = { .sub_sched_supported = true };
	_cleanup_free_ char *text = NULL;
	char **paths = calloc(n + 2, sizeof(*paths));
	size_t len = 0, m = 0;
	double t0, c0;
	int r;

	if (!paths || read_all(file, &text, &len) < 0)
		return -ENOMEM;
	r = policy_parse(file, text, len, &fake_catalog, &diags, &p);
	for (size_t i = 0; i < diags.n && i < 5; i++)
		fprintf(stderr, "%s\n", diags.lines[i]);
	if (r < 0)
		return r;
	paths[m++] = strdup("/");
	paths[m++] = strdup("/bench.slice");
	for (size_t i = 0; m < n; i++)
		if (asprintf(&paths[m++], "/bench.slice/job-%zu.scope", i) < 0)
			return -ENOMEM;
	t0 = clock_sec(CLOCK_MONOTONIC);
	c0 = clock_sec(CLOCK_PROCESS_CPUTIME_ID);
	r = desired_build(p, (const char *const *)paths, m, &opts, &res);
	/* wall and CPU seconds, nodes */
	printf("%.4f %.4f %zu\n", clock_sec(CLOCK_MONOTONIC) - t0,
	       clock_sec(CLOCK_PROCESS_CPUTIME_ID) - c0, res.tree.n);
	desired_result_done(&res);
	for (size_t i = 0; i < m; i++)
		free(paths[i]);
	free(paths);
	return r;
}

int main(int argc, char **argv)
{
	int r = -EINVAL;

	if (argc == 4 && streq(argv[1], "policy"))
		r = write_policy(strtoul(argv[2], NULL, 10), argv[3]);
	else if (argc == 4 && streq(argv[1], "tree"))
		r = write_tree(argv[2], strtoul(argv[3], NULL, 10));
	else if (argc == 4 && streq(argv[1], "desired"))
		r = time_desired(argv[2], strtoul(argv[3], NULL, 10));
	else
		fprintf(stderr, "usage: %s policy N FILE | tree DIR N | desired FILE N\n", argv[0]);
	if (r < 0)
		fprintf(stderr, "%s: %s\n", argv[0], strerror(-r));
	return r < 0;
}
