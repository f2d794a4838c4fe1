#!/bin/sh
# amdgpu's cursor mode decision as Debian's 6.12 released it, on demand:
# the series up to the RFC for DCN 4.0.1 (the fixes, the decision's KUnit
# suites, amdgpu_dm_cursor_dc_mode_decision among them), with
# amdgpu_dm.c put back as released but for what the KUnit suites need to
# call it, built with the amd configuration in build/<tree>/obj-released
# (a cold build, about 7-12 minutes on 2 cores) and booted. The suites
# that pass on the series must fail there: what the released rule shows
# wrong is printed per cause and DCN path, with the failing cases.
#
#   TREE=6.12 harness/released-rule.sh [OUTDIR]
#   RELEASED_ONLY='SUBJECT' TREE=6.12 harness/released-rule.sh [OUTDIR]
#
# RELEASED_ONLY takes out one patch's change to amdgpu_dm.c instead, from
# the tree before the DCN 4.0.1 RFC (so DCN 4.0.1 is as released there
# too): what that one fix is needed for. Exits 0 when the suites saw the
# released rule fail (with RELEASED_ONLY: when the end-to-end case did),
# 1 otherwise.
set -eu
. "$(dirname "$0")/lib.sh"

[ "$TREE" = 6.12 ] || die "released-rule: the end-to-end check is in the 6.12 series only"
out=${1:-$BUILD/results/released}
[ -d "$SRC/.git" ] || die "released-rule: run harness/tree.sh first"

# Commits by subject, in the series as tree.sh applied it.
commit_of() {
	_c=$(git -C "$SRC" log --format='%H %s' pristine..HEAD |
		awk -v s="$1" 'substr($0, 42) == s { print $1 }')
	[ -n "$_c" ] || die "released-rule: no patch '$1' in the series"
	echo "$_c"
}
top=$(commit_of "drm/amd/display: check holes and plane alpha for the DCN 4.0.1 cursor")
[ -z "${RELEASED_ONLY:-}" ] || top=$(git -C "$SRC" rev-parse "$top^")
kunit=$(commit_of "drm/amd/display: test the cursor mode decision with KUnit")
dm=drivers/gpu/drm/amd/display/amdgpu_dm/amdgpu_dm.c

git -C "$SRC" worktree prune
if [ -e "$RELEASED_SRC/.git" ]; then
	git -C "$RELEASED_SRC" reset -q --hard
	git -C "$RELEASED_SRC" checkout -q --detach "$top"
else
	git -C "$SRC" worktree add -q --detach "$RELEASED_SRC" "$top"
fi
if [ -n "${RELEASED_ONLY:-}" ]; then
	git -C "$SRC" show "$(commit_of "$RELEASED_ONLY")" -- "$dm" |
		git -C "$RELEASED_SRC" apply -R --index ||
		die "released-rule: '$RELEASED_ONLY' does not come out of $dm"
else
	# The released decision: Debian's amdgpu_dm.c, with the KUnit patch's
	# change to it (dm_crtc_get_cursor_mode() visible to the suites) alone.
	git -C "$RELEASED_SRC" checkout -q pristine -- "$dm"
	git -C "$SRC" show "$kunit" -- "$dm" | git -C "$RELEASED_SRC" apply --index ||
		die "released-rule: the KUnit patch does not apply to the released $dm"
fi
if ! git -C "$RELEASED_SRC" diff --cached --quiet; then
	git -C "$RELEASED_SRC" -c user.name=harness -c user.email=harness@invalid \
		commit -q -m "amdgpu_dm.c as released${RELEASED_ONLY:+ in part}"
fi
say "released: $dm as Debian released it, on $(git -C "$SRC" log -1 --format=%s "$top")"
# A checkout that rewrote nothing keeps the objects: kbuild rebuilds what changed.
"$REPO/harness/kernel.sh" released
"$REPO/harness/guest.sh" released
mkdir -p "$out"
"$REPO/harness/boot.sh" released test "$out"

# Each DCN path's figures, then which decisions the mode suite saw go wrong
# (the guest's serial lines end in CR).
tr -d '\r' < "$out/results.tap" > "$out/results.txt"
sed -n 's/^ *# amdgpu_dm_cursor_dc_mode_decision: \(dcn[0-9]*: seed .*\)/\1/p' \
	"$out/results.txt" | tee "$out/figures.txt"
failed=$(sed -n 's/^ *not ok [0-9]* \([a-z0-9_]*\)$/\1/p' "$out/results.txt" | sort -u)
printf 'failing KUnit cases and suites:\n%s\n' "$failed"
# Every DCN path shows cursors wrong, and each case the series' commit
# messages name fails.
paths=$(grep -c 'seed ' "$out/figures.txt" || true)
wrong_paths=$(sed -n 's/.*; wrong \([0-9]*\):.*/\1/p' "$out/figures.txt" | awk '$1 > 0' | wc -l)
expected="amdgpu_dm_cursor_dc_mode_decision
overlay_scaled_in_height_only overlay_scaled_in_width_only overlay_off_the_top_left
overlay_moved_off_scaled_primary primary_shrunk_to_a_window
overlay_moved_back_over_the_crtc mode_grown_past_the_primary
mode_set_again_at_the_same_size translucent_overlay_covering_the_crtc
translucent_overlay_containing_another
translucent_argb_overlay_over_part_of_the_primary overlay_faded_to_translucent
dcn401_primary_leaving_a_hole dcn401_translucent_overlay"
missing=$(for c in $expected; do echo "$failed" | grep -qx "$c" || echo "$c"; done)
say "released: $paths DCN paths judged, $wrong_paths with native cursors DC shows wrong"
[ -z "$missing" ] || say "released: expected to fail but did not: $(echo $missing)"
if [ -n "${RELEASED_ONLY:-}" ]; then
	echo "$failed" | grep -qx amdgpu_dm_cursor_dc_mode_decision
else
	[ "$paths" = 3 ] && [ "$wrong_paths" = 3 ] && [ -z "$missing" ]
fi
