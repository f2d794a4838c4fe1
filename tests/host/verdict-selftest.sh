#!/bin/sh
# The bench must be able to fail: feed bench/verdict.sh made-up guest output
# and check that it turns each kind of trouble into a failure. TAP.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# verdict_of NAME RESULTS CONSOLE: runs verdict.sh on one fake configuration.
verdict_of() {
	mkdir -p "$tmp/$1"
	printf '%b' "$2" > "$tmp/$1/results.tap"
	printf '%b' "$3" > "$tmp/$1/console.log"
	"$repo/bench/verdict.sh" "$tmp/$1" > "$tmp/$1/out" 2>/dev/null
}

expect() {	# expect 0|1 NAME RESULTS CONSOLE
	want=$1
	shift
	verdict_of "$@"
	got=$?
	n=$((n + 1))
	if [ "$got" = "$want" ] || { [ "$want" = 1 ] && [ "$got" != 0 ]; }; then
		echo "ok $n - verdict: $1"
	else
		echo "not ok $n - verdict: $1 (exit $got, wanted $want)"
		sed 's/^/# /' "$tmp/$1/out"
		failed=$((failed + 1))
	fi
}

good='## suite s\r\n1..2\r\nok 1 - a\r\nok 2 - b\r\n## exit s 0\r\n## done\r\n'
log='[    0.1] Linux version 6.1\n'

echo "TAP version 13"
echo "1..12"
expect 0 "clean run passes" "$good" "$log"
expect 1 "a failing test fails the run" \
	'## suite s\n1..2\nok 1 - a\nnot ok 2 - b\n## exit s 1\n## done\n' "$log"
expect 1 "a suite that stops before its plan fails" \
	'## suite s\n1..3\nok 1 - a\n## exit s 139\n## done\n' "$log"
expect 1 "a suite exiting non-zero without a failed test fails" \
	'## suite s\n1..1\nok 1 - a\n## exit s 1\n## done\n' "$log"
expect 1 "a guest that never finishes fails" '## suite s\n1..1\nok 1 - a\n' "$log"
expect 1 "a KASAN report fails the run" "$good" \
	"$log[    2.0] BUG: KASAN: use-after-free in vkms_compose_row\n"
expect 1 "a lockdep report fails the run" "$good" \
	"$log[    2.0] WARNING: possible circular locking dependency detected\n"
expect 1 "an empty console log fails the run" "$good" ""
rect_warn='[ 5.0] ------------[ cut here ]------------\n[ 5.0] WARNING: CPU: 0 PID: 1 at drivers/gpu/drm/drm_rect.c:137 drm_calc_scale+0x8/0x2a\n[ 5.0] Call Trace:\n[ 5.0]  ? drm_rect_calc_hscale+0x20/0x39\n'
expect 0 "drm_rect_test's own negative-size WARN (upstream 6.12) passes" "$good" \
	"$log${rect_warn}[ 5.0]  ? drm_test_rect_calc_hscale+0x24/0x7d [drm_rect_test]\n[ 5.0] ---[ end trace 0000000000000000 ]---\n"
expect 1 "the same WARN from anywhere else fails the run" "$good" \
	"$log${rect_warn}[ 5.0]  ? vkms_plane_atomic_check+0x24/0x7d [vkms]\n[ 5.0] ---[ end trace 0000000000000000 ]---\n"
# expect_cfg WANT NAME DIR RESULTS CONSOLE: as expect, in a directory laid
# out like the bench's (<tree>/results/<config>), for per-tree rules.
expect_cfg() {
	mkdir -p "$tmp/$3"
	printf '%b' "$4" > "$tmp/$3/results.tap"
	printf '%b' "$5" > "$tmp/$3/console.log"
	"$repo/bench/verdict.sh" "$tmp/$3" > "$tmp/$3/out" 2>/dev/null
	got=$?
	n=$((n + 1))
	if [ "$got" = "$1" ] || { [ "$1" = 1 ] && [ "$got" != 0 ]; }; then
		echo "ok $n - verdict: $2"
	else
		echo "not ok $n - verdict: $2 (exit $got, wanted $1)"
		sed 's/^/# /' "$tmp/$3/out"
		failed=$((failed + 1))
	fi
}

dc='## suite amdgpu_cursor_dc\n1..1\nok 1 - amdgpu_dm_cursor_dc: seed 0x16c0ffee\n## exit amdgpu_cursor_dc 0\n'
expect_cfg 1 "a 6.12 amd guest that did not compare the helper with DC fails" \
	"a/6.12/results/amd" "$good" "$log"
expect_cfg 0 "a 6.12 amd guest that did passes" "b/6.12/results/amd" "$dc$good" "$log"
[ $failed -eq 0 ]
