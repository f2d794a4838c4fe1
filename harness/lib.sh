# Shared settings for the harness scripts (and bench/bench.sh); sourced, not run.
# shellcheck shell=sh

REPO=${REPO:-$(cd "$(dirname "$0")/.." && pwd)}
# Two Debian trees: 6.12 (the primary target) and 6.1 (Debian 12's kernel).
# Each has its own series in patches/<tree>/ and its own build directory.
TREE=${TREE:-6.12}
case "$TREE" in 6.1|6.12) ;; *) printf '[harness] error: TREE=%s (6.1 or 6.12)\n' "$TREE" >&2; exit 1 ;; esac
export TREE
PATCHES=$REPO/patches/$TREE
BUILD=${BUILD:-$REPO/build/$TREE}
SRC=$BUILD/linux-source-$TREE
# Debian's tree as shipped (tag "pristine" of $SRC), checked out on its own
# so that building it never disturbs $SRC, which tree.sh keeps at the series.
PRISTINE_SRC=$BUILD/linux-pristine
TARBALL=/usr/src/linux-source-$TREE.tar.xz
JOBS=${JOBS:-$(nproc)}

say() { printf '[harness %s] %s\n' "$TREE" "$*" >&2; }
die() { printf '[harness] error: %s\n' "$*" >&2; exit 1; }

# Elapsed wall-clock seconds since the script started, for the stage log.
HARNESS_T0=${HARNESS_T0:-$(date +%s)}
export HARNESS_T0
elapsed() { echo $(( $(date +%s) - HARNESS_T0 )); }

# Boot a guest under a time limit: boot_qemu CFG LIMIT OUT QEMU ARGS...
# Records the wall time in OUT/boot.seconds. A guest still running after
# LIMIT seconds is killed, noted in OUT/timeout, and the call fails; any
# other exit status of QEMU is only reported.
boot_qemu() {
	_cfg=$1 _limit=$2 _out=$3
	shift 3
	_t0=$(date +%s)
	_rc=0
	timeout --kill-after=10 "$_limit" "$@" || _rc=$?
	echo $(( $(date +%s) - _t0 )) > "$_out/boot.seconds"
	if [ $_rc -eq 124 ] || [ $_rc -eq 137 ]; then
		echo "guest did not finish within $_limit s: killed" > "$_out/timeout"
		say "$_cfg: guest killed after $_limit s"
		return 1
	fi
	[ $_rc -eq 0 ] || say "$_cfg: qemu exited with $_rc"
}

# The build directory of one kernel configuration (base, debug, amd, i386,
# pristine).
objdir() { echo "$BUILD/obj-$1"; }

# The source tree of one configuration: pristine is the unpatched tree,
# released the series up to its end-to-end check of amdgpu's cursor mode
# decision with the fixes to that decision reverted (harness/released-rule.sh).
RELEASED_SRC=$BUILD/linux-released
srcdir() {
	case "$1" in
	pristine) echo "$PRISTINE_SRC" ;;
	released) echo "$RELEASED_SRC" ;;
	*) echo "$SRC" ;;
	esac
}

# Config fragments of one configuration, in merge order. pristine is base
# on the unpatched tree: the same fragments, less the symbols that only the
# series defines (kernel.sh drops those).
# Each fragment may have a companion in config/<tree>/ for what only one
# tree has.
fragments() {
	case "$1" in
	base|pristine) _fr="base" ;;
	debug) _fr="base debug" ;;
	amd|released) _fr="base amd" ;;
	i386) _fr="i386" ;;
	*) die "unknown configuration '$1' (base, debug, amd, i386, pristine, released)" ;;
	esac
	for _f in $_fr; do
		echo "$REPO/harness/config/$_f.config"
		[ ! -f "$REPO/harness/config/$TREE/$_f.config" ] ||
			echo "$REPO/harness/config/$TREE/$_f.config"
	done | xargs
}

# The configurations make test runs on a tree when CONFIGS does not say
# ("patches": every patch built on its own). CI's 70 minutes hold the
# primary tree in full and, of the backport, base and amd (whose guest
# checks the cursor helper against 6.1's DC); the rest of 6.1 runs on
# demand (6.12's i386 build checks the shared helper for 32 bits; 6.1's own
# vkms arithmetic only here): make test TREE=6.1 CONFIGS="base debug amd i386 patches".
configs_of() {
	case "$1" in
	6.12) echo base debug amd i386 patches ;;
	6.1) echo base amd ;;
	esac
}

# make's ARCH= argument of one configuration: none (the host's) but for i386.
karch() { case "$1" in i386) echo ARCH=i386 ;; esac; }

kernel_release() { cat "$(objdir "$1")/include/config/kernel.release"; }

# copy_objdir FROM TO: a build directory that kbuild continues from, for a
# configuration or a patch walk that differs a little. Objtool's own build
# records absolute output paths; pointed at the copy, objtool stays as it
# is. Otherwise it relinks, and on 6.1, where every object depends on the
# objtool binary, the whole kernel rebuilds.
copy_objdir() {
	rm -rf "$2"
	cp -a "$1" "$2"
	if [ -d "$2/tools" ]; then
		find "$2/tools" -name '.*.cmd' -exec sed -i "s|$1/|$2/|g" {} +
	fi
}

# Modification times of source files, kept across a checkout that rewrites
# them, so that kbuild rebuilds only what really changed. POSIX sh has no
# local variables: these use their own names, callers loop over f and n.
# mtimes_save LIST FILE...: records the times of the files (paths relative
# to $SRC) that exist into LIST.
mtimes_save() {
	_mt_list=$1
	shift
	for _mt_f in "$@"; do
		[ -f "$SRC/$_mt_f" ] && echo "$(stat -c %Y "$SRC/$_mt_f") $_mt_f"
	done > "$_mt_list"
	return 0
}

# mtimes_restore LIST [COMMIT]: puts the recorded times back; with COMMIT,
# only on files whose content is the same as there. Prints how many.
mtimes_restore() {
	_mt_n=0
	while read -r _mt_t _mt_f; do
		[ -f "$SRC/$_mt_f" ] || continue
		[ -z "${2:-}" ] || git -C "$SRC" diff --quiet "$2" HEAD -- "$_mt_f" || continue
		touch -d "@$_mt_t" "$SRC/$_mt_f"
		_mt_n=$((_mt_n + 1))
	done < "$1"
	echo "$_mt_n"
}
