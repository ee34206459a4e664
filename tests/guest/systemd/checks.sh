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

# installed from the .deb: the package's own checks and an upgrade under
# the running policy (deb.sh, handed in by tests/guest/systemd/run)
if [ -f /payload/deb.sh ]; then
	sh /payload/deb.sh
	fails=$((fails + $?))
fi

# a reload that removes a subtree; children that error or stall
# (detach-exit.sh, handed in with its payloads by tests/guest/systemd/run)
if [ -f /payload/detach-exit.sh ]; then
	sh /payload/detach-exit.sh
	fails=$((fails + $?))
fi

echo "--- scxctl status"
scxctl status
echo "---"
scxctl status >/dev/null 2>&1 && ok scxctl-status || nok scxctl-status "exit $?"

echo "--- journal"
journalctl -u scxd.service --no-pager -o cat | tail -15

# last: purging the package detaches the schedulers and removes its state
if [ -f /payload/deb.sh ]; then
	sh /payload/deb.sh purge
	fails=$((fails + $?))
fi
exit $fails
