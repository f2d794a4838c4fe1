#!/bin/sh
# make test: from nothing to a verdict. For each tree and each of its
# configurations (configs_of in lib.sh), build the patched kernel, the guest
# tests and an initramfs, run the host-side checks, boot it in QEMU, then
# print every test by name and "N passed, N failed" last. Exits non-zero on
# any failure. i386 has no user space: harness/i386.sh builds it and runs its
# KUnit suites. "patches" builds every patch of the series on its own.
#
# Builds and guests overlap: a TCG guest keeps about one core busy (its
# suites run one at a time), a build keeps both, so the guests run while a
# background producer builds the next configurations. The producer
# prepares and builds every configuration that boots, tree by tree; a
# tree's build-only ones (i386, patches) come after the next tree's first
# configuration, so that its guest runs beside them. Each
# build leaves $BUILD/results/<cfg>.built ("ok" or "failed") for the guest
# loop; a failed build stops the producer and make test. Once
# the producer is done, two guests run at once.
#
# usage: test.sh [CONFIG...]     (TREE: one tree, both by default)
#        test.sh --stage prepare|build|boot [CONFIG]   (one stage, for TREE)
set -eu
# lib.sh gives TREE a default: what the caller set is read first.
trees=${TREE:-6.12 6.1}
. "$(dirname "$0")/lib.sh"

# host_suite NAME COMMAND...: frame a host-side TAP producer like a guest
# suite; its failure is a verdict, not a reason to stop make test.
host_suite() {
	name=$1
	shift
	echo "## suite $name"
	if "$@"; then rc=0; else rc=$?; fi
	echo "## exit $name $rc"
}

# The configurations of a tree that boot a guest, and those that only build.
booted() { for c in "$@"; do case "$c" in i386|patches) ;; *) echo "$c" ;; esac; done; }
build_only() { for c in "$@"; do case "$c" in i386|patches) echo "$c" ;; esac; done; }

series_out=$BUILD/results/series

# The tree's source at the series and its host-side suites.
stage_prepare() {
	"$REPO/harness/tree.sh"
	rm -rf "$series_out" && mkdir -p "$series_out"
	{
		host_suite host:series "$REPO/tests/host/series.sh" "$SRC"
		host_suite host:verdict-selftest "$REPO/tests/host/verdict-selftest.sh"
	} > "$series_out/host.tap"
}

# Everything of one configuration but its guest: kernel, guest programs,
# initramfs and the host-side checks that read the build.
stage_build() {
	cfg=$1
	out=$BUILD/results/$cfg
	t=$(elapsed)
	case "$cfg" in
	i386)
		rm -rf "$out" && mkdir -p "$out"
		"$REPO/harness/i386.sh" "$out" ||
			host_suite host:i386 sh -c 'echo "not ok 1 - i386-sh-ran-to-its-end"; echo 1..1; exit 1' \
				>> "$out/host.tap"
		;;
	patches)
		# Each patch on its own, from the tip's base objects. The walk
		# checks out older patches in $SRC: it runs after every other
		# build of the tree, and nothing else builds from $SRC meanwhile.
		"$REPO/harness/kernel.sh" base
		host_suite host:patch-builds "$REPO/tests/host/patch-builds.sh" >> "$series_out/host.tap"
		;;
	*)
		rm -rf "$out" && mkdir -p "$out"
		"$REPO/harness/kernel.sh" "$cfg"
		"$REPO/harness/guest.sh" "$cfg"
		host_suite host:exports "$REPO/tests/host/exports.sh" "$(objdir "$cfg")" \
			"$BUILD/modcheck-$cfg" > "$out/host.tap"
		if [ "$cfg" = amd ]; then
			host_suite host:amd "$REPO/tests/host/amd.sh" >> "$out/host.tap"
		fi
		if [ "$cfg" = base ]; then
			host_suite host:kmsg-selftest "$REPO/tests/host/kmsg-selftest.sh" \
				"$(objdir base)/hdr/include" "$BUILD/kmsg-selftest" >> "$out/host.tap"
		fi
		;;
	esac
	say "$cfg: built in $(( $(elapsed) - t )) s"
}

stage_boot() {
	cfg=$1
	out=$BUILD/results/$cfg
	"$REPO/harness/boot.sh" "$cfg" test "$out" || true
	say "$cfg: guest ran $(cat "$out/boot.seconds") s;" \
	    "$(sed -n 's/^# \(user space reached .*\)/\1/p' "$out/results.tap" | tr -d '\r')"
	say "$cfg: slowest suites (s): $(tr -d '\r' < "$out/results.tap" |
		awk '/^## exit / && NF >= 5 { print $5, $3 }' | sort -rn | head -6 |
		awk '{ printf "%s%s %s", sep, $2, $1; sep = ", " }')"
}

# One stage in a process of its own, so that set -e stops it at the first
# failing step (inside an "if" or "||" it would not).
if [ "${1:-}" = --stage ]; then
	case "${2:-}" in
	prepare) stage_prepare ;;
	build|boot) "stage_$2" "${3:?usage: test.sh --stage $2 CONFIG}" ;;
	*) die "unknown stage '${2:-}' (prepare, build, boot)" ;;
	esac
	exit 0
fi

# CONFIGS if given, else each tree's own list.
configs() { if [ $# -gt 1 ]; then shift; echo "$@"; else configs_of "$1"; fi; }

"$REPO/harness/deps.sh"
for t in $trees; do
	mkdir -p "$REPO/build/$t/results"
	rm -f "$REPO/build/$t/results"/*.built "$REPO/build/$t/results"/*.booted
done
# Left by the producer once every build is done.
builds_done=$REPO/build/.builds-done
rm -f "$builds_done"

# build_marked TREE CONFIG: the build stage, and its marker for the guests.
build_marked() {
	if TREE=$1 "$0" --stage build "$2"; then
		echo ok > "$REPO/build/$1/results/$2.built"
	else
		echo failed > "$REPO/build/$1/results/$2.built"
		return 1
	fi
}

# The producer. Each tree is prepared when its turn comes: preparing both
# at once, at the start, made them fight for the disk (tar and git add of
# 80,000 files each: 168 s for the two, against 62 s and 86 s apart) and
# slowed the first build. A tree's build-only configurations wait until the
# next tree's first guest can run beside them: the patch walk relinks the
# kernel once per patch, mostly on one core, and a TCG guest needs one. The
# last tree's come last.
(
	waiting=""
	for t in $trees; do
		TREE=$t "$0" --stage prepare ||
			{ printf '[harness %s] error: preparing the tree failed\n' "$t" >&2; exit 1; }
		first=1
		# shellcheck disable=SC2046
		for cfg in $(booted $(configs "$t" "$@")); do
			build_marked "$t" "$cfg"
			[ "$first" = 1 ] || continue
			first=0
			for tc in $waiting; do
				build_marked "${tc%%:*}" "${tc#*:}"
			done
			waiting=""
		done
		# shellcheck disable=SC2046
		for cfg in $(build_only $(configs "$t" "$@")); do
			waiting="$waiting $t:$cfg"
		done
	done
	for tc in $waiting; do
		build_marked "${tc%%:*}" "${tc#*:}"
	done
	printf '[harness] every build done at %s s\n' "$(elapsed)" >&2
	: > "$builds_done"
) &
producer=$!

# wait_built TREE CONFIG: until the producer has built it; a failed build
# (or a producer that stopped before it) ends make test.
wait_built() {
	marker=$REPO/build/$1/results/$2.built
	while [ ! -f "$marker" ]; do
		kill -0 "$producer" 2>/dev/null || [ -f "$marker" ] ||
			die "tree $1: the harness stopped before building $2"
		sleep 2
	done
	[ "$(cat "$marker")" = ok ] || { wait "$producer" || true; die "tree $1: building $2 failed"; }
}

# Guests run one at a time beside the producer's builds, which keep both
# cores busy; once every build is done, two at a time, a core each. A
# guest's stage leaves its exit status in results/<cfg>.booted.
guest_marks=""
guests_running() {
	gr=0
	for gm in $guest_marks; do
		[ -f "$gm" ] || gr=$((gr + 1))
	done
	echo "$gr"
}
# guest_slot: until another guest may start.
guest_slot() {
	while :; do
		gs=$(guests_running)
		[ "$gs" = 0 ] && return
		[ "$gs" = 1 ] && [ -f "$builds_done" ] && return
		sleep 2
	done
}

outs=""
for t in $trees; do
	outs="$outs $REPO/build/$t/results/series"
	# shellcheck disable=SC2046
	for cfg in $(configs "$t" "$@"); do
		[ "$cfg" = patches ] || outs="$outs $REPO/build/$t/results/$cfg"
	done
	# shellcheck disable=SC2046
	for cfg in $(booted $(configs "$t" "$@")); do
		wait_built "$t" "$cfg"
		guest_slot
		mark=$REPO/build/$t/results/$cfg.booted
		(
			if TREE=$t "$0" --stage boot "$cfg"; then rc=0; else rc=$?; fi
			echo "$rc" > "$mark.new" && mv "$mark.new" "$mark"
		) &
		guest_marks="$guest_marks $mark"
	done
done
while [ "$(guests_running)" != 0 ]; do
	sleep 2
done
guests_failed=0
for gm in $guest_marks; do
	[ "$(cat "$gm")" = 0 ] || { say "guest stage failed: $gm"; guests_failed=1; }
done
[ "$guests_failed" = 0 ] || die "a guest's stage failed"
printf '[harness] every guest done at %s s\n' "$(elapsed)" >&2
wait "$producer" || die "the harness itself failed"
printf '[harness] all trees done in %s s\n' "$(elapsed)" >&2
# shellcheck disable=SC2086
exec "$REPO/harness/verdict.sh" $outs
