#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The distro kernel packages' serial (kernel/build.sh --variant distro*):
# their version is <Debian's version>+scxd<serial> and their release
# 6.12.N-scxd<serial>-<flavour>, so that every change to what goes into
# the kernel gives packages apt upgrades to, installed beside the running
# kernel rather than over its modules.
#
#   kernel/package-serial.sh [--check]   fail if the kernel input changed
#                                        since the serial was bumped
#   kernel/package-serial.sh --bump      bump it (commit the file with the
#                                        change that needed it)
#   kernel/package-serial.sh --serial    print it (after --check's test)
#   kernel/package-serial.sh --history   also check that no committed
#                                        version of the file went backwards
#
# kernel/package-serial holds the serial and the hash of the input it was
# bumped for: the kernel/series' patches that change the kernel, less
# their selftests' hunks (a selftest fix builds the same kernel), and the
# distro config fragments (kernel/config/distro*.config). The commit
# messages of the patches are not part of it.
set -euo pipefail

kdir=$(cd "$(dirname "$0")" && pwd)
file=$kdir/package-serial
# The highest serial published before this file existed: the version
# counted the series' kernel patches (+scxd59, then +scxd41 and +scxd42
# once selftests were left out), so every serial here is above it.
published=59

die() { printf 'kernel/package-serial: %s\n' "$*" >&2; exit 1; }

# the input's hash: each kernel patch's diffs (from its first "diff --git"
# on), selftests' files aside, in series order, then the fragments
input_hash() {
	local p
	{
		grep -v '^[[:space:]]*\(#\|$\)' "$kdir/series" | while read -r p; do
			[ -f "$kdir/patches/$p" ] || { echo "missing $p"; continue; }
			# git's signature ("-- ", its version) ends the last diff
			awk '/^diff --git / { in_diff = 1; skip = ($3 ~ /^a\/tools\/testing\//) }
			     { keep[NR] = in_diff && !skip; line[NR] = $0 }
			     END { end = NR
				   for (i = NR; i > NR - 3 && i > 0; i--) if (line[i] == "-- ") end = i - 1
				   for (i = 1; i <= end; i++) if (keep[i]) print line[i] }' "$kdir/patches/$p"
		done
		for p in "$kdir"/config/distro*.config; do
			echo "fragment ${p##*/}"
			cat "$p"
		done
	} | sha256sum | cut -c1-16
}

field() { sed -n "s/^$1 //p" "${2:-$file}" | tail -1; }

serial=$(field serial)
hash=$(field hash)
[[ $serial =~ ^[0-9]+$ ]] || die "$file: no 'serial N' line"
[ "$serial" -gt $published ] ||
	die "$file: serial $serial is not above $published, the highest one published (apt would take it for a downgrade)"

history() {
	local repo prev=0 rev s
	repo=$(git -C "$kdir" rev-parse --show-toplevel 2>/dev/null) || { echo "kernel/package-serial: not a git checkout, history not checked" >&2; return 0; }
	# oldest first: every committed serial at least the one before it
	for rev in $(git -C "$repo" log --reverse --format=%H -- kernel/package-serial); do
		s=$(git -C "$repo" show "$rev:kernel/package-serial" 2>/dev/null | sed -n 's/^serial //p' | tail -1)
		[ -n "$s" ] || continue
		[ "$s" -ge "$prev" ] || die "commit ${rev:0:12} took the serial from $prev back to $s"
		prev=$s
	done
	[ "$serial" -ge "$prev" ] || die "serial $serial is below $prev, committed before"
}

check() {
	local now
	now=$(input_hash)
	[ "$now" = "$hash" ] && return 0
	cat >&2 <<EOF
kernel/package-serial: the kernel series or the distro config fragments
changed since serial $serial was bumped (hash $hash, now $now): kernel
packages built now would reuse version +scxd$serial for another kernel.
Bump it and commit kernel/package-serial with the change:
    bash kernel/package-serial.sh --bump
EOF
	return 1
}

case ${1:---check} in
--check) check ;;
--history) check && history ;;
--serial) check && echo "$serial" ;;
--bump)
	now=$(input_hash)
	[ "$now" != "$hash" ] || die "nothing changed since serial $serial was bumped"
	sed -i -e "s/^serial .*/serial $((serial + 1))/" -e "s/^hash .*/hash $now/" "$file"
	echo "kernel/package-serial: serial $serial -> $((serial + 1)) (hash $now)"
	;;
*) die "usage: $0 [--check | --history | --serial | --bump]" ;;
esac
