// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the record parsers: any bytes as a JSON record and
 * as a legacy text record. A record that parses must survive a round
 * trip: formatted again and parsed back, it is the same record, and its
 * path is one pin_name() and pin_name_legacy() accept.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const struct pin_record *rec)
{
	char name[PIN_NAME_LEN + 1];
	struct pin_record back;
	const char *why;
	char *text = NULL, *legacy;

	pin_name(rec->cgroup, name);
	legacy = pin_name_legacy(rec->cgroup);
	if (!legacy || strlen(legacy) > 240 || strchr(legacy, '/'))
		abort();
	free(legacy);
	if (pin_record_format(rec, &text) < 0)
		return;
	if (pin_record_parse(text, strlen(text), &back, &why) < 0 || !pin_record_equal(rec, &back))
		abort();
	pin_record_done(&back);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pin_record rec;
	const char *why;

	if (pin_record_parse((const char *)data, size, &rec, &why) == 0) {
		round_trip(&rec);
		pin_record_done(&rec);
	}
	if (pin_record_parse_legacy((const char *)data, size, &rec, &why) == 0) {
		round_trip(&rec);
		pin_record_done(&rec);
	}
	return 0;
}
