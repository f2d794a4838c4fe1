#!/bin/sh
# Turn what the guests and the host checks produced into one verdict.
#
# usage: verdict.sh <outdir>...   (one outdir per tree and configuration)
#
# An outdir is build/<tree>/results/<config>; for one elsewhere (a boot.sh
# run into /tmp), TREE names the tree whose kunit.py reads its KTAP.
#
# Each outdir holds host.tap (host-side checks) and, for a configuration
# that booted, results.tap (guest TAP/KTAP between "## suite" and "## exit"
# markers) and console.log (kernel console). TAP is read here, KTAP by the
# tree's tools/testing/kunit/kunit.py (harness/ktap.py). Every test is
# reported by name; a suite that ends without its plan (TAP) or that
# kunit.py finds incomplete (KTAP), a guest that never reaches "## done", and any oops, BUG,
# WARNING, lockdep or KASAN report on the console are failures too. The last
# line is "N passed, N failed[, N skipped]"; the exit status is non-zero if
# anything failed.
set -eu

# The kernel log policy: what in the console is a kernel report, and the
# few reports excused, in one table the guest programs read too.
POLICY=$(cd "$(dirname "$0")/.." && pwd)/lib/kernel_log_policy.def
# Every report word as an extended regular expression, and the lines that
# start a report's block without naming one.
SPLATS=$(sed -n 's/^KERNEL_REPORT("\(.*\)")$/\1/p' "$POLICY" |
	sed 's/[][\.*^$+?(){}|/]/\\&/g' | paste -sd'|')'|Call Trace:'

tmp=$(mktemp)
reports=$(mktemp)
trap 'rm -f "$tmp" "$reports"' EXIT

# ktap_suites CFG KUNIT_PY KTAPDIR: the KUnit suites (KTAP, framed as
# "kunit:NAME" or "kunit-i386:NAME") read by the tree's own KTAP parser,
# one file per suite, through harness/ktap.py.
ktap_suites() {
	for f in "$3"/*.ktap; do
		[ -f "$f" ] || continue
		prefix=$(basename "$f" .ktap)
		prefix=${prefix%%:*}:
		if [ -f "$2" ]; then
			python3 "$(dirname "$0")/ktap.py" "$2" "$1/$prefix" "$f"
		else
			echo "FAIL $1/$prefix: no kunit.py to read $(basename "$f" .ktap) with ($2)"
		fi
	done
}

for out in "$@"; do
	# build/<tree>/results/<config>: tests are named <tree>/<config>/...
	tree=$(basename "$(dirname "$(dirname "$out")")")
	cfg=$tree/$(basename "$out")
	kunit_py=$(dirname "$(dirname "$out")")/linux-source-$tree/tools/testing/kunit/kunit.py
	if [ ! -f "$kunit_py" ] && [ -n "${TREE:-}" ]; then
		tree=$TREE
		cfg=$tree/$(basename "$out")
		kunit_py=$(cd "$(dirname "$0")/.." && pwd)/build/$TREE/linux-source-$TREE/tools/testing/kunit/kunit.py
	fi
	ktapdir=$(mktemp -d)
	guest=0
	[ -f "$out/results.tap" ] && guest=1
	{
		cat "$out/results.tap" 2>/dev/null || true
		cat "$out/host.tap" 2>/dev/null || true
	} | awk -v cfg="$cfg" -v guest="$guest" -v ktapdir="$ktapdir" '
	function report(verdict, name) { printf "%s %s/%s\n", verdict, cfg, name }
	function close_suite(rc,   n) {
		if (suite == "")
			return
		# The plan is printed last (lib/tap.h): a suite without one
		# stopped before its end.
		if (!kunit && plan == "")
			report("FAIL", suite ": ended before its plan (ran " seen " tests)")
		else if (plan == 0 && !seen && !plan_skip)
			report("FAIL", suite ": ran no test (plan 1..0)")
		else if (plan != "" && seen != plan)
			report("FAIL", suite ": planned " plan " tests, ran " seen)
		else if (rc != "0" && !failed)
			report("FAIL", suite ": exited with status " rc)
		suite = ""
	}
	{ sub(/\r$/, "") }	# the serial line adds carriage returns
	/^## suite / { close_suite("0"); suite = $3; kunit = (suite ~ /^kunit(-i386)?:/);
		       plan = ""; plan_skip = 0; seen = 0; failed = 0
		       # Suites are named like tests (lib/tap.h): kebab-case
		       # parts joined by ":" or "@"; a KUnit suite keeps the name
		       # the kernel gave it.
		       if (!kunit && suite !~ /^[a-z0-9]+([-:@][a-z0-9]+)*$/)
			       report("FAIL", suite ": not a kebab-case suite name")
		       next }
	/^## exit / { close_suite($4); next }
	/^## done/ { done = 1; next }
	suite == "" { next }
	# KTAP goes to the tree'"'"'s own parser (ktap_suites), a file per suite.
	kunit { print > (ktapdir "/" suite ".ktap"); next }
	/^1\.\.[0-9]+/ { plan = substr($1, 4) + 0; plan_skip = /# *[Ss][Kk][Ii][Pp]/; next }
	{
		line = $0
		if (line !~ /^(not )?ok [0-9]+/)
			next
		seen++
		bad = (line ~ /^not ok/)
		sub(/^(not )?ok [0-9]+ *(- )?/, "", line)
		skip = (line ~ /# *[Ss][Kk][Ii][Pp]/)
		if (skip)
			report("SKIP", suite ": " line)
		else if (bad) {
			report("FAIL", suite ": " line); failed = 1
		} else
			report("PASS", suite ": " line)
	}
	END {
		close_suite("0")
		if (!guest)
			exit
		if (!done)
			report("FAIL", "guest: ran to completion (no \"## done\" marker)")
		else
			report("PASS", "guest: ran to completion")
	}' >> "$tmp"
	ktap_suites "$cfg" "$kunit_py" "$ktapdir" >> "$tmp"
	rm -rf "$ktapdir"

	[ "$guest" = 1 ] || continue
	# The amd guest of either tree must have compared the cursor helper
	# with DC's own cursor code (amdgpu_dm_cursor_dc, checked by the guest
	# suite amdgpu-cursor-dc): a guest that never ran that suite fails.
	case "$cfg" in
	6.12/amd|6.1/amd)
		grep -Eq "^(PASS|FAIL) $cfg/amdgpu-cursor-dc: " "$tmp" ||
			echo "FAIL $cfg/amdgpu-cursor-dc: the cursor helper was compared with DC's cursor code (suite missing)" >> "$tmp"
		;;
	esac
	if [ -f "$out/timeout" ]; then
		echo "FAIL $cfg/guest: $(cat "$out/timeout")" >> "$tmp"
	fi
	# The console without the reports lib/kernel_log_policy.def excuses;
	# each known upstream WARN's count goes to $known, reported as a skip,
	# never passed over silently.
	console=$(mktemp)
	known=$(mktemp)
	tr -d '\r' < "$out/console.log" 2>/dev/null | awk -v known="$known" -v policy="$POLICY" '
		BEGIN {
			while ((getline line < policy) > 0) {
				n = split(line, q, "\"")
				if (line ~ /^KERNEL_REPORT\(/ && q[2] != "WARNING:")
					other_report[q[2]] = 1
				else if (line ~ /^KERNEL_LOG_NOT_A_REPORT\(/)
					not_report[q[2]] = 1
				else if (line ~ /^KERNEL_WARN_UPSTREAM\(/) {
					nup++; up_fn[nup] = q[2]; up_caller[nup] = q[4]; up_ref[nup] = q[6]
				} else if (line ~ /^KERNEL_WARN_EXPECTED\(/) {
					nex++; ex_fn[nex] = q[2]; ex_holds[nex] = q[4]; ex_window[nex] = q[6]
				} else if (line ~ /^KERNEL_LOG_WINDOW\(/) {
					win_start[q[2]] = q[4]; win_end[q[2]] = q[6]
				}
			}
			close(policy)
		}
		function count(block, text,   n, i) {
			n = 0
			while ((i = index(block, text)) > 0) {
				n++
				block = substr(block, i + length(text))
			}
			return n
		}
		# A block is exempted only if it holds exactly one report: one
		# "cut here", one WARNING, one call trace, nothing else. A
		# report from the other CPU printed inside it is never exempted
		# with it.
		function single_warning(block,   w) {
			if (count(block, "WARNING:") != 1 || count(block, "Call Trace:") != 1 ||
			    count(block, "[ cut here ]") != 1)
				return 0
			for (w in other_report)
				if (index(block, w))
					return 0
			return 1
		}
		# Whether the block WARNed in function fn: its WARNING line names it.
		function warned_in(block, fn,   lines, n, i) {
			n = split(block, lines, "\n")
			for (i = 1; i <= n; i++)
				if (index(lines[i], "WARNING:") && index(lines[i], " " fn))
					return 1
			return 0
		}
		# Whether the block holds fn as a reliable frame (not "? ").
		function reliable_frame(block, fn,   lines, n, i, frame) {
			n = split(block, lines, "\n")
			for (i = 1; i <= n; i++) {
				frame = lines[i]
				sub(/^\[[^]]*\] */, "", frame)
				if (substr(frame, 1, length(fn)) == fn)
					return 1
			}
			return 0
		}
		function excused(block,   i) {
			if (!single_warning(block))
				return 0
			for (i = 1; i <= nex; i++)
				if (warned_in(block, ex_fn[i]) && index(block, ex_holds[i]) &&
				    (ex_window[i] == "" || open_window[ex_window[i]]))
					return 1
			for (i = 1; i <= nup; i++)
				if (warned_in(block, up_fn[i]) && reliable_frame(block, up_caller[i])) {
					upstream[i]++
					return 1
				}
			return 0
		}
		{
			for (w in win_start) {
				if (index($0, win_start[w]))
					open_window[w] = 1
				if (index($0, win_end[w]))
					open_window[w] = 0
			}
			for (w in not_report)
				if (index($0, w))
					next
		}
		# A block opened inside another one: the outer one is reported
		# as it is.
		/-+\[ cut here \]-+/ { if (inside) printf "%s", held; held = $0 "\n"; inside = 1; next }
		inside { held = held $0 "\n" }
		inside && /---\[ end trace/ {
			inside = 0
			if (!excused(held))
				printf "%s", held
			next
		}
		!inside { print }
		END {
			if (inside)
				printf "%s", held
			for (i = 1; i <= nup; i++)
				if (upstream[i])
					printf "%s\t%s\t%s\t%d\n", up_fn[i], up_caller[i], up_ref[i], upstream[i] > known
		}' > "$console"
	while IFS='	' read -r fn caller ref n; do
		echo "SKIP $cfg/kernel-log: ${fn%+}() WARNed $n time(s) # SKIP known upstream ($ref), from ${caller%+}()" >> "$tmp"
	done < "$known"
	if grep -Eq "$SPLATS" "$console"; then
		first=$(grep -E -m1 "$SPLATS" "$console" | cut -c1-160)
		echo "FAIL $cfg/kernel-log: no oops, BUG, WARNING, lockdep or KASAN report (first: $first)" >> "$tmp"
		# The report itself goes to the verdict too, just above its last
		# line, where a CI log that keeps only its end still shows it.
		{
			echo "---- $cfg console, first report ----"
			grep -E -B2 -A40 -m1 "$SPLATS" "$console" | head -60
			echo "----"
		} | sed 's/^/# /' >> "$reports"
	elif [ -s "$console" ]; then
		echo "PASS $cfg/kernel-log: no oops, BUG, WARNING, lockdep or KASAN report" >> "$tmp"
	else
		echo "FAIL $cfg/kernel-log: console log missing or empty" >> "$tmp"
	fi
	rm -f "$console" "$known"
done

cat "$tmp"
cat "$reports"
pass=$(grep -c '^PASS' "$tmp" || true)
fail=$(grep -c '^FAIL' "$tmp" || true)
skip=$(grep -c '^SKIP' "$tmp" || true)
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
