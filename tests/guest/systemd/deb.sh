#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Inside the systemd guest, scxd installed from its .deb by qemu/mkimage
# --deb (tests/guest/systemd/run):
#   deb-installed    dpkg knows the package; /etc/scxd/policy.json is its
#                    conffile; the package (deb-systemd-helper, not the
#                    image script) enabled scxd.service
#   deb-upgrade-adopts
#                    with the policy running (the root and a /workload
#                    child), `dpkg -i` of the same package with a bumped
#                    version restarts scxd (postinst), and the new scxd
#                    adopts the schedulers: the same link ids, the kernel's
#                    enable_seq unchanged, the new process runs the
#                    installed binary
#   deb.sh remove-purge
#                    (last, from checks.sh) `dpkg --remove scxd` stops scxd
#                    and detaches the pinned schedulers, naming each cgroup,
#                    the root last (sched_ext disabled), removes /run/scxd
#                    and /sys/fs/bpf/scxd and keeps the policy; `dpkg
#                    --purge` then removes /etc/scxd but for an
#                    administrator's drop-in, which it names
# Payloads: /payload/scxd-upgrade.deb, /payload/churn (churn links: the
# pinned link ids). Exits with the number of failed checks.
fails=0
ok() { echo "ok - guest/systemd/$1"; }
nok() { echo "not ok - guest/systemd/$1${2:+ ($2)}"; fails=$((fails + 1)); }
links() { /payload/churn links 2>/dev/null | sort | tr '\n' ' '; }
wait_active() {
	i=0
	while [ "$(systemctl is-active scxd.service)" != active ] && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
}

remove_purge() {
	# remove: scxd stops and its schedulers are detached, children first;
	# a child of the root's to see the order (/workload/* runs lat)
	mkdir -p /sys/fs/cgroup/workload/remove
	i=0
	rm_pin=$(printf %s /workload/remove | sha256sum | cut -c1-32)
	while [ ! -e /sys/fs/bpf/scxd/$rm_pin/link ] && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
	n=$(ls /sys/fs/bpf/scxd 2>/dev/null | wc -l)
	state0=$(cat /sys/kernel/sched_ext/state)
	out=$(dpkg --remove scxd 2>&1)
	rc=$?
	sleep 1
	left=
	for p in /run/scxd /sys/fs/bpf/scxd /usr/sbin/scxd /var/lib/prometheus/node-exporter/scxd.prom; do
		[ -e $p ] && left="$left $p"
	done
	state1=$(cat /sys/kernel/sched_ext/state)
	said=$(echo "$out" | grep -m1 'scxd: detaching')
	named=$(echo "$out" | sed -n 's/^scxd:   //p')
	last=$(echo "$named" | tail -1)
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' scxd 2>/dev/null)
	if [ $rc = 0 ] && [ -z "$left" ] && [ "$state1" = disabled ] && [ -n "$said" ] &&
	   [ "$last" = / ] && [ "$(echo "$named" | wc -l)" = "$n" ] &&
	   [ "$status" = "rc " ] && [ -f /etc/scxd/policy.json ] &&
	   [ "$(systemctl is-active scxd.service)" != active ]; then
		ok "deb-remove-detaches ($n pins; sched_ext $state0 -> $state1; said \"$said\", named $(echo "$named" | tr '\n' ' ')(the root last); dpkg '$status', the policy kept)"
	else
		nok deb-remove-detaches "dpkg exit $rc, left:$left, sched_ext $state0 -> $state1, dpkg '$status', named '$(echo "$named" | tr '\n' ' ')' of $n pins, output: $(echo "$out" | tr '\n' ' ')"
	fi

	# purge: the conffile and /etc/scxd go; an administrator's drop-in is
	# left, and purge says so
	mkdir -p /etc/scxd/policy.d
	echo '{ "version": 1, "entries": [] }' > /etc/scxd/policy.d/90-site.json
	out=$(dpkg --purge scxd 2>&1)
	rc=$?
	said=$(echo "$out" | grep -m1 'scxd: left /etc/scxd')
	left=$(find /etc/scxd -type f 2>/dev/null | tr '\n' ' ')
	if [ $rc = 0 ] && [ "$left" = "/etc/scxd/policy.d/90-site.json " ] &&
	   echo "$said" | grep -q 90-site.json && ! dpkg-query -W scxd >/dev/null 2>&1; then
		ok "deb-purge-says-what-it-left (said \"$said\")"
	else
		nok deb-purge-says-what-it-left "dpkg exit $rc, files left: '$left', said '$said', output: $(echo "$out" | tr '\n' ' ')"
	fi
	rm -rf /etc/scxd
	exit $fails
}
[ "${1:-}" = remove-purge ] && remove_purge

# --- installed from the package
conf=$(dpkg-query -W -f='${Conffiles}' scxd 2>/dev/null | awk '{print $1}' | tr '\n' ' ')
enabled=$(systemctl is-enabled scxd.service 2>&1)
if dpkg-query -W -f='${Status}' scxd 2>/dev/null | grep -q 'ok installed' &&
   [ "$conf" = "/etc/scxd/policy.json " ] && [ "$enabled" = enabled ] &&
   [ -e /var/lib/systemd/deb-systemd-helper-enabled/scxd.service.dsh-also ]; then
	ok "deb-installed (scxd $(dpkg-query -W -f='${Version}' scxd), conffiles: $conf, unit $enabled by deb-systemd-helper)"
else
	nok deb-installed "status '$(dpkg-query -W -f='${Status}' scxd 2>&1)', conffiles '$conf', unit $enabled, dsh state $(ls /var/lib/systemd/deb-systemd-helper-enabled 2>&1 | tr '\n' ' ')"
fi

# --- upgrade under a running policy
deb=/payload/scxd-upgrade.deb
if [ ! -f $deb ] || [ ! -x /payload/churn ]; then
	echo "skip - guest/systemd/deb-upgrade-adopts (no $deb or /payload/churn)"
	exit $fails
fi
wait_active
# a child to adopt besides the root: /workload/* runs lat
cg=/sys/fs/cgroup/workload/upgrade
mkdir -p $cg
sleep 600 &
sleeper=$!
echo $sleeper > $cg/cgroup.procs
i=0
up_pin=$(printf %s /workload/upgrade | sha256sum | cut -c1-32)
while ! links | grep -q "$up_pin id=" && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
sleep 1
v0=$(dpkg-query -W -f='${Version}' scxd)
pid0=$(systemctl show -p MainPID --value scxd.service)
links0=$(links)
seq0=$(cat /sys/kernel/sched_ext/enable_seq)
out=$(dpkg -i $deb 2>&1)
rc=$?
wait_active
sleep 3
v1=$(dpkg-query -W -f='${Version}' scxd)
pid1=$(systemctl show -p MainPID --value scxd.service)
exe=$(readlink /proc/$pid1/exe 2>&1)
links1=$(links)
seq1=$(cat /sys/kernel/sched_ext/enable_seq)
if [ $rc = 0 ] && [ "$v1" != "$v0" ] && [ "$pid1" != "$pid0" ] && [ "$pid1" != 0 ] &&
   [ "$exe" = /usr/sbin/scxd ] && echo "$links0" | grep -q "$up_pin id=" &&
   [ "$links1" = "$links0" ] && [ "$seq1" = "$seq0" ] &&
   [ "$(systemctl is-active scxd.service)" = active ]; then
	ok "deb-upgrade-adopts (scxd $v0 -> $v1, pid $pid0 -> $pid1 running $exe; links before: $links0; after: $links1; enable_seq $seq0 -> $seq1)"
else
	nok deb-upgrade-adopts "dpkg exit $rc, scxd $v0 -> $v1, pid $pid0 -> $pid1 ($exe), links $links0 -> $links1, enable_seq $seq0 -> $seq1, $(systemctl is-active scxd.service)"
	echo "$out" | tail -10
	journalctl -u scxd.service --no-pager -o cat | tail -15
fi
kill $sleeper 2>/dev/null
wait $sleeper 2>/dev/null
rmdir $cg 2>/dev/null
exit $fails
