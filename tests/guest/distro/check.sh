#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Second boot of the bootable image, through its own BIOS, GRUB and
# initramfs: the distro kernel runs, sched_ext with sub-schedulers is
# there, and scxd.service (from the .deb) runs the example policy
# (conf/examples/demo.json, installed over the one that attaches nothing).
# Prints ok/not ok lines; /payload/distro.env names the kernel.
. /payload/distro.env
fails=0
ok() { echo "ok - guest/distro/$1"; }
nok() { echo "not ok - guest/distro/$1${2:+ ($2)}"; fails=$((fails + 1)); }

# ours, loaded by GRUB (it passes BOOT_IMAGE) with the image's initramfs
# (initramfs-tools leaves /run/initramfs behind when it hands over)
r=$(uname -r)
[ "$r" = "$KRELEASE" ] && ok "running-kernel-is-ours (uname -r $r, $(uname -v))" ||
	nok running-kernel-is-ours "uname -r $r, want $KRELEASE"
case " $(cat /proc/cmdline) " in
*" BOOT_IMAGE=/boot/vmlinuz-$KRELEASE "*) ok "booted-by-grub ($(cat /proc/cmdline))" ;;
*) nok booted-by-grub "cmdline: $(cat /proc/cmdline)" ;;
esac
if [ -d /run/initramfs ] && dmesg | grep -q 'Freeing initrd memory'; then
	ok "booted-with-initramfs (/run/initramfs, $(dmesg | grep -m1 -o 'Freeing initrd memory.*'))"
else
	nok booted-with-initramfs "no /run/initramfs or no initrd in dmesg"
fi
# Debian's config, ours on top: a module loads, signed by the build's key
# (taint bit 13, E, would say unsigned)
modprobe -q dummy 2>/dev/null || modprobe -q loop 2>/dev/null
t=$(cat /proc/sys/kernel/tainted)
mods=$(wc -l < /proc/modules)
if [ "$mods" -gt 0 ] && [ $((t & 8192)) = 0 ]; then
	ok "modules-signed ($mods modules loaded, tainted=$t)"
else
	nok modules-signed "$mods modules, tainted=$t"
fi

# without sched_ext (another kernel booted) the unit is skipped by its
# condition and nothing below can pass: say so once instead of waiting
if [ ! -d /sys/kernel/sched_ext ]; then
	nok sched-ext-present "no /sys/kernel/sched_ext in $(uname -r); $(systemctl show -p ConditionResult --value scxd.service | sed 's/^/scxd.service ConditionResult=/')"
	exit $fails
fi

# the unit came up (Type=notify: active means ready) with the policy's root
i=0
while [ "$(systemctl is-active scxd.service)" != active ] && [ $i -lt 120 ]; do
	sleep 1; i=$((i + 1))
done
if [ "$(systemctl is-active scxd.service)" = active ]; then
	ok "scxd-active ($(dpkg-query -W -f='scxd ${Version}' scxd), ${i}s after the lab hook started)"
else
	nok scxd-active "$(systemctl show -p ActiveState,SubState,Result --value scxd.service | tr '\n' ' ')"
	journalctl -b -u scxd.service --no-pager | tail -20
fi
# the installed policy attaches nothing: the package's example demo.json
# over it, then a reload, as an administrator does
ex=/usr/share/doc/scxd/examples/demo.json
[ -f $ex ] || { [ -f $ex.gz ] && gunzip -c $ex.gz > /run/demo.json && ex=/run/demo.json; }
[ "$(cat /sys/kernel/sched_ext/state 2>/dev/null)" = disabled ] &&
	ok "installed-policy-attaches-nothing (sched_ext disabled before the policy)" ||
	nok installed-policy-attaches-nothing "sched_ext $(cat /sys/kernel/sched_ext/state 2>/dev/null) with the installed policy"
install -m 0644 $ex /etc/scxd/policy.json
systemctl reload scxd.service 2>/dev/null || nok example-policy-reload "systemctl reload of $ex exit $?"
want=$(sed -n '/"cgroup": *"\/"/,/}/s/.*"scheduler": *"\([^"]*\)".*/\1/p' /etc/scxd/policy.json | head -1)
i=0
while [ "$(cat /sys/kernel/sched_ext/state 2>/dev/null)" != enabled ] && [ $i -lt 60 ]; do
	sleep 1; i=$((i + 1))
done
got=$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)
case $got in
"scxd_$want"|"$want") ok "root-scheduler-is-policy-root (/sys/kernel/sched_ext/root/ops $got, state $(cat /sys/kernel/sched_ext/state))" ;;
*) nok root-scheduler-is-policy-root "want $want, kernel has '$got', state $(cat /sys/kernel/sched_ext/state 2>/dev/null)" ;;
esac

# sub-scheduler support: the root hosts children (root/sub/), and a
# cgroup the policy names gets its own scheduler there (/workload/* -> lat)
sub_ops() {
	id=$(stat -c %i "/sys/fs/cgroup$1" 2>/dev/null)
	[ -n "$id" ] || return 0
	d=$(find /sys/kernel/sched_ext/root/sub -type d -name "sub-$id" 2>/dev/null | head -1)
	[ -n "$d" ] && cat "$d/ops" 2>/dev/null
}
mkdir -p /sys/fs/cgroup/workload/distro
i=0
while [ -z "$(sub_ops /workload/distro)" ] && [ $i -lt 150 ]; do sleep 0.2; i=$((i + 1)); done
got=$(sub_ops /workload/distro)
if [ -d /sys/kernel/sched_ext/root/sub ] && [ "$got" = scxd_lat ]; then
	ok "sub-scheduler-attached (/workload/distro runs $got under $(cat /sys/kernel/sched_ext/root/ops))"
else
	nok sub-scheduler-attached "/workload/distro runs '$got'; $(ls /sys/kernel/sched_ext/root 2>&1 | tr '\n' ' ')"
	journalctl -b -u scxd.service --no-pager -o cat | tail -10
fi
# a task placed there runs in sched_ext (ext.enabled in /proc/PID/sched)
sleep 60 &
pid=$!
echo $pid > /sys/fs/cgroup/workload/distro/cgroup.procs
sleep 0.5
on=$(sed -n 's/^ext\.enabled *: *//p' /proc/$pid/sched)
[ "$on" = 1 ] && ok "task-in-sub-cgroup-on-ext (pid $pid in /workload/distro, ext.enabled $on)" ||
	nok task-in-sub-cgroup-on-ext "pid $pid ext.enabled '$on'"
kill $pid
echo
echo "scxdctl status:"
scxdctl status 2>&1 | head -20
exit $fails
