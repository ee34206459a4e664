// SPDX-License-Identifier: GPL-2.0
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

#include "log.h"
#include "util.h"

int log_max_priority = LOG_INFO;

static int journal_wanted = -1;

#define LOG_FIELDS_MAX 12

struct log_fields {
	struct iovec iov[LOG_FIELDS_MAX];
	char *owned[LOG_FIELDS_MAX];
	int n;
};

static void log_fields_done(struct log_fields *f)
{
	for (int i = 0; i < f->n; i++)
		free(f->owned[i]);
}

/* Add "NAME=value"; a field with no value is not added at all. */
static void log_field(struct log_fields *f, const char *name, const char *value)
{
	char *s;

	if (!value || !*value || f->n >= LOG_FIELDS_MAX)
		return;
	if (asprintf(&s, "%s=%s", name, value) < 0)
		return;
	f->owned[f->n] = s;
	f->iov[f->n++] = (struct iovec){ .iov_base = s, .iov_len = strlen(s) };
}

static void log_to_journal(const char *code_file, int code_line, const char *code_func,
			   int priority, int error, const struct log_about *about,
			   const char *msg)
{
	_cleanup_(log_fields_done) struct log_fields f = {};
	_cleanup_free_ char *cfile = NULL, *cline = NULL;
	char num[16];

	log_field(&f, "MESSAGE", msg);
	snprintf(num, sizeof(num), "%d", priority);
	log_field(&f, "PRIORITY", num);
	log_field(&f, "SYSLOG_IDENTIFIER", "scxd");
	if (error) {
		snprintf(num, sizeof(num), "%d", -error);
		log_field(&f, "ERRNO", num);
	}
	if (about) {
		log_field(&f, "MESSAGE_ID", about->message_id);
		log_field(&f, "SCXD_CGROUP", about->cgroup);
		log_field(&f, "SCXD_SCHEDULER", about->scheduler);
		log_field(&f, "SCXD_POLICY", about->file);
		log_field(&f, "SCXD_EXIT_REASON", about->exit_reason);
	}
	/* meson compiles with paths relative to the build directory: keep the name */
	if (strrchr(code_file, '/'))
		code_file = strrchr(code_file, '/') + 1;
	if (asprintf(&cfile, "CODE_FILE=%s", code_file) < 0 ||
	    asprintf(&cline, "CODE_LINE=%d", code_line) < 0)
		return;
	sd_journal_sendv_with_location(cfile, cline, code_func, f.iov, f.n);
}

int log_full_at(const char *code_file, int code_line, const char *code_func, int priority,
		int error, const struct log_about *about, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	int r;

	if (error > 0)
		error = -error;
	if (priority > log_max_priority)
		return error;

	/* %m in fmt means the caller's errno, as with printf. */
	errno = error ? -error : errno;
	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return error;

	if (journal_wanted < 0)
		journal_wanted = getenv("JOURNAL_STREAM") != NULL;

	if (journal_wanted)
		log_to_journal(code_file, code_line, code_func, priority, error, about, msg);
	else
		fprintf(stderr, "scxd: %s\n", msg);
	return error;
}
