# Debian's modetest and drm_info, unmodified, on the patched vkms; sourced
# by run-guest.sh (suite, tap_*), vkms loaded with enable_overlay=1.
#
# modetest sets atomic overlay planes and runs its legacy cursor test with
# the per-pipe cursor emulation on, under each policy; kms_client_judge
# stops it at random moments and compares the CRC of each frame with the
# CRC of the same state composed with the emulation off. drm_info must list
# the device while a scaled overlay layout is on screen.
# shellcheck shell=sh

VKMS_PARAMS=/sys/module/vkms/parameters
VKMS_DEBUGFS=/sys/kernel/debug/dri/0
MT_MODE=640x480

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
	MT_CRTC=$1 MT_PRI=$2
	shift 3
	MT_OV1=$1 MT_OV2=$2 MT_OV3=$3
}
mt_ids

mt_params() {
	echo "$1" > $VKMS_PARAMS/per_pipe_cursor
	echo "$2" > $VKMS_PARAMS/protect_legacy_cursor
	echo "${3:-4}" > $VKMS_PARAMS/hw_pipes
	echo "${4:-0}" > $VKMS_DEBUGFS/vkms_skip_cursor_validation
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
	# modetest drops master only after its commit succeeded.
	i=0
	while [ $i -lt 100 ] && kill -0 $mt_atomic_pid 2>/dev/null; do
		if awk -v pid=$mt_atomic_pid '$2 == pid && $4 == "n" { f = 1 } END { exit !f }' \
			$VKMS_DEBUGFS/clients; then
			mt_atomic_ok=1
			return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
}

# Its teardown commit fails ("Atomic Commit failed"): it dropped master.
mt_atomic_end() {
	echo >&3
	exec 3>&-
	wait "$mt_atomic_pid"
	echo "# atomic client: exit status $?"
	sed 's/^/# atomic client: /' /tmp/mt-atomic.log
}

# The cursor state vkms reports: "MODE PIPES" ("dedicated 3").
mt_state() {
	awk '/^mode:/ { m = $2 } /^pipes:/ { p = $2 } END { print m, p }' \
		$VKMS_DEBUGFS/vkms_cursor_state
}

# Runs the judge and renumbers its TAP into the current plan.
mt_judge() {
	/tests/kms_client_judge --log /tmp/mt-client.log "$@" > /tmp/mt-judge.tap
	while IFS= read -r line; do
		case "$line" in
		"ok "*) tap_result 0 "${line#ok * - }" ;;
		"not ok "*) tap_result 1 "${line#not ok * - }" ;;
		"#"*) echo "$line" ;;
		esac
	done < /tmp/mt-judge.tap
}

# mt_layout NAME PER_PIPE PROTECT MODE PIPES PLANE_ARGS...: the atomic
# client puts the layout up; vkms must choose MODE with PIPES pipes in use;
# then a legacy modetest becomes master, sets its own primary with SETCRTC
# over the overlays and runs the cursor test under the judge.
mt_layout() {
	name=$1 per_pipe=$2 protect=$3 mode=$4 pipes=$5
	shift 5
	tap_plan 9
	mt_params "$per_pipe" "$protect"
	mt_atomic "$@"
	tap_check "$name: the atomic client's commit of its mode and planes was accepted" \
		test $mt_atomic_ok = 1
	state=$(mt_state)
	tap_check "$name: vkms shows the cursor in mode $mode with $pipes pipes in use (got: $state)" \
		test "$state" = "$mode $pipes"
	mt_judge --name "$name" --expect-mode "$mode" --seed 7 \
		-- modetest -M vkms -s "$MT_CONN@$MT_CRTC:$MT_MODE" -C
	mt_atomic_end
	mt_restore
	tap_status
}

MT_SCALED="-P $MT_PRI@$MT_CRTC:640x480+0+0 -P $MT_OV1@$MT_CRTC:160x120+40+40*2"

mt_dedicated() {
	# shellcheck disable=SC2086
	mt_layout "dedicated, protect_legacy_cursor=$1" 1 "$1" dedicated 3 $MT_SCALED
}

# Every pipe in use: unscaled opaque overlays, where every copy is right.
mt_native() {
	mt_layout "native, protect_legacy_cursor=$1" 1 "$1" native 4 \
		-P "$MT_PRI@$MT_CRTC:640x480+0+0" \
		-P "$MT_OV1@$MT_CRTC:200x150+20+20" \
		-P "$MT_OV2@$MT_CRTC:200x150+240+100" \
		-P "$MT_OV3@$MT_CRTC:200x150+420+300"
}

MT_SCALED4="-P $MT_PRI@$MT_CRTC:640x480+0+0 -P $MT_OV1@$MT_CRTC:160x120+40+40*2 \
 -P $MT_OV2@$MT_CRTC:100x100+420+40 -P $MT_OV3@$MT_CRTC:100x100+420+300"

# Every pipe in use and a scaled overlay: cursor moves that would show wrong
# must be refused, the others shown natively.
mt_native_scaled() {
	# shellcheck disable=SC2086
	mt_layout "native with a scaled overlay, protect_legacy_cursor=0" 1 0 native 4 $MT_SCALED4
}

# The same layout from a client without the cap, guarded: refused whole.
mt_native_scaled_guarded() {
	tap_plan 2
	mt_params 1 1
	log_lines=$(dmesg | wc -l)
	# shellcheck disable=SC2086
	(echo) | modetest -M vkms -a -s "$MT_CONN@$MT_CRTC:$MT_MODE" $MT_SCALED4 \
		> /tmp/mt-refused.log 2>&1
	rc=$?
	sed 's/^/# client: /' /tmp/mt-refused.log
	tap_check "guarded: modetest's atomic commit of the layout is refused (exit status $rc)" \
		sh -c "[ $rc -ne 0 ] && grep -q 'Atomic Commit failed' /tmp/mt-refused.log"
	tap_check "guarded: vkms refused it to keep a pipe for a later legacy cursor" \
		sh -c "dmesg | tail -n +$((log_lines + 1)) |
		       grep -q 'no pipe left for a later legacy cursor update'"
	mt_restore
	tap_status
}

# The 2021 bug on purpose: validation off, the raw per-pipe picture; one
# legacy modetest with a 2x scaled overlay and its cursor test. The judge
# must see wrong frames, or it could not see them anywhere else either.
mt_bug() {
	tap_plan 7
	mt_params 1 1 4 1
	mt_judge --name "validation off (the bug)" --expect-wrong --expect-mode native --seed 7 \
		-- modetest -M vkms -s "$MT_CONN@$MT_CRTC:$MT_MODE" \
		-P "$MT_OV1@$MT_CRTC:160x120+40+40*2" -C
	mt_restore
	tap_status
}

mt_drm_info() {
	tap_plan 12
	mt_params 1 1
	# shellcheck disable=SC2086
	mt_atomic $MT_SCALED
	drm_info > /tmp/drm_info.txt 2> /tmp/drm_info.err
	rc=$?
	drm_info -j > /tmp/drm_info.json 2> /tmp/drm_info-j.err
	rcj=$?
	t=/tmp/drm_info.txt
	tap_check "drm_info exits 0 (got $rc)" test $rc = 0
	tap_check "drm_info writes nothing to stderr" test ! -s /tmp/drm_info.err
	tap_check "drm_info -j exits 0 (got $rcj)" test $rcj = 0
	tap_check "drm_info -j writes nothing to stderr" test ! -s /tmp/drm_info-j.err
	tap_check "drm_info lists the driver vkms" grep -q 'Driver: vkms ' $t
	tap_check "drm_info lists one primary, 8 overlay and one cursor plane" sh -c "
		test \$(grep -c '\"type\" (immutable): enum {Overlay, Primary, Cursor} = Primary' $t) = 1 &&
		test \$(grep -c '\"type\" (immutable): enum {Overlay, Primary, Cursor} = Overlay' $t) = 8 &&
		test \$(grep -c '\"type\" (immutable): enum {Overlay, Primary, Cursor} = Cursor' $t) = 1"
	tap_check "drm_info shows a settable zpos on each of the 9 non-cursor planes" \
		test "$(grep -c '"zpos": range \[0, 8\]' $t)" = 9
	tap_check "drm_info lists the writeback connector" grep -q 'Type: writeback' $t
	tap_check "drm_info shows the 2x scaled overlay the atomic client set (SRC_W 160, CRTC_W 320)" \
		sh -c "grep -q '\"SRC_W\" (atomic): range \[0, UINT32_MAX\] = 160' $t &&
		       grep -q '\"CRTC_W\" (atomic): range \[0, INT32_MAX\] = 320' $t"
	tap_check "drm_info -j names the driver vkms" grep -q '"name": "vkms"' /tmp/drm_info.json
	tap_check "drm_info -j lists the 10 planes with their zpos" \
		test "$(grep -c '"zpos"' /tmp/drm_info.json)" -ge 10
	tap_check "drm_info -j is a complete JSON object (ends with a closing brace)" \
		sh -c "tail -c 3 /tmp/drm_info.json | grep -q '}'"
	mt_atomic_end
	mt_restore
	tap_status
}

mt_t0=$(cut -d' ' -f1 /proc/uptime)
suite "clients:drm_info" mt_drm_info
suite "clients:modetest:dedicated:guarded" mt_dedicated 1
# Under KASAN and lockdep one judged layout and the refusal are enough to
# run the clients' paths through the checkers; the others cost minutes there.
# With a pipe free protect_legacy_cursor changes nothing (the dedicated
# layout runs guarded only); unguarded is judged where it matters, with
# every pipe in use.
if [ "${BENCH_CONFIG:-}" != debug ]; then
	suite "clients:modetest:native:guarded" mt_native 1
	suite "clients:modetest:native-scaled:unguarded" mt_native_scaled
fi
suite "clients:modetest:native-scaled:guarded" mt_native_scaled_guarded
if [ "${BENCH_CONFIG:-}" != debug ]; then
	suite "clients:modetest:judge-sees-the-bug" mt_bug
fi
mt_restore
echo "# clients-modetest.sh: $(awk -v t0="$mt_t0" '{ printf "%.1f", $1 - t0 }' /proc/uptime) s"
