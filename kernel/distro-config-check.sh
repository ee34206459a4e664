#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Does a distro kernel's configuration run scxd, and on which machines?
#
#   kernel/distro-config-check.sh CONFIG cloud-amd64|amd64
#
# CONFIG is a kernel .config: the one kernel/build.sh --variant distro*
# generates (it runs this before building), or an installed kernel's
# /boot/config-<release>. Every flavour needs sched_ext with cgroup
# sub-schedulers and the BPF and BTF options the schedulers load with
# (built in: y). The generic flavour (amd64) is the one for bare metal, so
# it also needs what a physical machine's keyboard, disk, network and
# display go through (y or m); for cloud-amd64 those are listed as a note,
# absent being what that flavour is (virtio devices only). One line per
# option; exit 1 if one the flavour needs is missing.
set -euo pipefail

[ $# = 2 ] || { echo "usage: $0 CONFIG cloud-amd64|amd64" >&2; exit 2; }
config=$1 flavour=$2
[ -r "$config" ] || { echo "distro-config-check: $config: not readable" >&2; exit 2; }
case $flavour in cloud-amd64|amd64) ;; *) echo "distro-config-check: flavour '$flavour': cloud-amd64 or amd64" >&2; exit 2 ;; esac

# sched_ext, the series' sub-schedulers, and how the schedulers load
builtin=(SCHED_CLASS_EXT EXT_GROUP_SCHED EXT_SUB_SCHED BPF BPF_SYSCALL BPF_JIT
	DEBUG_INFO_BTF CGROUP_BPF CGROUP_SCHED)
# a physical machine's: USB keyboards (xHCI, HID), SATA and NVMe disks,
# Intel and Realtek Ethernet, Intel Wi-Fi, Intel and AMD graphics
hardware=(USB_XHCI_HCD USB_XHCI_PCI USB_HID HID_GENERIC SATA_AHCI BLK_DEV_NVME
	E1000E IGB R8169 IWLWIFI IWLMVM DRM_I915 DRM_AMDGPU)

value() { sed -n "s/^CONFIG_$1=\(.*\)/\1/p" "$config" | tail -1; }

bad=0
for o in "${builtin[@]}"; do
	v=$(value "$o")
	if [ "$v" = y ]; then
		echo "ok   CONFIG_$o=y"
	else
		echo "FAIL CONFIG_$o=${v:-unset} (must be y)"
		bad=1
	fi
done
absent=()
for o in "${hardware[@]}"; do
	v=$(value "$o")
	case $v in
	y|m) echo "ok   CONFIG_$o=$v" ;;
	*)
		if [ "$flavour" = amd64 ]; then
			echo "FAIL CONFIG_$o=${v:-unset} (must be y or m for bare metal)"
			bad=1
		else
			absent+=("$o")
		fi
		;;
	esac
done
if [ ${#absent[@]} -gt 0 ]; then
	echo "note $flavour has no ${absent[*]}: for virtual machines, not bare metal (the generic flavour is)"
fi
exit $bad
