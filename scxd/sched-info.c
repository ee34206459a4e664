// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduler objects as scxd sees them before loading: tunables from the
 * .rodata DATASEC of the object's BTF, their offsets and defaults from the
 * ELF symbol table and section data (the object file's DATASEC carries no
 * offsets; libbpf fills them in only when opening an object for loading).
 */

#include <bpf/btf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"
#include "kernel-api.h"
#include "sched-info.h"
#include "util.h"

#define CAN_HOST_MARKER "scxd_can_host_children"
#define SUB_ATTACH_MEMBER "sub_attach"
#define GRANT_KFUNC "scx_bpf_sub_grant"

static void btf_freep(struct btf **b)
{
	btf__free(*b);
}

static void elf_endp(Elf **e)
{
	if (*e)
		elf_end(*e);
}

/* The bytes of .rodata and its symbols, found by name; and .BTF. */
struct rodata {
	Elf *elf;
	size_t shndx;
	const unsigned char *data;
	size_t size;
	Elf_Data *symbols;
	size_t n_symbols, strtab;
	Elf_Data *btf;
};

/*
 * Whether a relocation of section target_shndx (0: of any section) is at
 * byte offset, or with offset SIZE_MAX, refers to symbol sym_index.
 */
static bool has_relocation(Elf *elf, size_t target_shndx, size_t offset, size_t sym_index)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_REL || !sh.sh_entsize)
			continue;
		if (target_shndx && sh.sh_info != target_shndx)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rel rel;

			if (!gelf_getrel(data, i, &rel))
				break;
			if (offset != SIZE_MAX ? rel.r_offset == offset
					       : GELF_R_SYM(rel.r_info) == sym_index)
				return true;
		}
	}
	return false;
}

/* Byte offset of a member of the struct a variable is, SIZE_MAX if none. */
static size_t var_member_offset(const struct btf *btf, const char *var, const char *member)
{
	const struct btf_type *t;
	const struct btf_member *m;
	__s32 id = btf__find_by_name_kind(btf, var, BTF_KIND_VAR);

	if (id <= 0)
		return SIZE_MAX;
	t = btf__type_by_id(btf, btf__resolve_type(btf, btf__type_by_id(btf, id)->type));
	if (!t || !btf_is_struct(t))
		return SIZE_MAX;
	m = btf_members(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, m++) {
		const char *name = btf__name_by_offset(btf, m->name_off);

		if (name && streq(name, member))
			return btf_member_bit_offset(t, i) / 8;
	}
	return SIZE_MAX;
}

/*
 * Whether a struct_ops variable (in a ".struct_ops*" section) sets member:
 * the member holds a program, which the object says with a relocation at
 * the member's place in the section, against the program's symbol.
 */
static bool struct_ops_sets(Elf *elf, const struct btf *btf, Elf_Data *symbols,
			    size_t n_symbols, size_t strtab, const char *member)
{
	size_t shstrndx;

	if (!symbols || elf_getshdrstrndx(elf, &shstrndx) < 0)
		return false;
	for (size_t i = 0; i < n_symbols; i++) {
		const char *name, *sec;
		Elf_Scn *scn;
		GElf_Shdr sh;
		GElf_Sym sym;
		size_t off;

		if (!gelf_getsym(symbols, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		scn = elf_getscn(elf, sym.st_shndx);
		if (!scn || !gelf_getshdr(scn, &sh))
			continue;
		sec = elf_strptr(elf, shstrndx, sh.sh_name);
		name = elf_strptr(elf, strtab, sym.st_name);
		if (!sec || !startswith(sec, ".struct_ops") || !name)
			continue;
		off = var_member_offset(btf, name, member);
		if (off != SIZE_MAX && has_relocation(elf, sym.st_shndx, sym.st_value + off, 0))
			return true;
	}
	return false;
}

/* Whether the code calls the kfunc name: relocations against its undefined symbol. */
static bool calls_kfunc(Elf *elf, Elf_Data *symbols, size_t n_symbols, size_t strtab,
			const char *kfunc)
{
	for (size_t i = 0; symbols && i < n_symbols; i++) {
		const char *name;
		GElf_Sym sym;

		if (!gelf_getsym(symbols, i, &sym) || sym.st_shndx != SHN_UNDEF)
			continue;
		name = elf_strptr(elf, strtab, sym.st_name);
		if (name && streq(name, kfunc))
			return has_relocation(elf, 0, SIZE_MAX, i);
	}
	return false;
}

static int rodata_open(Elf *elf, struct rodata *rd)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	*rd = (struct rodata){ .elf = elf };
	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_SYMTAB) {
			rd->symbols = elf_getdata(scn, NULL);
			rd->n_symbols = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
			rd->strtab = sh.sh_link;
		} else if (name && streq(name, ".BTF")) {
			rd->btf = elf_getdata(scn, NULL);
		} else if (name && streq(name, ".rodata")) {
			Elf_Data *d = elf_getdata(scn, NULL);

			rd->shndx = elf_ndxscn(scn);
			rd->data = d ? d->d_buf : NULL;
			rd->size = d ? d->d_size : 0;
		}
	}
	return 0;
}

/* Offset and size of a .rodata variable from the symbol table. */
static bool rodata_symbol(const struct rodata *rd, const char *name, size_t *off, size_t *size)
{
	for (size_t i = 0; rd->symbols && i < rd->n_symbols; i++) {
		GElf_Sym sym;
		const char *sname;

		if (!gelf_getsym(rd->symbols, i, &sym) || sym.st_shndx != rd->shndx)
			continue;
		sname = elf_strptr(rd->elf, rd->strtab, sym.st_name);
		if (sname && streq(sname, name)) {
			*off = sym.st_value;
			*size = sym.st_size;
			return true;
		}
	}
	return false;
}

/*
 * Not tunables: what scxd sets itself, and the UEI dump length, which only
 * works together with resizing the dump buffer.
 */
static bool is_scxd_variable(const char *name)
{
	size_t n = strlen(name);

	return streq(name, "sub_cgroup_id") || startswith(name, "scxd_") || name[0] == '_' ||
	       (n > 9 && streq(name + n - 9, "_dump_len"));
}

static int read_enumerators(const struct btf *btf, const struct btf_type *t,
			    struct sched_tunable *tun)
{
	unsigned n = btf_vlen(t);

	tun->enumerators = calloc(n ?: 1, sizeof(*tun->enumerators));
	if (!tun->enumerators)
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++) {
		const char *name;
		int64_t value;

		if (btf_is_enum(t)) {
			const struct btf_enum *e = btf_enum(t) + i;

			name = btf__name_by_offset(btf, e->name_off);
			value = btf_kflag(t) ? (int64_t)(int32_t)e->val : (int64_t)(uint32_t)e->val;
		} else {
			const struct btf_enum64 *e = btf_enum64(t) + i;

			name = btf__name_by_offset(btf, e->name_off);
			value = (int64_t)btf_enum64_value(e);
		}
		tun->enumerators[i].name = strdup(name ?: "?");
		if (!tun->enumerators[i].name)
			return -ENOMEM;
		tun->enumerators[i].value = value;
		tun->n_enumerators = i + 1;
	}
	return 0;
}

/* Classify a variable's type; -EOPNOTSUPP for arrays, structs and such. */
static int describe_type(const struct btf *btf, __u32 type_id, struct sched_tunable *tun)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, type_id));

	if (!t)
		return -EINVAL;
	if (btf_is_int(t)) {
		__u8 enc = btf_int_encoding(t);

		if (btf_int_offset(t) || btf_int_bits(t) != t->size * 8)
			return -EOPNOTSUPP;
		tun->kind = enc & BTF_INT_BOOL ? TUNABLE_BOOL : TUNABLE_INT;
		tun->is_signed = enc & BTF_INT_SIGNED;
		tun->size = t->size;
	} else if (btf_is_enum(t) || btf_is_enum64(t)) {
		tun->kind = TUNABLE_ENUM;
		tun->is_signed = btf_kflag(t);
		tun->size = t->size;
		return read_enumerators(btf, t, tun);
	} else {
		return -EOPNOTSUPP;
	}
	if (tun->size != 1 && tun->size != 2 && tun->size != 4 && tun->size != 8)
		return -EOPNOTSUPP;
	return 0;
}

static uint64_t read_le(const unsigned char *p, unsigned size)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static int add_tunable(struct sched_info *s, const struct btf *btf, const struct rodata *rd,
		       const char *name, __u32 type_id)
{
	struct sched_tunable tun = {}, *v;
	size_t off, size;
	int r;

	if (!rodata_symbol(rd, name, &off, &size))
		return 0; /* no storage: optimised out */
	r = describe_type(btf, type_id, &tun);
	if (r == -EOPNOTSUPP)
		return 0;
	if (r < 0)
		return r;
	tun.name = strdup(name);
	if (!tun.name)
		return -ENOMEM;
	tun.offset = off;
	if (rd->data && off + tun.size <= rd->size)
		tun.default_raw = read_le(rd->data + off, tun.size);
	v = realloc(s->tunables, (s->n_tunables + 1) * sizeof(*v));
	if (!v) {
		free(tun.name);
		return -ENOMEM;
	}
	s->tunables = v;
	s->tunables[s->n_tunables++] = tun;
	return 0;
}

int sched_info_load_mem(const char *path, const char *name, char *image, size_t size,
		       struct sched_info **ret)
{
	_cleanup_(sched_info_freep) struct sched_info *s = NULL;
	_cleanup_(btf_freep) struct btf *btf = NULL;
	_cleanup_(elf_endp) Elf *elf = NULL;
	struct rodata rd;
	__s32 id;
	int r;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	elf = elf_memory(image, size);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	r = rodata_open(elf, &rd);
	if (r < 0)
		return r;
	if (!rd.btf || !rd.btf->d_buf || rd.btf->d_size == 0)
		return -ENODATA;
	btf = btf__new(rd.btf->d_buf, rd.btf->d_size);
	if (!btf)
		return errno ? -errno : -EINVAL;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->name = strdup(name);
	s->path = strdup(path);
	if (!s->name || !s->path)
		return -ENOMEM;
	s->has_sub_attach = struct_ops_sets(elf, btf, rd.symbols, rd.n_symbols, rd.strtab,
					    SUB_ATTACH_MEMBER);
	s->grants_cpus = calls_kfunc(elf, rd.symbols, rd.n_symbols, rd.strtab, GRANT_KFUNC);
	s->can_host_children = s->has_sub_attach ||
			       btf__find_by_name_kind(btf, CAN_HOST_MARKER, BTF_KIND_VAR) > 0;

	id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	if (id > 0) {
		const struct btf_type *sec = btf__type_by_id(btf, id);
		const struct btf_var_secinfo *vsi = btf_var_secinfos(sec);

		for (unsigned i = 0; i < btf_vlen(sec); i++, vsi++) {
			const struct btf_type *var = btf__type_by_id(btf, vsi->type);
			const char *vname;

			if (!var || !btf_is_var(var))
				continue;
			vname = btf__name_by_offset(btf, var->name_off);
			if (!vname)
				continue;
			if (streq(vname, "sub_cgroup_id"))
				s->has_sub_cgroup_id_var = true;
			if (is_scxd_variable(vname))
				continue;
			r = add_tunable(s, btf, &rd, vname, var->type);
			if (r < 0)
				return r;
		}
	}
	*ret = TAKE_PTR(s);
	return 0;
}

int sched_info_load(const char *path, const char *name, struct sched_info **ret)
{
	_cleanup_free_ char *image = NULL, *why = NULL;
	size_t size;
	int r;

	r = file_read(path, FILE_OBJECT_MAX, 0, &image, &size, &why);
	if (r < 0)
		return r;
	return sched_info_load_mem(path, name, image, size, ret);
}

/* The directory catalog used by the daemon and by scxd --check. */

struct cached_sched {
	char *name;
	struct sched_info *info;	/* NULL: lookup failed, see reason and error */
	char *reason;
	int error;
};

struct sched_dir_catalog {
	struct sched_catalog base;
	char *dir;
	const char *form;	/* "cid-form", "cpu-form", or NULL: unsaid */
	char *other_dir;	/* where the objects of the other form are, or NULL */
	struct cached_sched *cache;
	size_t n_cache;
};

static bool valid_sched_name(const char *name)
{
	if (!*name || strlen(name) > 64 || name[0] == '.' || name[0] == '-')
		return false;
	for (const char *p = name; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", *p))
			return false;
	return true;
}

/*
 * Read the object once, trusted (see file.h), and take its BTF from those
 * bytes. A failure is the slot's reason; only -ENOMEM is returned.
 */
static int dir_load(const char *path, const char *name, struct cached_sched *slot)
{
	_cleanup_free_ char *image = NULL, *why = NULL;
	size_t size;
	int r;

	r = file_read(path, FILE_OBJECT_MAX, FILE_TRUSTED, &image, &size, &why);
	if (r == -ENOENT)
		return asprintf(&slot->reason, "no object %s", path) < 0 ? -ENOMEM : 0;
	if (r < 0) {
		slot->reason = TAKE_PTR(why);
		return slot->reason || r != -ENOMEM ? 0 : -ENOMEM;
	}
	r = sched_info_load_mem(path, name, image, size, &slot->info);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return asprintf(&slot->reason, "cannot read BTF of %s: %s", path,
				strerror(-r)) < 0 ? -ENOMEM : 0;
	return 0;
}

/*
 * A scheduler with no object of this kernel's form but one of the other
 * form (path missing, other_dir/<name>.bpf.o there) is not unknown: it
 * has no object for this API, which the slot says (-EOPNOTSUPP).
 */
static int other_form(const struct sched_dir_catalog *c, const char *name, const char *path,
		      struct cached_sched *slot)
{
	_cleanup_free_ char *other = NULL;

	if (!c->form || !c->other_dir || access(path, F_OK) == 0 || errno != ENOENT)
		return 0;
	if (asprintf(&other, "%s/%s.bpf.o", c->other_dir, name) < 0)
		return -ENOMEM;
	if (access(other, F_OK) < 0)
		return 0;
	free(slot->reason);
	slot->error = -EOPNOTSUPP;
	return asprintf(&slot->reason, "scheduler \"%s\" has no %s object in %s (%s is %s)",
			name, c->form, c->dir, other,
			streq(c->form, "cid-form") ? "cpu-form" : "cid-form") < 0 ? -ENOMEM : 0;
}

static int dir_lookup(struct sched_catalog *base, const char *name,
		      const struct sched_info **ret, const char **reason)
{
	struct sched_dir_catalog *c = (struct sched_dir_catalog *)base;
	_cleanup_free_ char *path = NULL;
	struct cached_sched *slot, *v;
	int r;

	for (size_t i = 0; i < c->n_cache; i++)
		if (streq(c->cache[i].name, name)) {
			*ret = c->cache[i].info;
			*reason = c->cache[i].reason;
			return c->cache[i].info ? 0 : -ENOENT;
		}

	v = realloc(c->cache, (c->n_cache + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	c->cache = v;
	slot = &c->cache[c->n_cache];
	*slot = (struct cached_sched){ .name = strdup(name) };
	if (!slot->name)
		return -ENOMEM;
	c->n_cache++;

	if (!valid_sched_name(name)) {
		r = asprintf(&slot->reason, "not a valid scheduler name");
	} else if (asprintf(&path, "%s/%s.bpf.o", c->dir, name) < 0) {
		return -ENOMEM;
	} else {
		r = dir_load(path, name, slot);
		if (r == 0 && !slot->info)
			r = other_form(c, name, path, slot);
	}
	if (r < 0)
		return -ENOMEM;
	*ret = slot->info;
	*reason = slot->reason;
	return slot->info ? 0 : slot->error ?: -ENOENT;
}

int sched_dir_catalog_new(const char *dir, struct sched_dir_catalog **ret)
{
	struct sched_dir_catalog *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->base.lookup = dir_lookup;
	c->dir = strdup(dir);
	if (!c->dir) {
		free(c);
		return -ENOMEM;
	}
	*ret = c;
	return 0;
}

int sched_dir_catalog_new_for(const char *sched_dir, enum kernel_api api,
			      struct sched_dir_catalog **ret)
{
	_cleanup_(sched_dir_catalog_freep) struct sched_dir_catalog *c = NULL;
	_cleanup_free_ char *dir = kernel_api_sched_dir(api, sched_dir);
	int r;

	if (!dir)
		return -ENOMEM;
	r = sched_dir_catalog_new(dir, &c);
	if (r < 0)
		return r;
	c->form = kernel_api_form(api);
	if (c->form) {
		c->other_dir = kernel_api_sched_dir(api == KERNEL_API_CID ? KERNEL_API_CPU
									   : KERNEL_API_CID, sched_dir);
		if (!c->other_dir)
			return -ENOMEM;
	}
	*ret = TAKE_PTR(c);
	return 0;
}

struct sched_catalog *sched_dir_catalog_base(struct sched_dir_catalog *c)
{
	return &c->base;
}

const char *sched_dir_catalog_dir(const struct sched_dir_catalog *c)
{
	return c->dir;
}

void sched_dir_catalog_free(struct sched_dir_catalog *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n_cache; i++) {
		free(c->cache[i].name);
		free(c->cache[i].reason);
		sched_info_free(c->cache[i].info);
	}
	free(c->cache);
	free(c->dir);
	free(c->other_dir);
	free(c);
}
