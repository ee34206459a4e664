# SPDX-License-Identifier: GPL-2.0
#
# Sourced by kernel/build.sh and kernel/build-upstream.sh once a lab kernel
# is built: libbpf and bpftool from the same kernel tree, vmlinux.h from
# the kernel's BTF, and the scxd.env that describes the variant to qemu/,
# meson and the tests.
#
#   scxd_bpf_tools_and_env TREE KBUILD TOOLS KVER VARIANT
#
# TOOLS is a cache directory keyed by the caller; it is built only when it
# lacks bpftool or libbpf.a. Uses the caller's jobs, print_env and log().

scxd_build_bpf_tools() {
	local tree=$1 kbuild=$2 tools=$3

	mkdir -p "$tools/obj/libbpf" "$tools/obj/bpftool"
	make -C "$tree/tools/lib/bpf" -j"$jobs" -s OUTPUT="$tools/obj/libbpf/" \
		EXTRA_CFLAGS='-g -O2 -fPIC' DESTDIR="$tools" prefix= LIBDIR=/lib \
		install_headers install_static ||
	make -C "$tree/tools/lib/bpf" -j"$jobs" -s OUTPUT="$tools/obj/libbpf/" \
		EXTRA_CFLAGS='-g -O2 -fPIC' DESTDIR="$tools" prefix= all install_headers || return
	[ -f "$tools/lib/libbpf.a" ] ||
		{ mkdir -p "$tools/lib"; cp "$tools/obj/libbpf/libbpf.a" "$tools/lib/"; } || return
	# bpftool's own skeletons from the lab kernel's BTF, not the host's
	make -C "$tree/tools/bpf/bpftool" -j"$jobs" -s OUTPUT="$tools/obj/bpftool/" \
		VMLINUX_BTF="$kbuild/vmlinux" CLANG=clang-19 LLVM_STRIP=llvm-strip-19 || return
	mkdir -p "$tools/sbin"
	cp "$tools/obj/bpftool/bpftool" "$tools/sbin/bpftool"
}

scxd_bpf_tools_and_env() {
	local tree=$1 kbuild=$2 tools=$3 kver=$4 variant=$5
	local vmlinux_h=$kbuild/vmlinux.h env_file=$kbuild/scxd.env

	if [ ! -x "$tools/sbin/bpftool" ] || [ ! -f "$tools/lib/libbpf.a" ]; then
		log "building libbpf and bpftool from $tree into $tools (log: $tools.log)"
		rm -rf "$tools"
		scxd_build_bpf_tools "$tree" "$kbuild" "$tools" >"$tools.log" 2>&1 ||
			{ tail -30 "$tools.log" >&2; log "libbpf/bpftool build failed; full output: $tools.log"; return 1; }
	fi

	if [ ! -s "$vmlinux_h" ] || [ "$vmlinux_h" -ot "$kbuild/vmlinux" ]; then
		"$tools/sbin/bpftool" btf dump file "$kbuild/vmlinux" format c > "$vmlinux_h.tmp"
		mv "$vmlinux_h.tmp" "$vmlinux_h"
	fi

	cat > "$env_file" <<ENV
KVER='$kver'
KVARIANT='$variant'
KDIR='$tree'
KBUILD='$kbuild'
BZIMAGE='$kbuild/arch/x86/boot/bzImage'
VMLINUX='$kbuild/vmlinux'
VMLINUX_H='$vmlinux_h'
BPFTOOL='$tools/sbin/bpftool'
LIBBPF_INC='$tools/include'
LIBBPF_A='$tools/lib/libbpf.a'
ENV
	if [ "$print_env" = 1 ]; then cat "$env_file"; else log "ready: $env_file"; fi
}
