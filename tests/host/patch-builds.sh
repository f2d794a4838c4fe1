#!/bin/sh
# Each patch of the series builds on its own, as TAP: the tree is checked
# out at every patch but the last (the last is the tree make test builds in
# every configuration), walking back from the tip, and built incrementally
# with the base configuration, without a single compiler or modpost warning. Each patch
# but the last that touches amdgpu is also built with the amd
# configuration, from a copy of the amd objects: in full (amdgpu.ko
# linked) while the tree differs from the tip in amdgpu and vkms only;
# further back, where DRM's own headers differ too and a full build would
# recompile all of amdgpu, the amdgpu files the patch changes are compiled
# (the fixes at the front of the series, which are one-file changes).
# The tree goes back to the tip afterwards with its files' modification
# times, so that no other build directory rebuilds.
# usage: patch-builds.sh
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
. "$REPO/harness/lib.sh"
. "$REPO/tests/tap.sh"

# make_checkout OBJ TEST TARGET...: make TARGETs of the checked-out patch
# $n in OBJ and report it as patch-N-TEST (builds@CONFIG for the whole
# kernel, compiles@CONFIG for some objects), its time and warnings in a
# diagnostic. Warnings are what a maintainer's build would print: none
# allowed.
make_checkout() {
	_dir=$1
	_test=$2
	shift 2
	_log=$_dir/patch-$n.log
	_t0=$(date +%s)
	make -s -C "$SRC" O="$_dir" -j"$JOBS" "$@" > "$_log" 2>&1
	_rc=$?
	_warnings=$(grep -c -E 'warning:|WARNING:' "$_log")
	[ "$_rc" = 0 ] && [ "$_warnings" = 0 ]
	tap_result $? "patch-$n-$_test"
	tap_diag "patch $n ($_test, $*): $(( $(date +%s) - _t0 )) s, exit status $_rc, $_warnings warnings: $subject"
	[ "$_rc" = 0 ] && [ "$_warnings" = 0 ] ||
		grep -E 'error|warning|WARNING' "$_log" | head -20 | sed 's/^/# /'
}

obj=$BUILD/obj-patches
tip=$(git -C "$SRC" rev-parse HEAD)
commits=$(git -C "$SRC" rev-list --reverse pristine..HEAD)
count=$(echo "$commits" | wc -l)
amd_walk=$(for c in $commits; do
	[ "$c" = "$tip" ] && continue
	git -C "$SRC" diff --quiet "$c^" "$c" -- drivers/gpu/drm/amd || echo x
done | wc -l)

tap_start
tap_diag "$count patches, the last the tip; $amd_walk of the others also built with amdgpu"

# The object directory is a fresh copy of the base one, which has the same
# sources (O= builds record absolute source paths) and the tip built: the
# walk leaves its objects at patch 1, and the tree goes back to the tip
# with the tip's older modification times, so a copy kept from the last
# run would link patch 1's objects into every patch of this one.
copy_objdir "$(objdir base)" "$obj"
rm -rf "$obj/mods" "$obj/hdr"
amd_obj=$BUILD/obj-patches-amd
amd_copied=0

changed=$(git -C "$SRC" diff --name-only pristine "$tip")
stamps=$(mktemp)
# shellcheck disable=SC2086
mtimes_save "$stamps" $changed

# From the tip backwards: each checkout rewrites only the files of the
# patch after it, so each build recompiles one patch's changes. Forwards,
# the first checkout would rewrite everything the later patches touch.
n=$((count + 1))
for c in $(git -C "$SRC" rev-list pristine..HEAD); do
	n=$((n - 1))
	subject=$(git -C "$SRC" log -1 --format=%s "$c")
	if [ "$c" = "$tip" ]; then
		tap_result 0 "patch-$n-builds@tip"
		tap_diag "patch $n: the tip, which this run built in each of its configurations: $subject"
		continue
	fi
	git -C "$SRC" checkout -q --detach "$c" || { tap_result 1 "patch-$n-checkout"; continue; }
	make_checkout "$obj" builds@base bzImage modules
	git -C "$SRC" diff --quiet "$c^" "$c" -- drivers/gpu/drm/amd && continue
	# The patches touching amdgpu, with amdgpu: from a fresh copy of the
	# amd objects of the tip, as for base. Walking back, git rewrote only
	# files that differ from the tip, so only those rebuild.
	if [ "$amd_copied" = 0 ]; then
		copy_objdir "$(objdir amd)" "$amd_obj"
		rm -rf "$amd_obj/mods" "$amd_obj/hdr"
		amd_copied=1
	fi
	if git -C "$SRC" diff --quiet "$c" "$tip" -- . ':!drivers/gpu/drm/amd' \
		':!drivers/gpu/drm/vkms' ':!Documentation'; then
		make_checkout "$amd_obj" builds@amd bzImage modules
		continue
	fi
	# Objects as amdgpu's Makefile names them.
	# shellcheck disable=SC2046
	make_checkout "$amd_obj" compiles@amd $(git -C "$SRC" diff --name-only "$c^" "$c" \
		-- 'drivers/gpu/drm/amd/*.c' | while read -r f; do
		f=drivers/gpu/drm/amd/amdgpu/../${f#drivers/gpu/drm/amd/}
		echo "${f%.c}.o"
	done)
done

git -C "$SRC" checkout -q series
mtimes_restore "$stamps" > /dev/null
rm -f "$stamps"
[ "$(git -C "$SRC" rev-parse HEAD)" = "$tip" ] || echo "# tree not back at the tip!"
tap_done
