/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/*
 * Logging for the daemon: to the journal with structured fields when
 * stderr is connected to it (JOURNAL_STREAM), to stderr otherwise. Every
 * call names what it is about through struct log_about; the functions
 * return -abs(error) so that callers can write
 *	return log_error(r, &about, "...");
 */

#include <syslog.h>

struct log_about {
	const char *cgroup;
	const char *scheduler;
	const char *file;
	const char *exit_reason;
};

#define ABOUT(...) (&(const struct log_about){ __VA_ARGS__ })

__attribute__((format(printf, 4, 5)))
int log_full(int priority, int error, const struct log_about *about, const char *fmt, ...);

#define log_error(err, about, ...) log_full(LOG_ERR, (err), (about), __VA_ARGS__)
#define log_warning(err, about, ...) log_full(LOG_WARNING, (err), (about), __VA_ARGS__)
#define log_notice(about, ...) log_full(LOG_NOTICE, 0, (about), __VA_ARGS__)
#define log_info(about, ...) log_full(LOG_INFO, 0, (about), __VA_ARGS__)
#define log_debug(about, ...) log_full(LOG_DEBUG, 0, (about), __VA_ARGS__)

extern int log_max_priority;
