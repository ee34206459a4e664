#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# First boot of the Debian 13 disk (qemu/mkimage --suite trixie --bootable),
# on a lab kernel with the disk writable: what the installer does last.
# GRUB goes onto the disk and gets its menu in the running system, where
# grub-probe sees the real disk (not in a chroot). The kernel and its
# initramfs are already there: linux-image-amd64 from trixie-backports was
# installed by mmdebstrap and its postinst ran update-initramfs. Prints
# ok/not ok lines.
fails=0
ok() { echo "ok - trixie/$1"; }
nok() { echo "not ok - trixie/$1${2:+ ($2)}"; fails=$((fails + 1)); }
log=/root/grub-install.log

if grub-install --target=i386-pc /dev/vda >$log 2>&1 && update-grub >>$log 2>&1; then
	ok "grub-install ($(dpkg-query -W -f='grub-pc ${Version}' grub-pc), $(grep -c '^[[:space:]]*menuentry' /boot/grub/grub.cfg) menu entries)"
else
	nok grub-install "$(tail -5 $log | tr '\n' ' ')"
fi
# the first entry boots Debian's kernel with its initramfs
k=$(sed -n 's/^[[:space:]]*linux[[:space:]]\+\([^ ]*\).*/\1/p' /boot/grub/grub.cfg | head -1)
i=$(sed -n 's/^[[:space:]]*initrd[[:space:]]\+\([^ ]*\).*/\1/p' /boot/grub/grub.cfg | head -1)
case $k in
*/vmlinuz-*) [ -s "/boot/${i##*/}" ] && ok "grub-menu (first entry: $k, $i $(du -k "/boot/${i##*/}" | cut -f1) KiB)" ||
	nok grub-menu "first entry $k has no initramfs: '$i'" ;;
*) nok grub-menu "first entry boots '$k'" ;;
esac
sync
exit $fails
