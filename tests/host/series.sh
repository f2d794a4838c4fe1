#!/bin/sh
# Host-side checks of the patch series itself, as TAP: git am applied it,
# each patch is checkpatch --strict clean, kernel-doc finds nothing new to
# complain about in any C file it touches, and the new uAPI and parameter
# are in the documentation. usage: series.sh <kernel source tree>
set -u
src=$(cd "${1:?usage: series.sh srcdir}" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
patches=$(grep -v -e '^#' -e '^[[:space:]]*$' "$repo/patches/$TREE/series")
docs=$(git -C "$src" diff --name-only pristine HEAD -- '*.c' '*.h')
. "$repo/tests/tap.sh"

# New files (tests, the cursor model) only make checkpatch ask whether
# MAINTAINERS needs updating; it does not if an entry already covers them,
# which is checked below instead of the warning.
new_files=$(sed -n 's|^+++ b/||p' "$repo"/patches/$TREE/0*.patch | sort -u | while read -r f; do
	[ -e "$src/$f" ] && ! git -C "$src" cat-file -e "pristine:$f" 2>/dev/null && echo "$f"
done)

tap_start

# git am takes no fuzz: the context of every hunk matched exactly.
applied=$(git -C "$src" rev-list --count pristine..HEAD)
[ "$applied" = "$(echo "$patches" | wc -l)" ] &&
	git -C "$src" diff --quiet HEAD
tap_result $? "git-am-applied-all-exactly"
tap_diag "git am: $(echo "$patches" | wc -l) patches in the series, $applied commits on the pristine tree"

for p in $patches; do
	# spdxcheck.py needs Debian's python3-ply, not a python3 found earlier in PATH.
	# UNKNOWN_COMMIT_ID: the tree is a release tarball without upstream
	# history, so checkpatch cannot look up the id of a Fixes: tag.
	out=$(cd "$src" && PATH=/usr/bin:$PATH ./scripts/checkpatch.pl --strict -q \
		--ignore FILE_PATH_CHANGES,UNKNOWN_COMMIT_ID \
		"$repo/patches/$TREE/$p" 2>&1)
	tap_result $? "checkpatch-strict@$(tap_label "${p%.patch}")"
	[ -z "$out" ] || echo "$out" | sed 's/^/# /'
done

# A fix for a released bug (a patch with Fixes:) is for everyone: it
# applies to the pristine tree on its own, carries Cc: stable, and names
# nothing of the capability or the cursor helper the series adds.
pristine_index=$(mktemp)
GIT_INDEX_FILE=$pristine_index git -C "$src" read-tree pristine
for p in $patches; do
	f=$repo/patches/$TREE/$p
	grep -q '^Fixes: [0-9a-f]\{12\} ("' "$f" || continue
	label=$(tap_label "${p%.patch}")
	GIT_INDEX_FILE=$pristine_index git -C "$src" apply --cached --check "$f"
	tap_result $? "fix-applies-to-pristine-alone@$label"
	grep -q '^Cc: stable@vger.kernel.org' "$f"
	tap_result $? "fix-cc-stable@$label"
	! grep -qiE 'NO_LEGACY_CURSOR|no_legacy_cursor|drm_cursor_(check|copies|layer)|capability' "$f"
	tap_result $? "fix-independent-of-the-capability@$label"
done
rm -f "$pristine_index"

uncovered=""
for f in $new_files; do
	covered=no
	for dir in $(sed -n 's|^F:[[:space:]]*\(.*/\)$|\1|p' "$src/MAINTAINERS"); do
		case "$f" in "$dir"*) covered=yes ;; esac
	done
	[ $covered = yes ] || uncovered="$uncovered $f"
done
[ -z "$uncovered" ]
tap_result $? "maintainers-cover-new-files"
tap_diag "new files: $(echo "$new_files" | wc -w)"
[ -z "$uncovered" ] || echo "# not covered:$uncovered"

# Warnings kernel-doc already gives for the pristine file (vkms_composer.c,
# amdgpu_dm.c have some) are not the series'; line numbers are dropped.
tmp=$(mktemp -d)
for f in $docs; do
	if git -C "$src" show "pristine:$f" > "$tmp/pristine.${f##*.}" 2>/dev/null; then
		(cd "$src" && ./scripts/kernel-doc -none "$tmp/pristine.${f##*.}" 2>&1) |
			sed -e 's/^[^:]*:[0-9]*: //' -e 's/on line [0-9]*/on line N/' | sort > "$tmp/known"
	else
		: > "$tmp/known"
	fi
	(cd "$src" && ./scripts/kernel-doc -none "$f" 2>&1) | sed -e 's/^[^:]*:[0-9]*: //' -e 's/on line [0-9]*/on line N/' |
		sort | comm -23 - "$tmp/known" > "$tmp/new"
	[ ! -s "$tmp/new" ]
	tap_result $? "kernel-doc-no-new-warning@$(tap_label "${f#drivers/gpu/drm/}")"
	tap_diag "$f: $(wc -l < "$tmp/known") kernel-doc warnings known from the pristine file"
	sed 's/^/# /' "$tmp/new"
done
rm -rf "$tmp"

(cd "$src" && grep -q '^.. kernel-doc:: include/uapi/drm/drm.h' Documentation/gpu/drm-uapi.rst &&
	./scripts/kernel-doc -rst -internal include/uapi/drm/drm.h 2>/dev/null |
	grep -A15 'c:function:: DRM_CLIENT_CAP_NO_LEGACY_CURSOR' | grep -q 'declares that it will not update the cursor')
tap_result $? "drm-uapi-documents-no-legacy-cursor-cap"
# amdgpu documents what the series changes: on 6.1 a module parameter, on
# 6.12 the cursor mode of clients without legacy cursor, next to upstream's
# modes.
if [ "$TREE" = 6.1 ]; then
	(cd "$src" && grep -q 'doc: protect_legacy_cursor' Documentation/gpu/amdgpu/module-parameters.rst &&
		./scripts/kernel-doc -rst -function 'protect_legacy_cursor (bool)' \
			drivers/gpu/drm/amd/display/amdgpu_dm/amdgpu_dm.c 2>/dev/null | grep -q 'legacy cursor')
	tap_result $? "amdgpu-documents-protect-legacy-cursor"
else
	doc='Cursor Modes - Clients holding DRM_CLIENT_CAP_NO_LEGACY_CURSOR'
	(cd "$src" && grep -q ":doc: $doc" Documentation/gpu/amdgpu/display/display-manager.rst &&
		./scripts/kernel-doc -rst -function "$doc" \
			drivers/gpu/drm/amd/display/amdgpu_dm/amdgpu_dm_cursor.c 2>/dev/null |
		grep -q 'DRM_CLIENT_CAP_NO_LEGACY_CURSOR')
	tap_result $? "amdgpu-documents-no-legacy-cursor-mode"
fi

tap_done
