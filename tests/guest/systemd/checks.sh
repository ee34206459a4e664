#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Inside the systemd guest: scxd.service came up with the installed policy,
# which attaches nothing; the administrator's step (the demo policy,
# /payload/policy.json, copied over it and reloaded) makes the kernel's
# scheduler tree what /etc/scxd/policy.json asks for. Prints ok/not ok lines.
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

# the policy the package (or meson install) put there attaches nothing:
# scxd runs, nothing is pinned, the kernel's default class everywhere
n=$(grep -c '"scheduler"' /etc/scxd/policy.json)
kstate=$(cat /sys/kernel/sched_ext/state 2>/dev/null)
pins=$(ls /sys/fs/bpf/scxd 2>/dev/null | wc -l)
if [ "$n" = 0 ] && [ "$kstate" = disabled ] && [ "$pins" = 0 ] &&
   [ "$(systemctl is-active scxd.service)" = active ]; then
	ok "installed-policy-attaches-nothing (/etc/scxd/policy.json: $n entries; sched_ext $kstate, $pins pins; $(systemctl show -p StatusText --value scxd.service))"
else
	nok installed-policy-attaches-nothing "/etc/scxd/policy.json has $n schedulers, sched_ext $kstate, $pins pins"
fi
# the administrator's step: a policy of one's own, then a reload
if [ -f /payload/policy.json ]; then
	install -m 0644 /payload/policy.json /etc/scxd/policy.json
	systemctl reload scxd.service 2>/dev/null && ok "demo-policy-reloaded (conf/examples/demo.json as /etc/scxd/policy.json)" ||
		nok demo-policy-reloaded "systemctl reload exit $?"
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

# a uevent that does not come from the kernel (sender port id not 0) is
# not believed: scxd reads the whole state again, which changes nothing
if [ -x /payload/churn ]; then
	seq0=$(cat /sys/kernel/sched_ext/enable_seq)
	since=$(date +%s)
	/payload/churn forge-uevent
	sleep 2
	said=$(journalctl -u scxd.service --since "@$since" --no-pager -o cat | grep -m1 'not from the kernel')
	seq1=$(cat /sys/kernel/sched_ext/enable_seq)
	if [ -n "$said" ] && [ "$seq1" = "$seq0" ] && [ "$(systemctl is-active scxd.service)" = active ]; then
		ok "forged-uevent-resyncs (\"$said\", enable_seq $seq0->$seq1)"
	else
		nok forged-uevent-resyncs "journal: '$said', enable_seq $seq0->$seq1"
	fi
fi

# a reload with a broken policy is rejected with file:line:column,
# changes nothing in the kernel, and fails `systemctl reload` (ExecReload=
# is scxdctl reload, which waits for the outcome); a good one succeeds
cp /etc/scxd/policy.json /run/policy.good
printf '{\n  "version": 1,\n  "entries": [ { "cgroup": "/", "scheduler": } ]\n}\n' > /etc/scxd/policy.json
seq0=$(cat /sys/kernel/sched_ext/enable_seq)
since=$(date +%s)
systemctl reload scxd.service 2>/dev/null
reload_rc=$?
sleep 1
err=$(journalctl -u scxd.service --since "@$since" --no-pager -o cat | grep -m1 'policy.json:3:')
seq1=$(cat /sys/kernel/sched_ext/enable_seq)
if [ -n "$err" ] && [ "$seq1" = "$seq0" ] && [ "$(systemctl is-active scxd.service)" = active ] &&
   [ "$(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)" = "$got" ]; then
	ok "broken-reload-keeps-state (\"$err\", enable_seq $seq0->$seq1)"
else
	nok broken-reload-keeps-state "journal: '$err', enable_seq $seq0->$seq1, ops $(cat /sys/kernel/sched_ext/root/ops 2>/dev/null)"
fi
[ $reload_rc != 0 ] && ok "systemctl-reload-fails-when-rejected (exit $reload_rc)" ||
	nok systemctl-reload-fails-when-rejected "systemctl reload exited 0"
st=$(systemctl show -p StatusText --value scxd.service)
case "$st" in
*"last reload rejected: "*policy.json:3:*) ok "status-text-says-why-rejected ($st)" ;;
*) nok status-text-says-why-rejected "StatusText: '$st'" ;;
esac
cp /run/policy.good /etc/scxd/policy.json
systemctl reload scxd.service
reload_rc=$?
st=$(systemctl show -p StatusText --value scxd.service)
[ $reload_rc = 0 ] && ok "systemctl-reload-succeeds-when-valid" ||
	nok systemctl-reload-succeeds-when-valid "systemctl reload exited $reload_rc"
case "$st" in
*" on "*" cgroup"*", policy /etc/scxd/policy.json"*"last reload"*) nok status-text-after-good-reload "StatusText: '$st'" ;;
*" on "*" cgroup"*", policy /etc/scxd/policy.json"*) ok "status-text-after-good-reload ($st)" ;;
*) nok status-text-after-good-reload "StatusText: '$st'" ;;
esac

# journal entries: the caller's CODE_FILE (not log.c), a MESSAGE_ID on
# attach and on both reload outcomes, no empty SCXD_*= fields
jfield() {	# MESSAGE_ID FIELD: the field of the newest entry with that id
	journalctl -u scxd.service MESSAGE_ID="$1" -o export --no-pager 2>/dev/null |
		sed -n "s/^$2=//p" | tail -1
}
for m in attached:611a8a21f5944fc0b7b691d3f6e51407 reload-applied:15ac16a231264bfc923b9023248839d4 \
	 reload-rejected:87d1002c7e2f49dea2baa33bd808e9e7; do
	id=${m#*:} what=${m%%:*}
	file=$(jfield "$id" CODE_FILE) line=$(jfield "$id" CODE_LINE) func=$(jfield "$id" CODE_FUNC)
	if [ -n "$file" ] && [ "$file" != log.c ] && [ -n "$line" ] && [ -n "$func" ]; then
		ok "journal-message-id-$what (CODE_FILE=$file CODE_LINE=$line CODE_FUNC=$func)"
	else
		nok "journal-message-id-$what" "no entry with MESSAGE_ID=$id from the caller's code (CODE_FILE='$file')"
	fi
done
empty=$(journalctl -u scxd.service -o export --no-pager | grep -c '^SCXD_[A-Z_]*=$')
[ "$empty" = 0 ] && ok "journal-no-empty-fields" || nok journal-no-empty-fields "$empty empty SCXD_*= fields"
logc=$(journalctl -u scxd.service -o export --no-pager | grep -c '^CODE_FILE=log.c$')
[ "$logc" = 0 ] && ok "journal-code-file-is-the-caller" || nok journal-code-file-is-the-caller "$logc entries say CODE_FILE=log.c"

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
	# its children exited on purpose: the journal has them under their MESSAGE_ID
	n=$(journalctl -u scxd.service MESSAGE_ID=9a15828eb66f4bfb829304a050e7f335 -o cat --no-pager | wc -l)
	file=$(jfield 9a15828eb66f4bfb829304a050e7f335 CODE_FILE)
	[ "$n" -gt 0 ] && [ -n "$file" ] && [ "$file" != log.c ] && ok "journal-message-id-sched-exited ($n entries, CODE_FILE=$file)" ||
		nok journal-message-id-sched-exited "$n entries, CODE_FILE='$file'"
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
	rmdir /etc/scxd/policy.d 2>/dev/null
	systemctl reload scxd.service 2>/dev/null
	if wait_sched "$slice_cg" "" && wait_sched "$scope_cg" ""; then
		ok "drop-in-removed-detaches (scxd-probe.slice and probe-1.scope run no scheduler)"
	else
		nok drop-in-removed-detaches "slice runs '$(sched_of "$slice_cg")', scope '$(sched_of "$scope_cg")'"
	fi
	systemctl stop probe-1.scope inslice.scope 2>/dev/null
fi

# a Kubernetes node's layout (kubelet's systemd cgroup driver) under
# conf/examples/kubernetes-node.json: pods come and go (k8s.sh)
if [ -f /payload/k8s.sh ]; then
	sh /payload/k8s.sh
	fails=$((fails + $?))
fi

echo "--- scxdctl status"
scxdctl status
# the metrics: scxdctl metrics, and the node-exporter textfile scxd writes
# once Debian's directory exists (the unit lets it write there)
m=$(scxdctl metrics 2>&1)
root_m=$(echo "$m" | grep -m1 '^scxd_scheduler_state{cgroup="/",')
mkdir -p /var/lib/prometheus/node-exporter
systemctl restart scxd.service 2>/dev/null
i=0
while [ ! -s /var/lib/prometheus/node-exporter/scxd.prom ] && [ $i -lt 30 ]; do sleep 1; i=$((i + 1)); done
f=/var/lib/prometheus/node-exporter/scxd.prom
if [ -n "$root_m" ] && echo "$root_m" | grep -q 'state="attached"} 1$' && [ -s $f ] &&
   grep -q '^scxd_scheduler_state{cgroup="/",' $f && [ "$(stat -c %a $f)" = 644 ]; then
	ok "metrics (scxdctl metrics: $(echo "$m" | grep -vc '^#') samples, \"$root_m\"; $f written ${i} s after the restart, $(grep -vc '^#' $f) samples, mode $(stat -c %a $f))"
else
	nok metrics "scxdctl metrics root line '$root_m'; $f: $(ls -l $f 2>&1)"
	journalctl -u scxd.service --no-pager -o cat | grep -i metric | tail -3
fi
# what Prometheus scrapes: Debian's node exporter (the image has it,
# enabled by its package) serves that file from its textfile collector on
# loopback, every sample unchanged, and reports no error reading it
if command -v prometheus-node-exporter >/dev/null; then
	i=0
	while ! ne=$(curl -sf http://127.0.0.1:9100/metrics) && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
	ne_root=$(echo "$ne" | grep -m1 '^scxd_scheduler_state{cgroup="/",')
	ne_n=$(echo "$ne" | grep -c '^scxd_')
	f_n=$(grep -c '^scxd_' $f)
	ne_err=$(echo "$ne" | sed -n 's/^node_textfile_scrape_error \(.*\)/\1/p')
	if [ -n "$ne_root" ] && [ "$ne_n" = "$f_n" ] && [ "$ne_err" = 0 ]; then
		ok "node-exporter-serves-metrics (curl http://127.0.0.1:9100/metrics after ${i} s: $ne_n scxd_ samples of $f_n in $(basename $f), \"$ne_root\", node_textfile_scrape_error $ne_err)"
	else
		nok node-exporter-serves-metrics "$(systemctl is-active prometheus-node-exporter.service); $ne_n scxd_ samples of $f_n, root '$ne_root', node_textfile_scrape_error '$ne_err'"
		journalctl -u prometheus-node-exporter.service --no-pager -o cat | tail -5
	fi
else
	echo "skip - guest/systemd/node-exporter-serves-metrics (no prometheus-node-exporter in the image)"
fi
echo "---"
scxdctl status >/dev/null 2>&1 && ok scxdctl-status || nok scxdctl-status "exit $?"
v=$(scxdctl --json status | sed -n 's/.*"schema": *\([0-9]*\).*/\1/p' | head -1)
[ "$v" = 1 ] && ok "scxdctl-status-json-schema-1" || nok scxdctl-status-json-schema-1 "schema '$v'"

# --control-group (SCXD_OPTIONS in /etc/default/scxd): its members may
# read status but not reload; others cannot connect
echo 'SCXD_OPTIONS=--control-group=nogroup' > /etc/default/scxd
systemctl restart scxd.service 2>/dev/null
i=0
while [ "$(systemctl is-active scxd.service)" != active ] && [ $i -lt 60 ]; do sleep 1; i=$((i + 1)); done
setpriv --reuid=65534 --regid=65534 --clear-groups scxdctl status >/dev/null 2>&1
member=$?
setpriv --reuid=65534 --regid=65534 --clear-groups scxdctl reload >/dev/null 2>&1
member_reload=$?
setpriv --reuid=65534 --regid=100 --clear-groups scxdctl status >/dev/null 2>&1
other=$?
mode=$(stat -c '%a %G' /run/scxd/control 2>/dev/null)
if [ $member = 0 ] && [ $member_reload = 4 ] && [ $other = 4 ] && [ "$mode" = "660 nogroup" ]; then
	ok "control-group-reads-root-reloads (socket $mode; member status 0, reload 4; other 4)"
else
	nok control-group-reads-root-reloads "socket '$mode'; member status $member, reload $member_reload; other $other"
fi
rm -f /etc/default/scxd
systemctl restart scxd.service 2>/dev/null

echo "--- journal"
journalctl -u scxd.service --no-pager -o cat | tail -15

# last: removing the package detaches the schedulers; purging it removes
# its configuration
if [ -f /payload/deb.sh ]; then
	sh /payload/deb.sh remove-purge
	fails=$((fails + $?))
fi
exit $fails
