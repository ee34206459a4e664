# SPDX-License-Identifier: GPL-2.0
#
# Sourced by kernel/build.sh for --variant distro: the series built on
# Debian's own configuration of this kernel and packaged the Debian way.
#
#   base    config.amd64_none_cloud-amd64 from linux-config-6.12 (the same
#           Debian version as linux-source-6.12), as Debian built it
#   +       kernel/config/distro.config: sched_ext and what the series and
#           scxd need; olddefconfig settles the rest, and every option that
#           ends up different from Debian's is listed in
#           build/distro/config-vs-debian.diff
#   make    bindeb-pkg in its own worktree of the series (so an hour-long
#           build neither holds the lab's build lock nor sees a checkout
#           of the lab's tree change under it) into build/distro
#   out     build/distro.debs/linux-{image,headers}-<release>_<version>_amd64.deb
#           release 6.12.N-scxd-cloud-amd64 (the fragment's LOCALVERSION),
#           version <Debian's version>+scxd<patches in the series that
#           change the kernel>, so that it sorts after the Debian kernel it
#           is built from; a fix to a selftest alone changes neither the
#           version nor the key, and rebuilds nothing
#
# Uses build.sh's variables (cache, kver, ksrc, ktree, series_hash, kernel_hash,
# fragments, jobs, default_steps, print_env, cached_only) and its log, die, need_pkgs,
# kernel_patches, check_fragments and scxd_logged_make.

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

# the Debian config file for the cloud-amd64 flavour, uncompressed, to $1
scxd_distro_base_config() {
	dpkg-deb --fsys-tarfile "$cfgdeb" |
		tar -x --to-stdout ./usr/src/linux-config-6.12/config.amd64_none_cloud-amd64.xz |
		xz -d > "$1.tmp" && [ -s "$1.tmp" ] && mv "$1.tmp" "$1"
}

scxd_build_distro() {
	local dtree=$ksrc-distro kbuild=$cache/build/distro debs=$cache/build/distro.debs
	local base npatches pkgver krelease key t
	local -a kmake

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
	[ -s "$base" ] && [ "$base" -nt "$cfgdeb" ] || scxd_distro_base_config "$base" ||
		die "no config.amd64_none_cloud-amd64 in $cfgdeb"

	npatches=$(kernel_patches | wc -l)
	pkgver=$kver+scxd$npatches
	krelease=${kver%%-*}$(sed -n 's/^CONFIG_LOCALVERSION="\(.*\)"$/\1/p' "${fragments[@]}" | tail -1)
	key=$( (echo "$kver $kernel_hash $pkgver"; cat "$base" "${fragments[@]}";
		sed -n '/^[[:space:]]*# --- packaging recipe/,/^[[:space:]]*# --- end of packaging recipe/p' "$repo/kernel/distro.sh") |
		sha256sum | cut -c1-16)

	export CCACHE_DIR=${CCACHE_DIR:-$cache/ccache}
	# LOCALVERSION set (empty): no "+" for a tree that is not at a tag
	kmake=(env LOCALVERSION= make -C "$dtree" O="$kbuild" -j"$jobs" CC="ccache gcc" HOSTCC="ccache gcc"
		KBUILD_BUILD_USER=scxd KBUILD_BUILD_HOST=lab LOCALVERSION=)

	if [ "$(cat "$kbuild/.scxd-key" 2>/dev/null)" != "$key" ] ||
	   [ ! -f "$debs/linux-image-${krelease}_${pkgver}_amd64.deb" ]; then
		[ $cached_only = 0 ] || { log "distro: linux-image-$krelease $pkgver not built or out of date (--cached)"; exit 3; }
		log "distro: building linux-image-$krelease $pkgver (key $key) in $kbuild"
		rm -f "$kbuild/.scxd-key"
		cp "$base" "$kbuild/.config"
		"$dtree/scripts/kconfig/merge_config.sh" -m -O "$kbuild" "$kbuild/.config" "${fragments[@]}" >/dev/null
		"${kmake[@]}" -s olddefconfig >&2
		check_fragments "$kbuild/.config" "${fragments[@]}" ||
			die "config fragments for distro do not apply cleanly"
		"$dtree/scripts/diffconfig" "$base" "$kbuild/.config" > "$kbuild/config-vs-debian.diff" || true
		log "distro: $(wc -l < "$kbuild/config-vs-debian.diff") options differ from Debian's cloud-amd64 config ($kbuild/config-vs-debian.diff)"

		# --- packaging recipe (part of the key)
		# bindeb-pkg's own packaging (scripts/package/): linux-image,
		# linux-headers and linux-libc-dev, no -dbg package (the build
		# profile); Maintainer as in debian/control; the .debs land in
		# the build directory's parent and are moved to $debs
		rm -rf "$debs" "$cache/build/"*"_${pkgver}_"*
		t=$kbuild/make.time
		scxd_logged_make "distro kernel" "$kbuild/build.log" "$kbuild.steps" "$default_steps" \
			/usr/bin/time -v -o "$t" env KDEB_PKGVERSION="$pkgver" KDEB_SOURCENAME=linux-scxd \
			KDEB_CHANGELOG_DIST=bookworm DEBFULLNAME="scxd developers" DEBEMAIL=scxd@scxd.invalid \
			DPKG_FLAGS="-Ppkg.linux-scxd.nokerneldbg" "${kmake[@]}" bindeb-pkg ||
			die "distro kernel build failed; full output: $kbuild/build.log"
		# --- end of packaging recipe
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
