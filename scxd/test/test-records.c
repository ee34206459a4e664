// SPDX-License-Identifier: GPL-2.0
/*
 * Records and pins hold any cgroup path the kernel allows: 4 KiB paths,
 * names with a newline, '%', spaces, '.', UTF-8 and bytes that are not
 * UTF-8. Each goes through the record format, through the files scxd
 * writes (record, pin) and back through actual_read(), and a second
 * reconcile on that state plans nothing (no flap). Pins without a record
 * are matched to their cgroup by hashing, never decoded; pins and records
 * matched to nothing are reported, never planned on.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actual.h"
#include "match.h"
#include "plan.h"
#include "record.h"
#include "tests.h"
#include "util.h"

static char tmp[] = "/tmp/test-records.XXXXXX";
static struct scxd_paths paths;

/*
 * A path of exactly len bytes: components of 253 bytes (28 units of
 * 'a', 'b', '.', '%', newline, space, '-', 'é'), the last one padded
 * with 'x', and the salt byte (not UTF-8 if it is over 0x7f) in each.
 */
static char *long_path(size_t len, char salt)
{
	static const char unit[] = "ab.%\n -\xc3\xa9";
	char *p = malloc(len + 1);
	size_t o = 0;

	if (!p)
		return NULL;
	while (o < len) {
		size_t comp = len - o - 1 < 253 ? len - o - 1 : 253;

		if (len - o - 1 - comp == 1)
			comp--;		/* leave no 1-byte "/" at the end */
		p[o++] = '/';
		for (size_t i = 0; i < comp; i++)
			p[o + i] = i + 9 <= comp ? unit[i % 9] : 'x';
		p[o] = salt;
		o += comp;
	}
	p[len] = '\0';
	return p;
}

static char *cgroups_owned[16];
static const char *test_cgroups[16];
static size_t n_test_cgroups;

static void setup_cgroups(void)
{
	static const char *const fixed[] = {
		"/a\nb",			/* a newline: broke the text record */
		"/100%/50%25",			/* looks escaped */
		"/with space/x y",
		"/\xc3\xbcn\xc3\xaf" "c\xc3\xb6" "d\xc3\xa9/\xe6\xbc\xa2\xe5\xad\x97.scope",
		"/not-utf8\xff\xfe/x",
		"/~0123456789abcdef",		/* what a hashed legacy pin name decoded to */
		"/scxd-demo.slice/web.scope",
	};

	for (size_t i = 0; i < ELEMENTSOF(fixed); i++)
		test_cgroups[n_test_cgroups++] = fixed[i];
	cgroups_owned[0] = long_path(CGROUP_PATH_MAX - 1, 'L');
	cgroups_owned[1] = long_path(3000, '\xff');
	test_cgroups[n_test_cgroups++] = cgroups_owned[0];
	test_cgroups[n_test_cgroups++] = cgroups_owned[1];
}

static void test_long_paths_are_valid(void)
{
	CHECK_INTEQ(strlen(cgroups_owned[0]), 4095);
	CHECK(cgroup_path_valid(cgroups_owned[0]));
	CHECK(cgroup_path_valid(cgroups_owned[1]));
	CHECK(strchr(cgroups_owned[0], '\n') && strchr(cgroups_owned[0], '%'));
	CHECK(strstr(cgroups_owned[0], "\xc3\xa9") && strchr(cgroups_owned[1], '\xff'));
}

static void make_record(struct pin_record *rec, const char *cgroup, uint64_t cgid)
{
	static struct tunable_value tv[] = { { "big", UINT64_MAX - 1, 8 }, { "slice_us", 5000, 4 } };

	*rec = (struct pin_record){
		.cgroup = (char *)cgroup, .scheduler = "fifo", .ops = "fifo", .cgid = cgid,
		.uei_offset = 16, .tunables = tv, .n_tunables = 2,
	};
}

static void test_record_format_round_trip(void)
{
	for (size_t i = 0; i < n_test_cgroups; i++) {
		struct pin_record rec, back;
		_cleanup_free_ char *text = NULL;
		const char *why = NULL;

		make_record(&rec, test_cgroups[i], 100 + i);
		CHECK_INTEQ(pin_record_format(&rec, &text), 0);
		if (!text)
			continue;
		CHECK_INTEQ(pin_record_parse(text, strlen(text), &back, &why), 0);
		if (why)
			fprintf(stderr, "cgroup #%zu: %s\n%s", i, why, text);
		CHECK(back.cgroup && pin_record_equal(&rec, &back));
		pin_record_done(&back);
	}
}

static void test_bad_records_are_refused(void)
{
	static const char *const bad[] = {
		"", "[]", "{}", "{\"version\":2,\"cgroup\":\"/a\",\"scheduler\":\"x\",\"cgid\":1}",
		"{\"version\":1,\"cgroup\":\"a\",\"scheduler\":\"x\",\"cgid\":1}",
		"{\"version\":1,\"cgroup\":\"/a/../b\",\"scheduler\":\"x\",\"cgid\":1}",
		"{\"version\":1,\"cgroup\":\"/a\",\"scheduler\":\"../x\",\"cgid\":1}",
		"{\"version\":1,\"cgroup\":\"/a\",\"scheduler\":\"x\",\"cgid\":-1}",
		"{\"version\":1,\"cgroup_hex\":\"2f00\",\"scheduler\":\"x\",\"cgid\":1}",
		"{\"version\":1,\"cgroup\":\"/a\",\"scheduler\":\"x\",\"cgid\":1,\"tunables\":[{\"name\":\"t\",\"size\":3,\"raw\":0}]}",
		"{\"version\":1,\"cgroup\":\"/a\",\"cgroup\":\"/b\",\"scheduler\":\"x\",\"cgid\":1}",
	};

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		struct pin_record rec;
		const char *why = NULL;

		CHECK_INTEQ(pin_record_parse(bad[i], strlen(bad[i]), &rec, &why), -EINVAL);
		CHECK(why != NULL);
	}
	/* what the fuzzer found: text records a JSON record could not say again */
	static const char *const bad_legacy[] = {
		"cgroup /a\nscheduler x\ntunable t 4 1\ntunable t 4 2\n",
		"cgroup /a\nscheduler x\ntunable t 5 1\n",
		"cgroup /a\nscheduler x\ncgid 18446744073709551615\n",
		"scheduler x\n", "cgroup a\nscheduler x\n", "cgroup /a\n",
	};
	for (size_t i = 0; i < ELEMENTSOF(bad_legacy); i++) {
		struct pin_record rec;
		const char *why = NULL;

		CHECK_INTEQ(pin_record_parse_legacy(bad_legacy[i], strlen(bad_legacy[i]), &rec, &why),
			    -EINVAL);
		CHECK(why != NULL);
	}
}

/* ---- through the files ---- */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static char *join(const char *a, const char *b)
{
	char *s = NULL;

	return asprintf(&s, "%s/%s", a, b) < 0 ? NULL : s;
}

static void touch_pin(const char *name)
{
	_cleanup_free_ char *dir = join(paths.pin_dir, name), *link = dir ? join(dir, "link") : NULL;

	mkdir(paths.pin_dir, 0700);
	mkdir(dir, 0700);
	write_file(link, "");
}

/* sysfs: the root runs wparent, each test cgroup a child fifo. */
static void fake_sysfs(void)
{
	_cleanup_free_ char *root = join(paths.sysfs, "root"), *sub = join(root, "sub");
	char p[4096];

	mkdir(paths.sysfs, 0700);
	mkdir(root, 0700);
	mkdir(sub, 0700);
	snprintf(p, sizeof(p), "%s/state", paths.sysfs);
	write_file(p, "enabled\n");
	snprintf(p, sizeof(p), "%s/ops", root);
	write_file(p, "wparent\n");
	for (size_t i = 0; i < n_test_cgroups; i++) {
		snprintf(p, sizeof(p), "%s/sub-%zu", sub, 100 + i);
		mkdir(p, 0700);
		strcat(p, "/ops");
		write_file(p, "fifo\n");
	}
}

static void make_cgroups(struct cgroup_list *cg)
{
	cg->n = n_test_cgroups + 1;
	cg->paths = calloc(cg->n, sizeof(*cg->paths));
	cg->ids = calloc(cg->n, sizeof(*cg->ids));
	cg->paths[0] = strdup("/");
	cg->ids[0] = 1;
	for (size_t i = 0; i < n_test_cgroups; i++) {
		cg->paths[i + 1] = strdup(test_cgroups[i]);
		cg->ids[i + 1] = 100 + i;
	}
}

static void make_desired(struct sched_tree *t)
{
	t->nodes = calloc(n_test_cgroups + 1, sizeof(*t->nodes));
	sched_node_init(&t->nodes[t->n++], "/", "wparent", NULL, 0);
	for (size_t i = 0; i < n_test_cgroups; i++)
		sched_node_init(&t->nodes[t->n++], test_cgroups[i], "fifo", NULL, 0);
	sched_tree_link(t);
}

/* What apply_commit() leaves behind, minus the kernel. */
static void fake_attach(const char *cgroup, const char *scheduler, uint64_t cgid)
{
	struct pin_record rec = {
		.cgroup = (char *)cgroup, .scheduler = (char *)scheduler, .ops = (char *)scheduler,
		.cgid = cgid, .uei_offset = SIZE_MAX,
	};
	char name[PIN_NAME_LEN + 1];

	pin_name(cgroup, name);
	touch_pin(name);
	CHECK_INTEQ(pin_record_write(&paths, &rec), 0);
}

/* The plan from desired to a has this many steps (and lists them when not). */
static void expect_steps(const struct sched_tree *desired, const struct actual_state *a,
			 size_t want)
{
	struct plan p;

	CHECK_INTEQ(plan_build(desired, &a->tree, &p), 0);
	CHECK_INTEQ(p.n, want);
	CHECK_INTEQ(p.n_blocked, 0);
	for (size_t i = 0; p.n != want && i < p.n; i++)
		fprintf(stderr, "  step: %s %.40s (%s)\n", plan_op_name(p.steps[i].op),
			p.steps[i].node->cgroup, plan_reason_name(p.steps[i].reason));
	plan_done(&p);
}

static void test_attached_state_reads_back_and_plans_nothing(void)
{
	_cleanup_(cgroup_list_donep) struct cgroup_list cg = {};
	struct sched_tree desired = {};
	struct actual_state a;
	size_t found = 0;

	make_cgroups(&cg);
	make_desired(&desired);

	CHECK_INTEQ(actual_read(&paths, &cg, NULL, &a), 0);
	expect_steps(&desired, &a, n_test_cgroups + 1);
	actual_state_done(&a);
	fake_sysfs();

	fake_attach("/", "wparent", 1);
	for (size_t i = 0; i < n_test_cgroups; i++)
		fake_attach(test_cgroups[i], "fifo", 100 + i);

	CHECK_INTEQ(actual_read(&paths, &cg, NULL, &a), 0);
	CHECK_INTEQ(a.n_pins, n_test_cgroups + 1);
	CHECK_INTEQ(a.n_strays, 0);
	for (size_t i = 0; i < a.n_pins; i++)
		for (size_t j = 0; j < n_test_cgroups; j++)
			found += a.pin_live[i] && streq(a.pins[i].cgroup, test_cgroups[j]) &&
				 a.pins[i].cgid == 100 + j;
	CHECK_INTEQ(found, n_test_cgroups);
	/* the second reconcile: nothing to do, and the same again after it */
	expect_steps(&desired, &a, 0);
	actual_state_done(&a);
	CHECK_INTEQ(actual_read(&paths, &cg, NULL, &a), 0);
	expect_steps(&desired, &a, 0);
	actual_state_done(&a);
	printf("records: %zu cgroups (longest %zu bytes) written, read back equal, second plan 0 steps\n",
	       n_test_cgroups + 1, strlen(test_cgroups[n_test_cgroups - 2]));
	sched_tree_done(&desired);
}

static void rm_nodes(void)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s/nodes'", paths.state_dir);
	CHECK_INTEQ(system(cmd), 0);
}

/*
 * The runtime directory is lost, the pins stay: each pin is matched to
 * its own cgroup by hashing the cgroups that exist. The old scxd decoded
 * a hashed name into a cgroup "/~<hash>" and flapped it on every event.
 */
static void test_unrecorded_pins_find_their_cgroup(void)
{
	_cleanup_(cgroup_list_donep) struct cgroup_list cg = {};
	struct actual_state a;
	size_t matched = 0;

	make_cgroups(&cg);
	rm_nodes();
	touch_pin("0123456789abcdef0123456789abcdef");	/* named by no cgroup */
	CHECK_INTEQ(actual_read(&paths, &cg, NULL, &a), 0);
	CHECK_INTEQ(a.n_pins, n_test_cgroups + 1);
	for (size_t i = 0; i < a.n_pins; i++) {
		CHECK_STREQ(a.pins[i].scheduler, "(unrecorded)");
		matched += !!sched_tree_find(&a.tree, a.pins[i].cgroup);
		CHECK(a.pins[i].cgroup[1] != '~' || streq(a.pins[i].cgroup, "/~0123456789abcdef"));
	}
	CHECK_INTEQ(matched, n_test_cgroups + 1);
	CHECK_INTEQ(a.n_strays, 1);
	CHECK(a.n_strays && strstr(a.strays[0], "0123456789abcdef0123456789abcdef"));
	actual_state_done(&a);
}

static void rm_pins(void)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", paths.pin_dir);
	CHECK_INTEQ(system(cmd), 0);
	rm_nodes();
}

/*
 * What the previous scxd left: text records and pins under %-escaped
 * names, or "~<fnv hash>" for long ones. They are adopted as they are.
 */
static void test_legacy_pins_and_records_are_adopted(void)
{
	_cleanup_(cgroup_list_donep) struct cgroup_list cg = {};
	_cleanup_free_ char *nodes = join(paths.state_dir, "nodes"), *f = NULL;
	_cleanup_free_ char *web = pin_name_legacy("/scxd-demo.slice/web.scope");
	_cleanup_free_ char *longer = pin_name_legacy(test_cgroups[n_test_cgroups - 1]);
	struct sched_tree desired = {};
	struct actual_state a;

	rm_pins();
	make_cgroups(&cg);
	mkdir(nodes, 0700);
	touch_pin("-");
	touch_pin(web);
	touch_pin(longer);
	f = join(nodes, "-");
	write_file(f, "cgroup /\nscheduler wparent\nops wparent\ncgid 1\n");
	free(f);
	f = join(nodes, web);
	write_file(f, "cgroup /scxd-demo.slice/web.scope\nscheduler fifo\nops fifo\ncgid 106\nuei 16\n");
	CHECK(longer && longer[0] == '~');

	CHECK_INTEQ(actual_read(&paths, &cg, NULL, &a), 0);
	CHECK_INTEQ(a.n_pins, 3);
	CHECK_INTEQ(a.n_strays, 0);
	CHECK(sched_tree_find(&a.tree, "/scxd-demo.slice/web.scope"));
	CHECK(sched_tree_find(&a.tree, test_cgroups[n_test_cgroups - 1]));
	/* only the long one, unrecorded, is replaced; the recorded ones stay */
	desired.nodes = calloc(4, sizeof(*desired.nodes));
	sched_node_init(&desired.nodes[desired.n++], "/", "wparent", NULL, 0);
	sched_node_init(&desired.nodes[desired.n++], "/scxd-demo.slice/web.scope", "fifo", NULL, 0);
	sched_node_init(&desired.nodes[desired.n++], test_cgroups[n_test_cgroups - 1], "fifo", NULL, 0);
	sched_tree_link(&desired);
	expect_steps(&desired, &a, 2);
	actual_state_done(&a);
	sched_tree_done(&desired);
}

/* A record whose cgroup does not hash to its file name is not believed. */
static void test_mismatched_record_is_reported(void)
{
	_cleanup_(cgroup_list_donep) struct cgroup_list cg = {};
	_cleanup_free_ char *nodes = join(paths.state_dir, "nodes"), *f = NULL;
	char name[PIN_NAME_LEN + 1];
	struct actual_state a;

	rm_pins();
	make_cgroups(&cg);
	mkdir(nodes, 0700);
	pin_name("/a\nb", name);
	touch_pin(name);
	f = join(nodes, "0123456789abcdef0123456789abcdef.json");
	write_file(f, "{\"version\":1,\"cgroup\":\"/a\\nb\",\"scheduler\":\"fifo\",\"cgid\":100}\n");
	free(f);
	f = join(nodes, "ffffffffffffffffffffffffffffffff.json");
	write_file(f, "{\"version\":1,\"cgroup\":\"/a\\n");	/* torn */

	CHECK_INTEQ(actual_read(&paths, &cg, NULL, &a), 0);
	CHECK_INTEQ(a.n_strays, 2);
	/* the pin is still matched to its cgroup by its name */
	CHECK_INTEQ(a.n_pins, 1);
	CHECK(a.n_pins && streq(a.pins[0].cgroup, "/a\nb") && streq(a.pins[0].scheduler, "(unrecorded)"));
	for (size_t i = 0; i < a.n_strays; i++)
		printf("reported: %s\n", a.strays[i]);
	actual_state_done(&a);
}

/* The cgroup walk: a 4 KiB path below a root whose own path makes it longer than PATH_MAX. */
static void test_scan_finds_long_paths(void)
{
	_cleanup_(cgroup_list_donep) struct cgroup_list cg = {};
	_cleanup_free_ char *root = join(tmp, "cgroup-root-with-a-longish-name");
	const char *want = test_cgroups[n_test_cgroups - 2];
	_cleanup_free_ char *copy = strdup(want);
	int fd, found = 0;

	mkdir(root, 0700);
	fd = open(root, O_RDONLY | O_DIRECTORY);
	for (char *save = NULL, *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int next;

		mkdirat(fd, c, 0700);
		next = openat(fd, c, O_RDONLY | O_DIRECTORY);
		close(fd);
		fd = next;
	}
	if (fd >= 0)
		close(fd);
	mkdir(root, 0700);
	CHECK_INTEQ(cgroup_scan(root, &cg), 0);
	for (size_t i = 0; i < cg.n; i++)
		found += streq(cg.paths[i], want);
	CHECK_INTEQ(found, 1);
	CHECK_INTEQ(cg.n, path_depth(want) + 1);
}

int main(void)
{
	char cmd[100];

	if (!mkdtemp(tmp))
		return 1;
	paths = (struct scxd_paths){
		.cgroup_root = "/nonexistent", .sysfs = join(tmp, "sys"),
		.pin_dir = join(tmp, "pins"), .state_dir = join(tmp, "state"),
	};
	setup_cgroups();
	test_long_paths_are_valid();
	test_record_format_round_trip();
	test_bad_records_are_refused();
	test_attached_state_reads_back_and_plans_nothing();
	test_unrecorded_pins_find_their_cgroup();
	test_legacy_pins_and_records_are_adopted();
	test_mismatched_record_is_reported();
	test_scan_finds_long_paths();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmp);
	return test_main_end("test-records");
}
