# The vkms controls of the guest's shell suites (run-guest.sh and the
# clients-*.sh files it sources): module parameters, the debugfs directory,
# reloading. lib/vkms.h is the same for the C programs.
# shellcheck shell=sh

VKMS_PARAMS=/sys/module/vkms/parameters

# vkms_reload [PARAM=VALUE...]: vkms unloaded if it is loaded, then loaded
# with the parameters given.
vkms_reload() {
	if grep -q '^vkms ' /proc/modules; then
		rmmod vkms || return 1
	fi
	modprobe vkms "$@"
}

# vkms_debugfs: the debugfs directory of vkms's primary node, the only one
# with the cursor state (vkms's platform device has no driver to look at).
# In a subshell with globbing on: callers may hold set -f (modetest's plane
# arguments carry a "*").
vkms_debugfs() (
	set +f
	for vkms_dir in /sys/kernel/debug/dri/*; do
		[ -e "$vkms_dir/vkms_cursor_state" ] && { echo "$vkms_dir"; return 0; }
	done
	return 1
)

# vkms_cursor_state: "MODE PIPES" ("dedicated 3"), the cursor mode and the
# pipes in use of the state vkms last committed; fails if its debugfs file
# lacks either. lib/vkms.c reads the whole file for the C programs.
vkms_cursor_state() {
	vkms_dir=$(vkms_debugfs) || return 1
	awk '$1 == "mode:" { m = $2 } $1 == "pipes:" { p = $2 }
		END { if (m == "" || p == "") exit 1; print m, p }' "$vkms_dir/vkms_cursor_state"
}

# vkms_set PER_PLANE PROTECT HW_PIPES [AMDGPU_RULE]: the emulation's
# parameters (0 or 1, a count, and 0, 1 for amdgpu's rule with its fixes
# or 2 for the rule as released), which vkms reads at every atomic_check.
# Read back, as a write of a bad value may be refused and leave the old
# one. A kernel without amdgpu_cursor_rule can only leave it off.
vkms_set() {
	vkms_rule=$VKMS_PARAMS/amdgpu_cursor_rule
	echo "$1" > $VKMS_PARAMS/per_plane_cursor &&
		echo "$2" > $VKMS_PARAMS/protect_legacy_cursor &&
		echo "$3" > $VKMS_PARAMS/hw_pipes || return 1
	if [ -e $vkms_rule ]; then
		echo "${4:-0}" > $vkms_rule && [ "$(cat $vkms_rule)" = "${4:-0}" ] ||
			return 1
	else
		[ "${4:-0}" = 0 ] || return 1
	fi
	# bool parameters read back as Y/N
	set -- "$(echo "$1" | tr 01 NY)" "$(echo "$2" | tr 01 NY)" "$3"
	[ "$(cat $VKMS_PARAMS/per_plane_cursor)" = "$1" ] &&
		[ "$(cat $VKMS_PARAMS/protect_legacy_cursor)" = "$2" ] &&
		[ "$(cat $VKMS_PARAMS/hw_pipes)" = "$3" ]
}

# vkms_skip_validation 0|1: the test-only debugfs switch that lets every
# cursor through, as a kernel without the validation would.
vkms_skip_validation() {
	vkms_dir=$(vkms_debugfs) && echo "$1" > "$vkms_dir/vkms_skip_cursor_validation"
}
