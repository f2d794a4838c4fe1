# TAP helpers for shell suites, in the guest (run-guest.sh) and on the host
# (tests/host/*.sh), with the rules of lib/tap.h: stable kebab-case names
# ("name" or "name@variant"), measurements in "# " lines, the plan last.
# shellcheck shell=sh

tap_n=0
tap_failed=0
tap_seen=

tap_start() {
	tap_n=0
	tap_failed=0
	tap_seen=
	echo "TAP version 13"
}

# tap_line OK NAME [SKIP-REASON]: a malformed name fails its test.
tap_line() {
	tap_ok=$1
	case "$2" in
	*[!a-z0-9@-]* | "" | -* | *- | *@*@* | *-@* | *@-* | *--* | @* | *@)
		tap_ok=1
		tap_bad="# not a kebab-case test name: $2"
		;;
	*) tap_bad= ;;
	esac
	case " $tap_seen " in
	*" $2 "*) tap_ok=1 tap_bad="# test name used twice: $2" ;;
	esac
	tap_seen="$tap_seen $2"
	tap_n=$((tap_n + 1))
	if [ "$tap_ok" = 0 ]; then
		echo "ok $tap_n - $2${3:+ # SKIP $3}"
	else
		echo "not ok $tap_n - $2"
		tap_failed=$((tap_failed + 1))
	fi
	[ -z "$tap_bad" ] || echo "$tap_bad"
}

# tap_check NAME COMMAND...: one test, passing when COMMAND succeeds; its
# output is shown as diagnostics when it fails.
tap_check() {
	tap_name=$1
	shift
	if "$@" >/tmp/tap.out 2>&1; then
		tap_line 0 "$tap_name"
	else
		tap_line 1 "$tap_name"
		sed 's/^/# /' /tmp/tap.out
	fi
}

# tap_result STATUS NAME: one test whose outcome is already known.
tap_result() {
	if [ "$1" = 0 ]; then tap_line 0 "$2"; else tap_line 1 "$2"; fi
}

# tap_skip NAME REASON: one test that cannot run here.
tap_skip() { tap_line 0 "$1" "$2"; }

# tap_label TEXT: TEXT as a test-name label (a patch's or a file's name):
# lower case, each run of other characters one '-'.
tap_label() {
	echo "$1" | tr '[:upper:]' '[:lower:]' |
		sed -e 's/[^a-z0-9][^a-z0-9]*/-/g' -e 's/^-//' -e 's/-$//'
}

# tap_diag TEXT: a diagnostic line (measured values, what was compared).
tap_diag() { echo "# $*"; }

# tap_done: the plan, from the count; fails if a test failed.
tap_done() {
	# A suite that returned before its first test proved nothing.
	[ "$tap_n" -gt 0 ] || tap_result 1 "ran-a-test"
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
}
