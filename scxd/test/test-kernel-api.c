// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's sched_ext API and enumerators as scxd reads them from BTF,
 * on small BTFs built here with libbpf (no kernel): which API each shape
 * of kernel is, the enumerators of ENUM and ENUM64 types, SCX_ENUM_INIT
 * on real objects (test/sched/enums.bpf.c) with the BTF read from a file
 * as --btf gives it, and the catalog of the objects for each API.
 */

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "apply.h"
#include "kernel-api.h"
#include "sched-info.h"
#include "strict.h"
#include "tests.h"
#include "util.h"

/* A BTF with an empty struct of each name given. */
static struct btf *btf_with_structs(const char *const *names, size_t n)
{
	struct btf *btf = btf__new_empty();

	for (size_t i = 0; btf && i < n; i++)
		btf__add_struct(btf, names[i], 0);
	return btf;
}

static void test_api_from_btf_each_kernel_shape(void)
{
	static const char *const shapes[] = {
		"task_struct", "sched_ext_ops", "scx_sub_attach_args", "sched_ext_ops_cid",
	};
	struct btf *btf;

	btf = btf_with_structs(shapes, 1);
	CHECK_STREQ(kernel_api_name(kernel_api_from_btf(btf)), "none");
	btf__free(btf);
	btf = btf_with_structs(shapes, 2);
	CHECK_STREQ(kernel_api_name(kernel_api_from_btf(btf)), "root-only");
	btf__free(btf);
	btf = btf_with_structs(shapes, 3);
	CHECK_STREQ(kernel_api_name(kernel_api_from_btf(btf)), "cpu");
	btf__free(btf);
	btf = btf_with_structs(shapes, 4);
	CHECK_STREQ(kernel_api_name(kernel_api_from_btf(btf)), "cid");
	btf__free(btf);
	/* cid ops without sub-scheduler attach args: sched_ext, root only */
	btf = btf_with_structs((const char *const[]){ "sched_ext_ops", "sched_ext_ops_cid" }, 2);
	CHECK_STREQ(kernel_api_name(kernel_api_from_btf(btf)), "root-only");
	btf__free(btf);
}

static void test_api_names_and_directories(void)
{
	enum kernel_api api = KERNEL_API_NONE;
	char *dir;

	CHECK_INTEQ(kernel_api_from_name("cid", &api), 0);
	CHECK(api == KERNEL_API_CID);
	CHECK_INTEQ(kernel_api_from_name("root-only", &api), 0);
	CHECK(api == KERNEL_API_ROOT_ONLY);
	CHECK_INTEQ(kernel_api_from_name("yes", &api), -EINVAL);
	CHECK_STREQ(kernel_api_describe(KERNEL_API_CID), "sub-schedulers (cid-form, upstream)");
	CHECK_STREQ(kernel_api_describe(KERNEL_API_CPU), "sub-schedulers (cpu-form, scxd series)");
	CHECK_STREQ(kernel_api_support_name(KERNEL_API_CID), "sub-schedulers");
	CHECK_STREQ(kernel_api_support_name(KERNEL_API_ROOT_ONLY), "root-only");
	dir = kernel_api_sched_dir(KERNEL_API_CID, "/usr/lib/scxd");
	CHECK_STREQ(dir, "/usr/lib/scxd/cid");
	free(dir);
	dir = kernel_api_sched_dir(KERNEL_API_CPU, "/usr/lib/scxd");
	CHECK_STREQ(dir, "/usr/lib/scxd");
	free(dir);
	dir = kernel_api_sched_dir(KERNEL_API_ROOT_ONLY, "/usr/lib/scxd");
	CHECK_STREQ(dir, "/usr/lib/scxd");
	free(dir);
}

/*
 * The kernel of these tests: enum scx_public_consts (4 bytes) with
 * SCX_OPS_NAME_LEN 128 and SCX_SLICE_DFL 20 ms, enum64 scx_dsq_id_flags
 * with SCX_DSQ_LOCAL (bit 63 set), a signed enum with a negative value,
 * and an 8-byte BTF_KIND_ENUM as BTF without ENUM64 writes one.
 */
static struct btf *fake_kernel_btf(void)
{
	struct btf *btf = btf_with_structs((const char *const[]){ "sched_ext_ops" }, 1);

	if (!btf)
		return NULL;
	btf__add_enum(btf, "scx_public_consts", 4);
	btf__add_enum_value(btf, "SCX_OPS_NAME_LEN", 128);
	btf__add_enum_value(btf, "SCX_SLICE_DFL", 20000000);
	btf__add_enum64(btf, "scx_dsq_id_flags", 8, false);
	btf__add_enum64_value(btf, "SCX_DSQ_FLAG_BUILTIN", 1ULL << 63);
	btf__add_enum64_value(btf, "SCX_DSQ_LOCAL", (1ULL << 63) | 2);
	btf__add_enum64(btf, "scx_signed", 4, true);
	btf__add_enum64_value(btf, "SCX_NEGATIVE64", (__u64)-5);
	btf__add_enum(btf, "scx_small_signed", 4);
	btf__add_enum_value(btf, "SCX_NEGATIVE", -7);
	btf__add_enum(btf, "scx_truncated", 8);
	btf__add_enum_value(btf, "SCX_TRUNCATED", 1);
	return btf;
}

static void test_enum_values_from_enum_and_enum64(void)
{
	struct btf *btf = fake_kernel_btf();
	unsigned long long v = 0;

	CHECK(btf != NULL);
	if (!btf)
		return;
	CHECK_INTEQ(kernel_enum_value(btf, "SCX_OPS_NAME_LEN", &v), 0);
	CHECK_INTEQ(v, 128);
	CHECK_INTEQ(kernel_enum_value(btf, "SCX_SLICE_DFL", &v), 0);
	CHECK_INTEQ(v, 20000000);
	CHECK_INTEQ(kernel_enum_value(btf, "SCX_DSQ_LOCAL", &v), 0);
	CHECK(v == ((1ULL << 63) | 2));
	CHECK_INTEQ(kernel_enum_value(btf, "SCX_NEGATIVE64", &v), 0);
	CHECK(v == (unsigned long long)-5);
	/* btf__add_enum_value() marks the enum signed for a negative value */
	CHECK_INTEQ(kernel_enum_value(btf, "SCX_NEGATIVE", &v), 0);
	CHECK(v == (unsigned long long)-7);
	CHECK_INTEQ(kernel_enum_value(btf, "SCX_TRUNCATED", &v), -ERANGE);
	CHECK_INTEQ(kernel_enum_value(btf, "SCX_DSQ_GLOBAL", &v), -ENOENT);
	CHECK_INTEQ(kernel_enum_value(btf, "scx_dsq_id_flags", &v), -ENOENT);
	btf__free(btf);
}

/* The fake kernel's BTF as a file, as --btf reads it. */
static int write_btf(const struct btf *btf, const char *path)
{
	__u32 size = 0;
	const void *raw = btf__raw_data(btf, &size);
	FILE *f = fopen(path, "w");
	int ok;

	if (!f || !raw)
		return -EIO;
	ok = fwrite(raw, 1, size, f) == size;
	return fclose(f) == 0 && ok ? 0 : -EIO;
}

static uint64_t rodata_u64(struct bpf_object *obj, const char *var)
{
	const struct btf *btf = bpf_object__btf(obj);
	__s32 id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	const struct btf_type *sec = btf__type_by_id(btf, id);
	const struct btf_var_secinfo *vsi = btf_var_secinfos(sec);
	struct bpf_map *m;
	const unsigned char *data = NULL;
	size_t size = 0;
	uint64_t v = 0;

	bpf_object__for_each_map(m, obj)
		if (bpf_map__is_internal(m) && strstr(bpf_map__name(m), ".rodata"))
			data = bpf_map__initial_value(m, &size);
	for (unsigned i = 0; data && i < btf_vlen(sec); i++, vsi++)
		if (streq(btf__name_by_offset(btf, btf__type_by_id(btf, vsi->type)->name_off), var))
			for (unsigned b = 0; b < 8 && vsi->offset + b < size; b++)
				v |= (uint64_t)data[vsi->offset + b] << (8 * b);
	return v;
}

/* The whole file at path into *image, as scxd reads an object. */
static int read_image(const char *path, char **image, size_t *size)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return -errno;
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0 ||
	    !(*image = malloc(n ?: 1)) || fread(*image, 1, n, f) != (size_t)n) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	*size = n;
	return 0;
}

static void test_scx_enum_init_on_objects(const char *sched_dir, const char *scratch)
{
	struct btf *btf = fake_kernel_btf();
	char path[4096], btf_path[4200];
	struct bpf_object *obj;
	char *reason = NULL, *image = NULL;
	size_t size = 0;

	snprintf(btf_path, sizeof(btf_path), "%s/vmlinux.btf", scratch);
	CHECK_INTEQ(btf ? write_btf(btf, btf_path) : -ENOMEM, 0);
	btf__free(btf);

	snprintf(path, sizeof(path), "%s/enums.bpf.o", sched_dir);
	obj = bpf_object__open_file(path, NULL);
	CHECK(obj != NULL);
	if (!obj)
		return;
	CHECK_INTEQ(read_image(path, &image, &size), 0);
	CHECK_INTEQ(apply_set_kernel_enums(obj, path, image, size, btf_path, &reason), 0);
	if (reason)
		fprintf(stderr, "apply_set_kernel_enums: %s\n", reason);
	free(reason);
	reason = NULL;
	CHECK(rodata_u64(obj, "__SCX_DSQ_LOCAL") == ((1ULL << 63) | 2));
	CHECK_INTEQ(rodata_u64(obj, "__SCX_SLICE_DFL"), 20000000);
	CHECK_INTEQ(rodata_u64(obj, "__SCX_OPS_NAME_LEN"), 128);
	/* declared, used by no code, not in the kernel: left 0, not refused */
	CHECK_INTEQ(rodata_u64(obj, "__SCX_ONLY_DECLARED"), 0);
	/* the tunable beside them is left as it was */
	CHECK_INTEQ(rodata_u64(obj, "slice_us") & 0xffffffff, 5000);
	bpf_object__close(obj);
	free(image);
	image = NULL;

	snprintf(path, sizeof(path), "%s/enums-missing.bpf.o", sched_dir);
	obj = bpf_object__open_file(path, NULL);
	CHECK(obj != NULL);
	if (!obj)
		return;
	CHECK_INTEQ(read_image(path, &image, &size), 0);
	CHECK_INTEQ(apply_set_kernel_enums(obj, path, image, size, btf_path, &reason), -ENOENT);
	CHECK(reason && strstr(reason, "enums-missing.bpf.o: uses __SCX_NOT_IN_KERNEL, but the kernel's BTF has no enumerator SCX_NOT_IN_KERNEL"));
	free(image);
	if (reason)
		printf("refused: %s\n", reason);
	free(reason);
	bpf_object__close(obj);
}

static void test_detect_from_a_btf_file(const char *scratch)
{
	struct btf *btf = btf_with_structs((const char *const[]){
		"sched_ext_ops", "scx_sub_attach_args", "sched_ext_ops_cid" }, 3);
	char path[4200];
	enum kernel_api api = KERNEL_API_NONE;

	snprintf(path, sizeof(path), "%s/cid.btf", scratch);
	CHECK_INTEQ(btf ? write_btf(btf, path) : -ENOMEM, 0);
	btf__free(btf);
	CHECK_INTEQ(kernel_api_detect(path, &api), 0);
	CHECK(api == KERNEL_API_CID);
	snprintf(path, sizeof(path), "%s/no-such.btf", scratch);
	CHECK(kernel_api_detect(path, &api) < 0);
}

static int copy_file(const char *from, const char *to)
{
	char cmd[9000];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	return system(cmd) == 0 ? 0 : -EIO;
}

/*
 * SCHED_DIR with fifo and vtime (cpu-form), SCHED_DIR/cid with vtime
 * only: a cid kernel's catalog finds vtime in cid/ and says fifo has no
 * cid-form object; a cpu kernel's the other way round for a cid-only one.
 */
static void test_catalog_for_each_api(const char *sched_dir, const char *scratch)
{
	_cleanup_(sched_dir_catalog_freep) struct sched_dir_catalog *cid = NULL, *cpu = NULL;
	char base[4200], from[4200], to[4300], want[8800];
	const struct sched_info *s = NULL;
	const char *reason = NULL;

	snprintf(base, sizeof(base), "%s/objects", scratch);
	snprintf(to, sizeof(to), "%s/cid", base);
	mkdir(base, 0755);
	mkdir(to, 0755);
	snprintf(from, sizeof(from), "%s/fifo.bpf.o", sched_dir);
	snprintf(to, sizeof(to), "%s/fifo.bpf.o", base);
	CHECK_INTEQ(copy_file(from, to), 0);
	snprintf(from, sizeof(from), "%s/vtime.bpf.o", sched_dir);
	snprintf(to, sizeof(to), "%s/cid/vtime.bpf.o", base);
	CHECK_INTEQ(copy_file(from, to), 0);
	snprintf(from, sizeof(from), "%s/lat.bpf.o", sched_dir);
	snprintf(to, sizeof(to), "%s/cid/lat.bpf.o", base);
	CHECK_INTEQ(copy_file(from, to), 0);

	CHECK_INTEQ(sched_dir_catalog_new_for(base, KERNEL_API_CID, &cid), 0);
	if (!cid)
		return;
	CHECK_INTEQ(sched_dir_catalog_base(cid)->lookup(sched_dir_catalog_base(cid), "vtime", &s, &reason), 0);
	snprintf(want, sizeof(want), "%s/cid/vtime.bpf.o", base);
	CHECK_STREQ(s ? s->path : NULL, want);
	CHECK_INTEQ(sched_dir_catalog_base(cid)->lookup(sched_dir_catalog_base(cid), "fifo", &s, &reason),
		    -EOPNOTSUPP);
	snprintf(want, sizeof(want),
		 "scheduler \"fifo\" has no cid-form object in %s/cid (%s/fifo.bpf.o is cpu-form)", base, base);
	CHECK_STREQ(reason, want);
	CHECK_INTEQ(sched_dir_catalog_base(cid)->lookup(sched_dir_catalog_base(cid), "nope", &s, &reason),
		    -ENOENT);

	CHECK_INTEQ(sched_dir_catalog_new_for(base, KERNEL_API_CPU, &cpu), 0);
	if (!cpu)
		return;
	CHECK_INTEQ(sched_dir_catalog_base(cpu)->lookup(sched_dir_catalog_base(cpu), "fifo", &s, &reason), 0);
	CHECK_INTEQ(sched_dir_catalog_base(cpu)->lookup(sched_dir_catalog_base(cpu), "lat", &s, &reason),
		    -EOPNOTSUPP);
	snprintf(want, sizeof(want),
		 "scheduler \"lat\" has no cpu-form object in %s (%s/cid/lat.bpf.o is cid-form)", base, base);
	CHECK_STREQ(reason, want);
}

int main(int argc, char **argv)
{
	char scratch[4096];

	if (argc < 3) {
		fprintf(stderr, "usage: %s SCHED_DIR SCRATCH_PARENT\n", argv[0]);
		return 2;
	}
	strict_modes = false;
	snprintf(scratch, sizeof(scratch), "%s/kernel-api-XXXXXX", argv[2]);
	if (!mkdtemp(scratch)) {
		perror("mkdtemp");
		return 1;
	}
	test_api_from_btf_each_kernel_shape();
	test_api_names_and_directories();
	test_enum_values_from_enum_and_enum64();
	test_scx_enum_init_on_objects(argv[1], scratch);
	test_detect_from_a_btf_file(scratch);
	test_catalog_for_each_api(argv[1], scratch);
	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
		if (system(cmd) != 0)
			fprintf(stderr, "cannot remove %s\n", scratch);
	}
	return test_main_end("test-kernel-api");
}
