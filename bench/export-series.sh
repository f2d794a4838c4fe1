#!/bin/sh
# Developer helper: regenerate patches/ from a kernel branch of the dev
# worktree (default build/dev, branch HEAD) with its cover letter.
#
#   bench/export-series.sh [worktree]
#
# The cover letter's text is patches/cover-letter.txt (subject on the first
# line, blurb after a blank line).
set -eu
. "$(dirname "$0")/lib.sh"

dev=${1:-$BUILD/dev}
cover=$PATCHES/cover-letter.txt
[ -f "$cover" ] || die "missing $cover"
rm -f "$PATCHES"/*.patch
git -C "$dev" -c branch."$(git -C "$dev" rev-parse --abbrev-ref HEAD)".description="$(cat "$cover")" \
	format-patch -q --cover-letter --cover-from-description=subject \
	--zero-commit --no-signature -o "$PATCHES" pristine..HEAD
(cd "$PATCHES" && ls [0-9]*.patch | grep -v '^0000-' > series)
say "exported $(wc -l < "$PATCHES/series") patches"
