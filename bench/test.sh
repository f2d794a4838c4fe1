#!/bin/sh
# make test: from nothing to a verdict. For each configuration given
# (default: base debug), build the patched kernel, the guest tests and an
# initramfs, boot it in QEMU, run the host-side checks, then print every test
# by name and "N passed, N failed" last. Exits non-zero on any failure.
set -eu
. "$(dirname "$0")/lib.sh"

configs=${*:-base debug}
"$REPO/bench/deps.sh"
"$REPO/bench/tree.sh"

series_out=$BUILD/results/series
rm -rf "$series_out" && mkdir -p "$series_out"
{
	echo "## suite host:series"
	"$REPO/tests/host/series.sh" "$SRC"
	echo "## exit host:series $?"
	echo "## suite host:verdict-selftest"
	"$REPO/tests/host/verdict-selftest.sh"
	echo "## exit host:verdict-selftest $?"
} > "$series_out/host.tap"

outs=$series_out
for cfg in $configs; do
	out=$BUILD/results/$cfg
	rm -rf "$out"
	mkdir -p "$out"
	outs="$outs $out"
	t=$(elapsed)
	"$REPO/bench/kernel.sh" "$cfg"
	"$REPO/bench/guest.sh" "$cfg"
	tb=$(elapsed)
	"$REPO/bench/boot.sh" "$cfg" test "$out" || true
	say "$cfg: built in $((tb - t)) s, guest ran $(cat "$out/boot.seconds") s"
	{
		echo "## suite host:exports"
		"$REPO/tests/host/exports.sh" "$(objdir "$cfg")" "$BUILD/modcheck-$cfg"
		echo "## exit host:exports $?"
	} > "$out/host.tap"
done

say "total $(elapsed) s"
# shellcheck disable=SC2086
"$REPO/bench/verdict.sh" $outs
