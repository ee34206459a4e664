#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The distro kernel packages' serial (kernel/package-serial): current with
# this checkout's series and fragments, never lower than a committed one,
# and, on a copy of kernel/, the rule itself: a change to a kernel patch or
# a distro fragment fails the check until the serial is bumped, the bumped
# version sorts after the old one, and a selftest's hunk or a changelog
# alone needs no bump. Plain userspace, a second or two (meson test).
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
fails=0
ok() { echo "ok - $*"; }
nok() { echo "not ok - $*"; fails=$((fails + 1)); }

# this checkout
if out=$(bash "$repo/kernel/package-serial.sh" --history 2>&1); then
	ok "current (serial $(sed -n 's/^serial //p' "$repo/kernel/package-serial"), no committed serial went backwards)"
else
	nok "current: $out"
fi

# the rule, on a copy
t=$(mktemp -d) && trap 'rm -rf "$t"' EXIT
mkdir -p "$t/kernel"
cp -r "$repo/kernel/series" "$repo/kernel/patches" "$repo/kernel/config" \
	"$repo/kernel/package-serial" "$repo/kernel/package-serial.sh" "$t/kernel/"
k=$t/kernel
ps() { bash "$k/package-serial.sh" "$@"; }
serial() { sed -n 's/^serial //p' "$k/package-serial"; }
patches() { grep -v '^[[:space:]]*\(#\|$\)' "$k/series"; }

# the first patch with a hunk outside tools/testing, and a selftests-only one
kpatch= spatch=
for p in $(patches); do
	if grep '^diff --git ' "$k/patches/$p" | grep -qv ' a/tools/testing/'; then
		[ -n "$kpatch" ] || kpatch=$p
	else
		[ -n "$spatch" ] || spatch=$p
	fi
done
[ -n "$kpatch" ] && [ -n "$spatch" ] || { nok "no kernel patch or no selftests-only patch in kernel/series"; exit 1; }

s0=$(serial)
# a kernel hunk's added line changes
sed -i '0,/^diff --git a\/[^t]/b; 0,/^+[^+]/s/^+\([^+].*\)/+\1 \/* changed *\//' "$k/patches/$kpatch"
if out=$(ps --check 2>&1); then
	nok "kernel-patch-needs-bump ($kpatch changed, the check passed)"
elif echo "$out" | grep -q 'kernel/package-serial.sh --bump'; then
	ok "kernel-patch-needs-bump ($kpatch changed: the check fails and says to run 'kernel/package-serial.sh --bump')"
else
	nok "kernel-patch-needs-bump (failed without saying how to bump: $out)"
fi
ps --bump >/dev/null
s1=$(serial)
v0=6.12.118-1~deb12u1+scxd$s0 v1=6.12.118-1~deb12u1+scxd$s1
if ps --check && dpkg --compare-versions "$v1" gt "$v0"; then
	ok "bump-increases-version ($v0 -> $v1, dpkg: greater; check passes)"
else
	nok "bump-increases-version (serial $s0 -> $s1)"
fi

# a selftest's hunk, a changelog: the same kernel, no bump
sed -i '0,/^+[^+]/s/^+\([^+].*\)/+\1 \/* changed *\//' "$k/patches/$spatch"
sed -i '0,/^Subject: /s/^Subject: .*/& (reworded)/' "$k/patches/$kpatch"
if ps --check 2>/dev/null; then
	ok "selftest-or-changelog-needs-no-bump ($spatch's hunk, $kpatch's subject)"
else
	nok "selftest-or-changelog-needs-no-bump ($spatch's hunk or $kpatch's subject made the check fail)"
fi

# a distro fragment
echo 'CONFIG_SCHED_CORE=y' >> "$k/config/distro.config"
ps --check 2>/dev/null && nok "fragment-needs-bump (distro.config changed, the check passed)" ||
	ok "fragment-needs-bump (a line added to kernel/config/distro.config)"

# never at or below what was published
sed -i 's/^serial .*/serial 59/' "$k/package-serial"
out=$(ps --check 2>&1) && nok "serial-above-published (59 accepted)" ||
	ok "serial-above-published (59 refused: $(echo "$out" | sed 's/.*: //'))"

exit $((fails > 0))
