#!/bin/sh
# make test: from nothing to a verdict. For each tree and each of its
# configurations (configs_of in lib.sh), build the patched kernel, the guest
# tests and an initramfs, boot it in QEMU, run the host-side checks, then
# print every test by name and "N passed, N failed" last. Exits non-zero on
# any failure. i386 has no user space: bench/i386.sh builds it and runs its
# KUnit suites. "patches" builds every patch of the series on its own.
set -eu
. "$(dirname "$0")/lib.sh"

# Every tree in TREES (default: both), each with its configurations:
# CONFIGS if given, else the tree's own list (configs_of in lib.sh). One
# verdict over all of them at the end.
if [ -z "${TEST_ONE_TREE:-}" ]; then
	outs=""
	for t in ${TREES:-6.12 6.1}; do
		TREE=$t TEST_ONE_TREE=1 "$0" "$@" || die "tree $t: the bench itself failed"
		outs="$outs $(cat "$REPO/build/$t/results/outs")"
	done
	printf '[bench] all trees done in %s s\n' "$(elapsed)" >&2
	# shellcheck disable=SC2086
	exec "$REPO/bench/verdict.sh" $outs
fi
configs=${*:-$(configs_of "$TREE")}

# host_suite NAME COMMAND...: frame a host-side TAP producer like a guest
# suite; its failure is a verdict, not a reason to stop the bench.
host_suite() {
	name=$1
	shift
	echo "## suite $name"
	if "$@"; then rc=0; else rc=$?; fi
	echo "## exit $name $rc"
}
"$REPO/bench/deps.sh"
"$REPO/bench/tree.sh"

series_out=$BUILD/results/series
rm -rf "$series_out" && mkdir -p "$series_out"
{
	host_suite host:series "$REPO/tests/host/series.sh" "$SRC"
	host_suite host:verdict-selftest "$REPO/tests/host/verdict-selftest.sh"
} > "$series_out/host.tap"

outs=$series_out
for cfg in $configs; do
	# "patches" is not a kernel configuration: the walk below.
	[ "$cfg" = patches ] && continue
	out=$BUILD/results/$cfg
	rm -rf "$out"
	mkdir -p "$out"
	outs="$outs $out"
	if [ "$cfg" = i386 ]; then
		"$REPO/bench/i386.sh" "$out" ||
			host_suite bench:i386 false >> "$out/host.tap"
		continue
	fi
	t=$(elapsed)
	"$REPO/bench/kernel.sh" "$cfg"
	"$REPO/bench/guest.sh" "$cfg"
	tb=$(elapsed)
	"$REPO/bench/boot.sh" "$cfg" test "$out" || true
	say "$cfg: built in $((tb - t)) s, guest ran $(cat "$out/boot.seconds") s;" \
	    "$(sed -n 's/^# \(user space reached .*\)/\1/p' "$out/results.tap" | tr -d '\r')"
	say "$cfg: slowest suites (s): $(tr -d '\r' < "$out/results.tap" |
		awk '/^## exit / && NF >= 5 { print $5, $3 }' | sort -rn | head -6 |
		awk '{ printf "%s%s %s", sep, $2, $1; sep = ", " }')"
	host_suite host:exports "$REPO/tests/host/exports.sh" "$(objdir "$cfg")" \
		"$BUILD/modcheck-$cfg" > "$out/host.tap"
	if [ "$cfg" = amd ]; then
		host_suite host:amd "$REPO/tests/host/amd.sh" >> "$out/host.tap"
	fi
done

# Each patch on its own, once the tip is built as base (the walk starts
# from its objects).
case " $configs " in
*" patches "*)
	"$REPO/bench/kernel.sh" base
	t=$(elapsed)
	host_suite host:patch-builds "$REPO/tests/host/patch-builds.sh" >> "$series_out/host.tap"
	say "every patch built in $(( $(elapsed) - t )) s"
	;;
esac

say "tree done at $(elapsed) s"
echo "$outs" > "$BUILD/results/outs"
