#!/bin/sh
# make bench: what the series costs, against Debian's unpatched kernel.
#
# Builds the patched kernel (base) and the unpatched one (pristine: the
# same configuration on the tag "pristine" of the source tree), boots them
# alternately, patched first, BENCH_PAIRS times each (default 3), runs
# bench/guest/kms_cost in each boot and aggregates its batches here: per
# figure the ratio patched/unpatched of the medians and of the minima of
# all batches, the same ratio per pair of neighbouring boots (min / median
# / max), and a noise floor, the reference compared with itself across its
# own boots. Figures, not a verdict: the targets are stated with PASS or
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
pairs=$(cut -d' ' -f2 "$runs/clocks" | sort -n | tail -1)
guest_s=$(cat "$runs/boots.seconds")

# Each boot measured the TSC's rate (the host's, under TCG) against its own
# clock, which loses jiffies when QEMU's vCPUs are starved: the lowest rate
# is the least distorted. Every boot's seconds are converted to that
# reference, so that boots whose clock ran slow are not compared in their
# own units. The spread of the rates shows how disturbed the run was.
hz_ref=$(cut -d' ' -f3 "$runs/clocks" | sort -n | head -1)
awk -v ref="$hz_ref" 'NR == FNR { hz[$1 " " $2] = $3; next }
	{ $6 = sprintf("%.9f", $6 * hz[$1 " " $2] / ref); print }' \
	"$runs/clocks" "$runs/raw" > "$runs/records"
drift=$(awk -v ref="$hz_ref" '{ d = 100 * ($3 / ref - 1); if (d > m) m = d } END { printf "%.1f", m }' \
	"$runs/clocks")

# One row per figure: emulation, label, numerator "kernel figure setting",
# denominator, target (the ratio must not exceed it). The unpatched kernel
# has neither the cap nor the emulation: its no-cap figure is the reference
# of both, its only composition the reference of both settings.
rows='off|TEST_ONLY commit, no cap|P test_nocap off|U test_nocap -|1.02
off|TEST_ONLY commit, cap set (unpatched: no cap)|P test_cap off|U test_nocap -|1.02
off|legacy cursor move, no cap|P move off|U move -|1.02
off|composition 1920x1080, unscaled|P compose off|U compose -|1.02
on|TEST_ONLY commit, no cap|P test_nocap on|U test_nocap -|1.20
on|TEST_ONLY commit, cap set (unpatched: no cap)|P test_cap on|U test_nocap -|1.20
on|legacy cursor move, no cap|P move on|U move -|1.20
on|composition 1920x1080, unscaled|P compose on|U compose -|1.10
on vs off|composition 1920x1080, 2x upscaled overlay under the cursor (patched only)|P scaled on|P scaled off|1.10'

# The aggregation: reads the rows on stdin, the records (kernel boot figure
# setting round seconds) from the file recs.
# shellcheck disable=SC2016
report_awk='
function sort(a, n,    i, j, x) {
	for (i = 2; i <= n; i++) {
		x = a[i]
		for (j = i - 1; j >= 1 && a[j] > x; j--)
			a[j + 1] = a[j]
		a[j + 1] = x
	}
}
function median(a, n) {
	sort(a, n)
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
# Median and minimum of the batches of one "kernel figure setting", of boot
# b or (b = 0) of all boots, in m[1] and m[2]; how many there are.
function stats(series, b, m,    t, n, i, k, j) {
	n = 0
	for (i = 1; i <= boots[substr(series, 1, 1)]; i++) {
		if (b && i != b)
			continue
		k = series " " i
		for (j = 1; j <= cnt[k]; j++)
			t[++n] = val[k, j]
	}
	if (!n)
		return 0
	m[1] = median(t, n)
	m[2] = t[1]
	return n
}
function show(x, unit) {
	return unit == "ms" ? sprintf("%.1f ms", 1e3 * x) : sprintf("%.1f us", 1e6 * x)
}
BEGIN {
	while ((getline line < recs) > 0) {
		split(line, f, " ")
		k = f[1] " " f[3] " " f[4] " " f[2]
		val[k, ++cnt[k]] = f[6]
		if (f[2] > boots[f[1]])
			boots[f[1]] = f[2]
	}
	FS = "|"
	print "| emulation | figure | patched: median (min) | reference | ratio of medians | ratio of minima | per pair: min / median / max | noise floor: medians; minima | target | medians / minima |"
	print "|---|---|---|---|---|---|---|---|---|---|"
}
{
	unit = $3 ~ / (compose|scaled) / ? "ms" : "us"
	if (!stats($3, 0, n) || !stats($4, 0, d)) {
		printf "| %s | %s | no figures | | | | | | %s | |\n", $1, $2, $5
		next
	}
	np = 0
	for (i = 1; i <= boots[substr($3, 1, 1)] && i <= boots[substr($4, 1, 1)]; i++)
		if (stats($3, i, bn) && stats($4, i, bd))
			pr[++np] = bn[1] / bd[1]
	sort(pr, np)
	nf = 0
	for (i = 1; i <= boots[substr($4, 1, 1)]; i++)
		for (j = i + 1; j <= boots[substr($4, 1, 1)]; j++)
			if (stats($4, i, bi) && stats($4, j, bj)) {
				fl[++nf] = bj[1] / bi[1]
				fm[nf] = bj[2] / bi[2]
			}
	sort(fl, nf)
	sort(fm, nf)
	# The largest factors by which the reference differed from itself.
	noise = 1
	noise_min = 1
	for (i = 1; i <= nf; i++) {
		noise = fl[i] > noise ? fl[i] : 1 / fl[i] > noise ? 1 / fl[i] : noise
		noise_min = fm[i] > noise_min ? fm[i] : 1 / fm[i] > noise_min ? 1 / fm[i] : noise_min
	}
	ratio = n[1] / d[1]
	split($4, ref, " ")
	printf "| %s | %s | %s (%s) | %s%s: %s (%s) | **%.3f** | **%.3f** | %.3f / %.3f / %.3f | %s | <= %s | %s / %s |\n",
		$1, $2, show(n[1], unit), show(n[2], unit), ref[1], ref[3] == "-" ? "" : " " ref[3],
		show(d[1], unit), show(d[2], unit), ratio, n[2] / d[2],
		pr[1], np % 2 ? pr[(np + 1) / 2] : (pr[np / 2] + pr[np / 2 + 1]) / 2, pr[np],
		nf ? sprintf("%.3f - %.3f; %.3f - %.3f", fl[1], fl[nf], fm[1], fm[nf]) : "-", $5,
		verdict(ratio, $5, noise), verdict(n[2] / d[2], $5, noise_min)
}
# PASS within the target; a miss by less than the noise floor says so.
function verdict(r, target, noise) {
	if (r <= target + 0)
		return "PASS"
	return r <= target * noise ? "MISS (in noise)" : "MISS"
}'

{
	echo "# make bench: the series against the unpatched kernel"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) host cores, QEMU TCG." \
	     "$pairs boots of each kernel, alternating (P = patched $(kernel_release base)," \
	     "U = unpatched $(kernel_release pristine), same configuration), $guest_s s of boots."
	echo "Guest clocks slower than the host's by up to $drift % (lost jiffies under load;"
	echo "corrected per boot, see bench.sh)."
	echo "Per boot: $(sed -n 's/^# cursor figures: //p' "$runs/P1/cost");" \
	     "composition: $(sed -n 's/^# composition: //p' "$runs/P1/cost")."
	echo
	echo "$rows" | awk -v recs="$runs/records" "$report_awk"
	echo
	echo "Cursor figures in microseconds per call, composition in milliseconds per"
	echo "frame (from the vblank that starts it to the writeback fence). \"medians\","
	echo "\"minima\": the ratio of the median (minimum) of all batches of all boots."
	echo "\"per pair\": ratio of the boot medians of P_i and U_i (P_i on and off for"
	echo "the last row), min / median / max over the pairs. \"noise floor\": the"
	echo "reference against itself, ratios of its boot medians (minima) over every pair"
	echo "of its boots, min - max. PASS or MISS, for the ratio of medians and for that of"
	echo "minima: the ratio is within the target, or not; \"in noise\": it misses the"
	echo "target by less than the reference's largest difference from itself, which is"
	echo "no evidence of a cost. Under a busy host, frames and batches only get slower:"
	echo "the minima are then the steadier figure."
} > "$out/report.md"
cat "$out/report.md"
say "bench finished in $(elapsed) s (boots: $guest_s s); report in $out/report.md"
