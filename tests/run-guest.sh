#!/bin/sh
# The guest's test list. Each suite is framed by "## suite NAME" and
# "## exit NAME STATUS SECONDS" for harness/verdict.sh; KUnit suites are copied from
# debugfs as KTAP under "kunit:NAME".
. /tests/tap.sh
. /tests/vkms.sh

echo "# user space reached $(cut -d' ' -f1 /proc/uptime) s after boot"

# selected NAME: HARNESS_ONLY (a glob, from harness.only=) lets the suite run.
selected() {
	# shellcheck disable=SC2254
	case "$1" in ${HARNESS_ONLY:-*}) return 0 ;; esac
	return 1
}

suite() {
	suite_name=$1
	shift
	selected "$suite_name" || return 0
	echo "## suite $suite_name"
	suite_t0=$(cut -d' ' -f1 /proc/uptime)
	"$@"
	suite_rc=$?
	# The seconds it took, for the host's list of the slowest suites.
	echo "## exit $suite_name $suite_rc $(awk -v t0="$suite_t0" '{ printf "%.1f", $1 - t0 }' /proc/uptime)"
}

# KUnit suites the project needs (kunit-suites), as modules so that only
# these run.
KUNIT_MODULES=$(sed -n '/^[^#]/s/$/_test/p' "$(dirname "$0")/kunit-suites")

# kunit_ktap SUITE: the suite's last run, as a KTAP document of its own,
# from the kernel log: 6.1's debugfs keeps only 512 bytes of each test's
# log (KUNIT_LOG_SIZE), and a module loaded twice ran it twice.
kunit_ktap() {
	dmesg | sed 's/^\[[^]]*\] //' | awk -v s="$1" '
		/^    KTAP version 1$/ { head = $0; next }
		$0 == "    # Subtest: " s { n = 0; cur[n++] = head; cur[n++] = $0; on = 1; next }
		on { cur[n++] = $0 }
		on && $0 ~ ("^(not )?ok [0-9]+ " s "$") {
			on = 0
			# The suite is test 1 of its own document.
			sub(/ok [0-9]+ /, "ok 1 ", cur[n - 1])
			for (i = 0; i < n; i++)
				last[i] = cur[i]
			m = n
		}
		END {
			if (!m)
				exit 1
			print "KTAP version 1"
			print "1..1"
			for (i = 0; i < m; i++)
				print last[i]
		}'
}

# kunit_results: every KUnit suite the loaded modules ran, framed, for
# harness/verdict.sh (which reads them with the tree's kunit.py).
kunit_results() {
	for dir in /sys/kernel/debug/kunit/*/; do
		[ -f "$dir/results" ] || continue
		s=$(basename "$dir")
		echo "## suite kunit:$s"
		kunit_ktap "$s"
		echo "## exit kunit:$s $?"
	done
}

kunit_module() {
	modprobe "$1" || { echo "## suite kunit:$1"; echo "## exit kunit:$1 1"; return; }
	kunit_results
	rmmod "$1"
}

# verdicts FILE: each test's verdict and name, skips marked, reasons and
# diagnostics left out: two runs of a subtest compare line by line.
verdicts() {
	sed -n 's/^\(\(not \)\{0,1\}ok\) [0-9]* - \([^ ]*\)\( # SKIP\)\{0,1\}.*/\1 \3\4/p' "$1"
}

# same_verdicts SELF CHROME: the copy named chrome really ran as chrome,
# and every test of it has the verdict of the run under the program's own
# name.
same_verdicts() {
	tap_start
	tap_check "ran-as-chrome" grep -q '^# running as comm=chrome exe=/tmp/chrome$' "$2"
	verdicts "$1" > /tmp/v1
	verdicts "$2" > /tmp/v2
	tap_diag "$(wc -l < /tmp/v1) tests under its own name, $(wc -l < /tmp/v2) as chrome"
	tap_check "same-test-count" \
		test "$(wc -l < /tmp/v1)" -gt 0 -a "$(wc -l < /tmp/v1)" = "$(wc -l < /tmp/v2)"
	tap_check "same-verdicts" diff /tmp/v1 /tmp/v2
	tap_done
}

module_twin() {
	tap_start
	tap_check "exported-twin-loads" insmod /tests/exported_twin.ko
	tap_check "exported-twin-listed" grep -q '^exported_twin ' /proc/modules
	tap_check "exported-twin-unloads" rmmod exported_twin
	tap_check "exported-twin-gone" sh -c '! grep -q "^exported_twin " /proc/modules'
	tap_done
}

vkms_teardown() {
	tap_start
	tap_check "vkms-unloads" rmmod vkms
	tap_done
}

# The debug configuration is only worth its time if its checkers really run.
debug_kernel() {
	tap_start
	tap_check "kasan-active" sh -c 'dmesg | grep -q "KernelAddressSanitizer initialized"'
	tap_check "lockdep-active" sh -c 'dmesg | grep -q "Lock dependency validator"'
	tap_done
}

[ "${HARNESS_CONFIG:-}" = debug ] && suite debug-kernel debug_kernel

# amdgpu cannot drive anything here, but it must initialise and unload with
# no device, as a distribution kernel loads it on every machine; the 2021
# series failed at this point (an unexported symbol). The parameter the
# series adds is checked on the way.
amdgpu_load() {
	p=/sys/module/amdgpu/parameters/protect_legacy_cursor
	tap_start
	tap_check "no-amd-device" sh -c '! grep -qx 0x1002 /sys/bus/pci/devices/*/vendor'
	tap_check "modprobe-without-device" modprobe amdgpu
	tap_check "listed-in-proc-modules" grep -q '^amdgpu ' /proc/modules
	# The 6.1 series adds the parameter; on 6.12 amdgpu keeps upstream's
	# rule for clients without the cap and has none.
	if [ -e $p ]; then
		tap_check "protect-legacy-cursor-shown-off" test "$(cat $p)" = N
		tap_check "protect-legacy-cursor-set-at-run-time" \
			sh -c "echo 1 > $p && test \"\$(cat $p)\" = Y"
		tap_check "protect-legacy-cursor-refuses-non-boolean" \
			sh -c "! echo 2 > $p 2>/dev/null && test \"\$(cat $p)\" = Y"
	else
		for t in shown-off set-at-run-time refuses-non-boolean; do
			tap_skip "protect-legacy-cursor-$t" "this amdgpu has no protect_legacy_cursor"
		done
	fi
	# Which tree has the parameter is known: only 6.1's series adds it.
	case "$(uname -r)" in
	6.1.*) tap_check "protect-legacy-cursor-as-the-tree-says" test -e $p ;;
	*) tap_check "protect-legacy-cursor-as-the-tree-says" test ! -e $p ;;
	esac
	tap_check "unloads" rmmod amdgpu
	if [ -e $p ]; then
		tap_check "modprobe-with-protect-legacy-cursor" modprobe amdgpu protect_legacy_cursor=1
		tap_check "load-time-parameter-in-force" test "$(cat $p)" = Y
	else
		tap_check "modprobe-again" modprobe amdgpu
		tap_skip "load-time-parameter-in-force" "this amdgpu has no protect_legacy_cursor"
	fi
	tap_check "unloads-again" sh -c 'rmmod amdgpu && ! grep -q "^amdgpu " /proc/modules'
	tap_done
}

# amdgpu's KUnit suites (6.12 series; 6.1's has the DC comparison only),
# run at module load: KTAP as in kunit_module, collected while the module
# is loaded.
amdgpu_kunit() {
	modprobe amdgpu || { echo "## suite kunit:amdgpu"; echo "## exit kunit:amdgpu 1"; return; }
	kunit_results
	suite amdgpu-cursor-dc amdgpu_cursor_dc
	rmmod amdgpu
}

# Both series check their cursor helper against DC's own cursor
# programming (amdgpu_dm_cursor_dc, run at module load): it must have run,
# with every named situation, its seed and all its random stacks, on each
# cursor path of the tree's DC (6.12: DCN 1.0, 2.0 and 4.0.1; 6.1, which
# has no DCN 4.0.1: DCN 1.0 and 2.0). Its figures are copied into the
# results as comments. The suite of amdgpu's cursor verdict must have run
# and passed too.
amdgpu_cursor_dc() {
	r=/sys/kernel/debug/kunit/amdgpu_dm_cursor_dc/results
	case "$(uname -r)" in
	6.12*) gens="dcn10, dcn20 and dcn401" ngens=3 verdict=amdgpu_dm_cursor tree=6.12 ;;
	*)
		gens="dcn10 and dcn20" ngens=2 verdict=amdgpu_dm_cursor_verdict tree=6.1
		# 6.1's debugfs keeps 512 bytes of each test's log; the
		# kernel log has every line.
		if [ -f $r ]; then
			r=/tmp/amdgpu_dm_cursor_dc.ktap
			kunit_ktap amdgpu_dm_cursor_dc > $r || rm -f $r
		fi
		;;
	esac
	tap_start
	# amdgpu's cursor verdict, driven from KUnit on hand-built plane stacks.
	tap_diag "$verdict: amdgpu's cursor verdict; DC's cursor code: $gens"
	tap_check "verdict-suite-passed" \
		grep -qE "^ok [0-9]+ $verdict\$" /sys/kernel/debug/kunit/$verdict/results
	# amdgpu's own cursor mode decision (dm_crtc_get_cursor_mode()) on
	# DRM atomic states: the suite of the 6.12 series' amdgpu fixes.
	case "$(uname -r)" in
	6.12*)
		tap_check "cursor-mode-suite-passed" grep -qE "^ok [0-9]+ amdgpu_dm_cursor_mode\$" \
			/sys/kernel/debug/kunit/amdgpu_dm_cursor_mode/results
		;;
	esac
	tap_check "dc-suite-ran" test -f $r
	[ -f $r ] && grep -E '# amdgpu_dm_cursor_dc_(random|weaker_models_differ): ' $r |
		sed 's/^ *# */# /'
	# Every passed test but the suite's own cases is a named situation.
	# Every named situation of the tree's suite (dc-named-situations.<tree>),
	# by name, passed, and none besides.
	sed -n 's/^  *ok [0-9][0-9]* //p' $r 2>/dev/null | grep -v '^amdgpu_dm_cursor_dc_' > /tmp/dc-named
	missing=$(grep -vxF -f /tmp/dc-named "/tests/dc-named-situations.$tree" || true)
	extra=$(grep -vxF -f "/tests/dc-named-situations.$tree" /tmp/dc-named || true)
	[ -n "$missing" ] && printf '%s\n' "$missing" | sed 's/^/# not passed: /'
	[ -n "$extra" ] && printf '%s\n' "$extra" | sed 's/^/# not listed: /'
	tap_diag "$(wc -l < /tmp/dc-named) named situations passed, each on $gens"
	named_ok=no
	[ -z "$missing$extra" ] && [ -s /tmp/dc-named ] && ! grep -q 'not ok' $r && named_ok=yes
	tap_check "dc-named-situations-pass" test $named_ok = yes
	tap_check "dc-random-seed-and-count" \
		grep -q 'seed 0x16c0ffee, 10000 random stacks per generation' $r
	tap_diag "$((ngens * 10000)) random stacks expected"
	tap_check "dc-random-no-difference" \
		sh -c "grep -q '$((ngens * 10000)) random stacks in' $r && [ \$(grep -c 'differences 0\$' $r) -eq $ngens ]"
	# 6.12: amdgpu's own decision, end to end: wherever it keeps the
	# native cursor on 10,000 random stacks per DCN path, DC's cursor and
	# blending programming must show one cursor, right.
	case "$(uname -r)" in
	6.12*)
		[ -f $r ] && grep -E '# amdgpu_dm_cursor_dc_mode_decision: dcn' $r | sed 's/^ *# */# /'
		tap_check "dc-mode-decision-passed" grep -qE "^ +ok [0-9]+ amdgpu_dm_cursor_dc_mode_decision\$" $r
		tap_check "dc-mode-decision-every-path" \
			sh -c "[ \$(grep -cE 'mode_decision: dcn[0-9]+: seed 0x[0-9a-f]+, 10000 stacks .*; wrong 0:' $r) -eq 3 ]"
		;;
	*)
		# 6.1: each of the four weaker models of the helper must
		# differ from DC on both paths, on every run: the suite
		# shows it can fail. The one taking alpha formats as opaque
		# must accept cursors DC's own blending draws wrong.
		tap_check "dc-weaker-models-differ" \
			sh -c "grep -qE '^ +ok [0-9]+ amdgpu_dm_cursor_dc_weaker_models_differ\$' $r &&
			       [ \$(grep -cE 'weaker_models_differ: dcn(10|20): seed 0x[0-9a-f]+, [0-9]+ stacks: .* differs [1-9][0-9]* times' $r) -eq 8 ] &&
			       [ \$(grep -cE 'weaker_models_differ: dcn(10|20): .*: alpha formats opaque differs [1-9][0-9]* times, accepts [1-9][0-9]* cursors DC draws wrong' $r) -eq 2 ]"
		;;
	esac
	tap_done
}

# The released rule (harness/released-rule.sh): amdgpu's KUnit suites, run
# to see them fail without the fixes.
if [ "${HARNESS_CONFIG:-}" = released ]; then
	kunit_module amdgpu
	exit 0
fi

if [ "${HARNESS_CONFIG:-}" = amd ]; then
	suite amdgpu-load amdgpu_load
	# Not a suite of its own: each KUnit suite frames itself.
	case "kunit:" in ${HARNESS_ONLY:-*}) amdgpu_kunit ;; esac
	exit 0
fi

# Output goes through a file, not a pipe, so that the suite's exit status is
# the program's own.
run_tap() {
	run_tap_out=$1
	shift
	"$@" > "$run_tap_out" < /dev/null
	rc=$?
	cat "$run_tap_out"
	return $rc
}

# The subtests that take a size, per configuration: base, debug, and the
# copy of base run as "chrome" ("-": not run there). The chrome copy
# repeats the long sweep and teardown at smaller sizes, compared with a run
# of those sizes under the program's own name: whether a verdict depends on
# the name shows on 200 random states as well as on 2000, and the full
# sizes twice cost a fifth of the guest's time. The debug kernel (KASAN,
# lockdep) runs smaller sizes and no chrome copy. HARNESS_FAULT_SWEEPS
# (harness.fault_sweeps= on the guest's command line) overrides inject.
SIZES="
# subtest | base    | debug                     | chrome
sweep     | 2000 1  | 100 1                     | 200 1
teardown  | 100 1   | 25 1                      | 25 1
stress    | 10000   | 2500                      | 10000
inject    | -       | ${HARNESS_FAULT_SWEEPS:-1} | -
"

# size_of SUBTEST COLUMN: its arguments in that column (base, debug,
# chrome); fails if the table has no such row or column.
size_of() {
	printf '%s\n' "$SIZES" | awk -F' *[|] *' -v name="$1" -v col="$2" '
		/^#/ { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$1 == name && (col in c) { print $(c[col]); found = 1 }
		END { exit !found }'
}

# fail_suite NAME TEST [DIAG]: a suite of one failing test, for what kept
# a suite from running at all.
fail_suite() {
	echo "## suite $1"
	tap_start
	tap_result 1 "$2"
	[ -z "${3:-}" ] || tap_diag "$3"
	tap_done
	echo "## exit $1 1"
}

# skip_suite NAME REASON: a suite the table says not to run here, shown.
skip_suite() {
	echo "## suite $1"
	tap_start
	tap_skip "runs-here" "$2"
	tap_done
	echo "## exit $1 0"
}

# run_listed PREFIX PROGRAM NAME PARAMS CHROME: one subtest the program
# listed, and its chrome copy. A subtest that takes arguments must have a
# row in SIZES for this configuration.
run_listed() {
	rl_prefix=$1 rl_prog=$2 rl_name=$3 rl_params=$4 rl_chrome=$5
	rl_col=${HARNESS_CONFIG:-base}
	rl_args=
	if [ -n "$rl_params" ] && ! rl_args=$(size_of "$rl_name" "$rl_col"); then
		selected "$rl_prefix:$rl_name" && fail_suite "$rl_prefix:$rl_name" "size-in-table" \
			"SIZES has no $rl_col size for \"$rl_name $rl_params\""
		return
	fi
	if [ "$rl_args" = - ]; then
		selected "$rl_prefix:$rl_name" &&
			skip_suite "$rl_prefix:$rl_name" "not run in $rl_col (SIZES)"
		return
	fi
	rl_out=/tmp/$rl_prefix-$rl_name
	# shellcheck disable=SC2086
	suite "$rl_prefix:$rl_name" run_tap "$rl_out.tap" "$rl_prog" "$rl_name" $rl_args
	[ -n "$rl_chrome" ] || return
	rl_cargs=
	if [ -n "$rl_params" ] && ! rl_cargs=$(size_of "$rl_name" chrome); then
		selected "$rl_prefix:$rl_name@chrome" &&
			fail_suite "$rl_prefix:$rl_name@chrome" "size-in-table" \
			"SIZES has no chrome size for \"$rl_name $rl_params\""
		return
	fi
	[ "$rl_cargs" = - ] && return
	rl_sv=$rl_prefix:$rl_name:same-verdicts-as-chrome
	# The reference: the plain run if it had the same arguments and ran.
	rl_ref=$rl_out.tap
	if selected "$rl_sv" && { [ "$rl_cargs" != "$rl_args" ] || ! selected "$rl_prefix:$rl_name"; }; then
		rl_ref=$rl_out-same-args.tap
		# shellcheck disable=SC2086
		run_tap "$rl_ref" "$rl_prog" "$rl_name" $rl_cargs > /dev/null ||
			echo "# the reference run of $rl_name $rl_cargs exited with $?"
	fi
	cp "$rl_prog" /tmp/chrome
	if selected "$rl_prefix:$rl_name@chrome"; then
		# shellcheck disable=SC2086
		suite "$rl_prefix:$rl_name@chrome" run_tap "$rl_out@chrome.tap" /tmp/chrome \
			"$rl_name" $rl_cargs --comm chrome
	elif selected "$rl_sv"; then
		# shellcheck disable=SC2086
		run_tap "$rl_out@chrome.tap" /tmp/chrome "$rl_name" $rl_cargs --comm chrome > /dev/null
	fi
	suite "$rl_sv" same_verdicts "$rl_ref" "$rl_out@chrome.tap"
}

# run_program PREFIX PROGRAM [chrome]: every subtest the program lists
# (--list), in its order, as the suite PREFIX:NAME, with its size from
# SIZES. With "chrome" (base only), each again as a copy named chrome, with
# --comm chrome, and the check that every verdict is the one of a run with
# the same arguments under the program's own name.
run_program() {
	rp_prefix=$1 rp_prog=$2 rp_chrome=${3:-}
	[ "${HARNESS_CONFIG:-base}" = debug ] && rp_chrome=
	rp_list=/tmp/$rp_prefix.list
	if ! "$rp_prog" --list > "$rp_list" 2> "$rp_list.err" || [ ! -s "$rp_list" ]; then
		fail_suite "$rp_prefix:list" "lists-its-subtests" "$(cat "$rp_list.err")"
		return
	fi
	while read -r rp_name rp_params; do
		case "$rp_name" in
		*[!a-z0-9-]* | "" | -* | *-)
			fail_suite "$rp_prefix:list" "lists-its-subtests" "not a subtest name: $rp_name"
			continue
			;;
		esac
		run_listed "$rp_prefix" "$rp_prog" "$rp_name" "$rp_params" "$rp_chrome" < /dev/null
	done < "$rp_list"
}

# Every row of SIZES that sizes a run in this configuration names a
# subtest that the programs run here listed (run_program keeps each list):
# a subtest renamed or removed takes its row along instead of leaving it
# stale.
sizes_rows_listed() {
	tap_start
	cat /tmp/*.list 2> /dev/null | cut -d' ' -f1 > /tmp/subtests.all
	tap_diag "$(wc -l < /tmp/subtests.all) subtests listed by $(ls /tmp/*.list | wc -l) programs"
	for sr_row in $(printf '%s\n' "$SIZES" | sed -n 's/^\([a-z][a-z0-9-]*\) *|.*/\1/p'); do
		[ "$(size_of "$sr_row" "${HARNESS_CONFIG:-base}")" = - ] && continue
		tap_check "row-names-a-subtest@$sr_row" grep -qx "$sr_row" /tmp/subtests.all
	done
	tap_done
}

# reload_then PREFIX PARAMS...: vkms reloaded for the program of PREFIX;
# when that fails, the failure is a suite of its own and the program does
# not run on whatever vkms is left.
reload_then() {
	rt_prefix=$1
	shift
	vkms_reload "$@" && return 0
	fail_suite "$rt_prefix:reload" "vkms-reloaded" "vkms_reload $*"
	return 1
}

reload_then cap && run_program cap /tests/kms_no_legacy_cursor chrome

# Per-plane cursors need overlays.
reload_then crc enable_overlay=1 && run_program crc /tests/kms_crc_reopen

# Writeback rows under a rotated top plane (6.12's vkms rotates planes).
reload_then wb enable_overlay=1 && run_program wb /tests/kms_writeback_rows

# The series' vkms parameters, per tree: the suites below skip what a
# kernel does not offer (6.1 has no amdgpu_cursor_rule), so a tree that
# lost one must fail here rather than skip there.
vkms_params() {
	tap_start
	case "$(uname -r)" in
	6.12*) vp_want="per_plane_cursor protect_legacy_cursor hw_pipes amdgpu_cursor_rule" vp_none= ;;
	6.1.*) vp_want="per_plane_cursor protect_legacy_cursor hw_pipes" vp_none=amdgpu_cursor_rule ;;
	*) vp_want= vp_none= ;;
	esac
	tap_diag "kernel $(uname -r)"
	tap_check "known-tree" test -n "$vp_want"
	for vp in $vp_want; do
		tap_check "has@$(tap_label "$vp")" test -e "$VKMS_PARAMS/$vp"
	done
	for vp in $vp_none; do
		tap_check "lacks@$(tap_label "$vp")" test ! -e "$VKMS_PARAMS/$vp"
	done
	tap_done
}
suite vkms-params vkms_params

# Allocation failures injected into every operation the series touches,
# and into each allocation of the series' own that vkms reaches (kms_fault's
# inject-FUNCTION subtests, before the sweep), between two kmemleak checks
# (debug configuration: FAILSLAB, fail-nth, kmemleak).
# One sweep by default, for CI's time: about 1,100 injected failures, but
# patch 7's allocation of the old planes' model is reached about every
# other run; HARNESS_FAULT_SWEEPS=2 make test sweeps twice.
KMEMLEAK=/sys/kernel/debug/kmemleak

# What boot and the suites before left unreferenced, checked and then
# cleared, so that the fault suite answers for its own leaks (an object
# first found unreferenced by the second scan here may still be reported
# after it). "clear" forgets only what a scan reported, and a scan reports
# an object only when the scan before found it unreferenced too. Until this suite, the one
# scan before the fault suite cleared nothing, and its checks found these
# leaks: none in any run so far, upstream's included.
kmemleak_before() {
	tap_start
	tap_check "kmemleak-active" sh -c "echo scan > $KMEMLEAK"
	sleep 6
	echo scan > $KMEMLEAK
	cat $KMEMLEAK > /tmp/kmemleak-before.txt
	head -80 /tmp/kmemleak-before.txt | sed 's/^/# /'
	tap_check "no-leak-from-boot-or-earlier-suites" test ! -s /tmp/kmemleak-before.txt
	echo clear > $KMEMLEAK
	tap_done
}

kmemleak_after() {
	tap_start
	# Once kmemleak has disabled itself (its own allocations fail too), its
	# file stays writable but refuses "scan".
	tap_check "kmemleak-active" sh -c "echo scan > $KMEMLEAK"
	# kmemleak reports nothing younger than 5 s, and a leak only when a
	# second scan still finds it unreferenced (a planted leak showed up on
	# the second scan, not on the first).
	sleep 6
	echo scan > $KMEMLEAK
	cat $KMEMLEAK > /tmp/kmemleak.txt
	head -80 /tmp/kmemleak.txt | sed 's/^/# /'
	tap_check "no-leak-after-fault-injection" test ! -s /tmp/kmemleak.txt
	tap_done
}

if [ "${HARNESS_CONFIG:-}" = debug ]; then
	suite fault:kmemleak-before kmemleak_before
	run_program fault /tests/kms_fault
	suite fault:kmemleak kmemleak_after
fi

# make demo's story, checked: the bug shows in exactly the frames that show
# it, nothing else has an artifact, and every picture and the page exist.
demo_story() {
	# 6.12's vkms also shows amdgpu's own rule: frames 9 (the legacy
	# cursor refused after the planes) and 10 (a video scaled in height
	# only: a stretched cursor) as released, 11 (the same with amdgpu's
	# fix: the cursor right).
	artifacts="1 2 " not_meant="1 2 4 " pictures=19
	if [ -e "$VKMS_PARAMS/amdgpu_cursor_rule" ]; then
		artifacts="1 2 10 " not_meant="1 2 4 9 10 " pictures=27
	fi
	tap_start
	tap_check "story-runs-to-its-end" sh -c '/demo/kms_story /tmp/story > /tmp/story.txt'
	sed 's/^/# /' /tmp/story.txt
	# Columns: | n | scenario | client | kernel said | mode | artifact | as meant |
	tap_diag "frames with artifacts expected: $artifacts; not as meant: $not_meant"
	tap_check "artifacts-only-where-expected" \
		test "$(awk -F' *[|] *' '$7 == "yes" { printf "%s ", $2 }' /tmp/story.txt)" = "$artifacts"
	tap_check "not-as-meant-only-where-expected" \
		test "$(awk -F' *[|] *' '$8 == "no" { printf "%s ", $2 }' /tmp/story.txt)" = "$not_meant"
	tap_check "conservative-rule-refuses-opted-in-client-gets-four-planes" \
		sh -c 'grep -q "^|  3 .*4 planes EINVAL, 3 ok" /tmp/story.txt &&
			grep -q "^|  7 .*cap ok; 4 planes+cursor ok" /tmp/story.txt'
	if [ "$pictures" = 27 ]; then
		tap_check "amdgpu-rule-takes-four-planes-then-refuses-legacy-cursor" \
			grep -q "^|  9 .*4 planes ok; cursor EINVAL" /tmp/story.txt
		tap_check "amdgpu-fix-shows-the-one-direction-frame-right" \
			test "$(awk -F' *[|] *' '$2 == 11 { print $6, $7, $8 }' /tmp/story.txt)" = \
			"dedicated no yes"
	else
		tap_skip "amdgpu-rule-takes-four-planes-then-refuses-legacy-cursor" \
			"this vkms has no amdgpu_cursor_rule"
		tap_skip "amdgpu-fix-shows-the-one-direction-frame-right" \
			"this vkms has no amdgpu_cursor_rule"
	fi
	tap_diag "$pictures pictures expected (shown, meant, differences) and the page"
	tap_check "pictures-and-page" \
		sh -c "test \"\$(ls /tmp/story/*.png | wc -l)\" = $pictures && test -s /tmp/story/index.html"
	tap_done
}
suite demo:story demo_story

# Clients nobody here wrote (Debian's modetest, drm_info, libliftoff), each
# file one group of suites, on vkms with overlays.
# Each starts on a freshly loaded vkms, as after boot: the suites before
# leave the writeback connector on the CRTC, which a client that does not
# know it cannot clone.
# A reload that fails (an fd left open, a client still running) skips the
# file with a failing suite of its own, whatever HARNESS_ONLY says: its suites
# would otherwise run on the old device, or vanish without a word.
# Under KASAN and lockdep the libliftoff client's commits are the paths
# the cursor suites run already; its 50 s there are better spent elsewhere.
for f in /tests/clients-*.sh; do
	[ -f "$f" ] || continue
	cf=${f##*/}
	cf=${cf%.sh}
	[ "${HARNESS_CONFIG:-}" = debug ] && [ "$cf" = clients-liftoff ] && continue
	if ! vkms_reload enable_overlay=1; then
		fail_suite "clients:reload:$cf" "vkms-reloaded" "before ${f##*/}: its suites are skipped"
		continue
	fi
	# In a subshell: an exit or a syntax error in the file ends it, not
	# the runner, and is a failure of its own.
	# shellcheck disable=SC1090
	( . "$f" ) || fail_suite "clients:$cf" "ran-to-its-end" "exit status $?"
done

# Last of the programs: on a kernel with the bug it checks, the subtest
# wb-cleanup leaves the composer count wrapped for whatever runs after it.
reload_then cursor enable_overlay=1 && run_program cursor /tests/kms_cursor_pipes chrome
suite sizes-table sizes_rows_listed

[ -n "$KUNIT_MODULES" ] || fail_suite kunit-list "kunit-suites-names-suites"
for m in $KUNIT_MODULES; do
	kunit_module "$m"
done

suite exported-twin module_twin
suite vkms-teardown vkms_teardown
