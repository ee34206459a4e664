// SPDX-License-Identifier: GPL-2.0
/*
 * Records and pin names. A record is a JSON object:
 *
 *   { "version": 1, "cgroup": "/a/b", "scheduler": "fifo", "ops": "fifo",
 *     "cgid": 4242, "uei_offset": 16,
 *     "tunables": [ { "name": "slice_us", "size": 4, "raw": 5000 } ] }
 *
 * A cgroup name may hold any byte but '/' and NUL; a path that is not
 * valid UTF-8 cannot be a JSON string and is written as "cgroup_hex"
 * instead. "raw" is the variable's bytes as a 64-bit integer (above 2^63
 * it reads as negative). Unknown keys are ignored, so that a newer scxd
 * can add some; a different "version" is refused.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "file.h"
#include "record.h"
#include "sha256.h"
#include "util.h"

#define _cleanup_json_ _cleanup_(json_decrefp)

void pin_name(const char *cgroup, char ret[PIN_NAME_LEN + 1])
{
	uint8_t d[SHA256_DIGEST_SIZE];

	sha256(cgroup, strlen(cgroup), d);
	for (unsigned i = 0; i < PIN_NAME_LEN / 2; i++)
		sprintf(ret + 2 * i, "%02x", d[i]);
	ret[PIN_NAME_LEN] = '\0';
}

char *pin_name_legacy(const char *cgroup)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t cap = strlen(cgroup) * 3 + 20;
	char *out, *o;

	if (streq(cgroup, "/"))
		return strdup("-");
	out = malloc(cap);
	if (!out)
		return NULL;
	o = out;
	for (const char *p = cgroup + 1; *p; p++) {
		if (*p == '/' || *p == '%' || *p == '.' || (*p == '-' && p == cgroup + 1))
			o += sprintf(o, "%%%02x", (unsigned char)*p);
		else
			*o++ = *p;
	}
	*o = '\0';
	if (o - out <= 240)
		return out;
	for (const char *p = cgroup; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	snprintf(out, cap, "~%016" PRIx64, h);
	return out;
}

bool cgroup_path_valid(const char *path)
{
	size_t len = strlen(path);

	if (path[0] != '/' || len >= CGROUP_PATH_MAX)
		return false;
	if (len == 1)
		return true;
	for (const char *p = path + 1;;) {
		size_t n = strcspn(p, "/");

		if (n == 0 || n > 255 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (!p[n])
			return true;
		p += n + 1;
	}
}

void pin_record_done(struct pin_record *rec)
{
	for (size_t i = 0; i < rec->n_tunables; i++)
		free(rec->tunables[i].name);
	free(rec->tunables);
	free(rec->cgroup);
	free(rec->scheduler);
	free(rec->ops);
	free(rec->pin);
	*rec = (struct pin_record){ .uei_offset = SIZE_MAX };
}

static void pin_record_donep(struct pin_record *rec)
{
	pin_record_done(rec);
}

bool pin_record_equal(const struct pin_record *a, const struct pin_record *b)
{
	if (!streq(a->cgroup, b->cgroup) || !streq(a->scheduler, b->scheduler) ||
	    !streq(a->ops ?: "", b->ops ?: "") || a->cgid != b->cgid ||
	    a->uei_offset != b->uei_offset || a->n_tunables != b->n_tunables)
		return false;
	for (size_t i = 0; i < a->n_tunables; i++)
		if (!streq(a->tunables[i].name, b->tunables[i].name) ||
		    a->tunables[i].raw != b->tunables[i].raw ||
		    a->tunables[i].size != b->tunables[i].size)
			return false;
	return true;
}

/* ---- writing ---- */

static int set_new(json_t *o, const char *key, json_t *v)
{
	return v && json_object_set_new(o, key, v) == 0 ? 0 : -ENOMEM;
}

static json_t *hex_string(const char *s)
{
	_cleanup_free_ char *hex = hex_encode(s);

	return hex ? json_string(hex) : NULL;
}

static int format_cgroup(json_t *o, const char *cgroup)
{
	json_t *s = json_string(cgroup);	/* NULL if not valid UTF-8 */

	if (s)
		return set_new(o, "cgroup", s);
	return set_new(o, "cgroup_hex", hex_string(cgroup));
}

int pin_record_format(const struct pin_record *rec, char **ret)
{
	_cleanup_json_ json_t *o = json_object(), *tun = json_array();
	_cleanup_free_ char *text = NULL;
	int r;

	if (!o || !tun)
		return -ENOMEM;
	r = set_new(o, "version", json_integer(PIN_RECORD_VERSION));
	if (r == 0)
		r = format_cgroup(o, rec->cgroup);
	if (r == 0)
		r = set_new(o, "scheduler", json_string(rec->scheduler));
	if (r == 0)
		r = set_new(o, "ops", json_string(rec->ops ?: ""));
	if (r == 0)
		r = set_new(o, "cgid", json_integer((json_int_t)rec->cgid));
	if (r == 0 && rec->uei_offset != SIZE_MAX)
		r = set_new(o, "uei_offset", json_integer((json_int_t)rec->uei_offset));
	for (size_t i = 0; r == 0 && i < rec->n_tunables; i++) {
		const struct tunable_value *t = &rec->tunables[i];
		json_t *v = json_pack("{s:s, s:i, s:I}", "name", t->name, "size", (int)t->size,
				      "raw", (json_int_t)t->raw);

		r = v && json_array_append_new(tun, v) == 0 ? 0 : -ENOMEM;
	}
	if (r == 0)
		r = json_object_set(o, "tunables", tun) == 0 ? 0 : -ENOMEM;
	if (r < 0)
		return r;
	text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (!text)
		return -ENOMEM;
	if (asprintf(ret, "%s\n", text) < 0)
		return -ENOMEM;
	return 0;
}

/* ---- reading ---- */

static int fail(const char **why, const char *what)
{
	*why = what;
	return -EINVAL;
}

static int parse_cgroup(json_t *o, struct pin_record *rec, const char **why)
{
	json_t *s = json_object_get(o, "cgroup"), *h = json_object_get(o, "cgroup_hex");
	int r;

	if (json_is_string(s))
		rec->cgroup = strdup(json_string_value(s));
	else if (!s && json_is_string(h)) {
		r = hex_decode(json_string_value(h), &rec->cgroup);
		if (r == -EINVAL)
			return fail(why, "\"cgroup_hex\" is not the hex of a path");
		if (r < 0)
			return r;
	} else
		return fail(why, "no \"cgroup\" string");
	if (!rec->cgroup)
		return -ENOMEM;
	if (!cgroup_path_valid(rec->cgroup))
		return fail(why, "\"cgroup\" is not a cgroup path");
	return 0;
}

static bool scheduler_name_valid(const char *s)
{
	return *s && strlen(s) <= 255 && !strchr(s, '/') && !strchr(s, '\n');
}

static int tunable_cmp(const void *a, const void *b)
{
	return strcmp(((const struct tunable_value *)a)->name,
		      ((const struct tunable_value *)b)->name);
}

/* Sorted by name, each once, each of a size a variable can have. */
static int check_tunables(struct pin_record *rec, const char **why)
{
	if (rec->n_tunables > 1)
		qsort(rec->tunables, rec->n_tunables, sizeof(*rec->tunables), tunable_cmp);
	for (size_t i = 0; i < rec->n_tunables; i++) {
		unsigned sz = rec->tunables[i].size;

		if (!*rec->tunables[i].name)
			return fail(why, "a tunable has no name");
		if (sz != 1 && sz != 2 && sz != 4 && sz != 8)
			return fail(why, "a tunable's \"size\" is not 1, 2, 4 or 8");
		if (i > 0 && streq(rec->tunables[i].name, rec->tunables[i - 1].name))
			return fail(why, "a tunable is listed twice");
	}
	return 0;
}

static int parse_tunables(json_t *arr, struct pin_record *rec, const char **why)
{
	size_t i;
	json_t *t;

	if (!arr)
		return 0;
	if (!json_is_array(arr))
		return fail(why, "\"tunables\" is not an array");
	rec->tunables = calloc(json_array_size(arr) + 1, sizeof(*rec->tunables));
	if (!rec->tunables)
		return -ENOMEM;
	json_array_foreach(arr, i, t) {
		json_t *name = json_object_get(t, "name"), *size = json_object_get(t, "size");
		json_t *raw = json_object_get(t, "raw");
		json_int_t sz;

		if (!json_is_string(name) || !*json_string_value(name) ||
		    !json_is_integer(size) || !json_is_integer(raw))
			return fail(why, "a tunable needs \"name\", \"size\" and \"raw\"");
		sz = json_integer_value(size);
		if (sz < 0 || sz > 8)
			return fail(why, "a tunable's \"size\" is not 1, 2, 4 or 8");
		rec->tunables[i] = (struct tunable_value){
			.name = strdup(json_string_value(name)),
			.raw = (uint64_t)json_integer_value(raw), .size = (unsigned)sz,
		};
		if (!rec->tunables[i].name)
			return -ENOMEM;
		rec->n_tunables = i + 1;
	}
	return check_tunables(rec, why);
}

int pin_record_parse(const char *buf, size_t len, struct pin_record *ret, const char **why)
{
	_cleanup_(pin_record_donep) struct pin_record rec = { .uei_offset = SIZE_MAX };
	_cleanup_json_ json_t *o = NULL;
	json_error_t err;
	json_t *v;
	int r;

	*ret = (struct pin_record){ .uei_offset = SIZE_MAX };
	*why = NULL;
	if (len > PIN_RECORD_MAX)
		return fail(why, "too large");
	o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
	if (!o)
		return fail(why, "not JSON");
	if (!json_is_object(o))
		return fail(why, "not a JSON object");
	v = json_object_get(o, "version");
	if (!json_is_integer(v) || json_integer_value(v) != PIN_RECORD_VERSION)
		return fail(why, "not a version 1 record");
	r = parse_cgroup(o, &rec, why);
	if (r < 0)
		return r;
	v = json_object_get(o, "scheduler");
	if (!json_is_string(v) || !scheduler_name_valid(json_string_value(v)))
		return fail(why, "no \"scheduler\" name");
	rec.scheduler = strdup(json_string_value(v));
	v = json_object_get(o, "ops");
	if (v && !json_is_string(v))
		return fail(why, "\"ops\" is not a string");
	rec.ops = strdup(v ? json_string_value(v) : "");
	if (!rec.scheduler || !rec.ops)
		return -ENOMEM;
	v = json_object_get(o, "cgid");
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return fail(why, "no \"cgid\"");
	rec.cgid = (uint64_t)json_integer_value(v);
	v = json_object_get(o, "uei_offset");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 0 ||
		  json_integer_value(v) > UEI_OFFSET_MAX))
		return fail(why, "\"uei_offset\" is not an offset");
	if (v)
		rec.uei_offset = (size_t)json_integer_value(v);
	r = parse_tunables(json_object_get(o, "tunables"), &rec, why);
	if (r < 0)
		return r;
	*ret = rec;
	rec = (struct pin_record){ .uei_offset = SIZE_MAX };
	return 0;
}

/*
 * The old format: "cgroup PATH", "scheduler NAME", "ops NAME", "cgid N",
 * "uei N" and "tunable NAME SIZE RAW" lines. It could not hold a path
 * with a newline (nor, when written, one over 399 bytes), so a path read
 * from it is trusted only if its legacy pin name is the record's name,
 * which the caller checks.
 */
static int legacy_line(struct pin_record *rec, const char *line)
{
	char name[256];
	unsigned size;
	uint64_t raw;
	const char *val = strchr(line, ' ');
	char **field = NULL;

	if (!val)
		return 0;
	val++;
	if (sscanf(line, "tunable %255s %u %" SCNu64, name, &size, &raw) == 3) {
		struct tunable_value *v = realloc(rec->tunables, (rec->n_tunables + 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		rec->tunables = v;
		v[rec->n_tunables] = (struct tunable_value){ strdup(name), raw, size };
		if (!v[rec->n_tunables].name)
			return -ENOMEM;
		rec->n_tunables++;
		return 0;
	}
	if (startswith(line, "cgroup "))
		field = &rec->cgroup;
	else if (startswith(line, "scheduler "))
		field = &rec->scheduler;
	else if (startswith(line, "ops "))
		field = &rec->ops;
	else if (startswith(line, "cgid "))
		rec->cgid = strtoull(val, NULL, 10);
	else if (startswith(line, "uei ") && strtoull(val, NULL, 10) <= UEI_OFFSET_MAX)
		rec->uei_offset = strtoull(val, NULL, 10);
	if (field) {
		free(*field);
		*field = strdup(val);
		if (!*field)
			return -ENOMEM;
	}
	return 0;
}

int pin_record_parse_legacy(const char *buf, size_t len, struct pin_record *ret,
			    const char **why)
{
	_cleanup_(pin_record_donep) struct pin_record rec = { .uei_offset = SIZE_MAX };
	_cleanup_free_ char *copy = NULL;
	char *save = NULL;
	int r;

	*ret = (struct pin_record){ .uei_offset = SIZE_MAX };
	*why = NULL;
	if (len > PIN_RECORD_MAX || memchr(buf, '\0', len))
		return fail(why, "not a text record");
	copy = strndup(buf, len);
	if (!copy)
		return -ENOMEM;
	for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		r = legacy_line(&rec, l);
		if (r < 0)
			return r;
	}
	if (!rec.cgroup || !cgroup_path_valid(rec.cgroup))
		return fail(why, "no \"cgroup\" line with a cgroup path");
	if (!rec.scheduler || !scheduler_name_valid(rec.scheduler))
		return fail(why, "no \"scheduler\" line");
	if (rec.cgid > INT64_MAX)
		return fail(why, "\"cgid\" out of range");
	if (!rec.ops && !(rec.ops = strdup("")))
		return -ENOMEM;
	r = check_tunables(&rec, why);
	if (r < 0)
		return r;
	rec.legacy = true;
	*ret = rec;
	rec = (struct pin_record){ .uei_offset = SIZE_MAX };
	return 0;
}

/* ---- the files ---- */

int record_dir(const char *state_dir, char **ret)
{
	return asprintf(ret, "%s/nodes", state_dir) < 0 ? -ENOMEM : 0;
}

static int fsync_dir(const char *dir)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || fsync(fd) < 0)
		return -errno;
	return 0;
}

int pin_record_write(const struct scxd_paths *paths, const struct pin_record *rec)
{
	_cleanup_free_ char *dir = NULL, *text = NULL, *tmp = NULL, *path = NULL;
	_cleanup_close_ int fd = -1;
	char name[PIN_NAME_LEN + 1];
	int r;

	pin_name(rec->cgroup, name);
	r = pin_record_format(rec, &text);
	if (r == 0)
		r = record_dir(paths->state_dir, &dir);
	if (r < 0)
		return r;
	if (mkdir(paths->state_dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (asprintf(&path, "%s/%s.json", dir, name) < 0 ||
	    asprintf(&tmp, "%s/.%s.XXXXXX", dir, name) < 0)
		return -ENOMEM;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = file_write_all(fd, text, strlen(text));
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return r;
	}
	return fsync_dir(dir);
}

int pin_record_remove(const struct scxd_paths *paths, const char *cgroup)
{
	_cleanup_free_ char *dir = NULL, *legacy = pin_name_legacy(cgroup), *path = NULL;
	char name[PIN_NAME_LEN + 1];
	int r;

	pin_name(cgroup, name);
	if (!legacy || record_dir(paths->state_dir, &dir) < 0 ||
	    asprintf(&path, "%s/%s.json", dir, name) < 0)
		return -ENOMEM;
	r = unlink(path) < 0 && errno != ENOENT ? -errno : 0;
	free(path);
	if (asprintf(&path, "%s/%s", dir, legacy) < 0)
		return -ENOMEM;
	if (unlink(path) < 0 && errno != ENOENT && r == 0)
		r = -errno;
	return r;
}

/* The whole file, up to PIN_RECORD_MAX bytes (-EFBIG beyond); regular files only. */
static int read_record_file(int dir_fd, const char *name, char **ret, size_t *len)
{
	_cleanup_close_ int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EBADF;
	return file_read_fd(fd, st.st_size > 0 ? (size_t)st.st_size : 0, PIN_RECORD_MAX, ret, len);
}

__attribute__((format(printf, 3, 4)))
static int read_fail(int r, char **why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(why, fmt, ap) < 0)
		*why = NULL;
	va_end(ap);
	return r;
}

int pin_record_read_at(int dir_fd, const char *file, struct pin_record *rec, char **why)
{
	_cleanup_free_ char *buf = NULL, *want = NULL;
	const char *dot = strrchr(file, '.'), *reason = NULL;
	bool json = dot && streq(dot, ".json");
	char name[PIN_NAME_LEN + 1];
	size_t len = 0;
	int r;

	*why = NULL;
	if (file[0] == '.' || (dot && !json))
		return 0; /* temporary files, and names no scxd writes */
	r = read_record_file(dir_fd, file, &buf, &len);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return read_fail(r, why, "cannot read it: %s", strerror(-r));
	*rec = (struct pin_record){ .uei_offset = SIZE_MAX };
	r = json ? pin_record_parse(buf, len, rec, &reason) :
		   pin_record_parse_legacy(buf, len, rec, &reason);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return read_fail(r, why, "%s", reason);
	rec->pin = json ? strndup(file, (size_t)(dot - file)) : strdup(file);
	if (json) {
		pin_name(rec->cgroup, name);
		want = strdup(name);
	} else {
		want = pin_name_legacy(rec->cgroup);
	}
	if (!rec->pin || !want) {
		pin_record_done(rec);
		return -ENOMEM;
	}
	if (!streq(want, rec->pin)) {
		r = read_fail(-EINVAL, why, "names cgroup %s, whose record would be %s%s",
			      rec->cgroup, want, json ? ".json" : "");
		pin_record_done(rec);
		return r;
	}
	return 1;
}

bool pin_exists(const struct scxd_paths *paths, const char *name)
{
	_cleanup_free_ char *link = NULL;

	return asprintf(&link, "%s/%s/link", paths->pin_dir, name) >= 0 &&
	       access(link, F_OK) == 0;
}

int pin_dir_find(const struct scxd_paths *paths, const char *cgroup, char **ret)
{
	char name[PIN_NAME_LEN + 1];
	char *legacy;

	pin_name(cgroup, name);
	if (!pin_exists(paths, name)) {
		legacy = pin_name_legacy(cgroup);
		if (!legacy)
			return -ENOMEM;
		if (pin_exists(paths, legacy)) {
			*ret = legacy;
			return 0;
		}
		free(legacy);
	}
	*ret = strdup(name);
	return *ret ? 0 : -ENOMEM;
}
