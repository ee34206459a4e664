#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Inside the systemd guest: scxd.service came up and the kernel's scheduler
# tree is what /etc/scxd/policy.json asks for. Prints ok/not ok lines.
fails=0
ok() { echo "ok - guest/systemd/$1"; }
nok() { echo "not ok - guest/systemd/$1${2:+ ($2)}"; fails=$((fails + 1)); }

# the unit is Type=notify: active means READY=1 was sent
i=0
while [ "$(systemctl is-active scxd.service)" != active ] && [ $i -lt 60 ]; do
	sleep 1; i=$((i + 1))
done
state=$(systemctl show -p ActiveState,SubState,NRestarts --value scxd.service | tr '\n' ' ')
if [ "$(systemctl is-active scxd.service)" = active ]; then
	ok "scxd-active-after-ready ($state, ${i}s)"
else
	nok scxd-active-after-ready "$state"
	journalctl -u scxd.service --no-pager | tail -30
fi

# the root entry's scheduler is the kernel's root scheduler
want=$(sed -n '/"cgroup": *"\/"/,/}/s/.*"scheduler": *"\([^"]*\)".*/\1/p' /etc/scxd/policy.json | head -1)
i=0
while [ "$(cat /sys/kernel/sched_ext/state 2>/dev/null)" != enabled ] && [ $i -lt 30 ]; do
	sleep 1; i=$((i + 1))
done
got=$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)
kstate=$(cat /sys/kernel/sched_ext/state 2>/dev/null)
# the kernel names a scheduler by its struct_ops name, scxd_<scheduler>
case "$got" in
"$want"|"scxd_$want") ok "root-scheduler-is-policy-root (ops=$got state=$kstate)" ;;
*) nok root-scheduler-is-policy-root "want $want, kernel has '$got', state $kstate" ;;
esac

# the link is pinned, so a restarted scxd can adopt it
if ls /sys/fs/bpf/scxd 2>/dev/null | grep -q .; then
	ok "link-pinned ($(ls /sys/fs/bpf/scxd | tr '\n' ' '))"
else
	nok link-pinned "nothing under /sys/fs/bpf/scxd"
fi

# kill -9: systemd restarts scxd, which adopts the pinned root scheduler
# instead of loading it again (the kernel's enable_seq counts enables)
seq0=$(cat /sys/kernel/sched_ext/enable_seq)
restarts0=$(systemctl show -p NRestarts --value scxd.service)
systemctl kill -s KILL scxd.service
i=0
while [ "$(systemctl show -p NRestarts --value scxd.service)" = "$restarts0" ] && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
while [ "$(systemctl is-active scxd.service)" != active ] && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
sleep 2
seq1=$(cat /sys/kernel/sched_ext/enable_seq)
restarts1=$(systemctl show -p NRestarts --value scxd.service)
if [ "$restarts1" -gt "$restarts0" ] && [ "$(systemctl is-active scxd.service)" = active ] &&
   [ "$seq1" = "$seq0" ] && [ "$(cat /sys/kernel/sched_ext/state)" = enabled ]; then
	ok "kill-9-restart-adopts (restarts $restarts0->$restarts1, enable_seq $seq0->$seq1, ${i}s)"
else
	nok kill-9-restart-adopts "restarts $restarts0->$restarts1, enable_seq $seq0->$seq1, state $(cat /sys/kernel/sched_ext/state)"
fi

# a reload with a broken policy is rejected with file:line:column and
# changes nothing in the kernel
cp /etc/scxd/policy.json /run/policy.good
printf '{\n  "version": 1,\n  "entries": [ { "cgroup": "/", "scheduler": } ]\n}\n' > /etc/scxd/policy.json
seq0=$(cat /sys/kernel/sched_ext/enable_seq)
since=$(date +%s)
systemctl reload scxd.service
sleep 3
err=$(journalctl -u scxd.service --since "@$since" --no-pager -o cat | grep -m1 'policy.json:3:')
seq1=$(cat /sys/kernel/sched_ext/enable_seq)
if [ -n "$err" ] && [ "$seq1" = "$seq0" ] && [ "$(systemctl is-active scxd.service)" = active ] &&
   [ "$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)" = "$got" ]; then
	ok "broken-reload-keeps-state (\"$err\", enable_seq $seq0->$seq1)"
else
	nok broken-reload-keeps-state "journal: '$err', enable_seq $seq0->$seq1, ops $(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)"
fi
cp /run/policy.good /etc/scxd/policy.json
systemctl reload scxd.service

# a reload that removes a subtree; children that error or stall
# (detach-exit.sh, handed in with its payloads by tests/guest/systemd/run)
if [ -f /payload/detach-exit.sh ]; then
	sh /payload/detach-exit.sh
	fails=$((fails + $?))
fi

# unit entries and drop-ins: a drop-in names a slice (placed by its
# dashes: /scxd.slice/scxd-probe.slice) and a scope glob without a slice
# (any depth); systemd puts the units there and scxd attaches to them. A
# broken drop-in is rejected with its file:line and changes nothing;
# removing the drop-in detaches what it added.
sched_of() {	# the ops of the scheduler on cgroup $1, empty if none
	id=$(stat -c %i "/sys/fs/cgroup$1" 2>/dev/null)
	[ -n "$id" ] || return 0
	d=$(find /sys/kernel/sched_ext/root/sub -type d -name "sub-$id" 2>/dev/null | head -1)
	[ -n "$d" ] && cat "$d/ops"
}
wait_sched() {	# wait up to 30 s until cgroup $1 runs $2 (none for "")
	i=0
	while :; do
		got_s=$(sched_of "$1")
		if [ -z "$2" ]; then
			[ -z "$got_s" ] && return 0
		elif [ "$got_s" = "$2" ] || [ "$got_s" = "scxd_$2" ]; then
			return 0
		fi
		[ $i -ge 150 ] && return 1
		sleep 0.2; i=$((i + 1))
	done
}
if grep -qa sub_cgroup_id /sys/kernel/btf/vmlinux; then
	mkdir -p /etc/scxd/policy.d
	printf '%s\n' '{' '  "version": 1,' '  "entries": [' \
		'    { "unit": "scxd-probe.slice", "scheduler": "fifo" },' \
		'    { "unit": "probe-*.scope", "scheduler": "lat" }' '  ]' '}' \
		> /etc/scxd/policy.d/50-units.json
	chmod 0644 /etc/scxd/policy.d/50-units.json
	systemctl reload scxd.service 2>/dev/null
	systemd-run --quiet --scope --unit=probe-1 sleep 300 &
	systemd-run --quiet --scope --unit=inslice --slice=scxd-probe.slice sleep 300 &
	sleep 1
	slice_cg=$(systemctl show -p ControlGroup --value scxd-probe.slice)
	scope_cg=$(systemctl show -p ControlGroup --value probe-1.scope)
	if [ "$slice_cg" = /scxd.slice/scxd-probe.slice ] && wait_sched "$slice_cg" fifo &&
	   [ -n "$scope_cg" ] && wait_sched "$scope_cg" lat; then
		ok "unit-entries-from-drop-in (scxd-probe.slice at $slice_cg runs $(sched_of "$slice_cg"), probe-1.scope at $scope_cg runs $(sched_of "$scope_cg"))"
	else
		nok unit-entries-from-drop-in "scxd-probe.slice at '$slice_cg' runs '$(sched_of "$slice_cg")', probe-1.scope at '$scope_cg' runs '$(sched_of "$scope_cg")'"
		journalctl -u scxd.service --no-pager -o cat | tail -10
	fi

	seq0=$(cat /sys/kernel/sched_ext/enable_seq)
	since=$(date +%s)
	printf '{\n  "version": 1, "entries": [ { "unit": "x.slice" "scheduler": "fifo" } ]\n}\n' \
		> /etc/scxd/policy.d/60-broken.json
	systemctl reload scxd.service 2>/dev/null
	sleep 3
	err=$(journalctl -u scxd.service --since "@$since" --no-pager -o cat | grep -m1 '60-broken.json:2:')
	seq1=$(cat /sys/kernel/sched_ext/enable_seq)
	if [ -n "$err" ] && [ "$seq1" = "$seq0" ] && wait_sched "$slice_cg" fifo &&
	   wait_sched "$scope_cg" lat && [ "$(systemctl is-active scxd.service)" = active ]; then
		ok "broken-drop-in-keeps-policy (\"$err\", enable_seq $seq0->$seq1)"
	else
		nok broken-drop-in-keeps-policy "journal '$err', enable_seq $seq0->$seq1, slice runs '$(sched_of "$slice_cg")', scope '$(sched_of "$scope_cg")'"
	fi

	rm -f /etc/scxd/policy.d/50-units.json /etc/scxd/policy.d/60-broken.json
	systemctl reload scxd.service 2>/dev/null
	if wait_sched "$slice_cg" "" && wait_sched "$scope_cg" ""; then
		ok "drop-in-removed-detaches (scxd-probe.slice and probe-1.scope run no scheduler)"
	else
		nok drop-in-removed-detaches "slice runs '$(sched_of "$slice_cg")', scope '$(sched_of "$scope_cg")'"
	fi
	systemctl stop probe-1.scope inslice.scope 2>/dev/null
fi

echo "--- scxctl status"
scxctl status
echo "---"
scxctl status >/dev/null 2>&1 && ok scxctl-status || nok scxctl-status "exit $?"

echo "--- journal"
journalctl -u scxd.service --no-pager -o cat | tail -15
exit $fails
