# libliftoff (Debian's libliftoff0 0.3.0), the plane allocator compositors
# use, driven by /usr/bin/kms_liftoff (tests/liftoff/): a compositor-like
# client that hands its layers to libliftoff and commits what it chose. Each
# setting of vkms runs the client without and with DRM_CLIENT_CAP_ATOMIC_ONLY;
# the table it prints is what the opt-in buys a compositor.
# Sourced by run-guest.sh with vkms loaded with enable_overlay=1.
# shellcheck shell=sh

LIFTOFF_PARAMS=/sys/module/vkms/parameters
# setting name, per_pipe_cursor, protect_legacy_cursor, hw_pipes
LIFTOFF_SETTINGS="off:0:1:4 guarded-4:1:1:4 unguarded-4:1:0:4 guarded-5:1:1:5"
# The cap column runs with this option; empty turns the cap column into a
# second run without the cap (how the checks were shown to fail).
LIFTOFF_CAP_OPT=--cap

# liftoff_set PER_PIPE PROTECT HW_PIPES: vkms reads them at every atomic_check.
liftoff_set() {
	echo "$1" > $LIFTOFF_PARAMS/per_pipe_cursor &&
		echo "$2" > $LIFTOFF_PARAMS/protect_legacy_cursor &&
		echo "$3" > $LIFTOFF_PARAMS/hw_pipes
}

# liftoff_field FILE LAYOUT KEY: the value of KEY=... on LAYOUT's line.
liftoff_field() {
	awk -v l="$2" -v k="$3" '$1 == "layout" && $2 == l {
		for (i = 3; i <= NF; i++)
			if (index($i, k "=") == 1) { print substr($i, length(k) + 2); exit }
	}' "$1"
}

liftoff_layouts() { awk '$1 == "layout" { print $2 }' "$1"; }

# liftoff_cmp SETTING OP: every layout of SETTING has planes(cap) OP planes(no cap).
liftoff_cmp() {
	rc=0
	for l in $(liftoff_layouts "/tmp/liftoff-$1-off.out"); do
		a=$(liftoff_field "/tmp/liftoff-$1-on.out" "$l" planes)
		b=$(liftoff_field "/tmp/liftoff-$1-off.out" "$l" planes)
		if [ -z "$a" ] || [ -z "$b" ] || ! test "$a" "$2" "$b"; then
			echo "$1 $l: $a planes with the cap, $b without"
			rc=1
		fi
	done
	return $rc
}

# liftoff_gain SETTING LAYOUT: the cap puts more of LAYOUT's layers on planes.
liftoff_gain() {
	a=$(liftoff_field "/tmp/liftoff-$1-on.out" "$2" planes)
	b=$(liftoff_field "/tmp/liftoff-$1-off.out" "$2" planes)
	echo "$1 $2: $a planes with the cap, $b without"
	[ -n "$a" ] && [ -n "$b" ] && [ "$a" -gt "$b" ]
}

# liftoff_all FILE KEY VALUE: every layout reports KEY=VALUE.
liftoff_all() {
	n=$(awk '$1 == "layout"' "$1" | wc -l)
	[ "$n" -gt 0 ] && [ "$(grep -c "^layout .* $2=$3 " "$1")" = "$n" ]
}

liftoff_suite() {
	n_settings=$(echo "$LIFTOFF_SETTINGS" | wc -w)
	tap_plan $((n_settings * 5 + 5))
	t0=$(cut -d' ' -f1 /proc/uptime)
	for s in $LIFTOFF_SETTINGS; do
		name=${s%%:*}
		# shellcheck disable=SC2046
		liftoff_set $(echo "${s#*:}" | tr : ' ')
		for cap in off on; do
			opt=
			[ $cap = on ] && opt=$LIFTOFF_CAP_OPT
			# shellcheck disable=SC2086
			tap_check "kms_liftoff ${opt:-(no cap)} under $name: every commit succeeded" \
				sh -c "/usr/bin/kms_liftoff $opt > /tmp/liftoff-$name-$cap.out 2>&1 ||
					{ cat /tmp/liftoff-$name-$cap.out; false; }"
			tap_check "kms_liftoff ${opt:-(no cap)} under $name reported 8 layouts" \
				test "$(liftoff_layouts "/tmp/liftoff-$name-$cap.out" | wc -l)" = 8
		done
		tap_check "$name: with the cap at least as many layers on planes, every layout" \
			liftoff_cmp "$name" -ge
	done
	tap_check "the kernel granted the cap: cap=set on every layout" \
		liftoff_all /tmp/liftoff-guarded-4-on.out cap set
	tap_check "emulation off: the cap changes nothing, every layout" liftoff_cmp off -eq
	tap_check "unguarded: the cap changes nothing, every layout" liftoff_cmp unguarded-4 -eq
	tap_check "guarded, 4 pipes: the cap lifts the scaled video and 2 overlays onto planes" \
		liftoff_gain guarded-4 video-window+2-overlays
	tap_check "guarded, 5 pipes: a free pipe is left, the cap changes nothing" \
		liftoff_cmp guarded-5 -eq

	echo "# liftoff: the runs took $(awk -v t0="$t0" '{ print $1 - t0 }' /proc/uptime) s"
	echo "# liftoff | layout | setting | cap | planes | composited | mode"
	for s in $LIFTOFF_SETTINGS; do
		name=${s%%:*}
		for cap in off on; do
			f=/tmp/liftoff-$name-$cap.out
			for l in $(liftoff_layouts "$f"); do
				echo "# liftoff | $l | $name | $(liftoff_field "$f" "$l" cap) |" \
					"$(liftoff_field "$f" "$l" planes)/$(liftoff_field "$f" "$l" layers) |" \
					"$(liftoff_field "$f" "$l" composited) |" \
					"$(liftoff_field "$f" "$l" mode) $(liftoff_field "$f" "$l" pipes)"
			done
		done
	done
	for f in /tmp/liftoff-*.out; do
		sed "s|^|# $(basename "$f" .out): |" "$f"
	done
	# What the rest of the guest expects: the defaults.
	liftoff_set 0 1 4
	tap_status
}

suite clients:liftoff liftoff_suite
