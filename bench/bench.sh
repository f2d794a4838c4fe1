#!/bin/sh
# make bench: what the series costs, against Debian's unpatched kernel.
#
# Builds the patched kernel (base) and the unpatched one (pristine: the
# same configuration on the tag "pristine" of the source tree), boots them
# alternately, patched first, BENCH_PAIRS times each (default 3), runs
# bench/guest/kms_cost in each boot, then boots each once more under
# QEMU's -icount, where the same figures count instructions. report.py
# aggregates: per figure the ratio patched/unpatched of the instructions,
# of the medians and of the minima of all timed batches, the same ratio per
# pair of neighbouring boots (min / median / max), and a noise floor, the
# reference compared with itself across its own boots. Figures, not a
# verdict: the targets are stated with PASS or
# MISS, the exit status only says whether every boot delivered its figures.
# Writes build/bench/report.md; each boot's output is in build/bench/runs.
set -eu
. "$(dirname "$0")/../harness/lib.sh"

pairs=${BENCH_PAIRS:-3}
out=$BUILD/bench
runs=$out/runs

# boot_cost CONFIG DIR [icount]: one boot running kms_cost, counting
# instructions with "icount"; its TAP in DIR/cost.
boot_cost() {
	BOOT_ICOUNT=${3:+1} "$REPO/harness/boot.sh" "$1" bench "$2" > "$2.console" 2>&1 ||
		die "boot $(basename "$2") failed: see $2.console"
	# A serial line: CR LF.
	tr -d '\r' < "$2/results.tap" > "$2/cost"
	grep -qx '## kms_cost exit 0' "$2/cost" ||
		die "kms_cost failed in boot $(basename "$2"): see $2/cost"
	grep '^# writeback frame lost' "$2/cost" | sed "s/^# /[$(basename "$2")] /" >&2 || true
}

# Boots P1 U1 P2 U2 ..., then iP and iU: each one's kms_cost output in
# runs/<boot>/cost, read by report.py.
boot_all() {
	rm -rf "$runs"
	mkdir -p "$runs"
	t0=$(date +%s)
	i=1
	while [ "$i" -le "$pairs" ]; do
		for k in P U; do
			case $k in P) cfg=base ;; U) cfg=pristine ;; esac
			say "boot $k$i ($cfg)"
			boot_cost "$cfg" "$runs/$k$i"
		done
		i=$((i + 1))
	done
	echo $(( $(date +%s) - t0 )) > "$runs/boots.seconds"
	# One more boot of each, counting instructions instead of time.
	for k in P U; do
		case $k in P) cfg=base ;; U) cfg=pristine ;; esac
		say "boot i$k ($cfg, -icount)"
		boot_cost "$cfg" "$runs/i$k" icount
	done
}

# BENCH_REPORT_ONLY=1: aggregate the boots of the last run again.
if [ -z "${BENCH_REPORT_ONLY:-}" ]; then
	"$REPO/harness/deps.sh"
	"$REPO/harness/tree.sh"
	"$REPO/harness/kernel.sh" base
	"$REPO/harness/kernel.sh" pristine
	"$REPO/harness/guest.sh" base
	"$REPO/harness/guest.sh" pristine
	say "kernels and initramfs ready at $(elapsed) s"
	boot_all
fi
[ -f "$runs/P1/cost" ] || die "no figures in $runs"

python3 "$REPO/bench/report.py" "$runs" "$(kernel_release base)" "$(kernel_release pristine)" \
	> "$out/report.md"
cat "$out/report.md"
say "bench finished in $(elapsed) s (boots: $(cat "$runs/boots.seconds") s); report in $out/report.md"
