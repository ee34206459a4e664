#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the lab kernel from Debian's linux-source-6.12 with kernel/series
# applied, plus libbpf, bpftool and vmlinux.h from the same tree.
#
#   kernel/build.sh [--variant guest|debug|distro|distro-generic] [--pristine]
#                   [--print-env] [--cached] [--config-only]
#
# --variant distro is not a lab kernel but the one an administrator
# installs: Debian's own configuration for this kernel (linux-config-6.12,
# the cloud-amd64 flavour, for virtual machines; distro-generic: the amd64
# flavour, for bare metal) with kernel/config/distro.config on top,
# packaged with `make bindeb-pkg` as linux-image and linux-headers .debs
# (see "The kernel as Debian packages" in README.md). It takes over an
# hour on two cores, so it is its own stage and no part of tests/run.
# --config-only stops before the build: the .config, its check
# (kernel/distro-config-check.sh), the release and the packages' names and
# version, in seconds.
#
# Everything lives in ${SCXD_CACHE:-$HOME/.cache/scxd}, never in the
# repository:
#   dl/                     the downloaded .deb
#   linux-<ver>/            git repo of the pristine tree (tag pristine),
#                           branch "scxd" = pristine + kernel/series
#   build/<variant>/        out-of-tree build (O=), stamped with its key
#   tools/<key>/            libbpf + bpftool built from the tree
#   linux-<ver>-distro/     worktree of the series for the distro variants
#   build/distro*.debs/     the distro variants' .debs
#
# A run with the same Debian version, series and config fragments is a
# no-op; with --cached a run that would have to build fails (exit 3)
# instead. The last lines printed are shell assignments (KVER, KDIR, KBUILD,
# BZIMAGE, VMLINUX, VMLINUX_H, BPFTOOL, LIBBPF_INC, LIBBPF_A) that other
# scripts source through --print-env.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${SCXD_CACHE:-$HOME/.cache/scxd}
variant=guest
pristine=0
print_env=0
cached_only=0
config_only=0
jobs=${SCXD_JOBS:-$(nproc)}

while [ $# -gt 0 ]; do
	case $1 in
	--variant) variant=$2; shift 2 ;;
	--pristine) pristine=1; shift ;;
	--print-env) print_env=1; shift ;;
	--cached) cached_only=1; shift ;;
	--config-only) config_only=1; shift ;;
	*) echo "usage: $0 [--variant guest|debug|distro|distro-generic] [--pristine] [--print-env] [--cached] [--config-only]" >&2; exit 2 ;;
	esac
done

log() { printf 'kernel/build: %s\n' "$*" >&2; }
# shellcheck source=kernel/progress.sh
. "$repo/kernel/progress.sh"
die() { printf 'kernel/build: error: %s\n' "$*" >&2; exit 1; }

# default_steps: kbuild's step count for a first build's progress line,
# measured on 6.12.118; each build then records its own (kernel/progress.sh)
case $variant in
guest) fragments=("$repo/kernel/config/guest.config"); default_steps=2160 ;;
debug) fragments=("$repo/kernel/config/guest.config" "$repo/kernel/config/debug.config"); default_steps=2200 ;;
distro) fragments=("$repo/kernel/config/distro.config"); default_steps=15500 ;;
# not measured: Debian's amd64 config builds about three times the modules
distro-generic) fragments=("$repo/kernel/config/distro.config"); default_steps=45000 ;;
*) die "unknown variant '$variant' (guest, debug, distro or distro-generic)" ;;
esac
distro=0
case $variant in distro*) distro=1 ;; esac
[ $pristine = 1 ] && [ $distro = 1 ] && die "--pristine is for the lab variants"
[ $config_only = 1 ] && [ $distro = 0 ] && die "--config-only is for the distro variants"
# the serial the distro packages' version and release carry, current with
# the series and the fragments (or a message saying how to bump it)
if [ $distro = 1 ]; then
	serial=$(bash "$repo/kernel/package-serial.sh" --serial) ||
		die "kernel/package-serial is out of date: no distro packages that would reuse version +scxd$(sed -n 's/^serial //p' "$repo/kernel/package-serial")"
fi
[ $pristine = 1 ] && variant=$variant-pristine

# One build at a time: the series worktree and the build directories are
# shared by every caller (tests, developers, the demo).
mkdir -p "$cache"
exec 9>"$cache/.build.lock"
if ! flock -n 9; then
	log "waiting for another kernel/build.sh to finish"
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
	xz-utils git rsync python3 kmod
# make bindeb-pkg: dpkg-buildpackage and the debhelper its rules call
if [ $distro = 1 ]; then need_pkgs dpkg-dev debhelper; fi

# --- source -----------------------------------------------------------------

mkdir -p "$cache/dl" "$cache/build" "$cache/tools"
kver=${SCXD_KVER:-}
if [ -z "$kver" ]; then
	kver=$(apt-cache policy linux-source-6.12 2>/dev/null | awk '/Candidate:/ {print $2}')
	if [ -z "$kver" ] || [ "$kver" = "(none)" ]; then
		apt-get update -q >/dev/null 2>&1 || true
		kver=$(apt-cache policy linux-source-6.12 2>/dev/null | awk '/Candidate:/ {print $2}')
	fi
	if [ -z "$kver" ] || [ "$kver" = "(none)" ]; then
		# offline: fall back to the newest package already downloaded
		deb=$(ls "$cache"/dl/linux-source-6.12_*.deb 2>/dev/null | sort -V | tail -1)
		[ -n "$deb" ] || die "linux-source-6.12 is not known to apt and none is cached in $cache/dl"
		kver=$(basename "$deb" | sed 's/^linux-source-6.12_\(.*\)_all\.deb$/\1/')
	fi
fi
deb=$cache/dl/linux-source-6.12_${kver}_all.deb
if [ ! -f "$deb" ]; then
	log "downloading linux-source-6.12 $kver"
	(cd "$cache/dl" && apt-get download -q "linux-source-6.12=$kver" >&2 2>/dev/null) ||
		die "apt-get download linux-source-6.12=$kver failed"
	deb=$(ls "$cache"/dl/linux-source-6.12_*"${kver#*:}"_all.deb | head -1)
fi

# the distro variants' base: Debian's configuration of this very kernel
if [ $distro = 1 ]; then
	cfgdeb=$cache/dl/linux-config-6.12_${kver}_amd64.deb
	if [ ! -f "$cfgdeb" ]; then
		log "downloading linux-config-6.12 $kver"
		(cd "$cache/dl" && apt-get download -q "linux-config-6.12=$kver" >&2 2>/dev/null) ||
			die "apt-get download linux-config-6.12=$kver failed"
		cfgdeb=$(ls "$cache"/dl/linux-config-6.12_*"${kver#*:}"_amd64.deb | head -1)
	fi
fi

ksrc=$cache/linux-${kver%%-*}
if ! git -C "$ksrc" rev-parse -q --verify refs/tags/pristine >/dev/null 2>&1; then
	log "extracting $deb into $ksrc"
	rm -rf "$ksrc" "$ksrc.tmp"
	mkdir -p "$ksrc.tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -x --to-stdout ./usr/src/linux-source-6.12.tar.xz |
		tar -xJ -C "$ksrc.tmp" --strip-components=1
	(
		cd "$ksrc.tmp"
		git init -q -b debian
		git config user.name scxd-build
		git config user.email scxd-build@localhost
		git config gc.auto 0
		# Debian's .gitignore ignores the whole top level; the tree is ours
		git add -A -f .
		git commit -q -m "linux-source-6.12 $kver (Debian, pristine)"
		git tag pristine
	)
	mv "$ksrc.tmp" "$ksrc"
fi

# --- series -----------------------------------------------------------------

# the patch files kernel/series lists, in order (comments, blank lines skipped)
series_patches() { grep -v '^[[:space:]]*\(#\|$\)' "$repo/kernel/series" || true; }

series_hash=pristine
if [ $pristine = 0 ]; then
	series_hash=$( (cat "$repo/kernel/series";
		series_patches | while read -r p; do
			cat "$repo/kernel/patches/$p" 2>/dev/null || echo "missing $p"; done) | sha256sum | cut -c1-16)
fi
# What the kernel image and the BPF tools are built from: the series less
# its selftests' hunks (files under selftests_path), so that a fix to a
# selftest alone is applied to the tree but rebuilds neither
# (kselftest/run builds the selftests each time).
selftests_path='^a/tools/testing/'
kernel_hash=pristine
if [ $pristine = 0 ]; then
	kernel_hash=$( (cat "$repo/kernel/series";
		series_patches | while read -r p; do
			cat "$repo/kernel/patches/$p" 2>/dev/null || echo "missing $p"; done) |
		awk -v st="$selftests_path" '/^diff --git / { skip = ($3 ~ st) } !skip' |
		sha256sum | cut -c1-16)
fi
# The pristine tree is the repo's own checkout; the series is applied in a
# worktree beside it, so both variants can be built without a checkout
# touching the other's files (and so without needless rebuilds).
if [ $pristine = 1 ]; then
	branch=scxd-pristine
	ktree=$ksrc
else
	branch=scxd
	ktree=$ksrc-scxd
	[ -e "$ktree/.git" ] || git -C "$ksrc" worktree add -q -f "$ktree" pristine >&2
fi
if [ "$(git -C "$ktree" config --get "scxd.$branch" || true)" != "$series_hash" ] ||
   [ "$(git -C "$ktree" symbolic-ref -q --short HEAD || true)" != "$branch" ]; then
	log "applying kernel/series to linux-source-6.12 $kver in $ktree"
	git -C "$ktree" am --abort >/dev/null 2>&1 || true
	git -C "$ktree" checkout -q -f -B "$branch" pristine
	if [ $pristine = 0 ]; then
		series_patches | while read -r p; do
			[ -f "$repo/kernel/patches/$p" ] || die "kernel/series names $p, which is not in kernel/patches/"
			if ! git -C "$ktree" am -q --keep-cr "$repo/kernel/patches/$p" >&2; then
				git -C "$ktree" am --abort >/dev/null 2>&1 || true
				die "patch $p does not apply to Debian linux-source-6.12 $kver; rebase the series"
			fi
		done
	fi
	git -C "$ktree" config "scxd.$branch" "$series_hash"
fi

# check_fragments CONFIG FRAGMENT...: every option a fragment asks for
# survived olddefconfig
check_fragments() {
	local config=$1 line opt bad=0
	shift
	while IFS= read -r line; do
		case $line in CONFIG_*=n) opt=${line%%=*}
			grep -q "^$opt=" "$config" && { log "config: $opt is set, fragment wants it off"; bad=1; } ;;
		CONFIG_*) grep -qxF "$line" "$config" || { log "config: '$line' did not take (dependency missing?)"; bad=1; } ;;
		esac
	done < <(cat "$@" | grep '^CONFIG_')
	return $bad
}

# --- distro: Debian's configuration, packaged with bindeb-pkg ----------------

if [ $distro = 1 ]; then
	# shellcheck source=kernel/distro.sh
	. "$repo/kernel/distro.sh"
	scxd_build_distro
	exit
fi

# --- kernel -----------------------------------------------------------------

key=$( (echo "$kver $kernel_hash"; cat "${fragments[@]}") | sha256sum | cut -c1-16)
kbuild=$cache/build/$variant
export CCACHE_DIR=${CCACHE_DIR:-$cache/ccache}
kmake=(make -C "$ktree" O="$kbuild" -j"$jobs" CC="ccache gcc" HOSTCC="ccache gcc" KBUILD_BUILD_TIMESTAMP=scxd KBUILD_BUILD_USER=scxd KBUILD_BUILD_HOST=lab)

if [ "$(cat "$kbuild/.scxd-key" 2>/dev/null)" != "$key" ] || [ ! -f "$kbuild/arch/x86/boot/bzImage" ]; then
	[ $cached_only = 0 ] || { log "$variant kernel not built or out of date (--cached)"; exit 3; }
	log "building $variant kernel (key $key) in $kbuild"
	mkdir -p "$kbuild"
	rm -f "$kbuild/.scxd-key"
	"${kmake[@]}" -s tinyconfig >&2
	"$ktree/scripts/kconfig/merge_config.sh" -m -O "$kbuild" "$kbuild/.config" "${fragments[@]}" >/dev/null
	"${kmake[@]}" -s olddefconfig >&2
	check_fragments "$kbuild/.config" "${fragments[@]}" ||
		die "config fragments for $variant do not apply cleanly"
	scxd_logged_make "$variant kernel" "$kbuild/build.log" "$kbuild.steps" "$default_steps" \
		"${kmake[@]}" bzImage || die "$variant kernel build failed; full output: $kbuild/build.log"
	echo "$key" > "$kbuild/.scxd-key"
	# what this image was built from, for whoever records figures taken
	# on it later (tests/bench): the tree's worktree moves on with the series
	git -C "$ktree" log --reverse --format='%h %s' pristine..HEAD >"$kbuild/.scxd-series"
fi

# --- libbpf, bpftool, vmlinux.h, scxd.env -----------------------------------

# shellcheck source=kernel/bpf-tools.sh
. "$repo/kernel/bpf-tools.sh"
scxd_bpf_tools_and_env "$ktree" "$kbuild" "$cache/tools/${kver%%-*}-$kernel_hash" "$kver" "$variant"
