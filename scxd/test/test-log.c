// SPDX-License-Identifier: GPL-2.0
/*
 * log.c's journal entries, caught on their way out: this test defines
 * sd_journal_sendv_with_location() itself (it is not linked with
 * libsystemd), so each entry's fields land here. The caller's file, line
 * and function must be in it, not log.c's; a field with no value must
 * not be sent at all; MESSAGE_ID and ERRNO come when given.
 */

#define SD_JOURNAL_SUPPRESS_LOCATION
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

#include "log.h"
#include "tests.h"

static char fields[16][256];
static int n_fields;
static char code_file[256], code_line[64], code_func[64];

int sd_journal_sendv_with_location(const char *file, const char *line, const char *func,
				   const struct iovec *iov, int n)
{
	n_fields = 0;
	for (int i = 0; i < n && i < 16; i++) {
		snprintf(fields[i], sizeof(fields[i]), "%.*s", (int)iov[i].iov_len,
			 (const char *)iov[i].iov_base);
		n_fields++;
	}
	snprintf(code_file, sizeof(code_file), "%s", file);
	snprintf(code_line, sizeof(code_line), "%s", line);
	snprintf(code_func, sizeof(code_func), "%s", func);
	return 0;
}

static const char *field(const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < n_fields; i++)
		if (strncmp(fields[i], name, len) == 0 && fields[i][len] == '=')
			return fields[i] + len + 1;
	return NULL;
}

static bool any_empty(void)
{
	for (int i = 0; i < n_fields; i++) {
		const char *eq = strchr(fields[i], '=');

		if (!eq || !eq[1])
			return true;
	}
	return false;
}

static void test_caller_location(void)
{
	char want[64];
	int line = __LINE__ + 1;
	int r = log_error(-ENOENT, ABOUT(.cgroup = "/a b", .scheduler = "fifo"), "%s: gone", "/a b");

	CHECK_INTEQ(r, -ENOENT);
	CHECK_STREQ(code_file, "CODE_FILE=test-log.c");
	snprintf(want, sizeof(want), "CODE_LINE=%d", line);
	CHECK_STREQ(code_line, want);
	CHECK_STREQ(code_func, "test_caller_location");
	CHECK_STREQ(field("MESSAGE"), "/a b: gone");
	CHECK_STREQ(field("PRIORITY"), "3");
	CHECK_STREQ(field("ERRNO"), "2");
	CHECK_STREQ(field("SCXD_CGROUP"), "/a b");
	CHECK_STREQ(field("SCXD_SCHEDULER"), "fifo");
	/* no policy file, no exit reason, no message id: not sent, not empty */
	CHECK(field("SCXD_POLICY") == NULL);
	CHECK(field("SCXD_EXIT_REASON") == NULL);
	CHECK(field("MESSAGE_ID") == NULL);
	CHECK(!any_empty());
}

static void test_message_id(void)
{
	log_info(ABOUT(.cgroup = "/w", .scheduler = "vtime", .file = "/etc/scxd/policy.json",
		       .exit_reason = "", .message_id = SCXD_MESSAGE_ATTACHED),
		 "%s: attached %s", "/w", "vtime");
	CHECK_STREQ(field("MESSAGE_ID"), "611a8a21f5944fc0b7b691d3f6e51407");
	CHECK_STREQ(field("SCXD_POLICY"), "/etc/scxd/policy.json");
	CHECK(field("SCXD_EXIT_REASON") == NULL);	/* "" is no value either */
	CHECK(field("ERRNO") == NULL);
	CHECK(!any_empty());
	CHECK_STREQ(code_func, "test_message_id");
}

static void test_no_about(void)
{
	log_notice(NULL, "nothing in particular");
	CHECK_STREQ(field("MESSAGE"), "nothing in particular");
	CHECK_STREQ(field("SYSLOG_IDENTIFIER"), "scxd");
	CHECK_INTEQ(n_fields, 3);	/* MESSAGE, PRIORITY, SYSLOG_IDENTIFIER */
	CHECK(!any_empty());
}

/* The message ids are 128-bit ids in the journal's form, and all differ. */
static void test_ids_well_formed(void)
{
	const char *ids[] = { SCXD_MESSAGE_ATTACHED, SCXD_MESSAGE_DETACHED, SCXD_MESSAGE_SCHED_EXITED,
			      SCXD_MESSAGE_RELOAD_APPLIED, SCXD_MESSAGE_RELOAD_REJECTED };

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		CHECK_INTEQ(strlen(ids[i]), 32);
		CHECK(strspn(ids[i], "0123456789abcdef") == 32);
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(ids[i], ids[j]) != 0);
	}
}

int main(void)
{
	setenv("JOURNAL_STREAM", "8:1234", 1);
	test_caller_location();
	test_message_id();
	test_no_about();
	test_ids_well_formed();
	return test_main_end("log");
}
