// SPDX-License-Identifier: GPL-2.0
/*
 * The names cgroup paths are pinned under. bpffs refuses a name with a '.'
 * (EPERM), which is how every systemd unit cgroup ("web.scope") is named,
 * so the escaped form must have none and must map back to the path.
 */

#include <stdlib.h>

#include "actual.h"
#include "tests.h"
#include "util.h"

static void check_round_trip(const char *path, const char *want)
{
	_cleanup_free_ char *esc = cgroup_escape(path), *back = NULL;

	CHECK_STREQ(esc, want);
	if (!esc)
		return;
	CHECK(!strchr(esc, '.'));
	CHECK(!strchr(esc, '/'));
	back = cgroup_unescape(esc);
	CHECK_STREQ(back, path);
}

static void test_long_path_is_hashed(void)
{
	_cleanup_free_ char *path = malloc(400), *a = NULL, *b = NULL;

	if (!path)
		return;
	path[0] = '/';
	memset(path + 1, 'x', 398);
	path[399] = '\0';
	a = cgroup_escape(path);
	path[200] = 'y';
	b = cgroup_escape(path);
	CHECK(a && b && a[0] == '~' && strlen(a) == 17);
	CHECK(a && b && !streq(a, b));
}

int main(void)
{
	check_round_trip("/", "-");
	check_round_trip("/workload", "workload");
	check_round_trip("/scxd-demo.slice/web.scope", "scxd-demo%2eslice%2fweb%2escope");
	check_round_trip("/-lead/a%b", "%2dlead%2fa%25b");
	check_round_trip("/a/-b", "a%2f-b");
	test_long_path_is_hashed();
	return test_main_end("test-names");
}
