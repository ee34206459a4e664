#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Inside the systemd guest: cgroup churn against scxd.service, then kill -9
# of scxd while the churn goes on. Prints ok/not ok/skip lines.
#
#   sh churn.sh [CYCLES [MAX_SECONDS [KILL_CYCLES [LIVE]]]]
#
# The policy puts a scheduler on every direct child of /churn, of
# /churn-down and of scxd-churn.slice (the parent-capable wparent at the
# root). While wparent cannot be loaded, it falls back to a root-only
# policy (vtime): the churn then checks the root and scxd's resources only.
#
# LIVE > 0 (tests/guest/systemd/run: SCXD_CHURN_LIVE) adds the churn with
# LIVE live matching cgroups: after the usual churn, LIVE cgroups made at
# once in /churn-live (the policy gives each vtime) and waited for until
# all are enabled; the same churn again (live-*: same guarantees, the live
# ones part of the tree that must match); the kill -9 churn with them
# still there (the restarted scxd adopts them all, links unchanged); then
# they are removed. Figures: their attach and detach time, scxd's RSS and
# fds before and after, its CPU per churn cycle with them and without.
cycles=${1:-10000}
max_seconds=${2:-600}
kill_cycles=${3:-1500}
live=${4:-0}
churn=/payload/churn
fails=0
ok() { echo "ok - guest/churn/$1"; }
nok() { echo "not ok - guest/churn/$1${2:+ ($2)}"; fails=$((fails + 1)); }
scx=/sys/kernel/sched_ext
mainpid() { systemctl show -p MainPID --value scxd.service; }
wait_active() {
	i=0
	while [ "$(systemctl is-active scxd.service)" != active ] && [ $i -lt "$1" ]; do sleep 1; i=$((i + 1)); done
}
# wait until root/ops is scxd_$1 (or $1); prints it
wait_root() {
	i=0
	while [ $i -lt "$2" ]; do
		o=$(cat $scx/root/ops 2>/dev/null)
		if [ "$(cat $scx/state)" = enabled ] && { [ "$o" = "scxd_$1" ] || [ "$o" = "$1" ]; }; then
			echo "$o"; return 0
		fi
		sleep 1; i=$((i + 1))
	done
	return 1
}

wait_active 60
live_entry=
[ "$live" -gt 0 ] && live_entry='    { "cgroup": "/churn-live/*", "scheduler": "vtime" },'
cat > /run/policy.sub.json <<EOF
{
  "version": 1,
  "comment": "churn test: a scheduler on every cgroup the churn makes",
  "entries": [
    { "cgroup": "/", "scheduler": "wparent" },
$live_entry
    { "cgroup": "/churn/*", "scheduler": "vtime" },
    { "cgroup": "/churn-down/*", "scheduler": "vtime" },
    { "cgroup": "/scxd-churn.slice/*", "scheduler": "fifo" }
  ]
}
EOF
cat > /run/policy.root.json <<'EOF'
{
  "version": 1,
  "comment": "churn test without a loadable parent: the root alone",
  "entries": [ { "cgroup": "/", "scheduler": "vtime" } ]
}
EOF
install -m 0644 /run/policy.sub.json /etc/scxd/policy.json
systemctl reload scxd.service
if ops=$(wait_root wparent 30); then
	ok "policy (wparent at the root, children on /churn/*, /churn-down/*, /scxd-churn.slice/*)"
else
	echo "skip - guest/churn/parent-policy (wparent did not load within 30 s: $(scxdctl status 2>&1 | awk '$1 == "/" { $1 = ""; print; exit }' | cut -c1-200); using a vtime root alone)"
	install -m 0644 /run/policy.root.json /etc/scxd/policy.json
	systemctl reload scxd.service
	if ops=$(wait_root vtime 30); then
		ok "policy (vtime at the root alone)"
	else
		nok policy "no root scheduler after 30 s: state $(cat $scx/state), ops '$(cat $scx/root/ops 2>/dev/null)'"
		scxdctl status
		exit 1
	fi
fi

# --- churn ----------------------------------------------------------------------
pid=$(mainpid)
t0=$(date +%s)
$churn run --cycles "$cycles" --max-seconds "$max_seconds" --root-ops "$ops" --scxd-pid "$pid" \
	--dir churn --slice scxd-churn.slice || {
	fails=$((fails + $?))
	echo "--- scxd's open files after the churn (count, target)"
	ls -l /proc/"$pid"/fd | awk 'NR > 1 { sub(/:\[[0-9]+\]$/, ":[...]", $NF); print $NF }' | sort | uniq -c
	echo "--- sched_ext sysfs after the churn"
	find $scx -maxdepth 6 -type d -name 'sub-*' | head -20
}
echo "churn: $(($(date +%s) - t0)) s for $cycles cycles"
[ "$(mainpid)" = "$pid" ] && [ "$(systemctl show -p NRestarts --value scxd.service)" = 0 ] &&
	ok "scxd-survives-churn (pid $pid, NRestarts 0)" ||
	nok scxd-survives-churn "pid $pid -> $(mainpid), NRestarts $(systemctl show -p NRestarts --value scxd.service)"

# --- the churn with $live live matching cgroups ------------------------------------
# the scxd-rss-fds-steady line's CPU per cycle
per_cycle() { sed -n 's/.*scxd-rss-fds-steady.* \([0-9.]*\) ms per cycle.*/\1/p' "$1" | head -1; }
if [ "$live" -gt 0 ] && [ "$ops" = scxd_wparent ]; then
	# the reference: the same churn right before the live cgroups come,
	# its output kept for scxd's CPU per cycle
	$churn run --cycles "$cycles" --max-seconds "$max_seconds" --root-ops "$ops" --scxd-pid "$pid" \
		--dir churn --slice scxd-churn.slice --label ref- > /run/churn-ref.out 2>&1 ||
		fails=$((fails + $?))
	sed -n '/^\(ok\|not ok\|skip\) - /p' /run/churn-ref.out
	$churn populate --count "$live" --ops scxd_vtime --dir churn-live --scxd-pid "$pid" || fails=$((fails + 1))
	t0=$(date +%s)
	$churn run --cycles "$cycles" --max-seconds "$max_seconds" --root-ops "$ops" --scxd-pid "$pid" \
		--dir churn --slice scxd-churn.slice --also churn-live --label live- > /run/churn-live.out 2>&1 ||
		fails=$((fails + $?))
	sed -n '/^\(ok\|not ok\|skip\) - /p' /run/churn-live.out
	grep -v '^\(ok\|not ok\|skip\) - \|^churn: [0-9]* cycles' /run/churn-live.out | tail -5
	echo "churn: $(($(date +%s) - t0)) s for $cycles cycles with $live live cgroups"
	# A reconcile after a cgroup event touches only the subtree the event
	# concerns: scxd's CPU per churn cycle must not grow with the live
	# cgroups elsewhere. A full rescan per event would cost about
	# $live nodes' worth each time (hundreds of times more on the host,
	# tests/bench/scxd-host); 3x leaves room for TCG's noise.
	ref=$(per_cycle /run/churn-ref.out)
	with=$(per_cycle /run/churn-live.out)
	r=$(awk -v a="$with" -v b="$ref" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "n/a" }')
	if [ "$r" != n/a ] && awk -v r="$r" 'BEGIN { exit !(r <= 3) }'; then
		ok "live-cpu-per-cycle (scxd CPU per churn cycle: ${with:-?} ms with $live live cgroups, ${ref:-?} ms without, ratio $r, at most 3)"
	else
		nok live-cpu-per-cycle "scxd CPU per churn cycle: ${with:-?} ms with $live live cgroups, ${ref:-?} ms without, ratio $r, at most 3"
	fi
	[ "$(mainpid)" = "$pid" ] && [ "$(systemctl show -p NRestarts --value scxd.service)" = 0 ] &&
		ok "live-scxd-survives-churn (pid $pid, NRestarts 0)" ||
		nok live-scxd-survives-churn "pid $pid -> $(mainpid), NRestarts $(systemctl show -p NRestarts --value scxd.service)"
elif [ "$live" -gt 0 ]; then
	echo "skip - guest/churn/live (the churn with $live live cgroups needs wparent at the root; root ops $ops)"
	live=0
fi

# --- kill -9 under churn ---------------------------------------------------------
seq0=$(cat $scx/enable_seq)
# the links of nodes the churn does not touch (the root, the live
# cgroups, what the policy keeps); a pin is named by a hash, its record
# says which cgroup it is on (read in one pass: there can be a thousand)
stable_links() {
	grep -H '^ *"cgroup": ' /run/scxd/nodes/*.json 2>/dev/null |
		sed 's|^/run/scxd/nodes/\([^/]*\)\.json: *"cgroup": "\(.*\)",\{0,1\}$|\1 \2|' > /run/pin-cgroups
	$churn links | awk 'BEGIN { while ((getline l < "/run/pin-cgroups") > 0) { split(l, f, " "); cg[f[1]] = f[2] } }
		{ c = cg[$1] } c ~ /^\/(churn|churn-down)\// || c ~ /^\/scxd-churn/ { next } { print }' | sort
}
links0=$(stable_links)
restarts0=$(systemctl show -p NRestarts --value scxd.service)
mkdir -p /sys/fs/cgroup/churn-down
$churn run --cycles "$kill_cycles" --max-seconds "$max_seconds" --root-ops "$ops" \
	--dir churn --slice scxd-churn.slice --also churn-down --label kill9- > /run/churn-kill9.out 2>&1 &
bg=$!
sleep 3
t_kill=$(date +%s)
systemctl kill -s KILL scxd.service
# cgroups created while scxd is down
for i in 1 2 3 4 5; do mkdir /sys/fs/cgroup/churn-down/d$i; done
i=0
while [ "$(systemctl show -p NRestarts --value scxd.service)" = "$restarts0" ] && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
wait_active 60
t_up=$(($(date +%s) - t_kill))
wait $bg
kill_rc=$?
sed -n '/^\(ok\|not ok\|skip\) - /p' /run/churn-kill9.out
if [ $kill_rc != 0 ]; then
	fails=$((fails + 1))
	grep -v '^\(ok\|not ok\|skip\) - ' /run/churn-kill9.out | tail -5
	echo "--- pins, records and sub-schedulers after the kill -9 churn"
	echo "pins: $(ls /sys/fs/bpf/scxd | tr '\n' ' ')"
	echo "records: $(ls /run/scxd/nodes 2>/dev/null | tr '\n' ' ')"
	echo "sysfs: $(find $scx -type d -name 'sub-*' | sed 's|.*/||' | tr '\n' ' ')"
fi
seq1=$(cat $scx/enable_seq)
links1=$(stable_links)
restarts1=$(systemctl show -p NRestarts --value scxd.service)
if [ "$restarts1" -gt "$restarts0" ] && [ "$seq1" = "$seq0" ] && [ "$links1" = "$links0" ] &&
   [ -n "$links0" ] && [ "$(cat $scx/root/ops)" = "$ops" ]; then
	n_links=$(echo "$links0" | wc -l)
	[ "$n_links" -le 5 ] && shown=$(echo $links0) || shown="$n_links links, the first $(echo "$links0" | head -1)"
	ok "kill9-restart-adopts (NRestarts $restarts0->$restarts1, back in ${t_up}s, enable_seq $seq0->$seq1, links unchanged: $shown)"
else
	nok kill9-restart-adopts "NRestarts $restarts0->$restarts1, enable_seq $seq0->$seq1, links '$(echo $links0)' -> '$(echo $links1)', ops $(cat $scx/root/ops)"
fi

# catching up with the cgroups made while it was down
status=$(scxdctl status 2>&1)
# sub-schedulers: the kernel's BTF has sched_ext_ops.sub_cgroup_id (root/sub
# itself exists only while the root scheduler can host children)
if grep -qa sub_cgroup_id /sys/kernel/btf/vmlinux; then
	missing=
	for i in 1 2 3 4 5; do
		id=$(stat -c %i /sys/fs/cgroup/churn-down/d$i)
		j=0
		while [ -z "$(find $scx/root/sub -type d -name "sub-$id" 2>/dev/null)" ] && [ $j -lt 30 ]; do sleep 1; j=$((j + 1)); done
		[ -n "$(find $scx/root/sub -type d -name "sub-$id")" ] || missing="$missing d$i(sub-$id)"
	done
	[ -z "$missing" ] && ok "kill9-catches-up (5 cgroups made while scxd was down have their sub-scheduler)" ||
		nok kill9-catches-up "no sub-scheduler for$missing"
else
	# scxd cannot attach them here; what it can show is that it saw them:
	# its first reconcile counts the cgroups that match child entries. With
	# the churn over, a second kill -9 while only d1..d6 exist (d6 made
	# while it is down) makes that count exact: 6.
	r0=$(systemctl show -p NRestarts --value scxd.service)
	t_kill=$(date +%s)
	systemctl kill -s KILL scxd.service
	mkdir /sys/fs/cgroup/churn-down/d6
	i=0
	while [ "$(systemctl show -p NRestarts --value scxd.service)" = "$r0" ] && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
	wait_active 60
	sleep 1
	n=$(journalctl -u scxd.service --since "@$t_kill" --no-pager -o cat |
		sed -n 's/.* \([0-9][0-9]*\) cgroup(s) match child entries.*/\1/p' | head -1)
	[ "${n:-0}" = 6 ] && ok "kill9-catches-up (restarted scxd counts the 6 cgroups made while it was down as matching child entries; no sub-schedulers in this kernel)" ||
		nok kill9-catches-up "restarted scxd reported '${n:-nothing}' cgroups matching child entries, want the 6 made while it was down"
	rmdir /sys/fs/cgroup/churn-down/d6
	status=$(scxdctl status 2>&1)
fi
echo "--- scxdctl status after the restart"
echo "$status" | head -20
echo "---"
for i in 1 2 3 4 5; do rmdir /sys/fs/cgroup/churn-down/d$i; done
rmdir /sys/fs/cgroup/churn-down

if [ "$live" -gt 0 ]; then
	echo "churn: the live cgroups' links were among the kill -9's unchanged links ($(echo "$links0" | wc -l) in all)"
	# 100 at a time: when a thousand children were removed at once, the
	# sched_ext watchdog ended the root under TCG (tests/bench/README.md,
	# scxd-attach), which is not what this checks
	$churn depopulate --dir churn-live --batch 100 --scxd-pid "$(mainpid)" || fails=$((fails + 1))
	echo "churn: scxd (pid $(mainpid), restarted by the kill -9) after: VmRSS $(awk '/VmRSS/ { print $2 }' /proc/"$(mainpid)"/status) kB, $(ls /proc/"$(mainpid)"/fd | wc -l) fds"
fi

n=$(dmesg | grep -cE 'WARNING:|BUG:|possible (recursive|circular) locking|INFO: task .* blocked for more than|Oops')
[ "$n" = 0 ] && ok "no-kernel-splats (0 WARNING/BUG/lockdep/hung-task lines in dmesg)" ||
	nok no-kernel-splats "$n lines: $(dmesg | grep -m3 -E 'WARNING:|BUG:|locking|blocked for|Oops')"

echo "--- journal (last lines)"
journalctl -u scxd.service --no-pager -o cat | tail -8
exit $fails
