#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# First boot of the bootable Debian image (qemu/mkimage --bootable), on the
# lab kernel with the disk writable: what an installer and then an
# administrator do. GRUB goes onto the disk and gets its config in the
# running system (grub-probe needs the real disk), then apt installs the
# distro kernel's packages and scxd's from /payload/debs; their maintainer
# scripts and /etc/kernel/postinst.d (initramfs-tools, zz-update-grub)
# make the initramfs and add the kernel to GRUB's menu. Prints ok/not ok
# lines; /payload/distro.env names the kernel release and version.
. /payload/distro.env
fails=0
ok() { echo "ok - guest/distro/$1"; }
nok() { echo "not ok - guest/distro/$1${2:+ ($2)}"; fails=$((fails + 1)); }
log=/root/install.log

if grub-install --target=i386-pc /dev/vda >$log 2>&1 && update-grub >>$log 2>&1; then
	ok "grub-install ($(grep -c '^menuentry\|^[[:space:]]*menuentry' /boot/grub/grub.cfg) entries: Debian's own kernel $(ls /boot/vmlinuz-* | sed 's|/boot/vmlinuz-||' | tr '\n' ' '))"
else
	nok grub-install "$(tail -5 $log | tr '\n' ' ')"
fi

# offline: every dependency is in the image already
s=$(date +%s)
if DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
	/payload/debs/*.deb >>$log 2>&1; then
	ok "apt-install ($(cd /payload/debs && ls *.deb | tr '\n' ' ')in $(($(date +%s) - s)) s)"
else
	nok apt-install "$(tail -8 $log | tr '\n' ' ')"
fi
got=$(dpkg-query -W -f='${Version}' "linux-image-$KRELEASE" 2>/dev/null)
[ "$got" = "$PKGVERSION" ] && ok "linux-image-installed (linux-image-$KRELEASE $got)" ||
	nok linux-image-installed "dpkg has '$got', want $PKGVERSION"

# the kernel's postinst ran the hooks: an initramfs, and GRUB's first entry
if [ -s "/boot/initrd.img-$KRELEASE" ] && [ -s "/boot/vmlinuz-$KRELEASE" ]; then
	ok "initramfs-made (/boot/initrd.img-$KRELEASE, $(du -k "/boot/initrd.img-$KRELEASE" | cut -f1) KiB)"
else
	nok initramfs-made "$(ls /boot | tr '\n' ' ')"
fi
first=$(sed -n 's/^[[:space:]]*linux[[:space:]]\+\([^ ]*\).*/\1/p' /boot/grub/grub.cfg | head -1)
case $first in
*/vmlinuz-"$KRELEASE") ok "grub-default-is-ours (first entry boots $first)" ;;
*) nok grub-default-is-ours "first entry boots '$first'" ;;
esac
sync
exit $fails
