// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-journal.h>

#include "log.h"
#include "util.h"

int log_max_priority = LOG_INFO;

static int journal_wanted = -1;

int log_full(int priority, int error, const struct log_about *about, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	int r;

	if (error > 0)
		error = -error;
	if (priority > log_max_priority)
		return error;

	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return error;

	if (journal_wanted < 0)
		journal_wanted = getenv("JOURNAL_STREAM") != NULL;

	if (journal_wanted) {
		sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", priority,
				"SYSLOG_IDENTIFIER=scxd",
				"SCXD_CGROUP=%s", about && about->cgroup ? about->cgroup : "",
				"SCXD_SCHEDULER=%s", about && about->scheduler ? about->scheduler : "",
				"SCXD_POLICY=%s", about && about->file ? about->file : "",
				"SCXD_EXIT_REASON=%s", about && about->exit_reason ? about->exit_reason : "",
				error ? "ERRNO=%d" : NULL, -error, NULL);
		return error;
	}
	fprintf(stderr, "scxd: %s\n", msg);
	return error;
}
