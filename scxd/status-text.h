/* SPDX-License-Identifier: GPL-2.0 */
#pragma once

/* scxdctl's text for people (status-text.c). */

#include <jansson.h>
#include <stdbool.h>

/* `scxdctl status` on stdout: one line per cgroup; verbose: everything. */
void status_print(const json_t *status, bool verbose);

/* o[key] as a string, "" if it is none. */
const char *reply_str(const json_t *o, const char *key);
/*
 * The member for the terminal: its raw bytes (from "<key>_hex" when scxd
 * sent them so: escape.h) with control characters and what is not UTF-8
 * escaped. Lives until a few more calls.
 */
const char *reply_term(const json_t *o, const char *key);
json_int_t reply_num(const json_t *o, const char *key);
