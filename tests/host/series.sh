#!/bin/sh
# Host-side checks of the patch series itself, as TAP: each patch is
# checkpatch --strict clean, and the kernel-doc of the headers it touches
# builds without warnings. usage: series.sh <kernel source tree>
set -u
src=$(cd "${1:?usage: series.sh srcdir}" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
patches=$(grep -v -e '^#' -e '^[[:space:]]*$' "$repo/patches/series")
docs="include/uapi/drm/drm.h include/drm/drm_file.h include/drm/drm_ioctl.h
	include/drm/drm_atomic.h drivers/gpu/drm/vkms/vkms_cursor.c
	drivers/gpu/drm/vkms/vkms_cursor.h"
. "$repo/tests/tap.sh"

# New files (tests, the cursor model) only make checkpatch ask whether
# MAINTAINERS needs updating; it does not if an entry already covers them,
# which is checked below instead of the warning.
new_files=$(sed -n 's|^+++ b/||p' "$repo"/patches/0*.patch | sort -u | while read -r f; do
	[ -e "$src/$f" ] && ! git -C "$src" cat-file -e "pristine:$f" 2>/dev/null && echo "$f"
done)

tap_plan "$(( $(echo "$patches" | wc -l) + $(echo "$docs" | wc -w) + 1 ))"

for p in $patches; do
	# spdxcheck.py needs Debian's python3-ply, not a python3 found earlier in PATH.
	# UNKNOWN_COMMIT_ID: the tree is a release tarball without upstream
	# history, so checkpatch cannot look up the id of a Fixes: tag.
	out=$(cd "$src" && PATH=/usr/bin:$PATH ./scripts/checkpatch.pl --strict -q \
		--ignore FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID \
		"$repo/patches/$p" 2>&1)
	tap_result $? "checkpatch --strict: $p"
	[ -z "$out" ] || echo "$out" | sed 's/^/# /'
done

uncovered=""
for f in $new_files; do
	covered=no
	for dir in $(sed -n 's|^F:[[:space:]]*\(.*/\)$|\1|p' "$src/MAINTAINERS"); do
		case "$f" in "$dir"*) covered=yes ;; esac
	done
	[ $covered = yes ] || uncovered="$uncovered $f"
done
[ -z "$uncovered" ]
tap_result $? "every new file is covered by a MAINTAINERS entry:$(echo $new_files | wc -w) files"
[ -z "$uncovered" ] || echo "# not covered:$uncovered"

for f in $docs; do
	out=$(cd "$src" && ./scripts/kernel-doc -none "$f" 2>&1)
	[ -z "$out" ]
	tap_result $? "kernel-doc without warnings: $f"
	[ -z "$out" ] || echo "$out" | sed 's/^/# /'
done

tap_status
