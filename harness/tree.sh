#!/bin/sh
# Bring the kernel source tree to exactly "pristine Debian tree + patches/series".
#
# The tree is a git repository whose first commit is the untouched
# linux-source tarball. Whenever the series differs from the one last
# applied, the tree goes back to that commit and the whole series is applied
# again with git am, so a stale tree can never be built. Object files live in
# separate O= directories: kbuild rebuilds whatever git touched.
set -eu
. "$(dirname "$0")/lib.sh"

GIT="git -C $SRC -c user.name=bench -c user.email=bench@localhost"
series=$PATCHES/series
[ -f "$series" ] || die "missing $series"
patches=$(grep -v -e '^#' -e '^[[:space:]]*$' "$series" | sed "s|^|$PATCHES/|")
for p in $patches; do [ -f "$p" ] || die "series names missing patch $p"; done

# shellcheck disable=SC2086
want=$(cat "$series" $patches | sha256sum | cut -d' ' -f1)

if [ ! -d "$SRC/.git" ]; then
	[ -f "$TARBALL" ] || die "$TARBALL missing (apt-get install linux-source-$TREE)"
	say "unpacking $TARBALL"
	rm -rf "$SRC"
	mkdir -p "$BUILD"
	tar -C "$BUILD" -xf "$TARBALL"
	git -C "$SRC" init -q
	# Debian's top-level .gitignore ignores everything ("/*"): force it.
	git -C "$SRC" add -f . >/dev/null
	$GIT commit -q -m "pristine linux-source-$TREE"
	git -C "$SRC" tag pristine
fi

stamp=$BUILD/series.stamp
if [ -f "$stamp" ] && [ "$(sed -n 1p "$stamp")" = "$want" ] &&
   [ "$(sed -n 2p "$stamp")" = "$(git -C "$SRC" rev-parse HEAD)" ] &&
   [ -z "$(git -C "$SRC" status --porcelain)" ]; then
	exit 0
fi

say "applying patches/series onto the pristine tree"
# Going back to pristine and applying again rewrites every file the series
# touches. Files that end up as they were keep their modification time, so
# that kbuild rebuilds only what really changed: a header of the series
# included by all of amdgpu would otherwise cost its whole build.
old=$(git -C "$SRC" rev-parse -q --verify HEAD 2>/dev/null || true)
times=$BUILD/series.mtimes
: > "$times"
if [ -n "$old" ] && [ -z "$(git -C "$SRC" status --porcelain)" ]; then
	# shellcheck disable=SC2046
	mtimes_save "$times" $(git -C "$SRC" diff --name-only pristine "$old")
fi
rm -f "$stamp"
$GIT am --abort >/dev/null 2>&1 || true
$GIT checkout -q -f -B series pristine
$GIT clean -q -f -d -x
# shellcheck disable=SC2086
$GIT am -q $patches || die "patches/series does not apply to the pristine tree"
kept=0
[ -z "$old" ] || kept=$(mtimes_restore "$times" "$old")
rm -f "$times"
[ "$kept" = 0 ] || say "$kept unchanged files keep their modification time"
printf '%s\n%s\n' "$want" "$(git -C "$SRC" rev-parse HEAD)" > "$stamp"
say "series applied: $(git -C "$SRC" rev-list --count pristine..HEAD) patches"
