// SPDX-License-Identifier: GPL-2.0
/*
 * The names cgroup paths are pinned under. bpffs refuses a name with a '.'
 * (EPERM), which is how every systemd unit cgroup ("web.scope") is named,
 * and no name may be over NAME_MAX, while a path may be 4 KiB: a pin is
 * named by a hash of the path, the same for the same path every time, and
 * the legacy names an older scxd used are still computed to find its pins.
 */

#include <stdlib.h>

#include "record.h"
#include "sha256.h"
#include "tests.h"
#include "util.h"

static void hex(const uint8_t *d, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

/* FIPS 180-4 examples, and lengths around the padding boundaries. */
static void test_sha256_known_answers(void)
{
	uint8_t d[SHA256_DIGEST_SIZE];
	char h[65], *a = malloc(1000);

	sha256("abc", 3, d);
	hex(d, 32, h);
	CHECK_STREQ(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	sha256("", 0, d);
	hex(d, 32, h);
	CHECK_STREQ(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, d);
	hex(d, 32, h);
	CHECK_STREQ(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	if (!a)
		return;
	memset(a, 'a', 1000);
	sha256(a, 64, d);	/* `head -c 64 /dev/zero | tr '\0' a | sha256sum` */
	hex(d, 32, h);
	CHECK_STREQ(h, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
	free(a);
}

static void check_name(const char *path, const char *want)
{
	char name[PIN_NAME_LEN + 1], again[PIN_NAME_LEN + 1];

	pin_name(path, name);
	pin_name(path, again);
	CHECK_STREQ(name, want);
	CHECK_STREQ(name, again);
	CHECK(strlen(name) == PIN_NAME_LEN && strspn(name, "0123456789abcdef") == PIN_NAME_LEN);
}

static void check_legacy(const char *path, const char *want)
{
	_cleanup_free_ char *n = pin_name_legacy(path);

	CHECK_STREQ(n, want);
}

static void test_legacy_long_name_is_hashed(void)
{
	_cleanup_free_ char *path = malloc(400), *a = NULL, *b = NULL;

	if (!path)
		return;
	path[0] = '/';
	memset(path + 1, 'x', 398);
	path[399] = '\0';
	a = pin_name_legacy(path);
	path[200] = 'y';
	b = pin_name_legacy(path);
	CHECK(a && b && a[0] == '~' && strlen(a) == 17);
	CHECK(a && b && !streq(a, b));
}

static void test_path_validity(void)
{
	CHECK(cgroup_path_valid("/"));
	CHECK(cgroup_path_valid("/a/b c/\n/%/\xff"));
	CHECK(!cgroup_path_valid(""));
	CHECK(!cgroup_path_valid("a"));
	CHECK(!cgroup_path_valid("/a/"));
	CHECK(!cgroup_path_valid("/a//b"));
	CHECK(!cgroup_path_valid("/a/../b"));
	CHECK(!cgroup_path_valid("/."));
}

int main(void)
{
	test_sha256_known_answers();
	/* the first half of `printf %s PATH | sha256sum`, as the guest tests compute it */
	check_name("/", "8a5edab282632443219e051e4ade2d1d");
	check_name("/scxd-demo.slice/web.scope", "bfe8ad42e2e3d38737ca647ea4f73fee");
	check_legacy("/", "-");
	check_legacy("/workload", "workload");
	check_legacy("/scxd-demo.slice/web.scope", "scxd-demo%2eslice%2fweb%2escope");
	check_legacy("/-lead/a%b", "%2dlead%2fa%25b");
	check_legacy("/a/-b", "a%2f-b");
	test_legacy_long_name_is_hashed();
	test_path_validity();
	return test_main_end("test-names");
}
