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
case "$got" in
"$want"*) ok "root-scheduler-is-policy-root (ops=$got state=$kstate)" ;;
*) nok root-scheduler-is-policy-root "want $want, kernel has '$got', state $kstate" ;;
esac

# the link is pinned, so a restarted scxd can adopt it
if ls /sys/fs/bpf/scxd 2>/dev/null | grep -q .; then
	ok "link-pinned ($(ls /sys/fs/bpf/scxd | tr '\n' ' '))"
else
	nok link-pinned "nothing under /sys/fs/bpf/scxd"
fi

echo "--- scxctl status"
scxctl status
echo "---"
scxctl status >/dev/null 2>&1 && ok scxctl-status || nok scxctl-status "exit $?"

echo "--- journal"
journalctl -u scxd.service --no-pager -o cat | tail -15
exit $fails
