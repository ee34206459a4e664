#!/bin/bash
# Event-scoped reconciles against scxd --dry-run --serve on a fake tree:
# a cgroup event plans only its subtree (what a full reconcile would plan
# there), cgroups below which nothing can match are not watched, and a
# plan that must change an ancestor is made again in full. Glue for meson
# test.
# Usage: scoped.sh SCXD SCXDCTL SCHED_DIR
set -u
scxd=$1 ctl=$2 sched_dir=$3
. "$(dirname "$0")/lib.sh"
export LC_ALL=C

mkdir -p "$tmp/cg/work.slice" "$tmp/cg/system.slice/a" "$tmp/cg/other" "$tmp/sys/root" \
	"$tmp/pins" "$tmp/state/nodes"
cat > "$tmp/policy.json" <<'POLICY'
{"version": 1, "entries": [
 {"cgroup": "/", "scheduler": "wparent"},
 {"cgroup": "/work.slice", "scheduler": "wparent"},
 {"cgroup": "/work.slice/*.scope", "scheduler": "fifo"},
 {"cgroup": "/other/x", "scheduler": "lat"}
]}
POLICY
# / and /work.slice are attached already (adopted): a pin, a record, sysfs
pin_name() { printf %s "$1" | sha256sum | cut -c1-32; }
adopt() { # adopt CGROUP SCHED CGID SYSFS_DIR
	local pin; pin=$(pin_name "$1")
	mkdir -p "$tmp/pins/$pin" "$4"
	touch "$tmp/pins/$pin/link"
	echo "$2" > "$4/ops"
	printf '{"version": 1, "cgroup": "%s", "scheduler": "%s", "ops": "%s", "cgid": %s}\n' \
		"$1" "$2" "$2" "$3" > "$tmp/state/nodes/$pin.json"
}
echo enabled > "$tmp/sys/state"
adopt / wparent 1 "$tmp/sys/root"
work_id=$(stat -c %i "$tmp/cg/work.slice")
adopt /work.slice wparent "$work_id" "$tmp/sys/root/sub/sub-$work_id"

serve_scxd "$scxd" "$ctl" -- --sub-sched=yes --policy "$tmp/policy.json" --sched-dir "$sched_dir" ||
	exit 1
counter() { "$ctl" -S "$sock" --json status | grep -o "\"$1\": *[0-9]*" | grep -o '[0-9]*$'; }
settle() { sleep 0.5; }	# the debounce waits 50 ms of quiet

check "nothing to do at start (all adopted)" [ ! -s "$tmp/scxd.out" ]
watches=$(cat /proc/$scxd_pid/fdinfo/* 2>/dev/null | grep -c '^inotify wd:')
check "watches only /, /work.slice and /other, not /system.slice nor below (got $watches)" [ "$watches" = 3 ]

mkdir "$tmp/cg/work.slice/j1.scope"
settle
check "a new scope is planned alone: $(tr '\n' ';' < "$tmp/scxd.out")" \
	[ "$(cat "$tmp/scxd.out")" = "attach /work.slice/j1.scope fifo (new)" ]
check "and by a scoped reconcile ($(counter scoped_reconciles))" [ "$(counter scoped_reconciles)" = 1 ]

r0=$(counter reconciles) e0=$(counter cgroup_events)
mkdir "$tmp/cg/system.slice/a/b"
settle
check "no event below /system.slice, where nothing can match" \
	[ "$(counter cgroup_events)" = "$e0" ] && [ "$(counter reconciles)" = "$r0" ]

: > "$tmp/scxd.out"
rmdir "$tmp/cg/work.slice/j1.scope"
mkdir "$tmp/cg/other/x"
settle
check "an rmdir and a match elsewhere: only the new match planned: $(tr '\n' ';' < "$tmp/scxd.out")" \
	[ "$(cat "$tmp/scxd.out")" = "attach /other/x lat (new)" ]
check "scoped again ($(counter scoped_reconciles))" [ "$(counter scoped_reconciles)" -ge 2 ]

# /work.slice's scheduler is gone: the next event's plan must attach it
# first, outside the event's subtree, so that reconcile reads everything.
: > "$tmp/scxd.out"
s0=$(counter scoped_reconciles)
rm -rf "$tmp/sys/root/sub/sub-$work_id"
mkdir "$tmp/cg/work.slice/j2.scope"
settle
check "an ancestor to change: planned in full: $(tr '\n' ';' < "$tmp/scxd.out")" \
	grep -q "^attach /work.slice wparent" "$tmp/scxd.out"
check "the new scope too" grep -q "^attach /work.slice/j2.scope fifo (new)" "$tmp/scxd.out"
check "not counted as scoped" [ "$(counter scoped_reconciles)" = "$s0" ]

# What a scoped reconcile planned is what a one-shot full dry run plans.
full=$("$scxd" --dry-run --no-strict-modes --sub-sched=yes --policy "$tmp/policy.json" \
	--sched-dir "$sched_dir" --cgroup-root "$tmp/cg" --sysfs "$tmp/sys" \
	--pin-dir "$tmp/pins" --state-dir "$tmp/state" 2>/dev/null | sort)
check "same as a full dry run: $(echo "$full" | tr "\n" ";")" [ "$full" = "$(sort "$tmp/scxd.out")" ]

echo "scoped: $passed passed, $failed failed"
[ $failed = 0 ]
