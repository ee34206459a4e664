#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Inside the Debian 13 guest, booted by its own GRUB into Debian's
# linux-image-amd64 from trixie-backports (tests/guest/trixie/run): what an
# administrator does with scxd on a stock kernel, checked from the kernel's
# own view (/sys/kernel/sched_ext) at every step.
#
#   stock-kernel       Debian's kernel runs, from its package, loaded by
#                      GRUB with its initramfs; its config has sub-schedulers
#   apt-install        `apt-get install ./scxd_*.deb`; the package enabled
#                      and started scxd.service (postinst), conffile policy
#   kernel-api         scxdctl status: sub-schedulers (cid-form, upstream)
#   installed-policy-attaches-nothing
#                      the shipped policy attaches nothing: sched_ext
#                      disabled, nothing pinned, scxd active
#   example-policy-*   the package's example demo.json installed as
#                      /etc/scxd/policy.json and reloaded: root wparent; systemd-run scopes
#                      in scxd-demo.slice get their own fifo / vtime child
#                      (root/sub/sub-<cgroup id>/ops), their tasks run in
#                      sched_ext and progress
#   reload-good        a policy that swaps the children's schedulers:
#                      `systemctl reload` succeeds and the kernel follows
#   reload-root-cells  the same children under the other parent, cells, as
#                      the root (a new root: everything attached again)
#   reload-bad-*       a policy with a syntax error and one whose root
#                      cannot host children: `systemctl reload` fails, the
#                      journal says why, the running tree is kept (same
#                      ops, same link ids)
#   deb-upgrade-adopts dpkg -i of a copy with a bumped version: a new scxd
#                      adopts the running schedulers (same link ids)
#   cells-adopted-relayout  the adopted cells still lays its CPUs out
#                      (its timer outlives the scxd that loaded it)
#   deb-remove-detaches apt-get remove: scxd stops and detaches the
#                      schedulers, naming each cgroup, the root last
#                      (sched_ext disabled, the tasks back in the fair
#                      class); the policy is kept
#   deb-purge-cleans   apt-get purge: removes /etc/scxd and its state
#   dmesg-clean        no WARNING, BUG or Oops in the kernel log (the
#                      console is quiet, as Debian boots: qemu/run cannot
#                      see them there)
#
# Payloads: /payload/scxd_*.deb, /payload/scxd-upgrade.deb and
# /payload/tools.tar (churn from the package's build, for the pinned link
# ids; a tar, so that qemu/run does not bring the host's libraries along:
# bookworm's libc would replace trixie's). Exits with the number of failed
# checks.
fails=0
ok() { echo "ok - trixie/$1"; }
nok() { echo "not ok - trixie/$1${2:+ ($2)}"; fails=$((fails + 1)); }
sx=/sys/kernel/sched_ext
now() { cut -d' ' -f1 /proc/uptime; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# ops of the scheduler attached to cgroup $1 (a path under /sys/fs/cgroup),
# empty when none: the kernel names a sub-scheduler by the cgroup's id
sub_ops() {
	id=$(stat -c %i "/sys/fs/cgroup$1" 2>/dev/null)
	[ -n "$id" ] || return 0
	d=$(find $sx/root/sub -type d -name "sub-$id" 2>/dev/null | head -1)
	[ -n "$d" ] && cat "$d/ops" 2>/dev/null
}
# wait up to $3 s until cgroup $1 runs scheduler $2 ("" for none)
wait_sub() {
	i=0
	while [ $i -lt $(($3 * 5)) ]; do
		got=$(sub_ops "$1")
		if [ -z "$2" ]; then [ -z "$got" ] && return 0
		elif [ "$got" = "scxd_$2" ]; then return 0
		fi
		sleep 0.2; i=$((i + 1))
	done
	return 1
}
wait_active() {	# up to $1 s
	i=0
	while [ "$(systemctl is-active scxd.service)" != active ] && [ $i -lt "$1" ]; do sleep 1; i=$((i + 1)); done
	[ "$(systemctl is-active scxd.service)" = active ]
}
# the ids of the bpf links scxd pinned (churn links: BPF_OBJ_GET on each
# pin, then the link's info), sorted; a new link, a new id
link_ids() {
	/root/tools/churn links 2>/dev/null | awk '{ sub("id=", "", $2); print $2 }' | sort -n | tr '\n' ' '
}
# the kernel's tree: root ops, then each sub-scheduler's cgroup id and ops
tree() {
	printf 'root=%s' "$(cat $sx/root/ops 2>/dev/null)"
	find $sx/root/sub -name ops 2>/dev/null | sort | while read -r f; do
		d=${f%/ops}
		printf ' %s=%s' "${d##*/}" "$(cat "$f")"
	done
}
journal_since() {	# journal lines of scxd since the epoch second $1
	journalctl -u scxd.service --no-pager -o cat --since "@$1" 2>/dev/null
}
diag() {	# what to look at when a step fails
	echo "# scxd.service: $(systemctl show -p ActiveState,SubState,Result,NRestarts,StatusText --value scxd.service | tr '\n' ' ')"
	echo "# sched_ext: state $(cat $sx/state 2>/dev/null), $(tree)"
	journalctl -u scxd.service --no-pager -o cat | tail -${1:-15} | sed 's/^/# journal: /'
	journalctl -k --no-pager -o cat | grep -i 'sched_ext' | tail -5 | sed 's/^/# dmesg: /'
}

mkdir -p /root/tools && tar -C /root/tools -xf /payload/tools.tar

# --- the stock kernel -------------------------------------------------------

r=$(uname -r)
# the package ships /usr/lib/modules/$r/vmlinuz; /boot has it linked there
pkg=$(dpkg -S "/usr/lib/modules/$r/vmlinuz" 2>/dev/null | cut -d: -f1)
cmp -s "/usr/lib/modules/$r/vmlinuz" "/boot/vmlinuz-$r" || pkg="$pkg (but /boot/vmlinuz-$r differs)"
meta=$(dpkg-query -W -f='${Version}' linux-image-amd64 2>/dev/null)
cfg=$(grep -E '^CONFIG_(SCHED_CLASS_EXT|EXT_GROUP_SCHED|EXT_SUB_SCHED)=' "/boot/config-$r" | tr '\n' ' ')
case " $(cat /proc/cmdline) " in *" BOOT_IMAGE=/boot/vmlinuz-$r "*) grub=1 ;; *) grub=0 ;; esac
initrd=$(journalctl -k --no-pager -o cat | grep -m1 -o 'Freeing initrd memory.*')
if [ -n "$pkg" ] && [ "${pkg% (*}" = "$pkg" ] && [ -n "$meta" ] && [ $grub = 1 ] && [ -n "$initrd" ] &&
   [ "$(echo "$cfg" | grep -o '=y' | wc -l)" = 3 ] && [ -d $sx ]; then
	ok "stock-kernel ($r from $pkg, linux-image-amd64 $meta; GRUB, $initrd; $cfg; taint $(cat /proc/sys/kernel/tainted))"
else
	nok stock-kernel "uname -r $r, package '$pkg', linux-image-amd64 '$meta', grub $grub, initrd '$initrd', config '$cfg', $(ls -d $sx 2>&1)"
fi

# --- install with apt ---------------------------------------------------------

deb=$(ls /payload/scxd_*.deb | head -1)
t0=$(now)
out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$deb" 2>&1)
rc=$?
took=$(since "$t0")
conf=$(dpkg-query -W -f='${Conffiles}' scxd 2>/dev/null | awk '{print $1}' | tr '\n' ' ')
if [ $rc = 0 ] && dpkg-query -W -f='${Status}' scxd 2>/dev/null | grep -q 'ok installed' &&
   [ "$conf" = "/etc/scxd/policy.json " ] && [ "$(systemctl is-enabled scxd.service)" = enabled ] &&
   [ -e /var/lib/systemd/deb-systemd-helper-enabled/scxd.service.dsh-also ]; then
	ok "apt-install ($(basename "$deb"), scxd $(dpkg-query -W -f='${Version}' scxd) in ${took} s; conffiles: $conf, unit enabled by deb-systemd-helper; $(ls /usr/lib/scxd/*.bpf.o | wc -l) cpu-form and $(ls /usr/lib/scxd/cid/*.bpf.o | wc -l) cid-form objects)"
else
	nok apt-install "apt-get exit $rc, status '$(dpkg-query -W -f='${Status}' scxd 2>&1)', conffiles '$conf', unit $(systemctl is-enabled scxd.service 2>&1)"
	echo "$out" | tail -15 | sed 's/^/# apt: /'
fi

# the postinst started it (under systemd, unlike a chroot); Type=notify:
# active means the first reconcile is done and READY=1 was sent
t0=$(now)
if wait_active 900; then
	ok "scxd-started-by-postinst ($(systemctl show -p StatusText --value scxd.service); active $(since "$t0") s after apt returned, $(systemctl show -p NRestarts --value scxd.service) restarts)"
else
	nok scxd-started-by-postinst "not active after $(since "$t0") s"
	diag 25
fi

st=$(scxdctl status 2>&1)
line=$(echo "$st" | grep -m1 '^kernel:')
if [ "$line" = "kernel: sub-schedulers (cid-form, upstream)" ]; then
	ok "kernel-api (scxdctl status: \"$line\")"
else
	nok kernel-api "scxdctl status says '$line'"
	echo "$st" | head -20 | sed 's/^/# scxdctl: /'
fi

# --- the shipped policy attaches nothing; the example demo.json does ----------

n=$(grep -c '"scheduler"' /etc/scxd/policy.json)
kstate=$(cat $sx/state 2>/dev/null)
pins=$(ls /sys/fs/bpf/scxd 2>/dev/null | wc -l)
[ "$n" = 0 ] && [ "$kstate" = disabled ] && [ "$pins" = 0 ] && [ "$(systemctl is-active scxd.service)" = active ] &&
	ok "installed-policy-attaches-nothing (/etc/scxd/policy.json: $n entries; sched_ext $kstate, $pins pins)" ||
	nok installed-policy-attaches-nothing "/etc/scxd/policy.json has $n schedulers, sched_ext $kstate, $pins pins"
ex=/usr/share/doc/scxd/examples/demo.json
[ -f $ex ] || { [ -f $ex.gz ] && gunzip -c $ex.gz > /root/demo.json && ex=/root/demo.json; }
install -m 0644 $ex /etc/scxd/policy.json
systemctl reload scxd.service 2>/dev/null || nok example-policy-reload "systemctl reload of $ex exit $?"
i=0
while [ "$(cat $sx/root/ops 2>/dev/null)" != scxd_wparent ] && [ $i -lt 600 ]; do sleep 1; i=$((i + 1)); done

root0=$(cat $sx/root/ops 2>/dev/null)
[ "$root0" = scxd_wparent ] && [ "$(cat $sx/state)" = enabled ] &&
	ok "example-policy-root (/sys/kernel/sched_ext: state enabled, root/ops $root0, enable_seq $(cat $sx/enable_seq))" ||
	{ nok example-policy-root "state $(cat $sx/state 2>/dev/null), root/ops '$root0'"; diag; }

# a spinner in each scope: systemd-run --scope execs it in place, so $! is it
spin() {	# UNIT: a scope in scxd-demo.slice running a busy loop
	systemd-run --quiet --scope --slice=scxd-demo.slice --unit="$1" -- sh -c 'while :; do :; done' &
}
spin batch
batch_pid=$!
spin web
web_pid=$!
sleep 1
batch_cg=$(systemctl show -p ControlGroup --value batch.scope)
web_cg=$(systemctl show -p ControlGroup --value web.scope)
t0=$(now)
if wait_sub "$batch_cg" fifo 600 && wait_sub "$web_cg" vtime 600; then
	ok "example-policy-scopes-attached (batch.scope at $batch_cg: $(sub_ops "$batch_cg"), web.scope at $web_cg: $(sub_ops "$web_cg"), $(since "$t0") s; tree: $(tree))"
else
	nok example-policy-scopes-attached "batch.scope at '$batch_cg' runs '$(sub_ops "$batch_cg")', web.scope at '$web_cg' runs '$(sub_ops "$web_cg")' after $(since "$t0") s"
	diag 25
fi

# their tasks are in sched_ext and get CPU time (utime, clock ticks)
ticks() { awk '{ print $14 + $15 }' /proc/$1/stat 2>/dev/null; }
ext_on() { sed -n 's/^ext\.enabled *: *//p' /proc/$1/sched 2>/dev/null; }
progress() {	# NAME: both spinners run in sched_ext and progress over 3 s
	b0=$(ticks $batch_pid) w0=$(ticks $web_pid)
	sleep 3
	b1=$(ticks $batch_pid) w1=$(ticks $web_pid)
	if [ "$(ext_on $batch_pid)" = 1 ] && [ "$(ext_on $web_pid)" = 1 ] &&
	   [ "${b1:-0}" -gt "${b0:-0}" ] && [ "${w1:-0}" -gt "${w0:-0}" ]; then
		ok "$1 (ext.enabled 1; CPU in 3 s: batch $((b1 - b0)) ticks, web $((w1 - w0)) ticks)"
	else
		nok "$1" "ext.enabled batch '$(ext_on $batch_pid)' web '$(ext_on $web_pid)', ticks batch $b0->$b1 web $w0->$w1"
	fi
}
progress example-policy-tasks-progress

# --- reload: a good policy ------------------------------------------------------

cat > /etc/scxd/policy.json <<'EOF'
{
  "version": 1,
  "comment": "tests/guest/trixie: demo.json with the children's schedulers swapped",
  "entries": [
    { "cgroup": "/", "scheduler": "wparent" },
    { "unit": "*.scope", "slice": "scxd-demo.slice", "scheduler": "fifo" },
    { "unit": "batch.scope", "slice": "scxd-demo.slice", "scheduler": "vtime" },
    { "cgroup": "/workload/*", "scheduler": "lat" }
  ]
}
EOF
t0=$(now)
systemctl reload scxd.service 2>/dev/null
rc=$?
if [ $rc = 0 ] && wait_sub "$batch_cg" vtime 600 && wait_sub "$web_cg" fifo 600 &&
   [ "$(cat $sx/root/ops)" = "$root0" ]; then
	ok "reload-good (systemctl reload exit 0 in $(since "$t0") s; batch.scope now $(sub_ops "$batch_cg"), web.scope $(sub_ops "$web_cg"), root $(cat $sx/root/ops); $(systemctl show -p StatusText --value scxd.service))"
else
	nok reload-good "systemctl reload exit $rc; batch.scope '$(sub_ops "$batch_cg")', web.scope '$(sub_ops "$web_cg")'"
	diag 25
fi
progress reload-good-tasks-progress

# --- reload: bad policies, refused, the running tree kept ------------------------

cp /etc/scxd/policy.json /root/policy.good
bad_reload() {	# NAME WHAT-THE-JOURNAL-SAYS (a grep -E pattern); the policy is in place
	tree0=$(tree) links0=$(link_ids) seq0=$(cat $sx/enable_seq)
	e0=$(date +%s)
	systemctl reload scxd.service 2>/dev/null
	rc=$?
	sleep 1
	said=$(journal_since "$e0" | grep -E -m1 "$2")
	st=$(systemctl show -p StatusText --value scxd.service)
	tree1=$(tree) links1=$(link_ids) seq1=$(cat $sx/enable_seq)
	if [ $rc != 0 ] && [ -n "$said" ] && [ "$tree1" = "$tree0" ] &&
	   [ -n "$links0" ] && [ "$links1" = "$links0" ] &&
	   [ "$seq1" = "$seq0" ] && [ "$(systemctl is-active scxd.service)" = active ]; then
		ok "$1 (systemctl reload exit $rc; journal: \"$said\"; status: \"$st\"; kept: $tree1, link ids $links1, enable_seq $seq1)"
	else
		nok "$1" "systemctl reload exit $rc, journal '$said', tree $tree0 -> $tree1, link ids $links0 -> $links1, enable_seq $seq0 -> $seq1, $(systemctl is-active scxd.service)"
		diag
	fi
}
printf '{\n  "version": 1,\n  "entries": [ { "cgroup": "/", "scheduler": } ]\n}\n' > /etc/scxd/policy.json
bad_reload reload-bad-syntax-refused 'policy\.json:3:'
cat > /etc/scxd/policy.json <<'EOF'
{
  "version": 1,
  "entries": [
    { "cgroup": "/", "scheduler": "fifo" },
    { "unit": "*.scope", "slice": "scxd-demo.slice", "scheduler": "vtime" }
  ]
}
EOF
bad_reload reload-bad-leaf-root-refused 'cannot host children'
cp /root/policy.good /etc/scxd/policy.json
systemctl reload scxd.service 2>/dev/null ||
	nok reload-good-again "systemctl reload of the good policy exit $?"

# --- reload: the other parent, cells, as the root ----------------------------------

sed 's/"scheduler": "wparent"/"scheduler": "cells"/' /root/policy.good > /etc/scxd/policy.json
seq0=$(cat $sx/enable_seq)
t0=$(now)
systemctl reload scxd.service 2>/dev/null
rc=$?
i=0
while [ "$(cat $sx/root/ops 2>/dev/null)" != scxd_cells ] && [ $i -lt 600 ]; do sleep 1; i=$((i + 1)); done
if [ $rc = 0 ] && [ "$(cat $sx/root/ops 2>/dev/null)" = scxd_cells ] &&
   wait_sub "$batch_cg" vtime 600 && wait_sub "$web_cg" fifo 600; then
	ok "reload-root-cells (systemctl reload exit 0, $(since "$t0") s: $(tree); enable_seq $seq0 -> $(cat $sx/enable_seq))"
else
	nok reload-root-cells "systemctl reload exit $rc; $(tree)"
	diag 20
fi
progress reload-root-cells-tasks-progress

# what scxdctl reads of each scheduler: 7.3 prints its caps as
# "NAME: CIDLIST" lines (scx_attr_caps_show)
st=$(scxdctl -v status 2>&1)
echo "# scxdctl status:"
echo "$st" | cut -c1-240 | sed 's/^/#   /'
bad=$(echo "$st" | grep -m1 'unreadable')
[ -z "$bad" ] && ok "scxdctl-status-reads-sysfs ($(echo "$st" | grep -c 'caps:') caps lines)" ||
	nok scxdctl-status-reads-sysfs "$(echo "$bad" | sed 's/^ *//'); the kernel's $sx/root/caps: $(tr '\n' ';' < $sx/root/caps)"

# --- the package: upgrade, remove, purge --------------------------------------------

wait_active 60
links0=$(link_ids) tree0=$(tree) seq0=$(cat $sx/enable_seq)
v0=$(dpkg-query -W -f='${Version}' scxd)
pid0=$(systemctl show -p MainPID --value scxd.service)
out=$(dpkg -i /payload/scxd-upgrade.deb 2>&1)
rc=$?
wait_active 300
sleep 3
v1=$(dpkg-query -W -f='${Version}' scxd)
pid1=$(systemctl show -p MainPID --value scxd.service)
links1=$(link_ids) tree1=$(tree) seq1=$(cat $sx/enable_seq)
if [ $rc = 0 ] && [ "$v1" != "$v0" ] && [ "$pid1" != "$pid0" ] && [ "$pid1" != 0 ] &&
   [ -n "$links0" ] && [ "$links1" = "$links0" ] && [ "$tree1" = "$tree0" ] && [ "$seq1" = "$seq0" ]; then
	ok "deb-upgrade-adopts (scxd $v0 -> $v1, pid $pid0 -> $pid1; link ids $links1; $tree1; enable_seq $seq0 -> $seq1)"
else
	nok deb-upgrade-adopts "dpkg exit $rc, scxd $v0 -> $v1, pid $pid0 -> $pid1, link ids '$links0' -> '$links1', tree $tree0 -> $tree1, enable_seq $seq0 -> $seq1"
	echo "$out" | tail -8 | sed 's/^/# dpkg: /'
	diag
fi

# cells lays its CPUs out again from a timer: the adopted one must still
# tick (scxd pins its map: the kernel cancels a map's timers with the map's
# last user reference). A new weight, a new layout.
caps_of() {	# cgroup path: the child's enq_immed cids
	id=$(stat -c %i "/sys/fs/cgroup$1")
	sed -n 's/^enq_immed:* *//p' "$(find $sx/root/sub -type d -name "sub-$id" | head -1)/caps" 2>/dev/null
}
c0=$(caps_of "$web_cg")
# systemd enables the cpu controller down to the scope for the property
systemctl set-property --runtime web.scope CPUWeight=300
i=0
while [ "$(caps_of "$web_cg")" = "$c0" ] && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
c1=$(caps_of "$web_cg")
[ "$c1" != "$c0" ] && ok "cells-adopted-relayout (web.scope cpu.weight 100 -> 300 after the upgrade: its cids $c0 -> $c1 in $((i * 200)) ms)" ||
	nok cells-adopted-relayout "web.scope's cids stayed '$c0' for 10 s after cpu.weight $(cat "/sys/fs/cgroup$web_cg/cpu.weight" 2>&1): cells' timer is dead?"
systemctl set-property --runtime web.scope CPUWeight=100

n=$(ls /sys/fs/bpf/scxd 2>/dev/null | wc -l)
state0=$(cat $sx/state) tree0=$(tree)
out=$(DEBIAN_FRONTEND=noninteractive apt-get remove -y scxd 2>&1)
rc=$?
sleep 2
said=$(echo "$out" | grep -m1 'scxd: detaching')
named=$(echo "$out" | tr -d '\r' | sed -n 's/^scxd:   //p')
status=$(dpkg-query -W -f='${db:Status-Abbrev}' scxd 2>/dev/null)
state1=$(cat $sx/state)
left=
for p in /run/scxd /sys/fs/bpf/scxd /usr/sbin/scxd /usr/lib/scxd; do
	[ -e $p ] && left="$left $p"
done
if [ $rc = 0 ] && [ -n "$said" ] && [ "$(systemctl is-active scxd.service)" != active ] &&
   [ "$state1" = disabled ] && [ -z "$left" ] && [ "$(echo "$named" | tail -1)" = / ] &&
   [ "$(echo "$named" | wc -l)" = "$n" ] &&
   [ "$(ext_on $batch_pid)" = 0 ] && [ "$(ext_on $web_pid)" = 0 ] &&
   [ "$status" = "rc " ] && [ -f /etc/scxd/policy.json ]; then
	ok "deb-remove-detaches (apt-get remove: \"$said\", named $(echo "$named" | tr '\n' ' ')(the root last); was $tree0; sched_ext $state0 -> $state1; the scopes' tasks back in the fair class, ext.enabled 0; dpkg '$status', the policy kept)"
else
	nok deb-remove-detaches "apt-get exit $rc, said '$said', named '$(echo "$named" | tr '\n' ' ')' of $n pins (last '$(echo "$named" | tail -1 | od -An -c | tr -s ' ')'), left:$left, scxd $(systemctl is-active scxd.service), dpkg '$status', sched_ext $state0 -> $state1, ext.enabled batch '$(ext_on $batch_pid)' web '$(ext_on $web_pid)' ($(ls -d /proc/$web_pid 2>&1)), policy $(ls /etc/scxd/policy.json 2>&1)"
	echo "$out" | tail -8 | sed 's/^/# apt: /'
fi

out=$(DEBIAN_FRONTEND=noninteractive apt-get purge -y scxd 2>&1)
rc=$?
left=
for p in /run/scxd /sys/fs/bpf/scxd /etc/scxd /usr/sbin/scxd /usr/lib/scxd; do
	[ -e $p ] && left="$left $p"
done
if [ $rc = 0 ] && [ -z "$left" ] && ! dpkg-query -W -f='${Status}' scxd 2>/dev/null | grep -q installed; then
	ok "deb-purge-cleans (apt-get purge: nothing of scxd left in /etc/scxd, /run/scxd, /sys/fs/bpf/scxd)"
else
	nok deb-purge-cleans "apt-get exit $rc, left:$left"
	echo "$out" | tail -10 | sed 's/^/# apt: /'
fi
kill $batch_pid $web_pid 2>/dev/null

# --- the kernel's log -------------------------------------------------------------

k=$(journalctl -k --no-pager -o cat)
bad=$(echo "$k" | grep -E 'WARNING:|BUG:|Oops|Call Trace|rcu_sched detected stall|blocked for more than')
echo "$k" | grep -i 'sched_ext' | sed 's/^/# dmesg: /'
if [ -z "$bad" ]; then
	ok "dmesg-clean ($(echo "$k" | wc -l) kernel lines, $(echo "$k" | grep -ci 'sched_ext') of sched_ext, no WARNING/BUG/Oops/stall)"
else
	nok dmesg-clean "$(echo "$bad" | head -5 | tr '\n' ' ')"
fi
exit $fails
