#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the initramfs guest (tests/bench/scxd-load-workers): a burst
# of BURST matching cgroups under a wparent root, the time until scxd has
# attached all of them, with --load-workers 1 and 4 in turn, ROUNDS rounds.
# Prints "burst WORKERS MS" lines.
SCXD=/payload/bin/scxd
SCHED=/payload/sched
CG=/sys/fs/cgroup
SYS=/sys/kernel/sched_ext
BURST=${1:-24}
ROUNDS=${2:-2}

now_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }
children() { ls -d $SYS/root/sub/sub-* 2>/dev/null | wc -l; }
mkdir -p /etc/scxd && chmod 755 /etc/scxd
printf '{"version": 1, "entries": [{"cgroup": "/", "scheduler": "wparent"}, {"cgroup": "/burst/*", "scheduler": "fifo"}]}\n' \
	> /etc/scxd/policy.json
mkdir -p $CG/burst
grep -q sub_cgroup_id /sys/kernel/btf/vmlinux || { echo "no sub-scheduler support"; exit 0; }

run() { # run WORKERS
	$SCXD --policy /etc/scxd/policy.json --sched-dir $SCHED --load-workers "$1" >>/tmp/scxd.log 2>&1 &
	pid=$!
	n=600; while [ $n -gt 0 ] && [ "$(cat $SYS/root/ops 2>/dev/null)" != scxd_wparent ]; do sleep 0.1; n=$((n - 1)); done
	sleep 2
	t0=$(now_ms)
	i=0; while [ $i -lt "$BURST" ]; do mkdir $CG/burst/c$i; i=$((i + 1)); done
	n=3000; while [ $n -gt 0 ] && [ "$(children)" -lt "$BURST" ]; do sleep 0.05; n=$((n - 1)); done
	echo "burst $1 $(($(now_ms) - t0)) $(children)"
	kill -TERM $pid; wait $pid
	# leave nothing attached for the next round
	i=0; while [ $i -lt "$BURST" ]; do rmdir $CG/burst/c$i; i=$((i + 1)); done
	for p in /sys/fs/bpf/scxd/*/link; do rm -f "$p"; done
	rm -rf /sys/fs/bpf/scxd/* /run/scxd/nodes
	n=300; while [ $n -gt 0 ] && [ -e $SYS/root/ops ] && [ "$(cat $SYS/state)" != disabled ]; do sleep 0.1; n=$((n - 1)); done
}
r=0
while [ $r -lt "$ROUNDS" ]; do run 1; run 4; r=$((r + 1)); done
tail -5 /tmp/scxd.log
