#!/bin/sh
# Host-side checks of the amd configuration, as TAP: amdgpu.ko is built and
# linked against the series' helper, modpost finds every symbol, and each
# amdgpu file the series changes compiles with W=1 without a new warning.
# usage: amd.sh   (after harness/kernel.sh amd)
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
. "$REPO/harness/lib.sh"
. "$REPO/tests/tap.sh"

obj=$(objdir amd)
ko=$obj/drivers/gpu/drm/amd/amdgpu/amdgpu.ko
files=$(git -C "$SRC" diff --name-only pristine HEAD -- drivers/gpu/drm/amd | grep '\.c$')

# What amdgpu takes from the helper: on 6.1 both rules (the conservative
# one behind its parameter), on 6.12 the precise one, next to upstream's
# own mode rule.
case "$TREE" in
6.1) helper_syms="drm_cursor_check drm_cursor_check_any" ;;
*) helper_syms="drm_cursor_check" ;;
esac

tap_start

tap_check "amdgpu-ko-built" test -s "$ko"
if [ "$TREE" = 6.1 ]; then
	tap_check "has-protect-legacy-cursor-param" \
		sh -c "modinfo -F parm '$ko' | grep -q '^protect_legacy_cursor:'"
else
	tap_check "no-protect-legacy-cursor-param" \
		sh -c "! modinfo -F parm '$ko' | grep -q '^protect_legacy_cursor:'"
fi
tap_check "modpost-clean" \
	sh -c "test -f '$obj/build.log' && ! grep -E 'undefined!|ERROR: modpost' '$obj/build.log'"
tap_check "calls-helper-checks" \
	sh -c "for s in $helper_syms; do nm -u '$ko' | grep -qw \$s || exit 1; done"
tap_diag "the helper's checks: $helper_syms"
tap_check "helper-checks-exported" \
	sh -c "for s in $helper_syms; do grep -q \"	\$s	drivers/gpu/drm/drm_kms_helper	\" '$obj/Module.symvers' || exit 1; done"

# W=1 adds compiler warnings and runs kernel-doc on the file; amdgpu's
# headers already give dozens. The file as patched may give no warning the
# pristine file does not give: both are compiled here, the pristine one in
# place for a moment (the file and its modification time are put back).
# Objects are built as amdgpu's Makefile names them.
w1() {	# w1 OBJECT: the W=1 warnings of building OBJECT, without file and line
	make -s -C "$SRC" O="$obj" W=1 "$1" 2>&1 |
		grep -E 'warning:|error:' | sed 's/^.*: \(warning\|error\): /\1: /' | sort
}
for f in $files; do
	o=drivers/gpu/drm/amd/amdgpu/../${f#drivers/gpu/drm/amd/}
	o=${o%.c}.o
	# A file the series adds has no pristine twin: none of the warnings
	# may be its own.
	if ! git -C "$SRC" cat-file -e "pristine:$f" 2>/dev/null; then
		own=$(make -s -C "$SRC" O="$obj" W=1 "$o" 2>&1 | grep -E 'warning:|error:' |
			grep -c "${f##*/}:")
		tap_result "$own" "w1-no-warning@$(tap_label "${f#drivers/gpu/drm/}")"
		tap_diag "$f, which the series adds: $own W=1 warnings of its own"
		continue
	fi
	tmp=$(mktemp -d)
	w1 "$o" > "$tmp/patched"
	# Proof that W=1 took: the object's recorded command line has W=1's define
	# (6.1's amdgpu headers warn under W=1, 6.12's do not).
	w1_ran=no
	grep -q -- '-DKBUILD_EXTRA_WARN1' "$obj/$(dirname "$o")/.$(basename "$o").cmd" 2>/dev/null && w1_ran=yes
	mtimes_save "$tmp/mtime" "$f"
	git -C "$SRC" show "pristine:$f" > "$SRC/$f"
	w1 "$o" > "$tmp/pristine"
	git -C "$SRC" checkout -q HEAD -- "$f"
	mtimes_restore "$tmp/mtime" > /dev/null
	comm -23 "$tmp/patched" "$tmp/pristine" > "$tmp/new"
	[ $w1_ran = yes ] && git -C "$SRC" diff --quiet HEAD -- "$f" && [ ! -s "$tmp/new" ]
	tap_result $? "w1-no-new-warning@$(tap_label "${f#drivers/gpu/drm/}")"
	tap_diag "$f: $(wc -l < "$tmp/patched") W=1 warnings with the series, $(wc -l < "$tmp/pristine") without, W=1 in force: $w1_ran"
	sed 's/^/# new: /' "$tmp/new" | head -20
	# Back to the flags of the normal build: only this object is redone.
	make -s -C "$SRC" O="$obj" "$o" > /dev/null 2>&1
	rm -rf "$tmp"
done
tap_done
