#!/bin/sh
# Developer helper: regenerate patches/$TREE from a kernel branch of the dev
# worktree (default build/$TREE/dev, branch HEAD) with its cover letter.
#
#   TREE=6.12 harness/export-series.sh [worktree]
#
# The cover letter's text is patches/$TREE/cover-letter.txt (subject on the
# first line, blurb after a blank line); it is sent by the series' author.
set -eu
. "$(dirname "$0")/lib.sh"

dev=${1:-$BUILD/dev}
cover=$PATCHES/cover-letter.txt
[ -f "$cover" ] || die "missing $cover"
# Every commit Cc's the people get_maintainer.pl names for it; the lists
# it names for the whole series are the recipients: dri-devel first.
all=$(mktemp)
git -C "$dev" format-patch -q --stdout pristine..HEAD > "$all"
lists=$(cd "$dev" && perl scripts/get_maintainer.pl --no-rolestats --no-git \
		--no-git-fallback --no-tree --nom --nor "$all" 2>/dev/null |
	sort -u | awk '/^dri-devel@/ { print "--to=" $0; next } { print "--cc=" $0 }')
rm -f "$all"
rm -f "$PATCHES"/*.patch
author_name=$(git -C "$dev" log -1 --format=%an pristine..HEAD)
author_email=$(git -C "$dev" log -1 --format=%ae pristine..HEAD)
# shellcheck disable=SC2086
git -C "$dev" -c user.name="$author_name" -c user.email="$author_email" \
	-c branch."$(git -C "$dev" rev-parse --abbrev-ref HEAD)".description="$(cat "$cover")" \
	format-patch -q --cover-letter --cover-from-description=subject \
	--zero-commit --no-signature $lists -o "$PATCHES" pristine..HEAD
(cd "$PATCHES" && ls [0-9]*.patch | grep -v '^0000-' > series)
say "exported $(wc -l < "$PATCHES/series") patches"
