#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Inside the systemd guest (from checks.sh): a Kubernetes node's cgroup
# layout as kubelet's systemd cgroup driver makes it, built with
# systemd-run (a container is a scope in its pod's slice, which systemd
# nests by the dashes of its name), under conf/examples/kubernetes-node.json
# rolled out as a drop-in, /etc/scxd/policy.d/50-kubernetes.json. What
# attaches where is read from the kernel (the sub-scheduler directory
# named after each cgroup's id):
#   k8s-layout-attached   kubepods.slice and kubepods-burstable.slice run
#                         wparent, a burstable pod's slice vtime, a
#                         guaranteed pod's lat, kubepods-besteffort.slice
#                         fifo; a best-effort pod's slice and every
#                         container scope run none of their own
#   k8s-pod-goes          a pod's containers stop and its slice goes: its
#                         scheduler is gone, every other link the same
#   k8s-pod-comes         a new burstable pod gets its own vtime, every
#                         other link the same
#   k8s-drop-in-removed   the drop-in removed and reloaded: nothing left
#                         under kubepods.slice
# Payloads: /payload/kubernetes-node.json, /payload/churn (churn links:
# the pinned link ids). Exits with the number of failed checks.
fails=0
ok() { echo "ok - guest/systemd/$1"; }
nok() { echo "not ok - guest/systemd/$1${2:+ ($2)}"; fails=$((fails + 1)); }
skip() { echo "skip - guest/systemd/$1${2:+ ($2)}"; }
scx=/sys/kernel/sched_ext

if ! grep -qa sub_cgroup_id /sys/kernel/btf/vmlinux; then
	skip k8s "this kernel has no sub-schedulers"
	exit 0
fi
[ -f /payload/kubernetes-node.json ] || { skip k8s "no /payload/kubernetes-node.json"; exit 0; }

sched_of() {	# the ops of the scheduler on cgroup $1 without scxd_, "-" if none
	id=$(stat -c %i "/sys/fs/cgroup$1" 2>/dev/null)
	d=
	[ -n "$id" ] && d=$(find $scx/root/sub -type d -name "sub-$id" 2>/dev/null | head -1)
	if [ -n "$d" ]; then o=$(cat "$d/ops"); echo "${o#scxd_}"; else echo -; fi
}
# "cgroup=sched ..." for the layout's cgroups that exist
layout() {
	for c in $cgs; do
		[ -d "/sys/fs/cgroup$c" ] && printf '%s=%s ' "${c##*/}" "$(sched_of "$c")"
	done
}
# wait up to 60 s until every "CGROUP=SCHED" in $@ holds ("-": none;
# "gone": no such cgroup)
wait_for() {
	i=0
	while :; do
		good=1
		for w in "$@"; do
			c=${w%=*} want=${w##*=}
			if [ "$want" = gone ]; then
				[ -d "/sys/fs/cgroup$c" ] && good=0
			elif [ "$(sched_of "$c")" != "$want" ]; then
				good=0
			fi
		done
		[ $good = 1 ] && return 0
		[ $i -ge 300 ] && return 1
		sleep 0.2; i=$((i + 1))
	done
}
links() { /payload/churn links 2>/dev/null | awk '{ print $1 ":" $2 }' | sort | tr '\n' ' '; }
pin_of() { printf %s "$1" | sha256sum | cut -c1-32; }
without() {	# LINKS CGROUP: the links but the one pinned for CGROUP
	echo "$1" | tr ' ' '\n' | grep -v "^$(pin_of "$2"):" | grep . | tr '\n' ' '
}
container() {	# POD-SLICE NAME: a container: a scope in its pod's slice
	systemd-run --quiet --scope --slice="$1" --unit="cri-containerd-$2" sleep 600 &
}

K=/kubepods.slice
B=$K/kubepods-burstable.slice
E=$K/kubepods-besteffort.slice
pod_b1=$B/kubepods-burstable-pod0b1a_1111.slice
pod_b2=$B/kubepods-burstable-pod0b2a_2222.slice
pod_e=$E/kubepods-besteffort-pod0e1a_3333.slice
pod_g=$K/kubepods-pod0c1a_4444.slice
cgs="$K $B $E $pod_b1 $pod_b1/cri-containerd-b1c1.scope $pod_b1/cri-containerd-b1c2.scope
     $pod_b2 $pod_b2/cri-containerd-b2c1.scope $pod_e $pod_e/cri-containerd-e1c1.scope
     $pod_g $pod_g/cri-containerd-g1c1.scope"

mkdir -p /etc/scxd/policy.d
install -m 0644 /payload/kubernetes-node.json /etc/scxd/policy.d/50-kubernetes.json
systemctl reload scxd.service 2>/dev/null || nok k8s-reload "systemctl reload exit $?"

container kubepods-burstable-pod0b1a_1111.slice b1c1
container kubepods-burstable-pod0b1a_1111.slice b1c2
container kubepods-besteffort-pod0e1a_3333.slice e1c1
container kubepods-pod0c1a_4444.slice g1c1
sleep 1
t0=$(date +%s)
if wait_for "$K=wparent" "$B=wparent" "$E=fifo" "$pod_b1=vtime" "$pod_g=lat" \
	"$pod_e=-" "$pod_b1/cri-containerd-b1c1.scope=-" "$pod_b1/cri-containerd-b1c2.scope=-" \
	"$pod_e/cri-containerd-e1c1.scope=-" "$pod_g/cri-containerd-g1c1.scope=-" &&
   [ "$(cat $scx/root/ops)" = scxd_wparent ]; then
	ok "k8s-layout-attached (root $(cat $scx/root/ops), $(($(date +%s) - t0)) s: $(layout))"
else
	nok k8s-layout-attached "root $(cat $scx/root/ops 2>/dev/null); $(layout)"
	journalctl -u scxd.service --no-pager -o cat | tail -10
fi

# a pod goes: its containers first, then its slice (kubelet's order)
links0=$(links)
systemctl stop cri-containerd-b1c1.scope cri-containerd-b1c2.scope
systemctl stop kubepods-burstable-pod0b1a_1111.slice
if wait_for "$pod_b1=gone" && sleep 2 && links1=$(links) &&
   [ "$links1" = "$(without "$links0" "$pod_b1")" ] && [ "$links1" != "$links0" ] &&
   wait_for "$K=wparent" "$B=wparent" "$E=fifo" "$pod_g=lat"; then
	ok "k8s-pod-goes (kubepods-burstable-pod0b1a_1111.slice stopped: its link gone, $(echo "$links1" | wc -w) others the same; $(layout))"
else
	nok k8s-pod-goes "links before: $links0; after: $links1; $(layout)"
fi

# a pod comes
links0=$(links)
container kubepods-burstable-pod0b2a_2222.slice b2c1
sleep 1
if wait_for "$pod_b2=vtime" "$pod_b2/cri-containerd-b2c1.scope=-" && links1=$(links) &&
   [ "$(without "$links1" "$pod_b2")" = "$links0" ] && [ "$links1" != "$links0" ]; then
	ok "k8s-pod-comes (kubepods-burstable-pod0b2a_2222.slice runs $(sched_of "$pod_b2"), the other links the same; $(layout))"
else
	nok k8s-pod-comes "links before: $links0; after: $links1; $(layout)"
fi

rm -f /etc/scxd/policy.d/50-kubernetes.json
rmdir /etc/scxd/policy.d 2>/dev/null
systemctl reload scxd.service 2>/dev/null
if wait_for "$K=-" "$B=-" "$E=-" "$pod_b2=-" "$pod_g=-"; then
	ok "k8s-drop-in-removed (root $(cat $scx/root/ops); $(layout))"
else
	nok k8s-drop-in-removed "$(layout)"
fi
systemctl stop cri-containerd-b2c1.scope cri-containerd-e1c1.scope cri-containerd-g1c1.scope 2>/dev/null
systemctl stop kubepods.slice 2>/dev/null
exit $fails
