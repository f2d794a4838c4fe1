#!/bin/sh
# Install what the harness needs from Debian's archive, only if something is
# missing. Never touches the host's running kernel: the guest kernel is built
# from linux-source-6.12 or -6.1 and only ever booted in QEMU.
set -eu
. "$(dirname "$0")/lib.sh"

PACKAGES="linux-source-6.1 linux-source-6.12 qemu-system-x86 busybox-static libdrm-dev
	build-essential flex bison bc libelf-dev libssl-dev cpio xz-utils kmod
	pkg-config git python3 python3-ply python3-git rsync
	libdrm-tests drm-info libliftoff-dev libpng-dev zlib1g-dev"

missing=""
for p in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

say "installing:$missing"
[ "$(id -u)" = 0 ] || die "need root to apt-get install:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
