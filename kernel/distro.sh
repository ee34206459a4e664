# SPDX-License-Identifier: GPL-2.0
#
# Sourced by kernel/build.sh for --variant distro and distro-generic: the
# series built on Debian's own configuration of this kernel and packaged
# the Debian way.
#
#   base    from linux-config-6.12 (the same Debian version as
#           linux-source-6.12), as Debian built it: for distro
#           config.amd64_none_cloud-amd64 (virtual machines: virtio, no
#           USB host controllers, no physical NICs or GPUs), for
#           distro-generic config.amd64_none_amd64 (bare metal: Debian's
#           default linux-image-amd64)
#   +       kernel/config/distro.config: sched_ext and what the series and
#           scxd need, and the local version made from the serial;
#           olddefconfig settles the rest, every option that ends up
#           different from Debian's is listed in
#           build/<variant>/config-vs-debian.diff, and
#           kernel/distro-config-check.sh checks the result for the flavour
#   make    bindeb-pkg in its own worktree of the series (so an hour-long
#           build neither holds the lab's build lock nor sees a checkout
#           of the lab's tree change under it) into build/<variant>
#   out     build/<variant>.debs/linux-{image,headers}-<release>_<version>_amd64.deb
#           release 6.12.N-scxd<serial>-<flavour>, version <Debian's
#           version>+scxd<serial> (kernel/package-serial, bumped whenever
#           the kernel patches or the fragments change, tests/run checks
#           it): it sorts after the Debian kernel it is built from and
#           after every earlier build, and each build installs beside the
#           others; a fix to a selftest alone changes neither the serial
#           nor the key, and rebuilds nothing
#
# Uses build.sh's variables (cache, kver, ksrc, ktree, series_hash, kernel_hash,
# variant, fragments, serial, jobs, default_steps, print_env, cached_only,
# config_only)
# and its log, die, need_pkgs, check_fragments and scxd_logged_make.

scxd_distro_worktree() {
	local dtree=$1

	# the lab's series branch is up to date here (build.sh holds the lock)
	[ -e "$dtree/.git" ] || git -C "$ksrc" worktree add -q -f -B scxd-distro "$dtree" scxd >&2
	if [ "$(git -C "$dtree" config --get scxd.scxd-distro || true)" != "$series_hash" ] ||
	   [ "$(git -C "$dtree" rev-parse HEAD)" != "$(git -C "$ksrc" rev-parse scxd)" ]; then
		log "distro: checking out the series (branch scxd-distro) in $dtree"
		git -C "$dtree" checkout -q -f -B scxd-distro scxd
		git -C "$dtree" config scxd.scxd-distro "$series_hash"
	fi
}

# Debian's config file for flavour $2, uncompressed, to $1
scxd_distro_base_config() {
	dpkg-deb --fsys-tarfile "$cfgdeb" |
		tar -x --to-stdout "./usr/src/linux-config-6.12/config.amd64_none_$2.xz" |
		xz -d > "$1.tmp" && [ -s "$1.tmp" ] && mv "$1.tmp" "$1"
}

# The .config in $2 from Debian's $3 and the fragments, checked: every
# fragment option took, the flavour has what it needs
# (kernel/distro-config-check.sh, flavour $4), and the release is the one
# the packages are named after.
scxd_distro_config() {
	local dtree=$1 kbuild=$2 base=$3 flavour=$4 release

	cp "$base" "$kbuild/.config"
	"$dtree/scripts/kconfig/merge_config.sh" -m -O "$kbuild" "$kbuild/.config" "${fragments[@]}" >/dev/null
	"${kmake[@]}" -s olddefconfig >&2
	check_fragments "$kbuild/.config" "${fragments[@]}" ||
		die "config fragments for $variant do not apply cleanly"
	"$dtree/scripts/diffconfig" "$base" "$kbuild/.config" > "$kbuild/config-vs-debian.diff" || true
	log "distro: $(wc -l < "$kbuild/config-vs-debian.diff") options differ from Debian's $flavour config ($kbuild/config-vs-debian.diff)"
	bash "$repo/kernel/distro-config-check.sh" "$kbuild/.config" "$flavour" > "$kbuild/config-check" ||
		{ grep -v '^ok' "$kbuild/config-check" >&2; die "$variant: the $flavour config lacks what it needs ($kbuild/config-check)"; }
	log "distro: $flavour config: $(grep -c '^ok' "$kbuild/config-check") options checked ($kbuild/config-check)"
	sed -n 's/^note /distro: /p' "$kbuild/config-check" | while read -r l; do log "$l"; done
	# kernelrelease reads include/config/auto.conf, which a build
	# regenerates from .config first: so here too
	"${kmake[@]}" -s syncconfig >&2 || die "make syncconfig failed"
	release=$("${kmake[@]}" -s kernelrelease)
	[ "$release" = "$krelease" ] || die "make kernelrelease says '$release', not $krelease"
}

# What bindeb-pkg will name and version the packages, from its own first
# step: scripts/package/mkdebian writing debian/ in the build directory
# $1, with the variables make gives it (and the include/config/auto.conf
# scxd_distro_config synced), so that a change to the version logic shows
# without an hour's build.
scxd_distro_show_packaging() {
	local kbuild=$1 dtree=$2 version

	(cd "$kbuild" && env "${pkgenv[@]}" srctree="$dtree" KERNELRELEASE="$krelease" ARCH=x86 SRCARCH=x86 UTS_MACHINE=x86_64 \
		KCONFIG_CONFIG=.config KBUILD_BUILD_USER=scxd KBUILD_BUILD_HOST=lab \
		"$dtree/scripts/package/mkdebian") >&2 || die "scripts/package/mkdebian failed"
	version=$(dpkg-parsechangelog -l "$kbuild/debian/changelog" -S Version)
	[ "$version" = "$pkgver" ] || die "debian/changelog says version $version, not $pkgver"
	log "distro: release $krelease (make kernelrelease), version $version (bindeb-pkg's debian/changelog)"
	# the -dbg package is left out by the build profile, linux-libc-dev
	# after the build (see below)
	sed -n 's/^Package: //p' "$kbuild/debian/control" | grep -v -e '-dbg$' -e '^linux-libc-dev$' |
		while read -r p; do log "distro: would build ${p}_${version}_amd64.deb"; done
	if [ "$print_env" = 1 ]; then
		printf "KRELEASE='%s'\nPKGVERSION='%s'\nFLAVOUR='%s'\n" "$krelease" "$pkgver" "$flavour"
	fi
}

scxd_build_distro() {
	local dtree=$ksrc-distro kbuild=$cache/build/$variant debs=$cache/build/$variant.debs
	local flavour base pkgver krelease key t
	local -a kmake pkgenv

	case $variant in
	distro) flavour=cloud-amd64 ;;
	distro-generic) flavour=amd64 ;;
	esac

	need_pkgs time
	scxd_distro_worktree "$dtree"

	# From here on only this variant's files are touched: let the lab's
	# builds run, and keep other distro builds out.
	exec 9>"$cache/.build-distro.lock"
	if ! flock -n 9; then
		# a test asking for a finished build does not wait an hour for one
		[ $cached_only = 0 ] || { log "distro: a distro build is running (--cached)"; exit 3; }
		log "distro: waiting for another distro build to finish"
		flock 9
	fi

	mkdir -p "$kbuild"
	base=$kbuild/debian.config
	[ -s "$base" ] && [ "$base" -nt "$cfgdeb" ] || scxd_distro_base_config "$base" "$flavour" ||
		die "no config.amd64_none_$flavour in $cfgdeb"

	pkgver=$kver+scxd$serial
	# 6.12.N-scxd<serial>-<flavour>, beside Debian's 6.12.N+deb12-<flavour>
	# and every other serial's (not "localversion*": scripts/setlocalversion
	# would append such a file of the build directory to the release)
	printf 'CONFIG_LOCALVERSION="-scxd%s-%s"\n' "$serial" "$flavour" > "$kbuild/release.config"
	fragments+=("$kbuild/release.config")
	krelease=${kver%%-*}-scxd$serial-$flavour
	key=$( (echo "$kver $kernel_hash $pkgver"; cat "$base" "${fragments[@]}";
		sed -n '/^[[:space:]]*# --- packaging recipe/,/^[[:space:]]*# --- end of packaging recipe/p' "$repo/kernel/distro.sh") |
		sha256sum | cut -c1-16)

	export CCACHE_DIR=${CCACHE_DIR:-$cache/ccache}
	# LOCALVERSION set (empty): no "+" for a tree that is not at a tag
	kmake=(env LOCALVERSION= make -C "$dtree" O="$kbuild" -j"$jobs" CC="ccache gcc" HOSTCC="ccache gcc"
		KBUILD_BUILD_USER=scxd KBUILD_BUILD_HOST=lab LOCALVERSION=)

	# --- packaging recipe (part of the key)
	# bindeb-pkg's own packaging (scripts/package/): linux-image,
	# linux-headers and linux-libc-dev, no -dbg package (the build
	# profile); Maintainer as in debian/control; the .debs land in the
	# build directory's parent and are moved to $debs
	pkgenv=(KDEB_PKGVERSION="$pkgver" KDEB_SOURCENAME=linux-scxd
		KDEB_CHANGELOG_DIST=bookworm DEBFULLNAME="scxd developers" DEBEMAIL=scxd@scxd.invalid
		DPKG_FLAGS="-Ppkg.linux-scxd.nokerneldbg")
	# --- end of packaging recipe

	if [ $config_only = 1 ]; then
		scxd_distro_config "$dtree" "$kbuild" "$base" "$flavour"
		scxd_distro_show_packaging "$kbuild" "$dtree"
		return
	fi

	if [ "$(cat "$kbuild/.scxd-key" 2>/dev/null)" != "$key" ] ||
	   [ ! -f "$debs/linux-image-${krelease}_${pkgver}_amd64.deb" ]; then
		[ $cached_only = 0 ] || { log "distro: linux-image-$krelease $pkgver not built or out of date (--cached)"; exit 3; }
		log "distro: building linux-image-$krelease $pkgver (key $key) in $kbuild"
		rm -f "$kbuild/.scxd-key"
		scxd_distro_config "$dtree" "$kbuild" "$base" "$flavour"

		rm -rf "$debs" "$cache/build/"*"_${pkgver}_"*
		t=$kbuild/make.time
		scxd_logged_make "$variant kernel" "$kbuild/build.log" "$kbuild.steps" "$default_steps" \
			/usr/bin/time -v -o "$t" env "${pkgenv[@]}" "${kmake[@]}" bindeb-pkg ||
			die "$variant kernel build failed; full output: $kbuild/build.log"
		log "distro: make bindeb-pkg: wall $(sed -n 's/.*Elapsed (wall clock) time.*: //p' "$t"), CPU $(awk -F': ' '/User time|System time/ {s += $2} END {printf "%dm%02ds", s / 60, s % 60}' "$t") (user+sys), at most $(awk -F': ' '/Maximum resident/ {print int($2 / 1024)}' "$t") MiB resident"
		mkdir -p "$debs"
		mv "$cache/build/"*"_${pkgver}_"* "$debs/"
		# linux-libc-dev would replace the system's own C headers: not ours to ship
		rm -f "$debs"/linux-libc-dev_*
		[ -f "$debs/linux-image-${krelease}_${pkgver}_amd64.deb" ] ||
			die "bindeb-pkg made no linux-image-${krelease}_${pkgver}_amd64.deb (log: $kbuild/build.log)"
		echo "$key" > "$kbuild/.scxd-key"
	fi

	cat > "$debs/distro.env" <<ENV
FLAVOUR='$flavour'
KVER='$kver'
KRELEASE='$krelease'
PKGVERSION='$pkgver'
IMAGE_DEB='$debs/linux-image-${krelease}_${pkgver}_amd64.deb'
HEADERS_DEB='$debs/linux-headers-${krelease}_${pkgver}_amd64.deb'
KBUILD='$kbuild'
ENV
	if [ "$print_env" = 1 ]; then
		cat "$debs/distro.env"
	else
		local d
		for d in "$debs"/linux-*.deb; do log "distro: $(basename "$d") ($(du -h "$d" | cut -f1))"; done
		log "ready: $debs/distro.env"
	fi
}
