#!/bin/sh
# Builds and runs tests/host/kmsg_selftest.c, the guest library's kernel-log
# matcher on made-up logs, on the host. usage: kmsg-selftest.sh <uapi
# headers of the patched kernel> <scratch dir>
set -u
khdr=$(cd "${1:?usage: kmsg-selftest.sh khdr scratch}" && pwd)
scratch=${2:?}
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$scratch"
# shellcheck disable=SC2046
if ! cc -std=gnu11 -O1 -Wall -Wextra -Werror -I"$repo/lib" -I"$khdr/drm" \
	$(pkg-config --cflags libdrm) -o "$scratch/kmsg_selftest" \
	"$repo/tests/host/kmsg_selftest.c" "$repo/lib/kms_util.c" "$repo/lib/tap.c" \
	$(pkg-config --libs libdrm) 2> "$scratch/kmsg_selftest.err"; then
	echo "not ok 1 - builds"
	sed 's/^/# /' "$scratch/kmsg_selftest.err"
	echo "1..1"
	exit 1
fi
exec "$scratch/kmsg_selftest"
