#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the QEMU guest (busybox, as root): scxd against the real
# kernel. Prints one "ok - guest/scxd/NAME" or "not ok - ..." line per check
# and the outputs worth reading (scxdctl status, scxd's log).
#   /payload/bin/{scxd,scxdctl}   /payload/sched/*.bpf.o
SCXD=/payload/bin/scxd
SCXDCTL=/payload/bin/scxdctl
SCHED=/payload/sched
LOG=/tmp/scxd.log
SYS=/sys/kernel/sched_ext
CG=/sys/fs/cgroup
pid=

ok() { echo "ok - guest/scxd/$1"; }
not_ok() { echo "not ok - guest/scxd/$1${2:+ ($2)}"; }
check() { name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }

root_ops() { cat $SYS/root/ops 2>/dev/null; }
wait_for() { # wait_for SECONDS COMMAND...
	n=$(( $1 * 10 )); shift
	while [ $n -gt 0 ]; do "$@" && return 0; sleep 0.1; n=$((n - 1)); done
	return 1
}
root_is() { [ "$(root_ops)" = "$1" ]; }
start_scxd() {
	$SCXD --policy /etc/scxd/policy.json --sched-dir $SCHED >>$LOG 2>&1 &
	pid=$!
	wait_for 20 test -S /run/scxd/control
}
stop_scxd() { kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; pid=; }
policy() { # policy ROOT [CHILD_PATTERN CHILD_SCHED]...
	{
		printf '{"version": 1, "entries": [{"cgroup": "/", "scheduler": "%s"}' "$1"
		shift
		while [ $# -ge 2 ]; do
			printf ', {"cgroup": "%s", "scheduler": "%s"}' "$1" "$2"
			shift 2
		done
		printf ']}\n'
	} > /etc/scxd/policy.json.new
	mv /etc/scxd/policy.json.new /etc/scxd/policy.json
}

mkdir -p /etc/scxd && chmod 755 /etc/scxd
# as scxd reads it: sub-schedulers need struct scx_sub_attach_args
sub=no
grep -q scx_sub_attach_args /sys/kernel/btf/vmlinux 2>/dev/null && sub=yes
echo "kernel $(uname -r), sub-scheduler support: $sub"
mkdir -p $CG/scxd-demo.slice/web.scope
echo +cpu > $CG/cgroup.subtree_control 2>/dev/null

# 1. The root entry is applied (a parent-capable scheduler, children
#    wanted; a kernel without sub-schedulers refuses a policy with
#    children, so there it starts with the root alone).
if [ $sub = yes ]; then
	policy wparent "/scxd-demo.slice/*" vtime "/workload/*" lat
else
	policy wparent
fi
start_scxd
check root-attached wait_for 20 root_is scxd_wparent
# The ops name shows in sysfs while the kernel is still enabling (slow
# under TCG), before the attach returns and scxd pins the link.
check state-enabled wait_for 20 sh -c "[ \"\$(cat $SYS/state)\" = enabled ]"
# pins are named by the first 32 hex digits of the SHA-256 of the cgroup path
ROOT_PIN=/sys/fs/bpf/scxd/8a5edab282632443219e051e4ade2d1d
check root-pinned wait_for 20 test -e $ROOT_PIN/link
if [ $sub = no ]; then
	# children on this kernel: the reload is refused, each child entry
	# named with the kernel's limit, and the root stays
	cp /etc/scxd/policy.json /tmp/root-only.json
	policy wparent "/scxd-demo.slice/*" vtime "/workload/*" lat
	$SCXDCTL reload >/tmp/reload.out 2>&1; rc=$?
	check children-refused-root-only [ $rc = 1 ]
	check children-refused-named [ "$(grep -c 'a sub-scheduler, but the kernel has sched_ext without sub-schedulers (root only)' $LOG)" = 2 ]
	check children-refused-root-unchanged root_is scxd_wparent
	cp /tmp/root-only.json /etc/scxd/policy.json
fi
echo "--- scxdctl status"
$SCXDCTL status; st=$?
echo "---"
check scxdctl-status [ $st = 0 ]

# The lifecycle checks below use fifo at the root, so that they test scxd
# whatever the state of the parent scheduler.
policy fifo
kill -HUP "$pid"
check reload-root-fifo wait_for 20 root_is scxd_fifo

# 2. Idle means idle: no wakeups in 3 s without changes (nothing pending).
#    The ops name shows before the kernel has finished enabling and before
#    scxd has pinned the new link and seen the sysfs tree settle: wait for
#    all of that first, so the window measures idleness, not the reload.
wait_for 20 sh -c "[ \"\$(cat $SYS/state)\" = enabled ]"
wait_for 20 test -e $ROOT_PIN/link
sleep 2
v0=$(grep voluntary_ctxt_switches /proc/$pid/status | head -1 | awk '{print $2}')
sleep 3
v1=$(grep voluntary_ctxt_switches /proc/$pid/status | head -1 | awk '{print $2}')
echo "idle: $((v1 - v0)) wakeups in 3 s"
check idle-no-wakeups [ "$v1" = "$v0" ]

# 3. A bad reload is rejected and the running state stays.
cp /etc/scxd/policy.json /tmp/good.json
printf '{"version": 1, "entries": [{"cgroup": "/", "scheduler": "nope"}]}\n' > /etc/scxd/policy.json
$SCXDCTL reload >/tmp/reload.out 2>&1; rc=$?
check bad-reload-rejected [ $rc = 1 ]
check bad-reload-logged grep -q 'policy.json:1:.*unknown scheduler "nope"' $LOG
check bad-reload-kept-running grep -q 'policy rejected, keeping the running policy' $LOG
check bad-reload-root-unchanged root_is scxd_fifo
cp /tmp/good.json /etc/scxd/policy.json

# 4. A restarted scxd adopts what is pinned instead of reloading it.
stop_scxd
check survives-scxd-exit root_is scxd_fifo
attaches_before=$(grep -c ': attached ' $LOG)
start_scxd
sleep 1
check restart-adopts [ "$(grep -c ': attached ' $LOG)" = "$attaches_before" ]
check restart-root-unchanged root_is scxd_fifo
check restart-status-attached sh -c "$SCXDCTL status | grep -Eq '^/ +fifo +attached'"
echo "--- scxdctl status (after the restart)"
$SCXDCTL status
echo "---"

# 5. SIGHUP with a different root scheduler replaces it.
policy vtime
kill -HUP "$pid"
check sighup-replaces-root wait_for 20 root_is scxd_vtime

# 6. A scheduler that exits is logged with its exit reason and reattached
#    after a backoff. SysRq-S makes the kernel disable the BPF scheduler.
exits_before=$(grep -c 'scheduler vtime exited' $LOG)
echo S > /proc/sysrq-trigger
check exit-noticed wait_for 20 sh -c "[ \$(grep -c 'scheduler vtime exited' $LOG) -gt $exits_before ]"
grep 'scheduler vtime exited' $LOG | tail -1
check exit-reason-logged sh -c "grep 'scheduler vtime exited' $LOG | tail -1 | grep -qi 'sysrq'"
check exit-reattached-after-backoff wait_for 30 root_is scxd_vtime
# ... and status keeps the exit info after the reattach, kind by name
$SCXDCTL -v status | grep 'last exit'
check exit-in-status sh -c "$SCXDCTL -v status | grep -Eq '^ +last exit: sysrq \(kind 67, code '"
check exit-in-status-json sh -c "$SCXDCTL --json status | tr -d ' \n' | grep -q '\"last_exit\":{\"kind\":\"sysrq\",\"code\":67'"

# 7. Children, where the kernel has them.
if [ $sub = yes ]; then
	policy wparent "/scxd-demo.slice/*" vtime
	kill -HUP "$pid"
	wait_for 20 root_is scxd_wparent
	id=$(stat -c %i $CG/scxd-demo.slice/web.scope)
	check child-attached wait_for 20 test -e $SYS/root/sub/sub-$id/ops
	mkdir $CG/scxd-demo.slice/new.scope
	nid=$(stat -c %i $CG/scxd-demo.slice/new.scope)
	check child-follows-mkdir wait_for 20 test -e $SYS/root/sub/sub-$nid/ops
	rmdir $CG/scxd-demo.slice/new.scope
	check child-follows-rmdir wait_for 20 sh -c "! test -e $SYS/root/sub/sub-$nid"
	stop_scxd
	before=$(grep -c ': attached ' $LOG)
	start_scxd
	sleep 1
	check child-adopted-on-restart [ "$(grep -c ': attached ' $LOG)" = "$before" ]
	check child-still-attached test -e $SYS/root/sub/sub-$id/ops
	echo "--- scxdctl status (children)"
	$SCXDCTL status
	echo "---"
else
	echo "skip - guest/scxd/children (kernel without sub-scheduler support)"
fi

# 8. The control socket is root's alone.
check control-socket-mode [ "$(stat -c %a /run/scxd/control)" = 600 ]
grep -q '^nobody:' /etc/passwd 2>/dev/null || echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >> /etc/passwd
su nobody -s /bin/sh -c "$SCXDCTL status" > /tmp/nobody.out 2>&1; rc=$?
cat /tmp/nobody.out
check control-refuses-non-root sh -c "[ $rc = 4 ] && grep -q 'Permission denied' /tmp/nobody.out"

stop_scxd
echo "--- scxd log"
cat $LOG
echo "---"
