#!/bin/bash
# A burst of mkdirs right after their parent's, against scxd --dry-run
# --serve on a fake tree: the reconcile that finds the parent scans it,
# then adds its inotify watch; a child made in between reports no event
# and, unless scxd looks again once the watch is there, waits for the
# safety resync (minutes). Each round makes a parent and its children
# without pause; every child must be planned within a few seconds. The
# window is narrow, so there are several rounds. Glue for meson test.
# Usage: watch-race.sh SCXD SCHED_DIR [ROUNDS [CHILDREN]]
set -u
scxd=$1 sched_dir=$2 rounds=${3:-20} children=${4:-200}
. "$(dirname "$0")/lib.sh"
export LC_ALL=C

mkdir -p "$tmp/cg" "$tmp/sys/root" "$tmp/pins" "$tmp/state/nodes"
{
	printf '{"version": 1, "entries": [\n {"cgroup": "/", "scheduler": "wparent"}'
	for r in $(seq "$rounds"); do printf ',\n {"cgroup": "/burst%s/*", "scheduler": "fifo"}' "$r"; done
	printf '\n]}\n'
} > "$tmp/policy.json"
# / is attached already (adopted): a pin, a record, sysfs
pin=$(printf / | sha256sum | cut -c1-32)
mkdir -p "$tmp/pins/$pin"
touch "$tmp/pins/$pin/link"
echo wparent > "$tmp/sys/root/ops"
echo enabled > "$tmp/sys/state"
printf '{"version": 1, "cgroup": "/", "scheduler": "wparent", "ops": "wparent", "cgid": 1}\n' \
	> "$tmp/state/nodes/$pin.json"

serve_scxd "$scxd" -- --sub-sched=yes --policy "$tmp/policy.json" --sched-dir "$sched_dir" || exit 1
sleep 0.5

# the children of /burstR planned so far (a dry run plans them again on
# every reconcile whose scope covers them: count each once)
planned() { grep "^attach /burst$1/c[0-9]* fifo" "$tmp/scxd.out" | sort -u | wc -l; }
for r in $(seq "$rounds"); do
	mkdir "$tmp/cg/burst$r"
	for i in $(seq "$children"); do mkdir "$tmp/cg/burst$r/c$i"; done
	for _ in $(seq 60); do [ "$(planned "$r")" = "$children" ] && break; sleep 0.05; done
	n=$(planned "$r")
	if [ "$n" = "$children" ]; then
		ok "round $r: all $children children of /burst$r planned"
	else
		nok "round $r: $n of $children children of /burst$r planned 3 s after the burst"
	fi
done
kill -0 "$scxd_pid" 2>/dev/null || nok "scxd exited: $(tail -3 "$tmp/scxd.err")"

echo "watch-race: $passed passed, $failed failed"
[ $failed = 0 ]
