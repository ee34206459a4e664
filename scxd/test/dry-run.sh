#!/bin/bash
# scxd --dry-run against a fake cgroup tree, sysfs and state directory:
# the daemon's own reading code (cgroup walk, sysfs, records) feeding the
# planner, with no kernel involved. Glue for meson test.
# Usage: dry-run.sh SCXD SCHED_DIR POLICY
set -eu
scxd=$1 sched_dir=$2 policy=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/cg/scxd.slice/scxd-demo.slice/web.scope" "$tmp/cg/scxd.slice/scxd-demo.slice/batch.scope" \
	"$tmp/cg/workload/a" "$tmp/cg/system.slice" "$tmp/sys/root" "$tmp/pins" "$tmp/state"
run() {
	"$scxd" --dry-run --no-strict-modes --kernel-api="$1" --policy "$policy" \
		--sched-dir "$sched_dir" --cgroup-root "$tmp/cg" --sysfs "$tmp/sys" \
		--pin-dir "$tmp/pins" --state-dir "$tmp/state" 2>&1 | grep -v ": policy loaded, "
}
expect() {
	if [ "$1" != "$2" ]; then
		printf 'FAILED: %s\n--- got:\n%s\n--- expected:\n%s\n' "$3" "$1" "$2"
		exit 1
	fi
	echo "ok: $3"
}

got=$(run cpu)
expect "$got" "attach / wparent (new)
attach /workload/a lat (new)
attach /scxd.slice/scxd-demo.slice/batch.scope fifo (new)
attach /scxd.slice/scxd-demo.slice/web.scope vtime (new)" "nothing attached: parents first, the literal beats the glob"

got=$(run none)
expect "$got" "scxd: ${policy}: 3 cgroup(s) match child entries, but the kernel has no sched_ext; they are left out
attach / wparent (new)" "no sched_ext: the children are left out, said once"

# sched_ext without sub-schedulers: a policy with children is refused,
# each child entry named at its line with the kernel's limit
got=$(run root-only)
expect "$(grep -c ': a sub-scheduler, but the kernel has sched_ext without sub-schedulers (root only)$' <<<"$got") $(grep -c '^attach' <<<"$got")" "3 0" \
	"root-only kernel: the 3 child entries refused, nothing planned"
expect "$(grep -o '^scxd: [^ ]*:[0-9]*:[0-9]*: entries\[3\] "/workload/\*" (lat)' <<<"$got")" \
	"scxd: ${policy}:23:17: entries[3] \"/workload/*\" (lat)" "root-only kernel: the refusal names the file, line and entry"

# Adopt: the root and web.scope are attached by a previous scxd: the root
# by this one (pin named by the path's hash, JSON record), web.scope by
# one before it (pin and text record under the %-escaped path).
pin_name() { printf %s "$1" | sha256sum | cut -c1-32; }
root_pin=$(pin_name /) web_pin=scxd%2eslice%2fscxd-demo%2eslice%2fweb%2escope
echo wparent > "$tmp/sys/root/ops"
echo enabled > "$tmp/sys/state"
web_id=$(stat -c %i "$tmp/cg/scxd.slice/scxd-demo.slice/web.scope")
mkdir -p "$tmp/sys/root/sub/sub-$web_id" "$tmp/pins/$root_pin" "$tmp/pins/$web_pin" "$tmp/state/nodes"
echo vtime > "$tmp/sys/root/sub/sub-$web_id/ops"
touch "$tmp/pins/$root_pin/link" "$tmp/pins/$web_pin/link"
printf '{"version": 1, "cgroup": "/", "scheduler": "wparent", "ops": "wparent", "cgid": 1}\n' \
	> "$tmp/state/nodes/$root_pin.json"
printf 'cgroup /scxd.slice/scxd-demo.slice/web.scope\nscheduler vtime\nops vtime\ncgid %s\n' "$web_id" \
	> "$tmp/state/nodes/$web_pin"
got=$(run cpu)
expect "$got" "attach /workload/a lat (new)
attach /scxd.slice/scxd-demo.slice/batch.scope fifo (new)" "adopted nodes are left alone (this scxd's and the previous version's)"

# A foreign scheduler on a cgroup the policy does not want is not touched.
a_id=$(stat -c %i "$tmp/cg/system.slice")
mkdir -p "$tmp/sys/root/sub/sub-$a_id"
echo simple > "$tmp/sys/root/sub/sub-$a_id/ops"
got=$(run cpu)
expect "$got" "attach /workload/a lat (new)
attach /scxd.slice/scxd-demo.slice/batch.scope fifo (new)" "foreign schedulers are not detached"

# web.scope's scheduler exited (gone from sysfs): it is to be attached again.
rm -rf "$tmp/sys/root/sub/sub-$web_id"
got=$(run cpu)
expect "$got" "attach /workload/a lat (new)
attach /scxd.slice/scxd-demo.slice/batch.scope fifo (new)
attach /scxd.slice/scxd-demo.slice/web.scope vtime (new)" "an exited child is reattached"
# The records are lost (runtime directory gone) but the pins remain: the
# pinned schedulers are still scxd's, found by hashing (or escaping) the
# paths of the cgroups that exist, and replaced rather than left as foreign.
mkdir -p "$tmp/sys/root/sub/sub-$web_id"
echo vtime > "$tmp/sys/root/sub/sub-$web_id/ops"
rm -rf "$tmp/state/nodes"
got=$(run cpu)
expect "$got" "detach /scxd.slice/scxd-demo.slice/web.scope (unrecorded) (changed)
detach / (unrecorded) (changed)
attach / wparent (changed)
attach /workload/a lat (new)
attach /scxd.slice/scxd-demo.slice/batch.scope fifo (new)
attach /scxd.slice/scxd-demo.slice/web.scope vtime (changed)" "pins without records are adopted and replaced"
# A root scheduler scxd did not attach blocks the whole tree: nothing is
# planned below it, and one line says so.
rm -rf "$tmp/pins" "$tmp/state/nodes"
echo simple > "$tmp/sys/root/ops"
got=$(run cpu)
expect "$got" "scxd: /: runs simple, which scxd did not attach; not replacing it with wparent, nor attaching the 3 scheduler(s) the policy wants below it, until it is gone" \
	"a foreign root blocks its subtree"
echo "dry-run: 9 passed, 0 failed"
