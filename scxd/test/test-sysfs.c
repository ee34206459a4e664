// SPDX-License-Identifier: GPL-2.0
/*
 * What status shows of a running scheduler from the kernel's files, on
 * fake sysfs trees: the CPU lists of the "caps" file ("%*pbl": ranges,
 * empty, and garbage refused with a message naming line and place), the
 * CPU delegation events (rescues, denials) picked out of "events", left
 * out altogether on a kernel without them, and exit info (a parent's kill
 * named "parent-kill", kind 69). actual_read() reads the files from a
 * tree like /sys/kernel/sched_ext, nested sub-<cgroup id> directories.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actual.h"
#include "sched-stats.h"
#include "tests.h"
#include "util.h"

static char tmp[] = "/tmp/test-sysfs.XXXXXX";

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	CHECK(f != NULL);
	if (!f)
		return;
	fputs(text, f);
	fclose(f);
}

static void mkdirs(const char *path)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	CHECK_INTEQ(system(cmd), 0);
}

/* Parse text, expect the CPUs in want (n of them), and the same list formatted back. */
static void expect_cpus(const char *text, const uint32_t *want, size_t n, const char *formatted)
{
	_cleanup_(cpu_list_done) struct cpu_list l = {};
	_cleanup_free_ char *error = NULL, *back = NULL;
	bool same;

	CHECK_INTEQ(cpu_list_parse(text, &l, &error), 0);
	if (error)
		fprintf(stderr, "\"%s\": %s\n", text, error);
	same = l.n == n;
	for (size_t i = 0; same && i < n; i++)
		same = l.cpus[i] == want[i];
	CHECK(same);
	back = cpu_list_format(&l);
	CHECK_STREQ(back, formatted);
}

static void expect_bad_cpus(const char *text, const char *why)
{
	_cleanup_(cpu_list_done) struct cpu_list l = {};
	_cleanup_free_ char *error = NULL;

	CHECK_INTEQ(cpu_list_parse(text, &l, &error), -EINVAL);
	CHECK(l.n == 0 && l.cpus == NULL);
	CHECK(error && strstr(error, why));
	printf("cpu list \"%s\": %s\n", text, error ?: "(no error)");
}

static void test_cpu_lists(void)
{
	static const uint32_t mixed[] = { 0, 1, 2, 3, 5, 7, 8 }, one[] = { 5 };
	_cleanup_(cpu_list_done) struct cpu_list l = {};
	_cleanup_free_ char *error = NULL, *back = NULL;

	expect_cpus("0-3,5,7-8", mixed, ELEMENTSOF(mixed), "0-3,5,7-8");
	expect_cpus("0-3,5,7-8\n", mixed, ELEMENTSOF(mixed), "0-3,5,7-8");
	expect_cpus(" 0,1,2,3,5,7,8 ", mixed, ELEMENTSOF(mixed), "0-3,5,7-8");
	expect_cpus("5", one, 1, "5");
	expect_cpus("5-5", one, 1, "5");
	expect_cpus("", NULL, 0, "");
	expect_cpus(" \n", NULL, 0, "");

	CHECK_INTEQ(cpu_list_parse("0-65535", &l, &error), 0);
	CHECK(l.n == 65536 && l.cpus[65535] == 65535);
	back = cpu_list_format(&l);
	CHECK_STREQ(back, "0-65535");

	expect_bad_cpus("garbage", "not a CPU or range of CPUs (0-65535) at \"garbage\"");
	expect_bad_cpus("0-3,x", "at \"x\"");
	expect_bad_cpus("0-", "at \"0-\"");
	expect_bad_cpus("-3", "at \"-3\"");
	expect_bad_cpus("1 2", "at \"1 2\"");
	expect_bad_cpus("0-3:2/4", "at \"0-3:2/4\"");
	expect_bad_cpus("1,,2", "at \",2\"");
	expect_bad_cpus(",1", "at \",1\"");
	expect_bad_cpus("65536", "at \"65536\"");
	expect_bad_cpus("3-1", "not in ascending order at \"3-1\"");
	expect_bad_cpus("2,1", "not in ascending order at \"1\"");
	expect_bad_cpus("0-3,3", "not in ascending order at \"3\"");
	expect_bad_cpus("0-3,", "ends with a comma");
}

static void test_caps_file(void)
{
	_cleanup_(sched_caps_done) struct sched_caps c = {};
	_cleanup_free_ char *error = NULL, *enq = NULL;

	/* the contract's example, and a capability from a newer kernel */
	CHECK_INTEQ(sched_caps_parse("enq_immed 0-3\nenq 0-1\npreempt \nperf 2\nfuture 0-7\n", &c,
				     &error), 0);
	CHECK(c.present[SCHED_CAP_ENQ_IMMED] && c.cpus[SCHED_CAP_ENQ_IMMED].n == 4);
	CHECK(c.present[SCHED_CAP_ENQ] && c.cpus[SCHED_CAP_ENQ].n == 2);
	CHECK(c.present[SCHED_CAP_PREEMPT] && c.cpus[SCHED_CAP_PREEMPT].n == 0);
	CHECK(c.present[SCHED_CAP_PERF] && c.cpus[SCHED_CAP_PERF].n == 1 &&
	      c.cpus[SCHED_CAP_PERF].cpus[0] == 2);
	enq = cpu_list_format(&c.cpus[SCHED_CAP_ENQ]);
	CHECK_STREQ(enq, "0-1");
	sched_caps_done(&c);

	/* upstream's form, scx_attr_caps_show() in 7.3 */
	CHECK_INTEQ(sched_caps_parse("enq_immed: 0-3\nenq: 0-1\npreempt: \nperf:\n", &c, &error), 0);
	CHECK(c.present[SCHED_CAP_ENQ_IMMED] && c.cpus[SCHED_CAP_ENQ_IMMED].n == 4);
	CHECK(c.present[SCHED_CAP_ENQ] && c.cpus[SCHED_CAP_ENQ].n == 2);
	CHECK(c.present[SCHED_CAP_PREEMPT] && c.cpus[SCHED_CAP_PREEMPT].n == 0);
	CHECK(c.present[SCHED_CAP_PERF] && c.cpus[SCHED_CAP_PERF].n == 0);
	sched_caps_done(&c);

	CHECK_INTEQ(sched_caps_parse("", &c, &error), 0);
	for (int i = 0; i < SCHED_NR_CAPS; i++)
		CHECK(!c.present[i]);

	CHECK_INTEQ(sched_caps_parse("enq_immed 0-3\nenq 0-x\n", &c, &error), -EINVAL);
	CHECK(error && strstr(error, "line 2, enq: \"0-x\": not a CPU or range"));
	printf("caps \"enq 0-x\": %s\n", error ?: "(accepted)");
	CHECK_INTEQ(sched_caps_parse("enq 0\nenq 1\n", &c, &error), -EINVAL);
	CHECK_STREQ(error, "line 2: enq listed twice");
	CHECK_INTEQ(sched_caps_parse("enq 0\n 1-2\n", &c, &error), -EINVAL);
	CHECK(error && strstr(error, "line 2"));
	printf("caps \" 1-2\": %s\n", error ?: "(accepted)");
}

static const char events_with_delegation[] =
	"SCX_EV_SELECT_CPU_FALLBACK 7\n"
	"SCX_EV_SUB_RESCUE 3\n"
	"SCX_EV_SUB_ENQ_DENIED 12\n"
	"SCX_EV_SUB_KICK_DENIED 0\n"
	"SCX_EV_SUB_PREEMPT_DENIED 1\n"
	"SCX_EV_SUB_CPUPERF_DENIED 0\n";

static const char events_without[] = "SCX_EV_SELECT_CPU_FALLBACK 7\nSCX_EV_BYPASS_DURATION 0\n";

static void test_stats_json(void)
{
	json_t *node = json_object(), *denied, *caps;
	uint64_t v = 0;

	CHECK_INTEQ(sched_events_get(events_with_delegation, "SCX_EV_SUB_RESCUE", &v), 0);
	CHECK_INTEQ(v, 3);
	CHECK_INTEQ(sched_events_get(events_with_delegation, "SCX_EV_SUB", &v), -ENOENT);
	CHECK_INTEQ(sched_events_get(events_without, "SCX_EV_SUB_RESCUE", &v), -ENOENT);

	CHECK_INTEQ(sched_stats_add_json(node, events_with_delegation, "enq_immed 0-3\nenq 0-1\npreempt \nperf 2\n"), 0);
	CHECK_INTEQ(json_integer_value(json_object_get(node, "rescues")), 3);
	denied = json_object_get(node, "denied");
	CHECK_INTEQ(json_object_size(denied), 4);
	CHECK_INTEQ(json_integer_value(json_object_get(denied, "enq")), 12);
	CHECK_INTEQ(json_integer_value(json_object_get(denied, "kick")), 0);
	CHECK_INTEQ(json_integer_value(json_object_get(denied, "preempt")), 1);
	CHECK_INTEQ(json_integer_value(json_object_get(denied, "cpuperf")), 0);
	CHECK_INTEQ(json_integer_value(json_object_get(json_object_get(node, "events"),
						       "SCX_EV_SELECT_CPU_FALLBACK")), 7);
	caps = json_object_get(node, "caps");
	CHECK_INTEQ(json_array_size(json_object_get(caps, "enq_immed")), 4);
	CHECK_INTEQ(json_integer_value(json_array_get(json_object_get(caps, "enq_immed"), 3)), 3);
	CHECK(json_is_array(json_object_get(caps, "preempt")) &&
	      json_array_size(json_object_get(caps, "preempt")) == 0);
	CHECK_INTEQ(json_integer_value(json_array_get(json_object_get(caps, "perf"), 0)), 2);
	CHECK(json_object_get(node, "caps_error") == NULL);
	json_decref(node);

	/* a kernel without CPU delegation: no caps file, none of the events */
	node = json_object();
	CHECK_INTEQ(sched_stats_add_json(node, events_without, NULL), 0);
	CHECK(json_object_get(node, "events") != NULL);
	CHECK(json_object_get(node, "rescues") == NULL);
	CHECK(json_object_get(node, "denied") == NULL);
	CHECK(json_object_get(node, "caps") == NULL);
	json_decref(node);

	/* a caps file that does not parse: said, the rest still there */
	node = json_object();
	CHECK_INTEQ(sched_stats_add_json(node, events_with_delegation, "enq 3-1\n"), 0);
	CHECK(json_object_get(node, "caps") == NULL);
	CHECK(strstr(json_string_value(json_object_get(node, "caps_error")) ?: "",
		     "line 1, enq: \"3-1\": CPUs not in ascending order"));
	CHECK_INTEQ(json_integer_value(json_object_get(node, "rescues")), 3);
	json_decref(node);
}

static void test_exit_info(void)
{
	unsigned char uei[16 + SCHED_EXIT_REASON_LEN + SCHED_EXIT_MSG_LEN];
	int kind = SCXD_EXIT_PARENT_KILL;
	long long code = 0;
	struct sched_exit e;
	_cleanup_free_ char *text = NULL;
	json_t *j;

	memset(uei, 'x', sizeof(uei));	/* unterminated strings stay bounded */
	memcpy(uei, &kind, sizeof(kind));
	memcpy(uei + 8, &code, sizeof(code));
	strcpy((char *)uei + 16, "killed by the parent");
	strcpy((char *)uei + 16 + SCHED_EXIT_REASON_LEN, "child 7 over its budget");
	sched_exit_from_uei(uei, &e);
	CHECK_INTEQ(e.kind, 69);
	CHECK_STREQ(sched_exit_kind_id(e.kind), "parent-kill");
	text = sched_exit_format(&e);
	CHECK_STREQ(text, "killed by its parent scheduler, kind 69, code 0: killed by the parent (child 7 over its budget)");
	j = sched_exit_json(&e);
	CHECK_STREQ(json_string_value(json_object_get(j, "kind")), "parent-kill");
	CHECK_INTEQ(json_integer_value(json_object_get(j, "code")), 69);
	CHECK_INTEQ(json_integer_value(json_object_get(j, "exit_code")), 0);
	CHECK_STREQ(json_string_value(json_object_get(j, "reason")), "killed by the parent");
	CHECK_STREQ(json_string_value(json_object_get(j, "message")), "child 7 over its budget");
	json_decref(j);

	memset(uei + 16, 'r', SCHED_EXIT_REASON_LEN + SCHED_EXIT_MSG_LEN);
	kind = 1026;
	memcpy(uei, &kind, sizeof(kind));
	sched_exit_from_uei(uei, &e);
	CHECK_INTEQ(strlen(e.reason), SCHED_EXIT_REASON_LEN - 1);
	CHECK_INTEQ(strlen(e.msg), SCHED_EXIT_MSG_LEN - 1);
	CHECK_STREQ(sched_exit_kind_id(e.kind), "error-stall");
	CHECK_STREQ(sched_exit_kind_id(SCXD_EXIT_PARENT), "parent");
	CHECK(sched_exit_kind_id(70) == NULL);
}

/*
 * A tree like /sys/kernel/sched_ext: the root, a child with delegation
 * files (on cgroup /a) and its own child on an older layout (on /a/b, no
 * caps). The kernel names a child's directory sub-<cgroup id>, the
 * cgroup's inode number: the fake cgroups' own.
 */
static void test_fake_sysfs_tree(void)
{
	_cleanup_(cgroup_list_donep) struct cgroup_list cg = {};
	struct actual_state a = {};
	struct scxd_paths paths;
	char sys[4096], root[4096], c42[4096], c43[4096], cgroups[4096], state[4096], pins[4096];
	char cg_a[4096], cg_b[4096];
	uint64_t id_a, id_b;
	struct stat st;
	const struct kernel_sched *k;
	json_t *node;

	snprintf(cgroups, sizeof(cgroups), "%s/cg", tmp);
	snprintf(cg_a, sizeof(cg_a), "%s/a", cgroups);
	snprintf(cg_b, sizeof(cg_b), "%s/a/b", cgroups);
	mkdirs(cg_b);
	id_a = stat(cg_a, &st) == 0 ? st.st_ino : 0;
	id_b = stat(cg_b, &st) == 0 ? st.st_ino : 0;
	snprintf(sys, sizeof(sys), "%s/sys", tmp);
	snprintf(root, sizeof(root), "%s/root", sys);
	snprintf(c42, sizeof(c42), "%s/sub/sub-%llu", root, (unsigned long long)id_a);
	snprintf(c43, sizeof(c43), "%s/sub/sub-%llu", c42, (unsigned long long)id_b);
	snprintf(state, sizeof(state), "%s/state", tmp);
	snprintf(pins, sizeof(pins), "%s/pins", tmp);
	mkdirs(c43);
	write_file(sys, "state", "enabled\n");
	write_file(root, "ops", "scxd_wparent\n");
	write_file(root, "events", events_without);
	write_file(c42, "ops", "scxd_wparent\n");
	write_file(c42, "events", events_with_delegation);
	write_file(c42, "caps", "enq_immed 0-3\nenq 0-1\npreempt \nperf 2\n");
	write_file(c43, "ops", "scxd_fifo\n");
	write_file(c43, "events", events_without);

	paths = (struct scxd_paths){ .cgroup_root = cgroups, .sysfs = sys, .pin_dir = pins,
				     .state_dir = state };
	CHECK_INTEQ(cgroup_scan(cgroups, &cg), 0);
	CHECK_INTEQ(actual_read(&paths, &cg, NULL, &a), 0);
	CHECK_INTEQ(a.n_kernel, 3);
	k = actual_kernel_sched(&a, 1);
	CHECK(k && k->caps == NULL && streq(k->ops, "scxd_wparent"));
	k = actual_kernel_sched(&a, id_a);
	CHECK(k && k->caps && strstr(k->caps, "enq 0-1"));
	node = json_object();
	CHECK_INTEQ(k ? sched_stats_add_json(node, k->events, k->caps) : -1, 0);
	CHECK_INTEQ(json_integer_value(json_object_get(node, "rescues")), 3);
	CHECK_INTEQ(json_array_size(json_object_get(json_object_get(node, "caps"), "enq_immed")), 4);
	json_decref(node);
	k = actual_kernel_sched(&a, id_b);
	CHECK(k && k->caps == NULL && streq(k->ops, "scxd_fifo"));
	actual_state_done(&a);

	/* garbage in the file: read as it is, refused by the parser, never fatal */
	write_file(c42, "caps", "enq_immed \x01\xff\n");
	CHECK_INTEQ(actual_read(&paths, &cg, NULL, &a), 0);
	k = actual_kernel_sched(&a, id_a);
	node = json_object();
	CHECK_INTEQ(k ? sched_stats_add_json(node, k->events, k->caps) : -1, 0);
	CHECK(json_object_get(node, "caps_error") != NULL);
	printf("sysfs caps with garbage: %s\n", json_string_value(json_object_get(node, "caps_error")) ?: "?");
	json_decref(node);
	actual_state_done(&a);
}

int main(void)
{
	char cmd[128];

	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	test_cpu_lists();
	test_caps_file();
	test_stats_json();
	test_exit_info();
	test_fake_sysfs_tree();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
	return test_main_end("test-sysfs");
}
