#!/bin/sh
# Host-side checks of the patch series itself, as TAP: each patch is
# checkpatch --strict clean, and the kernel-doc of the headers it touches
# builds without warnings. usage: series.sh <kernel source tree>
set -u
src=$(cd "${1:?usage: series.sh srcdir}" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
patches=$(grep -v -e '^#' -e '^[[:space:]]*$' "$repo/patches/series")
docs="include/uapi/drm/drm.h include/drm/drm_file.h include/drm/drm_ioctl.h
	include/drm/drm_atomic.h"
n=0
failed=0

check() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

echo "TAP version 13"
echo "1..$(( $(echo "$patches" | wc -l) + $(echo "$docs" | wc -w) ))"

for p in $patches; do
	out=$(cd "$src" && ./scripts/checkpatch.pl --strict -q "$repo/patches/$p" 2>&1)
	check $? "checkpatch --strict: $p"
	[ -z "$out" ] || echo "$out" | sed 's/^/# /'
done

for f in $docs; do
	out=$(cd "$src" && ./scripts/kernel-doc -none "$f" 2>&1)
	[ -z "$out" ]
	check $? "kernel-doc without warnings: $f"
	[ -z "$out" ] || echo "$out" | sed 's/^/# /'
done

[ $failed -eq 0 ]
