# TAP helpers for shell suites, in the guest (run-guest.sh) and on the host
# (tests/host/*.sh).
# shellcheck shell=sh

tap_n=0
tap_failed=0

tap_plan() {
	tap_n=0
	tap_failed=0
	echo "TAP version 13"
	echo "1..$1"
}

# tap_check NAME COMMAND...: one test, passing when COMMAND succeeds.
tap_check() {
	tap_name=$1
	shift
	tap_n=$((tap_n + 1))
	if "$@" >/tmp/tap.out 2>&1; then
		echo "ok $tap_n - $tap_name"
	else
		echo "not ok $tap_n - $tap_name"
		sed 's/^/# /' /tmp/tap.out
		tap_failed=$((tap_failed + 1))
	fi
}

# tap_result STATUS NAME: one test whose outcome is already known.
tap_result() {
	tap_n=$((tap_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $tap_n - $2"
	else
		echo "not ok $tap_n - $2"
		tap_failed=$((tap_failed + 1))
	fi
}

# tap_skip REASON NAME: one test that cannot run here.
tap_skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $2 # SKIP $1"
}

tap_status() { [ "$tap_failed" -eq 0 ]; }
