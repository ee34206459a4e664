#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The scxd package is the same wherever it is built: qemu/build-deb builds
# it twice, from copies of the source in two directories of different
# names and depths, against the same kernel envs, and the two .debs must
# have the same contents. Compared member by member: each file's path,
# mode, owner, size, link target and sha256 in data.tar and control.tar,
# and then the .deb files themselves (dpkg-buildpackage takes every
# timestamp from debian/changelog, so they should match byte for byte).
# With diffoscope installed, a difference is shown with it.
#
#   tests/reproducible-deb.sh [WORK_DIR [ENV_FILE [CID_ENV_FILE]]]
#
# WORK_DIR defaults to a temporary directory (removed afterwards); the
# envs are qemu/build-deb's. The packages' own test run is skipped
# (DEB_BUILD_OPTIONS=nocheck): it does not change what is shipped.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-}
if [ -z "$work" ]; then
	work=$(mktemp -d "${TMPDIR:-/tmp}/scxd-repro.XXXXXX")
	trap 'rm -rf "$work"' EXIT
fi
shift || true
name=deb/reproducible

# two build directories that differ in name and depth
a=$work/a
b=$work/second-build/in/a/deeper/directory
rm -rf "$a" "$b" && mkdir -p "$(dirname "$a")" "$(dirname "$b")"
s=$(date +%s)
for d in "$a" "$b"; do
	if ! DEB_BUILD_OPTIONS=nocheck bash "$repo/qemu/build-deb" "$d" "$@" >/dev/null 2>"$d.log"; then
		tail -5 "$d.log"
		echo "not ok - $name (qemu/build-deb $d failed; log $d.log)"
		exit 1
	fi
done
t=$(($(date +%s) - s))
deb_a=$(ls "$a"/scxd_*.deb) deb_b=$(ls "$b"/scxd_*.deb)

# one line per member: type, mode, owner, size, target, sha256, path
# (as dpkg-deb unpacks it; the members' times are compared with the .debs)
listing() {
	local deb=$1 part=$2 x
	x=$(mktemp -d)
	if [ "$part" = data ]; then dpkg-deb -x "$deb" "$x"; else dpkg-deb -e "$deb" "$x"; fi
	(cd "$x" && find . -printf '%p|%y|%m|%u:%g|%s|%l\n' | LC_ALL=C sort |
		while IFS='|' read -r path type mode owner size target; do
			[ "$type" = f ] && sum=$(sha256sum "$path" | cut -c1-16) || sum=-
			echo "$type $mode $owner $size ${target:--} $sum $path"
		done)
	rm -rf "$x"
}
bad=
for part in data control; do
	listing "$deb_a" $part > "$work/$part.a"
	listing "$deb_b" $part > "$work/$part.b"
	if ! cmp -s "$work/$part.a" "$work/$part.b"; then
		bad="$bad $part.tar"
		diff "$work/$part.a" "$work/$part.b" | head -20
	fi
done
n=$(wc -l < "$work/data.a")
if [ -n "$bad" ]; then
	command -v diffoscope >/dev/null && diffoscope --text - "$deb_a" "$deb_b" | head -60
	echo "not ok - $name (${bad# } differ between $a and $b)"
	exit 1
fi
if cmp -s "$deb_a" "$deb_b"; then
	same="the .deb files identical, sha256 $(sha256sum "$deb_a" | cut -c1-16)"
else
	# the contents are what matter; say what else differs
	same="the .deb files differ in their ar/tar framing only"
fi
echo "ok - $name ($(basename "$deb_a") built in $a and $b: $n data.tar members and control.tar the same, $same; ${t} s)"
