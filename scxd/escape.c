// SPDX-License-Identifier: GPL-2.0
/* Cgroup paths as JSON and as terminal text (escape.h). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "util.h"

/* The length of the UTF-8 sequence at s (1 to 4), 0 if there is none. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		n = 2, c = s[0] & 0x1f;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3, c = s[0] & 0x0f;
	else if ((s[0] & 0xf8) == 0xf0)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates and beyond U+10FFFF are not UTF-8 */
	if ((n == 2 && c < 0x80) || (n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return n;
}

bool utf8_valid(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_len(p);

		if (!n)
			return false;
		p += n;
	}
	return true;
}

char *escape_text(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out = malloc(4 * strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	while (*p) {
		size_t n = utf8_len(p);

		if (*p == '\\') {
			*o++ = '\\';
			*o++ = '\\';
			p++;
		} else if (n == 0 || *p < 0x20 || *p == 0x7f) {
			o += sprintf(o, "\\x%02x", *p);
			p++;
		} else {
			memcpy(o, p, n);
			o += n;
			p += n;
		}
	}
	*o = '\0';
	return out;
}

char *hex_encode(const char *s)
{
	size_t n = strlen(s);
	char *hex = malloc(2 * n + 1);

	if (!hex)
		return NULL;
	for (size_t i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", (unsigned char)s[i]);
	hex[2 * n] = '\0';
	return hex;
}

int hex_decode(const char *hex, char **ret)
{
	size_t n = strlen(hex);
	char *out;

	if (n % 2)
		return -EINVAL;
	out = malloc(n / 2 + 1);
	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = unhexchar(hex[2 * i]), lo = unhexchar(hex[2 * i + 1]);

		if (hi < 0 || lo < 0 || (hi | lo) == 0) {
			free(out);
			return -EINVAL;
		}
		out[i] = (char)(hi << 4 | lo);
	}
	out[n / 2] = '\0';
	*ret = out;
	return 0;
}

int json_set_cgroup(json_t *o, const char *key, const char *path)
{
	_cleanup_free_ char *text = NULL, *hex = NULL, *hex_key = NULL;

	if (utf8_valid(path))
		return json_object_set_new(o, key, json_string(path)) == 0 ? 0 : -ENOMEM;
	text = escape_text(path);
	hex = hex_encode(path);
	if (!text || !hex || asprintf(&hex_key, "%s_hex", key) < 0)
		return -ENOMEM;
	if (json_object_set_new(o, key, json_string(text)) < 0 ||
	    json_object_set_new(o, hex_key, json_string(hex)) < 0)
		return -ENOMEM;
	return 0;
}

json_t *json_text(const char *s)
{
	_cleanup_free_ char *text = NULL;

	if (!s || utf8_valid(s))
		return s ? json_string(s) : NULL;
	text = escape_text(s);
	return text ? json_string(text) : NULL;
}

char *json_get_cgroup(json_t *o, const char *key)
{
	_cleanup_free_ char *hex_key = NULL;
	const char *hex, *s;
	char *raw = NULL;

	if (asprintf(&hex_key, "%s_hex", key) < 0)
		return NULL;
	hex = json_string_value(json_object_get(o, hex_key));
	if (hex && hex_decode(hex, &raw) == 0)
		return raw;
	s = json_string_value(json_object_get(o, key));
	return s ? strdup(s) : NULL;
}
