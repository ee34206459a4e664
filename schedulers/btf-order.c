// SPDX-License-Identifier: GPL-2.0
/*
 * btf-order: give the forward declarations in a BPF object's BTF an order
 * that does not depend on where it was built.
 *
 *   btf-order IN.bpf.o OUT.bpf.o
 *
 * clang-19's BPF backend emits a struct reached only through a pointer
 * member as a forward declaration (BTF_KIND_FWD), after every other type,
 * in the order of a map keyed by the address of its debug-info node. That
 * order follows the compiler's heap layout, which follows the lengths of
 * the paths on its command line and of its working directory: the same
 * source built in two directories gives two objects whose FWD types (and
 * the type ids pointing at them) are permuted, and a package that is not
 * reproducible.
 *
 * The FWD records are all the same size, so they are sorted in place by
 * name, then kind (struct or union), into the slots they took, and every
 * type id that named one, in .BTF's types and in .BTF.ext's CO-RE
 * relocations, is renamed to match. Their names entered the string table
 * in the same order, so the strings are then laid out again in the order
 * of their first use (the types by id, then .BTF.ext's records), which the
 * source alone decides, and every name offset follows. The table keeps its
 * size; the other types, the instructions and the ELF layout stay byte for
 * byte as the compiler wrote them, and an object without two FWD types is
 * copied unchanged.
 */
#include <elf.h>
#include <errno.h>
#include <linux/btf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct btf_ext_hdr {
	uint16_t magic;
	uint8_t version;
	uint8_t flags;
	uint32_t hdr_len;
	uint32_t func_info_off, func_info_len;
	uint32_t line_info_off, line_info_len;
	uint32_t core_relo_off, core_relo_len;
};

struct fwd {
	uint32_t id;			/* its id as the compiler wrote it */
	struct btf_type rec;
	const char *name;
};

static const char *prog = "btf-order";

static int fail(const char *what, const char *file)
{
	fprintf(stderr, "%s: %s: %s\n", prog, file, what);
	return 1;
}

/* the section called NAME, or NULL */
static Elf64_Shdr *section(uint8_t *elf, size_t size, const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)elf;
	Elf64_Shdr *sh = (Elf64_Shdr *)(elf + eh->e_shoff);
	const char *names;
	unsigned int i;

	if (eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > size || eh->e_shstrndx >= eh->e_shnum)
		return NULL;
	names = (const char *)elf + sh[eh->e_shstrndx].sh_offset;
	for (i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_name < sh[eh->e_shstrndx].sh_size && !strcmp(names + sh[i].sh_name, name) &&
		    sh[i].sh_offset + sh[i].sh_size <= size)
			return &sh[i];
	return NULL;
}

/* bytes after struct btf_type for a type of this kind, or -1 */
static long type_extra(const struct btf_type *t)
{
	uint32_t vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:		return 4;
	case BTF_KIND_ARRAY:		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:		return (long)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:		return (long)vlen * sizeof(struct btf_enum);
	case BTF_KIND_ENUM64:		return (long)vlen * sizeof(struct btf_enum64);
	case BTF_KIND_FUNC_PROTO:	return (long)vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR:		return sizeof(struct btf_var);
	case BTF_KIND_DATASEC:		return (long)vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_DECL_TAG:		return sizeof(struct btf_decl_tag);
	case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE: case BTF_KIND_CONST: case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC: case BTF_KIND_FLOAT: case BTF_KIND_TYPE_TAG:
		return 0;
	default:			return -1;
	}
}

static uint32_t *renamed;		/* old id -> new id, for ids below nr_ids */
static uint32_t nr_ids;

static void rename_id(uint32_t *id)
{
	if (*id < nr_ids)
		*id = renamed[*id];
}

/* every type id a type names */
static void rename_refs(struct btf_type *t)
{
	uint32_t vlen = BTF_INFO_VLEN(t->info), i;
	void *extra = t + 1;

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_PTR: case BTF_KIND_TYPEDEF: case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST: case BTF_KIND_RESTRICT: case BTF_KIND_FUNC:
	case BTF_KIND_FUNC_PROTO: case BTF_KIND_VAR: case BTF_KIND_DECL_TAG:
	case BTF_KIND_TYPE_TAG:
		rename_id(&t->type);
		break;
	default:
		break;
	}
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_ARRAY:
		rename_id(&((struct btf_array *)extra)->type);
		rename_id(&((struct btf_array *)extra)->index_type);
		break;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		for (i = 0; i < vlen; i++)
			rename_id(&((struct btf_member *)extra)[i].type);
		break;
	case BTF_KIND_FUNC_PROTO:
		for (i = 0; i < vlen; i++)
			rename_id(&((struct btf_param *)extra)[i].type);
		break;
	case BTF_KIND_DATASEC:
		for (i = 0; i < vlen; i++)
			rename_id(&((struct btf_var_secinfo *)extra)[i].type);
		break;
	default:
		break;
	}
}

/* the string table, laid out again: old offset -> new offset */
static const char *old_strs;
static char *new_strs;
static uint32_t *str_moved, str_len, str_next = 1;

static void move_str(uint32_t *off)
{
	size_t n;

	if (*off >= str_len)
		return;
	if (str_moved[*off] == UINT32_MAX) {
		n = strnlen(old_strs + *off, str_len - *off) + 1;
		if (str_next + n > str_len)
			return;	/* cannot happen: each string is moved once */
		memcpy(new_strs + str_next, old_strs + *off, n);
		str_moved[*off] = str_next;
		str_next += n;
	}
	*off = str_moved[*off];
}

/* every name a type gives */
static void move_names(struct btf_type *t)
{
	uint32_t vlen = BTF_INFO_VLEN(t->info), i;
	void *extra = t + 1;

	move_str(&t->name_off);
	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		for (i = 0; i < vlen; i++)
			move_str(&((struct btf_member *)extra)[i].name_off);
		break;
	case BTF_KIND_ENUM:
		for (i = 0; i < vlen; i++)
			move_str(&((struct btf_enum *)extra)[i].name_off);
		break;
	case BTF_KIND_ENUM64:
		for (i = 0; i < vlen; i++)
			move_str(&((struct btf_enum64 *)extra)[i].name_off);
		break;
	case BTF_KIND_FUNC_PROTO:
		for (i = 0; i < vlen; i++)
			move_str(&((struct btf_param *)extra)[i].name_off);
		break;
	default:
		break;
	}
}

static int by_name(const void *a, const void *b)
{
	const struct fwd *x = a, *y = b;
	int r = strcmp(x->name, y->name);

	if (r)
		return r;
	if (BTF_INFO_KFLAG(x->rec.info) != BTF_INFO_KFLAG(y->rec.info))
		return BTF_INFO_KFLAG(x->rec.info) < BTF_INFO_KFLAG(y->rec.info) ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

enum ext_part { FUNC_INFO, LINE_INFO, CORE_RELO };

/*
 * The type ids and strings of one part of .BTF.ext: blocks of
 * { sec_name_off, num_info } and records of rec_size bytes,
 *   func_info { insn_off, type_id }
 *   line_info { insn_off, file_name_off, line_off, line_col }
 *   core_relo { insn_off, type_id, access_str_off, kind }
 */
static int ext_part(uint8_t *ext, uint64_t ext_size, enum ext_part part)
{
	struct btf_ext_hdr *h = (struct btf_ext_hdr *)ext;
	uint32_t off, len, rec_size, n, i, *rec;
	uint8_t *p, *end;

	if (ext_size < offsetof(struct btf_ext_hdr, core_relo_off) || h->hdr_len > ext_size)
		return -EINVAL;
	switch (part) {
	case FUNC_INFO: off = h->func_info_off; len = h->func_info_len; break;
	case LINE_INFO: off = h->line_info_off; len = h->line_info_len; break;
	default:
		if (h->hdr_len < sizeof(*h))
			return 0;	/* no CO-RE part */
		off = h->core_relo_off;
		len = h->core_relo_len;
		break;
	}
	if (!len)
		return 0;
	p = ext + h->hdr_len + off;
	end = p + len;
	if ((uint64_t)h->hdr_len + off + len > ext_size || len < 4)
		return -EINVAL;
	rec_size = *(uint32_t *)p;
	p += 4;
	if (rec_size < (part == FUNC_INFO ? 8 : 16))
		return -EINVAL;
	while (p + 8 <= end) {
		move_str((uint32_t *)p);
		n = ((uint32_t *)p)[1];
		p += 8;
		if (p + (uint64_t)n * rec_size > end)
			return -EINVAL;
		for (i = 0; i < n; i++, p += rec_size) {
			rec = (uint32_t *)p;
			switch (part) {
			case FUNC_INFO: rename_id(&rec[1]); break;
			case LINE_INFO: move_str(&rec[1]); move_str(&rec[2]); break;
			case CORE_RELO: rename_id(&rec[1]); move_str(&rec[2]); break;
			}
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint8_t *elf = NULL, *types;
	struct btf_header *bh;
	Elf64_Shdr *sh, *ext;
	struct fwd *fwds = NULL;
	uint32_t *offs = NULL, nr_fwd = 0, id, i;
	const char *strs;
	size_t size;
	uint64_t at;
	FILE *f;
	long extra, n;
	int r = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: %s IN.bpf.o OUT.bpf.o\n", prog);
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f)
		return fail(strerror(errno), argv[1]);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	size = n > 0 ? (size_t)n : 0;
	elf = malloc(size ? size : 1);
	if (!elf || fread(elf, 1, size, f) != size) {
		fclose(f);
		return fail("cannot read it", argv[1]);
	}
	fclose(f);
	if (size < sizeof(Elf64_Ehdr) || memcmp(elf, ELFMAG, SELFMAG) || elf[EI_CLASS] != ELFCLASS64) {
		r = fail("not a 64-bit ELF object", argv[1]);
		goto out;
	}

	sh = section(elf, size, ".BTF");
	if (!sh)
		goto write;		/* nothing to order */
	bh = (struct btf_header *)(elf + sh->sh_offset);
	if (sh->sh_size < sizeof(*bh) || bh->magic != BTF_MAGIC ||
	    (uint64_t)bh->hdr_len + bh->type_off + bh->type_len > sh->sh_size ||
	    (uint64_t)bh->hdr_len + bh->str_off + bh->str_len > sh->sh_size) {
		r = fail("malformed .BTF", argv[1]);
		goto out;
	}
	types = (uint8_t *)bh + bh->hdr_len + bh->type_off;
	strs = (const char *)bh + bh->hdr_len + bh->str_off;

	/* each type's offset, by id (id 0 is void) */
	offs = calloc(bh->type_len / sizeof(struct btf_type) + 2, sizeof(*offs));
	fwds = calloc(bh->type_len / sizeof(struct btf_type) + 1, sizeof(*fwds));
	if (!offs || !fwds) {
		r = fail("out of memory", argv[1]);
		goto out;
	}
	for (at = 0, id = 1; at + sizeof(struct btf_type) <= bh->type_len; id++) {
		struct btf_type *t = (struct btf_type *)(types + at);

		extra = type_extra(t);
		if (extra < 0 || t->name_off >= bh->str_len) {
			r = fail("a BTF type of unknown kind or name", argv[1]);
			goto out;
		}
		offs[id] = at;
		if (BTF_INFO_KIND(t->info) == BTF_KIND_FWD)
			fwds[nr_fwd++] = (struct fwd){ id, *t, strs + t->name_off };
		at += sizeof(*t) + extra;
	}
	if (at != bh->type_len) {
		r = fail("BTF types overrun their section", argv[1]);
		goto out;
	}
	nr_ids = id;
	if (nr_fwd < 2)
		goto write;

	renamed = calloc(nr_ids, sizeof(*renamed));
	if (!renamed) {
		r = fail("out of memory", argv[1]);
		goto out;
	}
	for (i = 0; i < nr_ids; i++)
		renamed[i] = i;
	/* the slots, in id order, get the FWDs in name order */
	qsort(fwds, nr_fwd, sizeof(*fwds), by_name);
	{
		uint32_t *slots = malloc(nr_fwd * sizeof(*slots)), k = 0;

		if (!slots) {
			r = fail("out of memory", argv[1]);
			goto out;
		}
		for (i = 1; i < nr_ids; i++)
			if (BTF_INFO_KIND(((struct btf_type *)(types + offs[i]))->info) == BTF_KIND_FWD)
				slots[k++] = i;
		for (i = 0; i < nr_fwd; i++) {
			renamed[fwds[i].id] = slots[i];
			memcpy(types + offs[slots[i]], &fwds[i].rec, sizeof(fwds[i].rec));
		}
		free(slots);
	}
	for (i = 1; i < nr_ids; i++)
		rename_refs((struct btf_type *)(types + offs[i]));

	/* the strings, in the order of their first use */
	str_len = bh->str_len;
	old_strs = strs;
	new_strs = calloc(1, str_len);
	str_moved = malloc(str_len * sizeof(*str_moved));
	if (!new_strs || !str_moved) {
		r = fail("out of memory", argv[1]);
		goto out;
	}
	memset(str_moved, 0xff, str_len * sizeof(*str_moved));
	str_moved[0] = 0;
	for (i = 1; i < nr_ids; i++)
		move_names((struct btf_type *)(types + offs[i]));
	ext = section(elf, size, ".BTF.ext");
	if (ext && (ext_part(elf + ext->sh_offset, ext->sh_size, FUNC_INFO) < 0 ||
		    ext_part(elf + ext->sh_offset, ext->sh_size, LINE_INFO) < 0 ||
		    ext_part(elf + ext->sh_offset, ext->sh_size, CORE_RELO) < 0)) {
		r = fail("malformed .BTF.ext", argv[1]);
		goto out;
	}
	/* strings nothing names, if any, after the rest in their old order */
	for (at = 1; at < str_len; at += strnlen(strs + at, str_len - at) + 1) {
		uint32_t o = at;

		move_str(&o);
	}
	if (str_next > str_len) {
		r = fail("the string table grew", argv[1]);
		goto out;
	}
	memcpy((char *)strs, new_strs, str_len);

write:
	f = fopen(argv[2], "wb");
	if (!f || fwrite(elf, 1, size, f) != size || fclose(f)) {
		r = fail(strerror(errno), argv[2]);
		goto out;
	}
	r = 0;
out:
	free(str_moved);
	free(new_strs);
	free(renamed);
	free(fwds);
	free(offs);
	free(elf);
	return r;
}
