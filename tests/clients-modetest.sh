# Debian's modetest and drm_info, unmodified, on the patched vkms; sourced
# by run-guest.sh (suite, tap_*), vkms loaded with enable_overlay=1.
#
# modetest sets atomic overlay planes and runs its legacy cursor test with
# the per-plane cursor emulation on, under each policy; kms_client_judge
# stops it at random moments and compares the CRC of each sampled frame
# with the CRC of the same state composed with the emulation off. drm_info
# must list the device while a scaled overlay layout is on screen.
#
# The modetest suites share one vkms and its kernel log: vkms is reloaded
# per clients-*.sh file, not per suite.
# shellcheck shell=sh

MT_MODE=640x480

VKMS_DEBUGFS=$(vkms_debugfs) || echo "# clients-modetest.sh: no vkms debugfs directory found"

# Object ids as modetest sees them: connector, CRTC, primary, overlays.
mt_ids() {
	MT_CONN=$(modetest -M vkms -c 2>/dev/null |
		awk '/^[0-9]+\t/ && $3 == "connected" { print $1; exit }')
	# shellcheck disable=SC2046
	set -- $(modetest -M vkms -p 2>/dev/null | awk '
		/^CRTCs:/ { sec = "crtc"; next }
		/^Planes:/ { sec = "plane"; next }
		sec == "crtc" && /^[0-9]+\t/ && !crtc { crtc = $1 }
		sec == "plane" && /^[0-9]+\t/ { id = $1 }
		sec == "plane" && /enums: Overlay=0 Primary=1 Cursor=2/ { t = 1; next }
		t && /value:/ {
			if ($2 == 1) pri = id; else if ($2 == 2) cur = id; else ov = ov " " id
			t = 0
		}
		END { print crtc, pri, cur, ov }')
	if [ $# -lt 6 ]; then
		echo "# modetest -p gave no CRTC, primary, cursor and 3 overlays: $*"
		return 1
	fi
	MT_CRTC=$1 MT_PRI=$2
	shift 3
	MT_OV1=$1 MT_OV2=$2 MT_OV3=$3
}
mt_ids

# mt_params PER_PLANE PROTECT [HW_PIPES [SKIP_VALIDATION]]
mt_params() {
	vkms_set "$1" "$2" "${3:-4}" && vkms_skip_validation "${4:-0}"
}

mt_restore() { mt_params 0 1 4 0; }

# mt_atomic PLANE_ARGS...: modetest -a -d sets the mode and the planes in
# one atomic commit, drops master and waits on stdin (a fifo held open on
# fd 3) until mt_atomic_end. Returns once it has dropped master or exited.
mt_atomic() {
	rm -f /tmp/mt-atomic.in
	mkfifo /tmp/mt-atomic.in
	modetest -M vkms -a -d -s "$MT_CONN@$MT_CRTC:$MT_MODE" "$@" \
		< /tmp/mt-atomic.in > /tmp/mt-atomic.log 2>&1 &
	mt_atomic_pid=$!
	mt_atomic_ok=0
	exec 3> /tmp/mt-atomic.in
	# Polled through debugfs: another DRM client could take master first.
	# modetest drops master only after its commit succeeded; one that
	# never was master is "n" too, but it has logged the failed commit.
	# 30 s at least: modetest's first commit waits for a frame, which a
	# debug guest beside a build can take seconds to show.
	i=0
	while [ $i -lt 600 ] && kill -0 $mt_atomic_pid 2>/dev/null; do
		if awk -v pid=$mt_atomic_pid '$2 == pid && $4 == "n" { f = 1 } END { exit !f }' \
			"$VKMS_DEBUGFS"/clients && ! grep -q 'Atomic Commit failed' /tmp/mt-atomic.log; then
			mt_atomic_ok=1
			return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
}

# Its teardown commit fails ("Atomic Commit failed"): it dropped master.
# A client that has exited already leaves the fifo without a reader: the
# write must not raise SIGPIPE in the shell that runs every suite.
mt_atomic_end() {
	kill -0 "$mt_atomic_pid" 2>/dev/null ||
		echo "# atomic client: gone before its end"
	(trap '' PIPE; echo >&3) 2>/dev/null
	exec 3>&-
	wait "$mt_atomic_pid"
	echo "# atomic client: exit status $?"
	sed 's/^/# atomic client: /' /tmp/mt-atomic.log
}

# mt_policy PROTECT: the label of a protect_legacy_cursor value.
mt_policy() {
	if [ "$1" = 1 ]; then echo guarded; else echo unguarded; fi
}

# mt_judge_name NAME: the judge's test NAME with the case as its variant,
# as each of this suite's tests has it (a NAME with a variant of its own is
# kept as it is).
mt_judge_name() {
	case "$1" in
	*@*) echo "$1" ;;
	*) echo "$1@$mt_case" ;;
	esac
}

# mt_judge CASE JUDGE_ARGS...: runs the judge and renumbers its TAP into
# the current suite, its names with CASE as the variant. Its plan comes
# last: judge-completed@CASE fails unless it printed one and ran that many
# tests (a judge that died midway would otherwise pass with fewer tests).
mt_judge() {
	mt_case=$1
	shift
	/tests/kms_client_judge --log /tmp/mt-client.log "$@" > /tmp/mt-judge.tap
	echo "# judge: exit status $?"
	judge_ran=0 judge_plan=
	while IFS= read -r line; do
		case "$line" in
		"ok "* | "not ok "*) judge_ran=$((judge_ran + 1)) ;;
		esac
		case "$line" in
		"ok "*" # SKIP "*)
			line=${line#ok * - }
			tap_skip "$(mt_judge_name "${line%% # SKIP *}")" "${line#* # SKIP }"
			;;
		"ok "*) tap_result 0 "$(mt_judge_name "${line#ok * - }")" ;;
		"not ok "*) tap_result 1 "$(mt_judge_name "${line#not ok * - }")" ;;
		"1.."*) judge_plan=${line#1..} ;;
		"#"*) echo "$line" ;;
		esac
	done < /tmp/mt-judge.tap
	test "$judge_ran" = "${judge_plan:-none}"
	tap_result $? "judge-completed@$mt_case"
	tap_diag "judge: ran $judge_ran tests, plan ${judge_plan:-missing}"
}

# mt_layout CASE PER_PIPE PROTECT MODE PIPES REFUSED PLANE_ARGS...: the
# atomic client puts the layout up (CASE: the label of the layout and policy,
# the variant of each test's name); vkms must choose MODE with PIPES pipes
# in use; then a legacy modetest becomes master, sets its own primary with
# SETCRTC over the overlays and runs the cursor test under the judge, which
# wants refused cursor updates ("some") or none. The caller has set -f: the
# plane arguments hold a "*" (the scale).
mt_layout() {
	name=$1 per_plane=$2 protect=$3 mode=$4 pipes=$5 refused=$6
	shift 6
	tap_start
	mt_params "$per_plane" "$protect"
	mt_atomic "$@"
	tap_check "atomic-commit-accepted@$name" test $mt_atomic_ok = 1
	state=$(vkms_cursor_state)
	tap_check "cursor-mode-and-pipes@$name" test "$state" = "$mode $pipes"
	tap_diag "$name: cursor mode and pipes in use: $state (wanted: $mode $pipes)"
	mt_judge "$name" --name "$name" --expect-mode "$mode" --expect-refused "$refused" \
		--min-cursor-on 4 --min-over-overlay "${MT_MIN_OVER:-4}" --seed 7 \
		-- modetest -M vkms -s "$MT_CONN@$MT_CRTC:$MT_MODE" -C
	mt_atomic_end
	mt_restore
	tap_done
}

MT_SCALED="-P $MT_PRI@$MT_CRTC:640x480+0+0 -P $MT_OV1@$MT_CRTC:160x120+40+40*2"

mt_dedicated() {
	set -f
	# shellcheck disable=SC2086
	mt_layout "dedicated-$(mt_policy "$1")" 1 "$1" dedicated 3 none $MT_SCALED
	set -- $?
	set +f
	return "$1"
}

# Every pipe in use: unscaled opaque overlays, where every copy is right.
mt_native() {
	mt_layout "native-$(mt_policy "$1")" 1 "$1" native 4 none \
		-P "$MT_PRI@$MT_CRTC:640x480+0+0" \
		-P "$MT_OV1@$MT_CRTC:200x150+20+20" \
		-P "$MT_OV2@$MT_CRTC:200x150+240+100" \
		-P "$MT_OV3@$MT_CRTC:200x150+420+300"
}

MT_SCALED4="-P $MT_PRI@$MT_CRTC:640x480+0+0 -P $MT_OV1@$MT_CRTC:160x120+40+40*2 \
 -P $MT_OV2@$MT_CRTC:100x100+420+40 -P $MT_OV3@$MT_CRTC:100x100+420+300"

# Every pipe in use and a scaled overlay: cursor moves that would show wrong
# must be refused, the others shown natively. The refusals are asserted;
# the cursor then shows only away from the overlays (none of 12 samples
# over one in the runs so far), so no sample over an overlay is required.
mt_native_scaled() {
	MT_MIN_OVER=0
	set -f
	# shellcheck disable=SC2086
	mt_layout native-scaled-unguarded 1 0 native 4 some \
		$MT_SCALED4
	set -- $?
	set +f
	MT_MIN_OVER=
	return "$1"
}

# The same layout from a client without the cap, guarded: refused whole.
mt_native_scaled_guarded() {
	tap_start
	mt_params 1 1
	# The refusal is a drm.debug atomic line: make sure they are logged.
	echo $(($(cat /sys/module/drm/parameters/debug) | 0x10)) > /sys/module/drm/parameters/debug
	# Only what is logged after this marker counts: the ring may have wrapped.
	mark="mt-guarded-$$-$(cut -d' ' -f1 /proc/uptime)"
	echo "$mark" > /dev/kmsg
	set -f
	# shellcheck disable=SC2086
	(echo) | modetest -M vkms -a -s "$MT_CONN@$MT_CRTC:$MT_MODE" $MT_SCALED4 \
		> /tmp/mt-refused.log 2>&1
	rc=$?
	set +f
	sed 's/^/# client: /' /tmp/mt-refused.log
	tap_check "atomic-commit-refused@native-scaled-guarded" \
		sh -c "[ $rc -ne 0 ] && grep -q 'Atomic Commit failed' /tmp/mt-refused.log"
	tap_diag "native-scaled-guarded: modetest exit status $rc"
	tap_check "refused-to-keep-cursor-pipe@native-scaled-guarded" \
		sh -c "dmesg | sed -n '/$mark/,\$p' |
		       grep -q 'no pipe left for a later legacy cursor update'"
	mt_restore
	tap_done
}

# The 2021 bug on purpose: validation off, the raw per-plane picture; one
# legacy modetest with a 2x scaled overlay and its cursor test. The judge
# must see wrong frames, or it could not see them anywhere else either.
mt_bug() {
	tap_start
	mt_params 1 1 4 1
	set -f
	mt_judge validation-off --name validation-off --expect-wrong --expect-mode native \
		--expect-refused none --min-cursor-on 4 --min-over-overlay 4 --seed 7 \
		-- modetest -M vkms -s "$MT_CONN@$MT_CRTC:$MT_MODE" \
		-P "$MT_OV1@$MT_CRTC:160x120+40+40*2" -C
	set +f
	mt_restore
	tap_done
}

mt_drm_info() {
	tap_start
	mt_params 1 1
	set -f
	# shellcheck disable=SC2086
	mt_atomic $MT_SCALED
	set +f
	drm_info > /tmp/drm_info.txt 2> /tmp/drm_info.err
	rc=$?
	drm_info -j > /tmp/drm_info.json 2> /tmp/drm_info-j.err
	rcj=$?
	t=/tmp/drm_info.txt
	tap_check "drm-info-exits-0" test $rc = 0
	tap_diag "drm_info: exit status $rc"
	tap_check "drm-info-no-stderr" test ! -s /tmp/drm_info.err
	tap_check "drm-info-json-exits-0" test $rcj = 0
	tap_diag "drm_info -j: exit status $rcj"
	tap_check "drm-info-json-no-stderr" test ! -s /tmp/drm_info-j.err
	tap_check "drm-info-driver-vkms" grep -q 'Driver: vkms ' $t
	tap_check "drm-info-plane-types" sh -c "
		test \$(grep -c '\"type\" (immutable): enum {Overlay, Primary, Cursor} = Primary' $t) = 1 &&
		test \$(grep -c '\"type\" (immutable): enum {Overlay, Primary, Cursor} = Overlay' $t) = 8 &&
		test \$(grep -c '\"type\" (immutable): enum {Overlay, Primary, Cursor} = Cursor' $t) = 1"
	tap_check "drm-info-zpos-settable" \
		test "$(grep -c '"zpos": range \[0, 8\]' $t)" = 9
	tap_check "drm-info-writeback-connector" grep -q 'Type: writeback' $t
	tap_check "drm-info-scaled-overlay" \
		sh -c "grep -q '\"SRC_W\" (atomic): range \[0, UINT32_MAX\] = 160' $t &&
		       grep -q '\"CRTC_W\" (atomic): range \[0, INT32_MAX\] = 320' $t"
	tap_check "drm-info-json-driver-vkms" grep -q '"name": "vkms"' /tmp/drm_info.json
	tap_check "drm-info-json-planes-zpos" \
		test "$(grep -c '"zpos"' /tmp/drm_info.json)" = 10
	tap_check "drm-info-json-complete" \
		sh -c "test \$(tr -cd '{' < /tmp/drm_info.json | wc -c) = \$(tr -cd '}' < /tmp/drm_info.json | wc -c) &&
		       test \$(tr -d ' \t\n' < /tmp/drm_info.json | tail -c 1) = '}'"
	mt_atomic_end
	mt_restore
	tap_done
}

mt_t0=$(cut -d' ' -f1 /proc/uptime)
suite clients:drm-info mt_drm_info
suite "clients:modetest:dedicated:guarded" mt_dedicated 1
# Under KASAN and lockdep one judged layout and the refusal are enough to
# run the clients' paths through the checkers; the others cost minutes there.
# With a pipe free protect_legacy_cursor changes nothing (the dedicated
# layout runs guarded only); unguarded is judged where it matters, with
# every pipe in use.
if [ "${HARNESS_CONFIG:-}" != debug ]; then
	suite "clients:modetest:native:guarded" mt_native 1
	suite "clients:modetest:native-scaled:unguarded" mt_native_scaled
fi
suite "clients:modetest:native-scaled:guarded" mt_native_scaled_guarded
if [ "${HARNESS_CONFIG:-}" != debug ]; then
	suite "clients:modetest:judge-sees-the-bug" mt_bug
fi
mt_restore
echo "# clients-modetest.sh: $(awk -v t0="$mt_t0" '{ printf "%.1f", $1 - t0 }' /proc/uptime) s"
