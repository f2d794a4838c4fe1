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

# Boots P1 U1 P2 U2 ...: each one's records (kernel boot figure setting
# round seconds) in runs/raw, its TSC rate in runs/clocks.
boot_all() {
	rm -rf "$runs"
	mkdir -p "$runs"
	: > "$runs/clocks"
	: > "$runs/raw"
	t0=$(date +%s)
	i=1
	while [ "$i" -le "$pairs" ]; do
		for k in P U; do
			case $k in P) cfg=base ;; U) cfg=pristine ;; esac
			dir=$runs/$k$i
			say "boot $k$i ($cfg)"
			"$REPO/harness/boot.sh" "$cfg" bench "$dir" > "$dir.console" 2>&1 ||
				die "boot $k$i failed: see $dir.console"
			# A serial line: CR LF.
			tr -d '\r' < "$dir/results.tap" > "$dir/cost"
			grep -qx '## kms_cost exit 0' "$dir/cost" ||
				die "kms_cost failed in boot $k$i: see $dir.console"
			grep '^# writeback frame lost' "$dir/cost" | sed "s/^# /[$k$i] /" >&2 || true
			sed -n "s/^# fine clock: \([0-9]*\) ticks per second$/$k $i \1/p" \
				"$dir/cost" >> "$runs/clocks"
			awk -v k="$k" -v i="$i" '$1 == "R" { print k, i, $2, $3, $4, $5 }' \
				"$dir/cost" >> "$runs/raw"
		done
		i=$((i + 1))
	done
	echo $(( $(date +%s) - t0 )) > "$runs/boots.seconds"
	# One more boot of each, counting instructions instead of time.
	for k in P U; do
		case $k in P) cfg=base ;; U) cfg=pristine ;; esac
		say "boot i$k ($cfg, -icount)"
		BOOT_ICOUNT=1 "$REPO/harness/boot.sh" "$cfg" bench "$runs/i$k" > "$runs/i$k.console" 2>&1 ||
			die "boot i$k failed: see $runs/i$k.console"
		tr -d '\r' < "$runs/i$k/results.tap" > "$runs/i$k/cost"
		grep -qx '## kms_cost exit 0' "$runs/i$k/cost" ||
			die "kms_cost failed in boot i$k: see $runs/i$k.console"
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
[ -s "$runs/raw" ] || die "no figures in $runs"

python3 "$REPO/bench/report.py" "$runs" "$(kernel_release base)" "$(kernel_release pristine)" \
	> "$out/report.md"
cat "$out/report.md"
say "bench finished in $(elapsed) s (boots: $(cat "$runs/boots.seconds") s); report in $out/report.md"
