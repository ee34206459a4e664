// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's sched_ext API from its BTF (kernel-api.h), and the values
 * of its enumerators for objects built the upstream way (SCX_ENUM_INIT).
 * Types are looked up by name only, so a fake BTF built in a test answers
 * as a kernel's would.
 */

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernel-api.h"
#include "util.h"

static bool has_struct(const struct btf *btf, const char *name)
{
	return btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT) > 0;
}

enum kernel_api kernel_api_from_btf(const struct btf *vmlinux)
{
	if (!has_struct(vmlinux, "sched_ext_ops"))
		return KERNEL_API_NONE;
	if (!has_struct(vmlinux, "scx_sub_attach_args"))
		return KERNEL_API_ROOT_ONLY;
	if (has_struct(vmlinux, "sched_ext_ops_cid"))
		return KERNEL_API_CID;
	return KERNEL_API_CPU;
}

static void btf_freep(struct btf **b)
{
	btf__free(*b);
}

int kernel_api_detect(const char *btf_path, enum kernel_api *ret)
{
	_cleanup_(btf_freep) struct btf *btf = NULL;

	errno = 0;
	btf = btf_path ? btf__parse(btf_path, NULL) : btf__load_vmlinux_btf();
	if (!btf)
		return errno ? -errno : -ENODATA;
	*ret = kernel_api_from_btf(btf);
	return 0;
}

char *kernel_api_sched_dir(enum kernel_api api, const char *sched_dir)
{
	char *dir = NULL;

	if (api != KERNEL_API_CID)
		return strdup(sched_dir);
	if (asprintf(&dir, "%s/%s", sched_dir, KERNEL_API_CID_SUBDIR) < 0)
		return NULL;
	return dir;
}

/* The enumerator name of enum type t, at position i, and its value. */
static const char *enumerator(const struct btf *btf, const struct btf_type *t, unsigned i,
			      unsigned long long *value)
{
	if (btf_is_enum64(t)) {
		const struct btf_enum64 *e = btf_enum64(t) + i;

		*value = btf_enum64_value(e);
		return btf__name_by_offset(btf, e->name_off);
	}
	if (btf_kflag(t))	/* signed */
		*value = (unsigned long long)(long long)(int)btf_enum(t)[i].val;
	else
		*value = (__u32)btf_enum(t)[i].val;
	return btf__name_by_offset(btf, btf_enum(t)[i].name_off);
}

int kernel_enum_value(const struct btf *btf, const char *name, unsigned long long *ret)
{
	__u32 n = btf__type_cnt(btf);

	for (__u32 id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		if (!btf_is_enum(t) && !btf_is_enum64(t))
			continue;
		for (unsigned i = 0; i < btf_vlen(t); i++) {
			unsigned long long value;
			const char *e = enumerator(btf, t, i, &value);

			if (!e || !streq(e, name))
				continue;
			if (btf_is_enum(t) && t->size == 8)
				return -ERANGE;
			*ret = value;
			return 0;
		}
	}
	return -ENOENT;
}

#define SCX_ENUM_PREFIX "__SCX_"

static struct bpf_map *rodata_map(struct bpf_object *obj)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		const char *name = bpf_map__name(m);
		size_t n = strlen(name);

		if (bpf_map__is_internal(m) && n >= 7 && streq(name + n - 7, ".rodata"))
			return m;
	}
	return NULL;
}

/* obj's .rodata DATASEC in its BTF, NULL if none. */
static const struct btf_type *rodata_sec(struct bpf_object *obj)
{
	const struct btf *btf = bpf_object__btf(obj);
	__s32 id = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -ENOENT;

	return id > 0 ? btf__type_by_id(btf, id) : NULL;
}

static const char *var_name(const struct btf *btf, const struct btf_var_secinfo *vsi)
{
	const struct btf_type *v = btf__type_by_id(btf, vsi->type);

	return v ? btf__name_by_offset(btf, v->name_off) : NULL;
}

bool kernel_api_has_enum_vars(struct bpf_object *obj)
{
	const struct btf_type *sec = rodata_sec(obj);
	const struct btf_var_secinfo *vsi;

	if (!sec)
		return false;
	vsi = btf_var_secinfos(sec);
	for (unsigned i = 0; i < btf_vlen(sec); i++, vsi++) {
		const char *name = var_name(bpf_object__btf(obj), vsi);

		if (name && startswith(name, SCX_ENUM_PREFIX))
			return true;
	}
	return false;
}

static void elf_endp(Elf **e)
{
	if (*e)
		elf_end(*e);
}

/* Does a relocation of an executable section of image refer to symbol sym? */
static int code_uses(char *image, size_t size, const char *sym)
{
	_cleanup_(elf_endp) Elf *elf = NULL;
	Elf_Scn *scn = NULL, *symscn = NULL;
	GElf_Shdr sh;

	if (!image || elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	elf = elf_memory(image, size);
	if (!elf)
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			symscn = scn;
	if (!symscn || !gelf_getshdr(symscn, &sh))
		return -EINVAL;
	size_t strtab = sh.sh_link;
	Elf_Data *symbols = elf_getdata(symscn, NULL);

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr rsh, tsh;
		Elf_Scn *target;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &rsh) || rsh.sh_type != SHT_REL || !rsh.sh_entsize)
			continue;
		target = elf_getscn(elf, rsh.sh_info);
		if (!target || !gelf_getshdr(target, &tsh) || !(tsh.sh_flags & SHF_EXECINSTR))
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < rsh.sh_size / rsh.sh_entsize; i++) {
			const char *name;
			GElf_Rel rel;
			GElf_Sym s;

			if (!gelf_getrel(data, i, &rel) ||
			    !gelf_getsym(symbols, GELF_R_SYM(rel.r_info), &s))
				break;
			name = elf_strptr(elf, strtab, s.st_name);
			if (name && streq(name, sym))
				return 1;
		}
	}
	return 0;
}

static void write_value(unsigned char *p, unsigned long long v, size_t size)
{
	for (size_t i = 0; i < size; i++, v >>= 8)
		p[i] = v & 0xff;
}

#define MAX_ENUM_VARS 128

/* The __SCX_* variables of an object, and what the kernel says of each. */
struct enum_var {
	const char *name;		/* "__SCX_..." */
	const struct btf_var_secinfo *vsi;
	unsigned long long value;
	int r;				/* 0, -ENOENT, -ERANGE */
};

/*
 * Look every variable up in one pass over the kernel's BTF: one lookup
 * each (kernel_enum_value()) reads the whole BTF per variable, ~46 per
 * object, which a distribution kernel's BTF and a slow machine make
 * seconds per object.
 */
static void lookup_all(const struct btf *kbtf, struct enum_var *v, size_t n)
{
	__u32 types = btf__type_cnt(kbtf);

	for (size_t k = 0; k < n; k++)
		v[k].r = -ENOENT;
	for (__u32 id = 1; id < types; id++) {
		const struct btf_type *t = btf__type_by_id(kbtf, id);

		if (!btf_is_enum(t) && !btf_is_enum64(t))
			continue;
		for (unsigned i = 0; i < btf_vlen(t); i++) {
			unsigned long long value;
			const char *e = enumerator(kbtf, t, i, &value);

			if (!e || !startswith(e, "SCX_"))
				continue;
			for (size_t k = 0; k < n; k++) {
				if (v[k].r != -ENOENT || !streq(e, v[k].name + 2))
					continue;
				v[k].r = btf_is_enum(t) && t->size == 8 ? -ERANGE : 0;
				v[k].value = value;
			}
		}
	}
}

int kernel_api_set_enums(struct bpf_object *obj, const char *obj_path, char *image,
			 size_t image_size, const struct btf *kbtf, char **reason)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *sec = rodata_sec(obj);
	struct bpf_map *rodata = rodata_map(obj);
	struct enum_var vars[MAX_ENUM_VARS];
	const struct btf_var_secinfo *vsi;
	unsigned char *data;
	size_t size = 0, n = 0;

	*reason = NULL;
	if (!sec || !rodata)
		return 0;
	data = (unsigned char *)bpf_map__initial_value(rodata, &size);
	vsi = btf_var_secinfos(sec);
	for (unsigned i = 0; i < btf_vlen(sec); i++, vsi++) {
		const char *name = var_name(btf, vsi);

		if (!name || !startswith(name, SCX_ENUM_PREFIX))
			continue;
		if (!data || vsi->size > 8 || vsi->offset + vsi->size > size)
			return refuse(-EINVAL, reason, "%s: %s is not an integer in .rodata",
				      obj_path, name);
		if (n == MAX_ENUM_VARS)
			return refuse(-E2BIG, reason, "%s: more than %d __SCX_* variables",
				      obj_path, MAX_ENUM_VARS);
		vars[n++] = (struct enum_var){ .name = name, .vsi = vsi };
	}
	lookup_all(kbtf, vars, n);
	for (size_t k = 0; k < n; k++) {
		const char *name = vars[k].name;

		if (vars[k].r == -ENOENT) {
			if (code_uses(image, image_size, name) == 0)
				continue;	/* declared, unused: stays 0 */
			return refuse(-ENOENT, reason,
				      "%s: uses %s, but the kernel's BTF has no enumerator %s",
				      obj_path, name, name + 2);
		}
		if (vars[k].r < 0)
			return refuse(vars[k].r, reason,
				      "%s: %s: the kernel's BTF has %s in an 8-byte enum without ENUM64, its upper half lost",
				      obj_path, name, name + 2);
		write_value(data + vars[k].vsi->offset, vars[k].value, vars[k].vsi->size);
	}
	return 0;
}

int kernel_api_set_root_flags(struct bpf_map *st, const struct btf *obj_btf,
			      const struct btf *kbtf)
{
	const struct btf_type *t = btf__type_by_id(obj_btf, bpf_map__btf_value_type_id(st));
	const struct btf_member *m;
	unsigned long long flag;
	unsigned char *data;
	size_t size = 0;

	if (kernel_enum_value(kbtf, "SCX_OPS_TID_TO_TASK", &flag) < 0)
		return 0;
	data = (unsigned char *)bpf_map__initial_value(st, &size);
	if (!t || !btf_is_struct(t) || !data)
		return -EINVAL;
	m = btf_members(t);
	for (unsigned i = 0; i < btf_vlen(t); i++, m++) {
		size_t off = btf_member_bit_offset(t, i) / 8;
		unsigned long long v = 0;

		if (!streq(btf__name_by_offset(obj_btf, m->name_off), "flags"))
			continue;
		if (btf__resolve_size(obj_btf, m->type) != 8 || off + 8 > size)
			return -EINVAL;
		for (int b = 7; b >= 0; b--)
			v = v << 8 | data[off + b];
		write_value(data + off, v | flag, 8);
		return 0;
	}
	return -EINVAL;
}
