#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build an unpatched upstream kernel that is newer than our 6.12 base, for
# the compatibility test of the scheduler collection (tests/compat-upstream).
# The source is Debian's linux-source-<series> (default 7.3, from
# trixie-backports; 7.2 from sid), fetched with apt-get download through a
# private apt configuration (lists in the cache, the mirror the host uses
# for bookworm); the host's apt state and sources are left alone.
#
#   kernel/build-upstream.sh [--series 7.3|7.2] [--debian-image] [--print-env]
#
# --debian-image builds no kernel: the BTF comes from Debian's own kernel
# image (linux-image-amd64's dependency from the same suite, its vmlinuz
# unpacked with the tree's scripts/extract-vmlinux), libbpf, bpftool and
# the tools/sched_ext headers from the tree, all in minutes. Its scxd.env
# (variant debian-<series>) builds the cid-form schedulers and the scxd
# package for machines that run that kernel (qemu/build-deb OUT none ENV);
# it has no bzImage for qemu/run.
#
# Writes the same kind of scxd.env as kernel/build.sh, for the variant
# "upstream-<series>", so these work with it:
#   qemu/run --variant upstream-7.3 -- ...
#   qemu/build-userspace BUILD_DIR $SCXD_CACHE/build/upstream-7.3/scxd.env
#   tests/guest/sched/run --variant upstream-7.3 -- ...
#
# Everything lives in ${SCXD_CACHE:-$HOME/.cache/scxd}:
#   upstream-apt/<series>/       private apt state (one suite's lists)
#   dl/                          the downloaded .deb
#   linux-<ver>/                 the unpacked tree (no patches are applied)
#   build/upstream-<series>/     out-of-tree build, stamped with its key
#   tools/<ver>-upstream/        libbpf + bpftool built from that tree
#   upstream-pahole/             sid's pahole, when the host's is too old
#
# The config is tinyconfig + kernel/config/guest.config, the same fragment
# as the 6.12 guest kernel; symbols the newer tree no longer has are logged
# and skipped. The key is the Debian version, the pahole version and the
# fragment; a run with nothing changed returns in seconds. Once a
# linux-source .deb is in dl/ it is used (the suite moves on, the build
# stays put): remove it, or pin a version with SCXD_UPSTREAM_VER=7.3.4-1~bpo13+1.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${SCXD_CACHE:-$HOME/.cache/scxd}
series=7.3
print_env=0
debian_image=0
jobs=${SCXD_JOBS:-$(nproc)}

while [ $# -gt 0 ]; do
	case $1 in
	--series) series=$2; shift 2 ;;
	--print-env) print_env=1; shift ;;
	--debian-image) debian_image=1; shift ;;
	*) echo "usage: $0 [--series 7.3|7.2] [--debian-image] [--print-env]" >&2; exit 2 ;;
	esac
done

# the Debian suite that carries linux-source-<series>
case $series in
7.2) suite=sid ;;
7.3) suite=trixie-backports ;;
*) echo "kernel/build-upstream: no Debian suite known for linux-source-$series" >&2; exit 2 ;;
esac

log() { printf 'kernel/build-upstream: %s\n' "$*" >&2; }
die() { printf 'kernel/build-upstream: error: %s\n' "$*" >&2; exit 1; }
# shellcheck source=kernel/progress.sh
. "$repo/kernel/progress.sh"

pkg=linux-source-$series
variant=upstream-$series
[ $debian_image = 0 ] || variant=debian-$series
fragments=("$repo/kernel/config/guest.config")

mkdir -p "$cache/dl" "$cache/build" "$cache/tools"
# separate from kernel/build.sh's lock: the trees and build dirs are disjoint
exec 9>"$cache/.build-upstream.lock"
if ! flock -n 9; then
	log "waiting for another kernel/build-upstream.sh to finish"
	flock 9
fi

# --- build dependencies -----------------------------------------------------

need_pkgs() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "installing ${missing[*]}"
	[ "$(id -u)" = 0 ] || die "missing packages ${missing[*]} and not root to install them"
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
}

need_pkgs build-essential bc bison flex libelf-dev libssl-dev dwarves cpio \
	ccache clang-19 lld-19 llvm-19 libzstd-dev zlib1g-dev libcap-dev \
	xz-utils rsync python3 kmod

# --- source: Debian's archive through a private apt configuration -------------

# the Debian mirror this machine already uses (the stanza serving bookworm)
mirror=$( { cat /etc/apt/sources.list.d/*.sources 2>/dev/null; echo; } |
	awk '/^URIs:/ {u = $2} /^Suites:/ {for (i = 2; i <= NF; i++) if ($i == "bookworm") {print u; exit}} /^$/ {u = ""}')
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

# apt options for a private configuration that sees only suite $1
apt_suite_opts() {
	local dir=$cache/upstream-apt/$1
	mkdir -p "$dir/lists/partial" "$dir/etc" "$dir/cache/archives/partial"
	echo "deb [trusted=yes] $mirror $1 main" > "$dir/etc/sources.list"
	printf '%s\n' -o "Dir::State::Lists=$dir/lists" -o "Dir::Etc::SourceList=$dir/etc/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null -o "Dir::Cache=$dir/cache" -o APT::Sandbox::User=root -q
}
mapfile -t aptopts < <(apt_suite_opts "$suite")

candidate() { apt-cache "${aptopts[@]}" policy "$pkg" 2>/dev/null | awk '/Candidate:/ {print $2}'; }

kver=${SCXD_UPSTREAM_VER:-}
if [ -z "$kver" ]; then
	# The suite moves; a cached .deb is good enough and keeps the build key stable
	deb=$(ls "$cache/dl/${pkg}_"*_all.deb 2>/dev/null | sort -V | tail -1 || true)
	if [ -n "$deb" ]; then
		kver=$(basename "$deb" | sed "s/^${pkg}_\(.*\)_all\.deb\$/\1/")
	else
		apt-get "${aptopts[@]}" update >/dev/null 2>&1 || log "apt-get update ($suite) failed"
		kver=$(candidate)
		{ [ -n "$kver" ] && [ "$kver" != "(none)" ]; } ||
			die "$pkg is not in Debian $suite at $mirror (and none is cached in $cache/dl)"
	fi
fi
deb=$cache/dl/${pkg}_${kver#*:}_all.deb
if [ ! -f "$deb" ]; then
	[ -n "$(candidate)" ] || apt-get "${aptopts[@]}" update >/dev/null 2>&1 || true
	log "downloading $pkg $kver from Debian $suite"
	(cd "$cache/dl" && apt-get "${aptopts[@]}" download "$pkg=$kver" >&2) ||
		die "apt-get download $pkg=$kver failed (is it still in $suite? pin another with SCXD_UPSTREAM_VER)"
	[ -f "$deb" ] || die "apt-get download did not leave $deb"
fi

upver=${kver%%-*}
ksrc=$cache/linux-$upver
if [ ! -f "$ksrc/.scxd-unpacked" ]; then
	log "extracting $deb into $ksrc"
	rm -rf "$ksrc" "$ksrc.tmp"
	mkdir -p "$ksrc.tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -x --to-stdout "./usr/src/$pkg.tar.xz" |
		tar -xJ -C "$ksrc.tmp" --strip-components=1
	echo "$kver" > "$ksrc.tmp/.scxd-unpacked"
	mv "$ksrc.tmp" "$ksrc"
fi

# --- or no kernel build: Debian's own image gives the BTF --------------------

if [ $debian_image = 1 ]; then
	need_pkgs zstd
	meta=linux-image-amd64
	metaver=$(apt-cache "${aptopts[@]}" policy "$meta" 2>/dev/null | awk '/Candidate:/ {print $2}')
	{ [ -n "$metaver" ] && [ "$metaver" != "(none)" ]; } ||
		{ apt-get "${aptopts[@]}" update >/dev/null 2>&1 || true
		  metaver=$(apt-cache "${aptopts[@]}" policy "$meta" 2>/dev/null | awk '/Candidate:/ {print $2}'); }
	# the versioned image package the metapackage depends on, and the one
	# with the files behind it (7.3: linux-image-<abi> -> linux-binary-<abi>)
	kdeps() { apt-cache "${aptopts[@]}" depends "$1" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-\(image\|binary\)-[0-9][^ ]*\).*/\1/p' | head -1; }
	image=$(kdeps "$meta=$metaver")
	[ -n "$image" ] || die "no linux-image package behind $meta $metaver in Debian $suite"
	files=$image
	for _ in 1 2; do
		next=$(kdeps "$files")
		[ -n "$next" ] && [ "$next" != "$files" ] || break
		files=$next
	done
	kbuild=$cache/build/$variant
	key="$image $metaver"
	if [ "$(cat "$kbuild/.scxd-key" 2>/dev/null)" != "$key" ] || [ ! -s "$kbuild/vmlinux" ]; then
		rm -rf "$kbuild" && mkdir -p "$kbuild/deb"
		log "downloading $files (Debian $suite's kernel, $meta $metaver) for its BTF"
		(cd "$kbuild/deb" && apt-get "${aptopts[@]}" download "$files" >&2) ||
			die "apt-get download $files failed"
		# 7.3's packages keep vmlinuz in /usr/lib/modules/<release>/, older ones in /boot
		dpkg-deb --fsys-tarfile "$kbuild"/deb/*.deb |
			tar -x -C "$kbuild/deb" --wildcards './boot/vmlinuz-*' './usr/lib/modules/*/vmlinuz' 2>/dev/null || true
		vmlinuz=$(find "$kbuild/deb" -name 'vmlinuz*' -type f | head -1)
		[ -n "$vmlinuz" ] || die "$files has no vmlinuz"
		sh "$ksrc/scripts/extract-vmlinux" "$vmlinuz" > "$kbuild/vmlinux" ||
			die "scripts/extract-vmlinux could not unpack $vmlinuz"
		readelf -S "$kbuild/vmlinux" | grep -q '\.BTF' || die "$image's kernel has no BTF"
		rm -rf "$kbuild/deb"
		echo "$key" > "$kbuild/.scxd-key"
	fi
	# shellcheck source=kernel/bpf-tools.sh
	. "$repo/kernel/bpf-tools.sh"
	scxd_bpf_tools_and_env "$ksrc" "$kbuild" "$cache/tools/$upver-upstream" "${image#linux-image-}" "$variant"
	exit
fi

# --- pahole -----------------------------------------------------------------

# Kfuncs that take the calling program implicitly (KF_IMPLICIT_ARGS, most of
# sched_ext's in 7.2) get their BPF-facing prototype from resolve_btfids,
# which finds them by the "bpf_kfunc" BTF decl tags that pahole emits from
# 1.26 on. Debian 12's pahole 1.24 emits none: the kernel still builds, but
# every such kfunc keeps its hidden argument in BTF and libbpf refuses the
# schedulers ("func_proto ... incompatible with vmlinux"). So when the
# host's pahole is older, use Debian sid's, unpacked with the libraries it
# needs (sid's glibc among them) and run through sid's dynamic loader.
# "v1.24" -> 124; true when the pahole at $1 is 1.26 or later
pahole_new_enough() {
	local v
	v=$("$1" --version 2>/dev/null | sed -n 's/^v\([0-9]*\)\.\([0-9]*\).*/\1\2/p')
	[ -n "$v" ] && [ "$v" -ge 126 ]
}
pahole=pahole
if ! pahole_new_enough pahole; then
	proot=$cache/upstream-pahole
	pahole=$proot/pahole
	if ! pahole_new_enough "$pahole"; then
		log "host pahole is older than 1.26; unpacking Debian sid's into $proot"
		rm -rf "$proot" "$proot.tmp"
		mkdir -p "$proot.tmp/debs" "$proot.tmp/root"
		mapfile -t sidopts < <(apt_suite_opts sid)
		apt-get "${sidopts[@]}" update >/dev/null 2>&1 || true
		(cd "$proot.tmp/debs" && apt-get "${sidopts[@]}" download pahole libdwarves1 \
			libbpf1 libelf1t64 libdw1t64 libc6 libgcc-s1 zlib1g libzstd1 liblzma5 \
			libbz2-1.0 >&2) || die "apt-get download of sid's pahole failed"
		for d in "$proot.tmp"/debs/*.deb; do dpkg-deb -x "$d" "$proot.tmp/root"; done
		rm -rf "$proot.tmp/debs"
		printf '%s\n' '#!/bin/sh' \
			"lib=$proot/root/usr/lib/x86_64-linux-gnu" \
			"exec \"\$lib/ld-linux-x86-64.so.2\" --library-path \"\$lib\" \"$proot/root/usr/bin/pahole\" \"\$@\"" \
			> "$proot.tmp/pahole"
		chmod +x "$proot.tmp/pahole"
		mv "$proot.tmp" "$proot"
		pahole_new_enough "$pahole" || die "sid's pahole does not run: $("$pahole" --version 2>&1 | head -1)"
	fi
fi

# --- kernel -----------------------------------------------------------------

key=$( (echo "$kver upstream $("$pahole" --version)"; cat "${fragments[@]}") | sha256sum | cut -c1-16)
kbuild=$cache/build/$variant
export CCACHE_DIR=${CCACHE_DIR:-$cache/ccache}
# KBUILD_BUILD_VERSION_TIMESTAMP, not KBUILD_BUILD_TIMESTAMP: newer trees
# hand the latter to date -d (initramfs) and turn off pahole -j for it
kmake=(make -C "$ksrc" O="$kbuild" -j"$jobs" CC="ccache gcc" HOSTCC="ccache gcc" KBUILD_BUILD_VERSION_TIMESTAMP=scxd KBUILD_BUILD_USER=scxd KBUILD_BUILD_HOST=lab PAHOLE="$pahole")

# Is CONFIG_$1 a symbol this tree's Kconfig knows at all?
kconfig_has() { grep -rqsE "^[[:space:]]*(menu)?config $1\$" --include='Kconfig*' "$ksrc"; }

if [ "$(cat "$kbuild/.scxd-key" 2>/dev/null)" != "$key" ] || [ ! -f "$kbuild/arch/x86/boot/bzImage" ]; then
	log "building $variant kernel $kver (key $key) in $kbuild"
	mkdir -p "$kbuild"
	rm -f "$kbuild/.scxd-key"
	"${kmake[@]}" -s tinyconfig >&2
	"$ksrc/scripts/kconfig/merge_config.sh" -m -O "$kbuild" "$kbuild/.config" "${fragments[@]}" >/dev/null
	"${kmake[@]}" -s olddefconfig >&2
	# Every option the fragments ask for must have survived olddefconfig.
	# guest.config is written for 6.12: a symbol this tree no longer has
	# at all (e.g. SCHED_DEBUG, folded into the base kernel in 6.16) is
	# only logged; one it has that did not take fails the build.
	bad=0
	while IFS= read -r line; do
		opt=${line%%=*}
		kconfig_has "${opt#CONFIG_}" || { log "config: $opt is not in $pkg $kver, ignored"; continue; }
		case $line in CONFIG_*=n)
			grep -q "^$opt=" "$kbuild/.config" && { log "config: $opt is set, fragment wants it off"; bad=1; } ;;
		*) grep -qxF "$line" "$kbuild/.config" || { log "config: '$line' did not take (dependency missing?)"; bad=1; } ;;
		esac
	done < <(cat "${fragments[@]}" | grep '^CONFIG_')
	[ $bad = 0 ] || die "config fragments do not apply cleanly to $pkg $kver"
	# the step count is a first guess until a build of the variant records its own
	scxd_logged_make "$variant kernel" "$kbuild/build.log" "$kbuild.steps" 2300 \
		"${kmake[@]}" bzImage || die "$variant kernel build failed; full output: $kbuild/build.log"
	echo "$key" > "$kbuild/.scxd-key"
fi

# --- libbpf, bpftool, vmlinux.h, scxd.env -----------------------------------

# shellcheck source=kernel/bpf-tools.sh
. "$repo/kernel/bpf-tools.sh"
scxd_bpf_tools_and_env "$ksrc" "$kbuild" "$cache/tools/$upver-upstream" "$kver" "$variant"
