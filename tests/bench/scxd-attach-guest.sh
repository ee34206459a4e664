#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Inside the systemd guest (tests/bench/scxd-attach boots it): scxd's attach
# latency against a raw libbpf loader of the same object, a burst of
# cgroups (BURST: a size or a comma-separated list of sizes), and scxd's
# footprint. Prints figures, judges nothing.
#
#   sh scxd-attach-guest.sh [RUNS [BURST[,BURST...]]]
#   sh scxd-attach-guest.sh split [ROUNDS [SIZES]]     where the attach goes
#                                                     (scxd-attach-split.c)
if [ "${1:-}" = split ]; then
	rounds=${2:-6}
	sizes=${3:-50,200}
	objdir=$(dirname "$(find /usr/lib -name vtime.bpf.o -path '*scxd*' | head -1)")
	i=0
	while [ "$(systemctl is-active scxd.service)" != active ] && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
	pid=$(systemctl show -p MainPID --value scxd.service)
	printf 'BENCH-KERNEL\t%s %s\n' "$(uname -r)" "$(uname -v)"
	echo "bench: $(nproc) vCPUs; scxd pid $pid: $(tr '\0' ' ' </proc/"$pid"/cmdline)"
	printf '{ "version": 1, "entries": [\n  { "cgroup": "/", "scheduler": "wparent" },\n  { "cgroup": "/bench/*", "scheduler": "vtime" } ] }\n' >/etc/scxd/policy.json
	kill -HUP "$pid"
	i=0
	while [ "$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)" != scxd_wparent ] && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
	echo "bench: root $(cat /sys/kernel/sched_ext/root/ops); children: vtime ($objdir/vtime.bpf.o), by scxd in /bench, by sched-run in /rawbench"
	set -- --dir /sys/fs/cgroup/bench --raw-dir /sys/fs/cgroup/rawbench --frozen /sys/fs/cgroup/bench-loaders \
		-- sched-run -T -c {} "$objdir/vtime.bpf.o"
	/payload/scxd-attach-split child --rounds "$rounds" --per-round 5 "$@"
	/payload/scxd-attach-split burst --rounds "$rounds" --sizes "$sizes" "$@"
	new=$(systemctl show -p MainPID --value scxd.service)
	[ "$new" = "$pid" ] || echo "bench: scxd was restarted (pid $pid -> $new)"
	echo "== scxd's warnings over the run, by kind"
	journalctl -u scxd.service -p warning --no-pager -o cat |
		sed -e 's|\(/[^/ :]*\)/[^ :]*|\1/*|g' -e 's/[0-9][0-9.]*/N/g' | sort | uniq -c | sort -rn | head -8
	exit 0
fi
runs=${1:-20}
burst=${2:-200}
at=/payload/scxd-attach-time
scx=/sys/kernel/sched_ext
objdir=$(dirname "$(find /usr/lib -name vtime.bpf.o -path '*scxd*' | head -1)")
policy=/etc/scxd/policy.json
median() { sed -n 's/.* median \([0-9.]*\) ms.*/\1/p' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "n/a" }'; }
reload() { install -m 0644 "$1" $policy; kill -HUP "$pid"; }
# scxd's pid now; says so, with systemd's reason, when it was restarted
refresh_pid() {
	new=$(systemctl show -p MainPID --value scxd.service)
	[ "$new" = "$pid" ] && return 0
	echo "bench: scxd was restarted (pid $pid -> $new, NRestarts $(systemctl show -p NRestarts --value scxd.service)):"
	journalctl -u scxd.service --no-pager -o cat | grep -i -m5 'watchdog\|killed\|dumped\|exited\|failed with' | sed 's/^/  /'
	pid=$new
}
wait_state() {
	i=0
	while [ "$(cat $scx/state)" != "$1" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
}

i=0
while [ "$(systemctl is-active scxd.service)" != active ] && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
pid=$(systemctl show -p MainPID --value scxd.service)
echo "bench: $(uname -r), $(nproc) vCPUs, scxd pid $pid, objects in $objdir, $runs runs"

printf '{ "version": 1, "entries": [] }\n' > /run/off.json
printf '{ "version": 1, "entries": [ { "cgroup": "/", "scheduler": "vtime" } ] }\n' > /run/root.json
reload /run/off.json
wait_state disabled

echo "== root scheduler: exec/SIGHUP -> sched_ext enabled with scxd_vtime"
echo "(runs alternate: raw, scxd, raw, ...; scxd's time includes reading and validating the policy)"
$at root --runs "$runs" --ops scxd_vtime --scxd "$pid" --policy $policy --on /run/root.json --off /run/off.json \
	--raw -- sched-run "$objdir/vtime.bpf.o" > /run/root.out
grep -v ' run ' /run/root.out

echo "== scxd idle with the root attached and nothing changing"
reload /run/root.json
wait_state enabled
sleep 2
$at idle --pid "$pid" --seconds 10

# sub-schedulers: the kernel's BTF has sched_ext_ops.sub_cgroup_id (root/sub
# itself exists only while the root scheduler can host children)
if grep -qa sub_cgroup_id /sys/kernel/btf/vmlinux; then
	cat > /run/sub.json <<'EOF'
{ "version": 1, "entries": [
  { "cgroup": "/", "scheduler": "wparent" },
  { "cgroup": "/bench/*", "scheduler": "vtime" },
  { "cgroup": "/bench-burst/*", "scheduler": "vtime" } ] }
EOF
	reload /run/sub.json
	i=0
	while [ "$(cat $scx/root/ops 2>/dev/null)" != scxd_wparent ] && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
	echo "== child scheduler: mkdir -> sub-<cgid> under root/sub (root: $(cat $scx/root/ops))"
	$at child --runs "$runs" --dir /sys/fs/cgroup/bench > /run/cscxd.out
	$at child --runs "$runs" --dir /sys/fs/cgroup/rawbench --raw -- sched-run -c {} "$objdir/vtime.bpf.o" > /run/craw.out
	grep -v ' run ' /run/cscxd.out /run/craw.out | sed 's/^\/run\///'
	echo "child-attach: scxd/raw median ratio $(ratio "$(median /run/cscxd.out)" "$(median /run/craw.out)")"
	# BURST may be a list (200,1000): the sizes side by side in one boot
	for n in $(echo "$burst" | tr ',' ' '); do
		echo "== burst: $n matching cgroups at once"
		$at burst --count "$n" --dir /sys/fs/cgroup/bench-burst --pid "$pid"
		refresh_pid
	done
	echo "== scxd with 50 attached children, idle"
	mkdir -p /sys/fs/cgroup/bench-burst
	for i in $(seq 1 50); do mkdir /sys/fs/cgroup/bench-burst/k$i; done
	sleep 10
	echo "children attached: $(find $scx/root/sub -type d -name 'sub-*' | wc -l)"
	refresh_pid
	$at idle --pid "$pid" --seconds 10
	for i in $(seq 1 50); do rmdir /sys/fs/cgroup/bench-burst/k$i; done
else
	burst=$(echo "$burst" | tr ',' '\n' | sort -n | tail -1)
	echo "== no sub_cgroup_id in the kernel's BTF: this kernel has no sub-schedulers; child attach, burst attach and 50 attached children need it"
	printf '{ "version": 1, "entries": [\n  { "cgroup": "/", "scheduler": "wparent" },\n  { "cgroup": "/bench-burst/*", "scheduler": "vtime" } ] }\n' > /run/sub.json
	if scxd --check /run/sub.json >/dev/null 2>&1; then
		reload /run/sub.json
		sleep 5
		echo "== what is measurable here: scxd following $burst matching cgroups made at once that it cannot attach"
		$at burst --count "$burst" --dir /sys/fs/cgroup/bench-burst --pid "$pid"
		mkdir -p /sys/fs/cgroup/bench-burst
		for i in $(seq 1 50); do mkdir /sys/fs/cgroup/bench-burst/k$i; done
		sleep 20
		echo "== scxd with 50 matching (unattachable) cgroups, idle"
		$at idle --pid "$pid" --seconds 10
		for i in $(seq 1 50); do rmdir /sys/fs/cgroup/bench-burst/k$i; done
		rmdir /sys/fs/cgroup/bench-burst
	fi
fi
echo "== scxdctl status"
scxdctl status | head -12
echo "== scxd's warnings over the run, by kind (numbers and cgroups below the first level folded)"
journalctl -u scxd.service -p warning --no-pager -o cat |
	sed -e 's|\(/[^/ :]*\)/[^ :]*|\1/*|g' -e 's/[0-9][0-9.]*/N/g' | sort | uniq -c | sort -rn | head -8
