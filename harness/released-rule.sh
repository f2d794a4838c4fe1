#!/bin/sh
# amdgpu's cursor mode decision without the fixes, on demand: the series up
# to its end-to-end check of the decision against DC's programming
# (amdgpu_dm_cursor_dc_mode_decision), with the patches that fix the
# decision reverted, built with the amd configuration in build/<tree>/
# obj-released (a cold build, about 12 minutes on 2 cores) and booted. The
# KUnit suites that pass on the series must fail there: what the released
# rule shows wrong is printed per cause and DCN path.
#
#   TREE=6.12 harness/released-rule.sh [OUTDIR]
#
# Exits 0 when the suites saw the released rule fail, 1 otherwise.
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
check=$(commit_of "drm/amd/display: check the cursor mode decision against DC's cursor programming")
# Newest first, so that each revert applies to the tree it was written for.
fixes="
drm/amd/display: check holes and plane alpha for the DCN 4.0.1 cursor
drm/amd/display: use the overlay cursor over a translucent covering plane
drm/amd/display: decide the cursor mode again when a plane moves
drm/amd/display: use the overlay cursor over a plane scaled in one direction
"

git -C "$SRC" worktree prune
if [ -e "$RELEASED_SRC/.git" ]; then
	git -C "$RELEASED_SRC" reset -q --hard
	git -C "$RELEASED_SRC" checkout -q --detach "$check"
else
	git -C "$SRC" worktree add -q --detach "$RELEASED_SRC" "$check"
fi
echo "$fixes" | while IFS= read -r subject; do
	[ -n "$subject" ] || continue
	c=$(commit_of "$subject")
	git -C "$RELEASED_SRC" -c user.name=harness -c user.email=harness@invalid \
		revert --no-edit "$c" > /dev/null || die "released-rule: '$subject' does not revert"
	say "released: reverted $subject"
done
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
wrong=$(sed -n 's/.*; wrong \([0-9]*\):.*/\1/p' "$out/figures.txt" | awk '{ n += $1 } END { print n + 0 }')
paths=$(grep -c 'seed ' "$out/figures.txt" || true)
say "released: $paths DCN paths judged, $wrong native cursors DC shows wrong"
[ "$paths" = 3 ] && [ "$wrong" -gt 0 ] &&
	echo "$failed" | grep -qx amdgpu_dm_cursor_dc_mode_decision
