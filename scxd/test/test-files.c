// SPDX-License-Identifier: GPL-2.0
/*
 * Files as the daemon reads them (file.h) and policies made of a main
 * file and drop-ins (policy_load()): what is refused and why, what is read
 * in full, which entry wins. Works in a scratch directory below the
 * directory given on the command line.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake-catalog.h"
#include "file.h"
#include "policy.h"
#include "strict.h"
#include "tests.h"

static char scratch[4096];

static const char *at(const char *name)
{
	static char bufs[4][4200];
	static unsigned which;
	char *buf = bufs[which++ % 4];

	snprintf(buf, sizeof(bufs[0]), "%s/%s", scratch, name);
	return buf;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
	chmod(path, 0644);
}

static void rm_rf(const char *dir)
{
	char cmd[4300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static const char *main_policy =
	"{\"version\": 1, \"entries\": [\n"
	"  {\"cgroup\": \"/\", \"scheduler\": \"wparent\"},\n"
	"  {\"cgroup\": \"/w/*\", \"scheduler\": \"vtime\"},\n"
	"  {\"cgroup\": \"/a*/x\", \"scheduler\": \"vtime\"}\n"
	"]}\n";

/* policy_load() on path: 0 or -errno; the first diagnostic in *first. */
static int load(const char *path, struct policy **p, char **first, size_t *n_diags)
{
	struct diag_list d = {};
	int r;

	*p = NULL;
	r = policy_load(path, &fake_catalog, &d, p);
	*first = d.n ? strdup(d.lines[0]) : NULL;
	*n_diags = d.n;
	for (size_t i = 0; i < d.n; i++)
		printf("  %s\n", d.lines[i]);
	diag_list_done(&d);
	return r;
}

/* Opening a FIFO for reading would wait for a writer: it must not. */
static void test_fifo_is_refused_without_blocking(void)
{
	struct policy *p;
	char *data = NULL, *reason = NULL, *first = NULL;
	size_t size, n;

	CHECK_INTEQ(mkfifo(at("fifo.json"), 0644), 0);
	alarm(10);	/* a blocking open is a failure, not a hang */
	CHECK_INTEQ(file_read(at("fifo.json"), FILE_POLICY_MAX, 0, &data, &size, &reason), -EINVAL);
	CHECK(reason && strstr(reason, "fifo.json is a FIFO, not a regular file; refusing it"));
	free(reason);
	CHECK_INTEQ(load(at("fifo.json"), &p, &first, &n), -EINVAL);
	alarm(0);
	CHECK(p == NULL);
	CHECK(first && strstr(first, "fifo.json is a FIFO, not a regular file; refusing it"));
	printf("fifo: %s\n", first ?: "(accepted)");
	free(first);
	unlink(at("fifo.json"));
}

static void test_symlink_is_refused(void)
{
	struct policy *p;
	char *data = NULL, *reason = NULL, *first = NULL;
	size_t size, n;

	write_file(at("real.json"), main_policy);
	CHECK_INTEQ(symlink("real.json", at("link.json")), 0);
	CHECK_INTEQ(file_read(at("link.json"), FILE_POLICY_MAX, 0, &data, &size, &reason), -ELOOP);
	CHECK(data == NULL);
	CHECK(reason && strstr(reason, "link.json is a symbolic link, not a regular file; refusing it"));
	free(reason);
	CHECK_INTEQ(load(at("link.json"), &p, &first, &n), -ELOOP);
	CHECK(first && strstr(first, "link.json is a symbolic link"));
	printf("symlink: %s\n", first ?: "(accepted)");
	free(first);
	/* the file it points to is fine when named itself */
	CHECK_INTEQ(load(at("real.json"), &p, &first, &n), 0);
	CHECK(p && p->n_entries == 3);
	policy_free(p);
	free(first);
	/* a symbolic link among the directories is resolved; the file is read */
	CHECK_INTEQ(symlink(".", at("dirlink")), 0);
	CHECK_INTEQ(file_read(at("dirlink/real.json"), FILE_POLICY_MAX, 0, &data, &size, &reason), 0);
	CHECK_INTEQ(size, strlen(main_policy));
	free(data);
	free(reason);
	unlink(at("dirlink"));
	unlink(at("link.json"));
	unlink(at("real.json"));
}

/* st_size says 0, yet there is text: read to EOF, not to st_size. */
static void test_pseudo_file_is_read_to_eof(void)
{
	char *data = NULL, *reason = NULL;
	struct stat st;
	size_t size;

	CHECK_INTEQ(stat("/proc/self/comm", &st), 0);
	CHECK_INTEQ(st.st_size, 0);
	CHECK_INTEQ(file_read("/proc/self/comm", 64, 0, &data, &size, &reason), 0);
	CHECK_STREQ(data, "test-files\n");
	printf("/proc/self/comm: st_size %jd, read %zu bytes\n", (intmax_t)st.st_size, size);
	free(data);
	free(reason);
}

/* A policy just under the cap is read entirely; one byte over is refused. */
static void test_size_cap(void)
{
	const size_t pad = FILE_POLICY_MAX - strlen(main_policy) - 32;
	char *text = malloc(FILE_POLICY_MAX + 2), *data = NULL, *reason = NULL, *first = NULL;
	struct policy *p = NULL;
	size_t size, n, len;

	if (!text)
		return;
	len = (size_t)sprintf(text, "{\"comment\": \"");
	memset(text + len, 'x', pad);
	len += pad;
	len += (size_t)sprintf(text + len, "\", %s", main_policy + 1);
	write_file(at("big.json"), text);
	CHECK(len <= FILE_POLICY_MAX);
	CHECK_INTEQ(file_read(at("big.json"), FILE_POLICY_MAX, 0, &data, &size, &reason), 0);
	CHECK_INTEQ(size, len);
	CHECK(data && memcmp(data, text, len) == 0);
	free(data);
	CHECK_INTEQ(load(at("big.json"), &p, &first, &n), 0);
	CHECK(p && p->n_entries == 3);
	printf("big policy: %zu bytes, %zu entries\n", len, p ? p->n_entries : 0);
	policy_free(p);
	free(first);

	memset(text, ' ', FILE_POLICY_MAX + 1);
	text[FILE_POLICY_MAX + 1] = '\0';
	write_file(at("huge.json"), text);
	CHECK_INTEQ(file_read(at("huge.json"), FILE_POLICY_MAX, 0, &data, &size, &reason), -EFBIG);
	{
		char want[128];

		snprintf(want, sizeof(want), "huge.json is %u bytes, more than the %u allowed",
			 FILE_POLICY_MAX + 1, FILE_POLICY_MAX);
		CHECK(reason && strstr(reason, want));
	}
	free(reason);
	CHECK_INTEQ(load(at("huge.json"), &p, &first, &n), -EFBIG);
	CHECK(p == NULL);
	free(first);
	free(text);
	unlink(at("big.json"));
	unlink(at("huge.json"));
}

/* Owner and mode of the file and of its directories, from the descriptors. */
static void test_strict_modes(void)
{
	char *data = NULL, *reason = NULL;
	size_t size;
	int r;

	if (geteuid() != 0) {
		printf("not root: ownership checks skipped\n");
		return;
	}
	strict_modes = true;
	write_file(at("strict.json"), main_policy);
	r = file_read(at("strict.json"), FILE_POLICY_MAX, FILE_TRUSTED, &data, &size, &reason);
	free(data);
	if (r < 0) {
		/* a directory above the build directory is lax: nothing to prove here */
		CHECK(reason && strstr(reason, "directory "));
		printf("note: %s; ownership checks skipped\n", reason ?: "?");
		free(reason);
		strict_modes = false;
		return;
	}
	CHECK_INTEQ(chmod(at("strict.json"), 0666), 0);
	CHECK_INTEQ(file_read(at("strict.json"), FILE_POLICY_MAX, FILE_TRUSTED, &data, &size,
			      &reason), -EPERM);
	CHECK(reason && strstr(reason, "strict.json is writable by others (mode 0666); refusing it"));
	free(reason);
	CHECK_INTEQ(chmod(at("strict.json"), 0620), 0);
	CHECK_INTEQ(file_read(at("strict.json"), FILE_POLICY_MAX, FILE_TRUSTED, &data, &size,
			      &reason), -EPERM);
	CHECK(reason && strstr(reason, "is writable by its group (mode 0620)"));
	free(reason);
	CHECK_INTEQ(chmod(at("strict.json"), 0644), 0);
	CHECK_INTEQ(chown(at("strict.json"), 1, 0), 0);
	CHECK_INTEQ(file_read(at("strict.json"), FILE_POLICY_MAX, FILE_TRUSTED, &data, &size,
			      &reason), -EPERM);
	CHECK(reason && strstr(reason, "strict.json is owned by uid 1, not root"));
	free(reason);
	CHECK_INTEQ(chown(at("strict.json"), 0, 0), 0);
	/* the directory it is in */
	CHECK_INTEQ(chmod(scratch, 0777), 0);
	CHECK_INTEQ(file_read(at("strict.json"), FILE_POLICY_MAX, FILE_TRUSTED, &data, &size,
			      &reason), -EPERM);
	CHECK(reason && strstr(reason, "files-scratch is writable by others (mode 0777)"));
	printf("lax directory: %s\n", reason ?: "(accepted)");
	free(reason);
	CHECK_INTEQ(chmod(scratch, 0755), 0);
	/* untrusted reads (tests, tools) and --no-strict-modes skip the check */
	CHECK_INTEQ(chmod(at("strict.json"), 0666), 0);
	CHECK_INTEQ(file_read(at("strict.json"), FILE_POLICY_MAX, 0, &data, &size, &reason), 0);
	free(data);
	strict_modes = false;
	CHECK_INTEQ(file_read(at("strict.json"), FILE_POLICY_MAX, FILE_TRUSTED, &data, &size,
			      &reason), 0);
	free(data);
	unlink(at("strict.json"));
}

static void test_dropins_merge_in_name_order(void)
{
	struct policy *p = NULL;
	char *first = NULL;
	size_t n;

	write_file(at("policy.json"), main_policy);
	CHECK_INTEQ(mkdir(at("policy.d"), 0755), 0);
	/* "10-..." sorts before "9-...": bytewise, not numeric */
	write_file(at("policy.d/9-late.json"),
		   "{\"version\": 1, \"entries\": [\n"
		   "  {\"cgroup\": \"/w/*\", \"scheduler\": \"lat\"}]}\n");
	write_file(at("policy.d/10-early.json"),
		   "{\"version\": 1, \"entries\": [\n"
		   "  {\"cgroup\": \"/w/*\", \"scheduler\": \"fifo\"},\n"
		   "  {\"unit\": \"batch.slice\", \"scheduler\": \"fifo\"}]}\n");
	write_file(at("policy.d/.hidden.json"), "not json");
	write_file(at("policy.d/README"), "not json either");
	CHECK_INTEQ(load(at("policy.json"), &p, &first, &n), 0);
	if (!p)
		return;
	CHECK_INTEQ(p->n_files, 3);
	CHECK(p->n_files == 3 && strstr(p->files[1], "/10-early.json") &&
	      strstr(p->files[2], "/9-late.json"));
	/* the main file's "/w/<glob>" was replaced by 10-early's, which 9-late replaced */
	CHECK_INTEQ(p->n_entries, 4);
	CHECK_STREQ(policy_match(p, "/w/db")->scheduler, "lat");
	CHECK_STREQ(policy_entry_name(policy_match(p, "/w/db")), "9-late.json entries[0] \"/w/*\"");
	CHECK_STREQ(policy_match(p, "/batch.slice")->scheduler, "fifo");
	CHECK_STREQ(policy_match(p, "/ab/x")->scheduler, "vtime");
	printf("merged: %zu files, %zu entries, /w/db -> %s\n", p->n_files, p->n_entries,
	       policy_match(p, "/w/db")->scheduler);
	policy_free(p);
	free(first);

	/* a drop-in's unit entry replaces the main file's path for the same cgroup */
	write_file(at("policy.d/11-unit.json"),
		   "{\"version\": 1, \"entries\": [\n"
		   "  {\"unit\": \"a-x.slice\", \"scheduler\": \"lat\"}]}\n");
	write_file(at("policy.json"),
		   "{\"version\": 1, \"entries\": [\n"
		   "  {\"cgroup\": \"/\", \"scheduler\": \"wparent\"},\n"
		   "  {\"cgroup\": \"/a.slice/a-x.slice\", \"scheduler\": \"vtime\"}]}\n");
	CHECK_INTEQ(load(at("policy.json"), &p, &first, &n), 0);
	CHECK(p && policy_match(p, "/a.slice/a-x.slice") &&
	      streq(policy_match(p, "/a.slice/a-x.slice")->scheduler, "lat"));
	policy_free(p);
	free(first);
	rm_rf(at("policy.d"));
}

/* What the rule does not settle: errors name both files and positions. */
static void test_dropin_conflicts_name_both_files(void)
{
	struct policy *p = NULL;
	char *first = NULL, want[8600];
	size_t n;

	write_file(at("policy.json"), main_policy);
	CHECK_INTEQ(mkdir(at("policy.d"), 0755), 0);
	write_file(at("policy.d/50-tie.json"),
		   "{\"version\": 1,\n"
		   " \"entries\": [\n"
		   "  {\"cgroup\": \"/*a/x\", \"scheduler\": \"fifo\"}]}\n");
	CHECK_INTEQ(load(at("policy.json"), &p, &first, &n), -EINVAL);
	CHECK(p == NULL);
	CHECK_INTEQ(n, 1);
	snprintf(want, sizeof(want),
		 "%s:3:14: 50-tie.json entries[0] \"/*a/x\": ties with entries[2] \"/a*/x\" (%s:4:14): equally specific and both can match the same cgroup",
		 at("policy.d/50-tie.json"), at("policy.json"));
	CHECK_STREQ(first, want);
	free(first);

	/* nesting under a scheduler of another file that cannot host children */
	write_file(at("policy.d/50-tie.json"),
		   "{\"version\": 1, \"entries\": [\n"
		   "  {\"cgroup\": \"/w/a/b\", \"scheduler\": \"fifo\"}]}\n");
	CHECK_INTEQ(load(at("policy.json"), &p, &first, &n), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:2:14: 50-tie.json entries[0] \"/w/a/b\": would be nested under entries[1] \"/w/*\" (%s:3:14) whose scheduler \"vtime\" cannot host children",
		 at("policy.d/50-tie.json"), at("policy.json"));
	CHECK_STREQ(first, want);
	free(first);

	/* a duplicate inside one drop-in is still an error */
	write_file(at("policy.d/50-tie.json"),
		   "{\"version\": 1, \"entries\": [\n"
		   "  {\"unit\": \"x.slice\", \"scheduler\": \"fifo\"},\n"
		   "  {\"cgroup\": \"/x.slice\", \"scheduler\": \"lat\"}]}\n");
	CHECK_INTEQ(load(at("policy.json"), &p, &first, &n), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:3:14: 50-tie.json entries[1] \"/x.slice\": same cgroup pattern as 50-tie.json entries[0] unit \"x.slice\"",
		 at("policy.d/50-tie.json"));
	CHECK_STREQ(first, want);
	free(first);

	/* bad input in any drop-in fails the whole load, with its position */
	write_file(at("policy.d/50-tie.json"), "{\"version\": 1,\n \"entries\": [,]}\n");
	CHECK_INTEQ(load(at("policy.json"), &p, &first, &n), -EINVAL);
	snprintf(want, sizeof(want), "%s:2:14: unexpected token near ','", at("policy.d/50-tie.json"));
	CHECK_STREQ(first, want);
	free(first);

	/* a drop-in that is a symbolic link is refused like a main file */
	unlink(at("policy.d/50-tie.json"));
	CHECK_INTEQ(symlink("../policy.json", at("policy.d/60-link.json")), 0);
	CHECK_INTEQ(load(at("policy.json"), &p, &first, &n), -ELOOP);
	CHECK(first && strstr(first, "60-link.json is a symbolic link"));
	free(first);
	rm_rf(at("policy.d"));
	unlink(at("policy.json"));
}

/* At most 128 drop-ins: one more refuses the policy, naming the directory. */
static void test_too_many_dropins(void)
{
	struct policy *p = NULL;
	char *first = NULL, name[64];
	size_t n;

	write_file(at("policy.json"), main_policy);
	CHECK_INTEQ(mkdir(at("policy.d"), 0755), 0);
	for (int i = 0; i < POLICY_MAX_DROPINS; i++) {
		snprintf(name, sizeof(name), "policy.d/%03d.json", i);
		write_file(at(name), "{\"version\": 1, \"entries\": []}");
	}
	CHECK_INTEQ(load(at("policy.json"), &p, &first, &n), 0);
	CHECK(p && p->n_files == POLICY_MAX_DROPINS + 1);
	policy_free(p);
	free(first);
	write_file(at("policy.d/999.json"), "{\"version\": 1, \"entries\": []}");
	CHECK_INTEQ(load(at("policy.json"), &p, &first, &n), -E2BIG);
	CHECK(first && strstr(first, "policy.d: more than 128 drop-ins; refusing them all"));
	free(first);
	rm_rf(at("policy.d"));
	unlink(at("policy.json"));
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SCRATCH_PARENT\n", argv[0]);
		return 2;
	}
	snprintf(scratch, sizeof(scratch), "%s/files-scratch", argv[1]);
	rm_rf(scratch);
	if (mkdir(scratch, 0755) < 0) {
		perror(scratch);
		return 1;
	}
	chmod(scratch, 0755);
	strict_modes = false;
	test_fifo_is_refused_without_blocking();
	test_symlink_is_refused();
	test_pseudo_file_is_read_to_eof();
	test_size_cap();
	test_dropins_merge_in_name_order();
	test_dropin_conflicts_name_both_files();
	test_too_many_dropins();
	test_strict_modes();
	rm_rf(scratch);
	return test_main_end("test-files");
}
