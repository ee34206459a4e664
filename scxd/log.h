/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * Logging for the daemon: to the journal with structured fields when
 * stderr is connected to it (JOURNAL_STREAM), to stderr otherwise. Every
 * call names what it is about through struct log_about; the macros pass
 * the caller's file, line and function (CODE_FILE=, CODE_LINE=,
 * CODE_FUNC=), and return -abs(error) so that callers can write
 *	return log_error(r, &about, "...");
 * A field with no value is left out of the entry, not sent empty.
 */

#include <syslog.h>

#include "message-id.h"

struct log_about {
	const char *cgroup;
	const char *scheduler;
	const char *file;
	const char *exit_reason;
	const char *message_id;		/* SCXD_MESSAGE_*, for the entries that have one */
};

#define ABOUT(...) (&(const struct log_about){ __VA_ARGS__ })

__attribute__((format(printf, 7, 8)))
int log_full_at(const char *code_file, int code_line, const char *code_func, int priority,
		int error, const struct log_about *about, const char *fmt, ...);

#define log_full(priority, error, about, ...) \
	log_full_at(__FILE__, __LINE__, __func__, (priority), (error), (about), __VA_ARGS__)

#define log_error(err, about, ...) log_full(LOG_ERR, (err), (about), __VA_ARGS__)
#define log_warning(err, about, ...) log_full(LOG_WARNING, (err), (about), __VA_ARGS__)
#define log_notice(about, ...) log_full(LOG_NOTICE, 0, (about), __VA_ARGS__)
#define log_info(about, ...) log_full(LOG_INFO, 0, (about), __VA_ARGS__)
#define log_debug(about, ...) log_full(LOG_DEBUG, 0, (about), __VA_ARGS__)

extern int log_max_priority;
