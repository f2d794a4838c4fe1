# libliftoff (Debian's libliftoff0 0.3.0), the plane allocator compositors
# use, driven by /usr/bin/kms_liftoff (tests/liftoff/): a compositor-like
# client that hands its layers to libliftoff and commits what it chose. Each
# setting of vkms runs the client without and with
# DRM_CLIENT_CAP_NO_LEGACY_CURSOR; the table it prints is what the opt-in
# buys a compositor. The client keeps each layout on screen until the next
# one's commit succeeded, so the kernel checks transitions, as from a
# compositor; the LIFTOFF_COLD settings also run it with --cold, each layout
# from a CRTC the previous one's freed buffers left blank, for comparison.
# Sourced by run-guest.sh with vkms loaded with enable_overlay=1.
# shellcheck shell=sh

# setting name, per_plane_cursor, protect_legacy_cursor, hw_pipes,
# amdgpu_cursor_rule (amdgpu's own mode rule since 6.11, for comparison:
# only kernels that offer it run that setting)
LIFTOFF_SETTINGS="off:0:1:4:0 guarded-4:1:1:4:0 unguarded-4:1:0:4:0 guarded-5:1:1:5:0 amdgpu-4:1:1:4:1"
[ -e $VKMS_PARAMS/amdgpu_cursor_rule ] ||
	LIFTOFF_SETTINGS=$(echo "$LIFTOFF_SETTINGS" | tr ' ' '\n' | grep -v ':1$' | tr '\n' ' ')
# The cap column runs with this option; empty turns the cap column into a
# second run without the cap (how the checks were shown to fail).
LIFTOFF_CAP_OPT=--cap
LIFTOFF_COLD="guarded-4"

# liftoff_field FILE LAYOUT KEY: the value of KEY=... on LAYOUT's line.
liftoff_field() {
	awk -v l="$2" -v k="$3" '$1 == "layout" && $2 == l {
		for (i = 3; i <= NF; i++)
			if (index($i, k "=") == 1) { print substr($i, length(k) + 2); exit }
	}' "$1"
}

liftoff_layouts() { awk '$1 == "layout" { print $2 }' "$1"; }

# liftoff_diff FILE_A FILE_B OP: both runs reported the same layouts, at
# least one, and each has planes(A) OP planes(B). With -eq nothing may
# differ at all: the same composited count, cursor mode, pipes and
# layer-to-plane assignment too.
liftoff_diff() {
	l_a=$(liftoff_layouts "$1" | tr '\n' ' ')
	l_b=$(liftoff_layouts "$2" | tr '\n' ' ')
	if [ -z "$l_b" ] || [ "$l_a" != "$l_b" ]; then
		echo "layouts in $1: ${l_a:-none}; in $2: ${l_b:-none}"
		return 1
	fi
	rc=0
	for l in $l_b; do
		for k in planes composited mode pipes on; do
			a=$(liftoff_field "$1" "$l" $k)
			b=$(liftoff_field "$2" "$l" $k)
			if [ $k = planes ]; then
				[ -n "$a" ] && [ -n "$b" ] && test "$a" "$3" "$b" && continue
			elif [ "$3" != -eq ] || { [ -n "$a" ] && [ "$a" = "$b" ]; }; then
				continue
			fi
			echo "$l: $k=$a in $1, $k=$b in $2"
			rc=1
		done
	done
	return $rc
}

# liftoff_cmp SETTING OP: liftoff_diff of SETTING's run with the cap against
# its run without.
liftoff_cmp() {
	liftoff_diff "/tmp/liftoff-$1-on.out" "/tmp/liftoff-$1-off.out" "$2"
}

# liftoff_same_planes SETTING: with and without the cap, the same number of
# layers on planes for every layout.
liftoff_same_planes() {
	liftoff_cmp "$1" -ge &&
		liftoff_diff "/tmp/liftoff-$1-off.out" "/tmp/liftoff-$1-on.out" -ge
}

# liftoff_chain FILE: each layout after the first started from the planes
# the one before it left lit (a transition), or, with --cold, from fewer.
liftoff_chain() {
	awk -v cold="$2" '$1 == "layout" {
		for (i = 3; i <= NF; i++)
			if (index($i, "lit=") == 1) split(substr($i, 5), lit, "/")
		if (n++ && (cold ? lit[1] >= after : lit[1] != after)) {
			printf "%s: %d planes lit before it, %d after the one before\n",
				$2, lit[1], after
			bad = 1
		}
		after = lit[2]
	}
	END { exit bad || n < 2 }' "$1"
}

# liftoff_gain SETTING LAYOUT: the cap puts more of LAYOUT's layers on planes.
liftoff_gain() {
	a=$(liftoff_field "/tmp/liftoff-$1-on.out" "$2" planes)
	b=$(liftoff_field "/tmp/liftoff-$1-off.out" "$2" planes)
	echo "$1 $2: $a planes with the cap, $b without"
	[ -n "$a" ] && [ -n "$b" ] && [ "$a" -gt "$b" ]
}

# liftoff_all KEY VALUE FILE...: every layout of every FILE reports KEY=VALUE.
liftoff_all() {
	k=$1 v=$2
	shift 2
	for f; do
		n=$(awk '$1 == "layout"' "$f" | wc -l)
		if [ "$n" -eq 0 ] || [ "$(grep -c "^layout .* $k=$v " "$f")" != "$n" ]; then
			echo "$f: not $k=$v on every one of its $n layouts"
			return 1
		fi
	done
}

# liftoff_run NAME CAP OPTION...: runs the client into /tmp/liftoff-NAME-CAP.out.
liftoff_run() {
	out=/tmp/liftoff-$1-$2.out
	shift 2
	/usr/bin/kms_liftoff "$@" > "$out" 2>&1 || { cat "$out"; false; }
}

# liftoff_table PREFIX NAME CAP: the run's lines of the raw table.
liftoff_table() {
	f=/tmp/liftoff-$2-$3.out
	for l in $(liftoff_layouts "$f"); do
		echo "# $1 | $l | $2 | $(liftoff_field "$f" "$l" cap) |" \
			"$(liftoff_field "$f" "$l" planes)/$(liftoff_field "$f" "$l" layers) |" \
			"$(liftoff_field "$f" "$l" composited) |" \
			"$(liftoff_field "$f" "$l" mode) $(liftoff_field "$f" "$l" pipes)"
	done
}

# liftoff_label CAP OPTION: the label of a run in test names, from its
# option ("--cap" -> "cap"); "no-cap" without one, "no-cap-again" for the
# cap column run without the cap (LIFTOFF_CAP_OPT empty), so that the two
# runs of a setting never share a name.
liftoff_label() {
	if [ -n "$2" ]; then
		echo "${2#--}"
	elif [ "$1" = on ]; then
		echo no-cap-again
	else
		echo no-cap
	fi
}

liftoff_suite() {
	n_amdgpu=0
	case "$LIFTOFF_SETTINGS" in *amdgpu-4*) n_amdgpu=2 ;; esac
	tap_start
	t0=$(cut -d' ' -f1 /proc/uptime)
	for s in $LIFTOFF_SETTINGS; do
		name=${s%%:*}
		# shellcheck disable=SC2046
		tap_check "vkms-params-set@$name" vkms_set $(echo "${s#*:}" | tr : ' ')
		tap_diag "$name: per_plane:protect:hw_pipes:amdgpu_rule ${s#*:}"
		for cap in off on; do
			opt=
			[ $cap = on ] && opt=$LIFTOFF_CAP_OPT
			v=$name-$(liftoff_label $cap "$opt")
			# shellcheck disable=SC2086
			tap_check "commits-succeeded@$v" liftoff_run "$name" $cap $opt
			n_layouts=$(liftoff_layouts "/tmp/liftoff-$name-$cap.out" | wc -l)
			tap_check "layouts-reported@$v" test "$n_layouts" = 8
			tap_diag "kms_liftoff ${opt:-(no cap)} under $name: $n_layouts layouts reported (wanted 8)"
			tap_check "layout-replaced-previous@$v" \
				liftoff_chain "/tmp/liftoff-$name-$cap.out" 0
		done
		tap_check "cap-planes-not-fewer@$name" liftoff_cmp "$name" -ge
		case " $LIFTOFF_COLD " in *" $name "*) ;; *) continue ;; esac
		for cap in off on; do
			opt=
			[ $cap = on ] && opt=$LIFTOFF_CAP_OPT
			v=$name-$(liftoff_label $cap "$opt")
			# shellcheck disable=SC2086
			tap_check "cold-commits-succeeded@$v" liftoff_run "cold-$name" $cap --cold $opt
			tap_check "cold-started-from-fewer-planes@$v" \
				liftoff_chain "/tmp/liftoff-cold-$name-$cap.out" 1
			tap_check "cold-same-as-transitions@$v" \
				liftoff_diff "/tmp/liftoff-cold-$name-$cap.out" "/tmp/liftoff-$name-$cap.out" -eq
		done
	done
	# shellcheck disable=SC2046
	tap_check "cap-granted-every-run" liftoff_all cap set $(ls /tmp/liftoff-*-on.out)
	tap_check "cap-changes-nothing@off" liftoff_cmp off -eq
	tap_check "cap-changes-nothing@unguarded-4" liftoff_cmp unguarded-4 -eq
	tap_check "cap-lifts-video-and-overlays@guarded-4" \
		liftoff_gain guarded-4 video-window+2-overlays
	tap_check "cap-changes-nothing@guarded-5" liftoff_cmp guarded-5 -eq
	if [ "$n_amdgpu" != 0 ]; then
		# The mode amdgpu keeps while the cursor is off is whatever the
		# CRTC had before, so only the layers on planes must agree.
		tap_check "cap-same-planes@amdgpu-4" liftoff_same_planes amdgpu-4
		tap_check "cap-planes-not-fewer-than-amdgpu-rule@guarded-4" \
			liftoff_diff /tmp/liftoff-guarded-4-on.out /tmp/liftoff-amdgpu-4-off.out -ge
	fi

	echo "# liftoff: the runs took $(awk -v t0="$t0" '{ print $1 - t0 }' /proc/uptime) s"
	echo "# liftoff | layout (from the one before) | setting | cap | planes | composited | mode"
	for s in $LIFTOFF_SETTINGS; do
		for cap in off on; do
			liftoff_table liftoff "${s%%:*}" $cap
		done
	done
	echo "# liftoff-cold | layout (from a blank CRTC) | setting | cap | planes | composited | mode"
	for name in $LIFTOFF_COLD; do
		for cap in off on; do
			liftoff_table liftoff-cold "cold-$name" $cap
		done
	done
	for f in /tmp/liftoff-*.out; do
		sed "s|^|# $(basename "$f" .out): |" "$f"
	done
	# What the rest of the guest expects: the defaults.
	vkms_set 0 1 4 0
	tap_done
}

suite clients:liftoff liftoff_suite
