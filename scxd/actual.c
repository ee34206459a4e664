// SPDX-License-Identifier: GPL-2.0
/*
 * Reading the actual state. The kernel's sysfs tree is the truth about
 * what runs; scxd's records say which of those it attached (and with what
 * tunables), so that a restarted scxd adopts them instead of reloading.
 * A record whose scheduler the kernel no longer runs is reported as not
 * live: the scheduler exited, and the daemon logs why and retries.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "actual.h"
#include "util.h"

/* ---- cgroups ---- */

static struct cgroup_list *scan_target;
static size_t scan_root_len;
static int scan_error;

static int scan_one(const char *fpath, const struct stat *st, int type, struct FTW *ftw)
{
	struct cgroup_list *l = scan_target;
	const char *rel = fpath + scan_root_len;
	char **paths;
	uint64_t *ids;

	if (type != FTW_D)
		return 0;
	paths = realloc(l->paths, (l->n + 1) * sizeof(*paths));
	if (paths)
		l->paths = paths;
	ids = realloc(l->ids, (l->n + 1) * sizeof(*ids));
	if (ids)
		l->ids = ids;
	if (!paths || !ids) {
		scan_error = -ENOMEM;
		return 1;
	}
	l->paths[l->n] = strdup(*rel ? rel : "/");
	if (!l->paths[l->n]) {
		scan_error = -ENOMEM;
		return 1;
	}
	l->ids[l->n++] = st->st_ino;
	return 0;
}

int cgroup_scan(const char *root, struct cgroup_list *ret)
{
	*ret = (struct cgroup_list){};
	scan_target = ret;
	scan_root_len = strlen(root);
	while (scan_root_len > 1 && root[scan_root_len - 1] == '/')
		scan_root_len--;
	scan_error = 0;
	if (nftw(root, scan_one, 32, FTW_PHYS | FTW_MOUNT) < 0 && !scan_error)
		scan_error = -errno;
	if (scan_error < 0)
		cgroup_list_done(ret);
	return scan_error;
}

uint64_t cgroup_list_id(const struct cgroup_list *l, const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (streq(l->paths[i], path))
			return l->ids[i];
	return 0;
}

const char *cgroup_list_path(const struct cgroup_list *l, uint64_t id)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->ids[i] == id)
			return l->paths[i];
	return NULL;
}

void cgroup_list_done(struct cgroup_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->paths[i]);
	free(l->paths);
	free(l->ids);
	*l = (struct cgroup_list){};
}

/* ---- names ---- */

/*
 * bpffs refuses names with a '.' (EPERM: dots are kept for its own files),
 * so '.', '/' and '%' are all %-escaped, and a leading '-' too since "-" is
 * the root. A name that would not fit in NAME_MAX is replaced by "~" and a
 * hash of the path; its record still names the cgroup, so only an
 * unrecorded pin of such a cgroup cannot be mapped back (and is detached).
 */
char *cgroup_escape(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	char *out, *o;

	if (streq(path, "/"))
		return strdup("-");
	out = malloc(strlen(path) * 3 + 1);
	if (!out)
		return NULL;
	o = out;
	for (const char *p = path + 1; *p; p++) {
		if (*p == '/' || *p == '%' || *p == '.' || (*p == '-' && p == path + 1))
			o += sprintf(o, "%%%02x", (unsigned char)*p);
		else
			*o++ = *p;
	}
	*o = '\0';
	if (o - out <= CGROUP_ESCAPE_MAX)
		return out;
	for (const char *p = path; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	snprintf(out, strlen(path) * 3 + 1, "~%016" PRIx64, h);
	return out;
}

char *cgroup_unescape(const char *name)
{
	char *out, *o;

	if (streq(name, "-"))
		return strdup("/");
	out = malloc(strlen(name) + 2);
	if (!out)
		return NULL;
	o = out;
	*o++ = '/';
	for (const char *p = name; *p; p++) {
		unsigned v;

		if (*p == '%' && sscanf(p + 1, "%2x", &v) == 1 && p[1] && p[2]) {
			*o++ = (char)v;
			p += 2;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	return out;
}

/* ---- sysfs ---- */

static char *read_small_file(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return NULL;
	buf = calloc(1, 8192);
	if (!buf)
		return NULL;
	cap = 8191;
	n = fread(buf, 1, cap, f);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

static char *read_line_file(const char *path)
{
	char *s = read_small_file(path);

	if (s)
		s[strcspn(s, "\n")] = '\0';
	return s;
}

static int add_kernel_sched(struct actual_state *a, uint64_t cgid, const char *dir)
{
	char path[4096];
	struct kernel_sched *v, *k;

	v = realloc(a->kernel, (a->n_kernel + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	a->kernel = v;
	k = &a->kernel[a->n_kernel];
	snprintf(path, sizeof(path), "%s/ops", dir);
	*k = (struct kernel_sched){ .cgid = cgid, .ops = read_line_file(path) };
	if (!k->ops)
		return 0; /* no ops file: not running */
	snprintf(path, sizeof(path), "%s/events", dir);
	k->events = read_small_file(path);
	a->n_kernel++;
	return 0;
}

/* Children: <dir>/sub/sub-<cgid>/..., nested per level. */
static int scan_sub_scheds(struct actual_state *a, const char *dir, unsigned depth)
{
	char sub[4096];
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (depth > 8)
		return 0;
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	d = opendir(sub);
	if (!d)
		return 0;
	while (r == 0 && (de = readdir(d))) {
		char child[4096];
		uint64_t cgid;

		if (sscanf(de->d_name, "sub-%" SCNu64, &cgid) != 1)
			continue;
		snprintf(child, sizeof(child), "%s/%s", sub, de->d_name);
		r = add_kernel_sched(a, cgid, child);
		if (r == 0)
			r = scan_sub_scheds(a, child, depth + 1);
	}
	closedir(d);
	return r;
}

static int scan_kernel(const char *sysfs, struct actual_state *a)
{
	char path[4096];
	_cleanup_free_ char *state = NULL;
	int r;

	snprintf(path, sizeof(path), "%s/state", sysfs);
	state = read_line_file(path);
	if (state && !streq(state, "enabled")) {
		/*
		 * "disabling": ops.exit() may not have recorded why yet, and
		 * nothing can be attached until it is done.
		 */
		a->settling = streq(state, "enabling") || streq(state, "disabling");
		return 0;
	}
	snprintf(path, sizeof(path), "%s/root", sysfs);
	r = add_kernel_sched(a, 1, path);
	if (r < 0)
		return r;
	return scan_sub_scheds(a, path, 0);
}

const struct kernel_sched *actual_kernel_sched(const struct actual_state *a, uint64_t cgid)
{
	for (size_t i = 0; i < a->n_kernel; i++)
		if (a->kernel[i].cgid == cgid)
			return &a->kernel[i];
	return NULL;
}

/* ---- records ---- */

void pin_record_done(struct pin_record *rec)
{
	for (size_t i = 0; i < rec->n_tunables; i++)
		free(rec->tunables[i].name);
	free(rec->tunables);
	free(rec->cgroup);
	free(rec->scheduler);
	free(rec->ops);
	*rec = (struct pin_record){};
}

static int parse_record(FILE *f, struct pin_record *rec)
{
	char line[512];

	*rec = (struct pin_record){ .uei_offset = SIZE_MAX };
	while (fgets(line, sizeof(line), f)) {
		char key[32], val[400];
		unsigned size;
		uint64_t raw;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "tunable %399s %u %" SCNu64, val, &size, &raw) == 3) {
			struct tunable_value *v = realloc(rec->tunables,
							  (rec->n_tunables + 1) * sizeof(*v));

			if (!v)
				return -ENOMEM;
			rec->tunables = v;
			v[rec->n_tunables] = (struct tunable_value){ strdup(val), raw, size };
			if (!v[rec->n_tunables].name)
				return -ENOMEM;
			rec->n_tunables++;
			continue;
		}
		if (sscanf(line, "%31s %399[^\n]", key, val) != 2)
			continue;
		if (streq(key, "cgroup"))
			rec->cgroup = strdup(val);
		else if (streq(key, "scheduler"))
			rec->scheduler = strdup(val);
		else if (streq(key, "ops"))
			rec->ops = strdup(val);
		else if (streq(key, "cgid"))
			rec->cgid = strtoull(val, NULL, 10);
		else if (streq(key, "uei"))
			rec->uei_offset = strtoull(val, NULL, 10);
	}
	return rec->cgroup && rec->scheduler ? 0 : -EINVAL;
}

int pin_record_write(const struct scxd_paths *paths, const struct pin_record *rec)
{
	_cleanup_free_ char *esc = cgroup_escape(rec->cgroup);
	char dir[4096], path[4096], tmp[4200];
	FILE *f;

	if (!esc)
		return -ENOMEM;
	snprintf(dir, sizeof(dir), "%s/nodes", paths->state_dir);
	if (mkdir(paths->state_dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s", dir, esc);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "cgroup %s\nscheduler %s\nops %s\ncgid %" PRIu64 "\n", rec->cgroup,
		rec->scheduler, rec->ops ?: "", rec->cgid);
	if (rec->uei_offset != SIZE_MAX)
		fprintf(f, "uei %zu\n", rec->uei_offset);
	for (size_t i = 0; i < rec->n_tunables; i++)
		fprintf(f, "tunable %s %u %" PRIu64 "\n", rec->tunables[i].name,
			rec->tunables[i].size, rec->tunables[i].raw);
	if (fclose(f) != 0)
		return -errno;
	return rename(tmp, path) < 0 ? -errno : 0;
}

int pin_record_remove(const struct scxd_paths *paths, const char *cgroup)
{
	_cleanup_free_ char *esc = cgroup_escape(cgroup);
	char path[4096];

	if (!esc)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/nodes/%s", paths->state_dir, esc);
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static int read_records(const struct scxd_paths *paths, struct actual_state *a)
{
	char dir[4096];
	DIR *d;
	struct dirent *de;
	int r = 0;

	snprintf(dir, sizeof(dir), "%s/nodes", paths->state_dir);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (r == 0 && (de = readdir(d))) {
		char path[4200], pin[4200];
		struct pin_record rec, *v;
		FILE *f;

		if (de->d_name[0] == '.' || strstr(de->d_name, ".tmp"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		snprintf(pin, sizeof(pin), "%s/%s/link", paths->pin_dir, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		r = parse_record(f, &rec);
		fclose(f);
		if (r == -EINVAL || access(pin, F_OK) < 0) {
			/* A record without its pin describes nothing attached. */
			pin_record_done(&rec);
			unlink(path);
			r = 0;
			continue;
		}
		if (r < 0) {
			pin_record_done(&rec);
			break;
		}
		v = realloc(a->pins, (a->n_pins + 1) * sizeof(*v));
		if (!v) {
			pin_record_done(&rec);
			r = -ENOMEM;
			break;
		}
		a->pins = v;
		a->pins[a->n_pins++] = rec;
	}
	closedir(d);
	return r;
}

/*
 * Pins without a record (the runtime directory was lost): still scxd's.
 * They are adopted under the name "(unrecorded)", so the plan replaces
 * them with what the policy says, or detaches them.
 */
static int adopt_unrecorded_pins(const struct scxd_paths *paths, const struct cgroup_list *cg,
				 struct actual_state *a)
{
	DIR *d = opendir(paths->pin_dir);
	struct dirent *de;
	int r = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (r == 0 && (de = readdir(d))) {
		_cleanup_free_ char *cgroup = NULL;
		char link[4200];
		struct pin_record *v;
		bool known = false;
		uint64_t cgid;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s/link", paths->pin_dir, de->d_name);
		if (access(link, F_OK) < 0)
			continue;
		cgroup = cgroup_unescape(de->d_name);
		if (!cgroup) {
			r = -ENOMEM;
			break;
		}
		for (size_t i = 0; i < a->n_pins; i++)
			known = known || streq(a->pins[i].cgroup, cgroup);
		if (known)
			continue;
		v = realloc(a->pins, (a->n_pins + 1) * sizeof(*v));
		if (!v) {
			r = -ENOMEM;
			break;
		}
		a->pins = v;
		cgid = streq(cgroup, "/") ? 1 : cgroup_list_id(cg, cgroup);
		v[a->n_pins] = (struct pin_record){
			.cgid = cgid, .scheduler = strdup("(unrecorded)"),
			.cgroup = TAKE_PTR(cgroup), .uei_offset = SIZE_MAX,
		};
		if (!v[a->n_pins].scheduler) {
			free(v[a->n_pins].cgroup);
			r = -ENOMEM;
			break;
		}
		a->n_pins++;
	}
	closedir(d);
	return r;
}

static bool pin_is_live(const struct actual_state *a, const struct pin_record *rec,
			const struct cgroup_list *cgroups)
{
	uint64_t cgid = streq(rec->cgroup, "/") ? 1 : cgroup_list_id(cgroups, rec->cgroup);
	const struct kernel_sched *k;

	if (!cgid || (cgid != 1 && cgid != rec->cgid))
		return false; /* cgroup gone, or a new cgroup with the same name */
	k = actual_kernel_sched(a, cgid);
	return k && (!rec->ops || !*rec->ops || streq(k->ops, rec->ops));
}

static int push_node(struct sched_tree *t, size_t *cap, const char *cgroup,
		     const char *scheduler, const struct tunable_value *tv, size_t ntv,
		     bool foreign)
{
	int r;

	if (t->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct sched_node *v = realloc(t->nodes, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->nodes = v;
		*cap = ncap;
	}
	r = sched_node_init(&t->nodes[t->n], cgroup, scheduler, tv, ntv);
	t->nodes[t->n++].foreign = foreign;
	return r;
}

int actual_read(const struct scxd_paths *paths, const struct cgroup_list *cgroups,
		struct actual_state *ret)
{
	_cleanup_(actual_state_done) struct actual_state a = {};
	size_t cap = 0;
	int r;

	*ret = (struct actual_state){};
	r = scan_kernel(paths->sysfs, &a);
	if (r < 0)
		return r;
	r = read_records(paths, &a);
	if (r < 0)
		return r;
	r = adopt_unrecorded_pins(paths, cgroups, &a);
	if (r < 0)
		return r;
	a.pin_live = calloc(a.n_pins + 1, sizeof(bool));
	if (!a.pin_live)
		return -ENOMEM;

	for (size_t i = 0; i < a.n_pins; i++) {
		const struct pin_record *rec = &a.pins[i];

		a.pin_live[i] = pin_is_live(&a, rec, cgroups);
		if (!a.pin_live[i])
			continue;
		r = push_node(&a.tree, &cap, rec->cgroup, rec->scheduler, rec->tunables,
			      rec->n_tunables, false);
		if (r < 0)
			return r;
	}
	/* Schedulers the kernel runs that scxd did not attach. */
	for (size_t k = 0; k < a.n_kernel; k++) {
		const char *cg = a.kernel[k].cgid == 1 ? "/" :
				 cgroup_list_path(cgroups, a.kernel[k].cgid);
		bool ours = false;

		if (!cg)
			continue;
		for (size_t i = 0; i < a.n_pins; i++)
			ours = ours || (a.pin_live[i] && streq(a.pins[i].cgroup, cg));
		if (ours)
			continue;
		r = push_node(&a.tree, &cap, cg, a.kernel[k].ops, NULL, 0, true);
		if (r < 0)
			return r;
	}
	r = sched_tree_link(&a.tree);
	if (r < 0)
		return r;
	*ret = a;
	a = (struct actual_state){};
	return 0;
}

void actual_state_done(struct actual_state *a)
{
	sched_tree_done(&a->tree);
	for (size_t i = 0; i < a->n_pins; i++)
		pin_record_done(&a->pins[i]);
	free(a->pins);
	free(a->pin_live);
	for (size_t i = 0; i < a->n_kernel; i++) {
		free(a->kernel[i].ops);
		free(a->kernel[i].events);
	}
	free(a->kernel);
	*a = (struct actual_state){};
}
