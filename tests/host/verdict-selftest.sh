#!/bin/sh
# The verdict must be able to fail: feed harness/verdict.sh made-up guest output
# and check that it turns each kind of trouble into a failure. TAP.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
failed=0

# expect_cfg WANT NAME DIR RESULTS CONSOLE: verdict.sh on one fake
# configuration in $tmp/DIR must exit WANT (1: any failure). A DIR laid out
# like the harness's (<tree>/results/<config>) gets the per-tree rules. NAME
# is the test's stable kebab-case name (lib/tap.h); what verdict.sh exited
# with goes into a diagnostic line.
expect_cfg() {
	mkdir -p "$tmp/$3"
	printf '%b' "$4" > "$tmp/$3/results.tap"
	printf '%b' "$5" > "$tmp/$3/console.log"
	"$repo/harness/verdict.sh" "$tmp/$3" > "$tmp/$3/out" 2>/dev/null
	got=$?
	n=$((n + 1))
	if [ "$got" = "$1" ] || { [ "$1" = 1 ] && [ "$got" != 0 ]; }; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		echo "# verdict.sh exited $got, wanted $1"
		sed 's/^/# /' "$tmp/$3/out"
		failed=$((failed + 1))
	fi
}

# expect WANT NAME RESULTS CONSOLE: the same, in the directory $tmp/NAME.
expect() {
	expect_cfg "$1" "$2" "$2" "$3" "$4"
}

good='## suite s\r\n1..2\r\nok 1 - a\r\nok 2 - b\r\n## exit s 0\r\n## done\r\n'
log='[    0.1] Linux version 6.1\n'

echo "TAP version 13"
expect 0 clean-run-passes "$good" "$log"
expect 1 failing-test-fails \
	'## suite s\n1..2\nok 1 - a\nnot ok 2 - b\n## exit s 1\n## done\n' "$log"
expect 1 stop-before-plan-fails \
	'## suite s\n1..3\nok 1 - a\n## exit s 139\n## done\n' "$log"
expect 0 plan-last-passes \
	'## suite s\nok 1 - a\nok 2 - b\n1..2\n## exit s 0\n## done\n' "$log"
expect 1 empty-plan-fails \
	'## suite s\n1..0\n## exit s 0\n## done\n' "$log"
expect 0 skipped-empty-plan-passes \
	'## suite s\n1..0 # SKIP no device\n## exit s 0\n## done\n' "$log"
expect 1 no-plan-fails \
	'## suite s\nok 1 - a\n## exit s 0\n## done\n' "$log"
expect 1 nonzero-exit-without-failed-test-fails \
	'## suite s\n1..1\nok 1 - a\n## exit s 1\n## done\n' "$log"
expect 1 unfinished-guest-fails '## suite s\n1..1\nok 1 - a\n' "$log"
expect 1 kasan-report-fails "$good" \
	"${log}[    2.0] BUG: KASAN: use-after-free in vkms_compose_row\n"
expect 1 lockdep-report-fails "$good" \
	"${log}[    2.0] WARNING: possible circular locking dependency detected\n"
expect 1 empty-console-log-fails "$good" ""
rect_warn='[ 5.0] ------------[ cut here ]------------\n[ 5.0] WARNING: CPU: 0 PID: 1 at drivers/gpu/drm/drm_rect.c:137 drm_calc_scale+0x8/0x2a\n[ 5.0] Call Trace:\n[ 5.0]  ? drm_rect_calc_hscale+0x20/0x39\n'
expect 0 drm-rect-test-warn-passes "$good" \
	"$log${rect_warn}[ 5.0]  ? drm_test_rect_calc_hscale+0x24/0x7d [drm_rect_test]\n[ 5.0] ---[ end trace 0000000000000000 ]---\n"
expect 1 drm-rect-warn-elsewhere-fails "$good" \
	"$log${rect_warn}[ 5.0]  ? vkms_plane_atomic_check+0x24/0x7d [vkms]\n[ 5.0] ---[ end trace 0000000000000000 ]---\n"

rmfb_warn='[ 6.0] ------------[ cut here ]------------\n[ 6.0] atomic remove_fb failed with -12\n[ 6.0] WARNING: CPU: 0 PID: 10 at drivers/gpu/drm/drm_framebuffer.c:1173 drm_framebuffer_remove+0x17b/0x4f5\n[ 6.0] Call Trace:\n[ 6.0]  drm_mode_rmfb_work_fn+0x5/0x9\n'
rmfb_end='[ 6.0] ---[ end trace 0000000000000000 ]---\n'
fault_on="[ 5.9] kms_fault: failing the kernel's own commit: upstream WARNs\n"
fault_off="[ 6.1] kms_fault: done failing the kernel's own commit\n"
expect 0 rmfb-warn-under-kms-fault-passes "$good" \
	"$log$fault_on$rmfb_warn$rmfb_end$fault_off"
expect 1 rmfb-warn-outside-kms-fault-fails "$good" \
	"$log$rmfb_warn$rmfb_end"
expect 1 kasan-inside-rmfb-warn-fails "$good" \
	"$log$fault_on${rmfb_warn}[ 6.0] BUG: KASAN: slab-use-after-free in x\n$rmfb_end$fault_off"
expect 0 kmemleak-scan-area-fallback-passes "$good" \
	"${log}[ 7.0] kmemleak: Cannot allocate a scan area, scanning the full object\n"
expect 1 kmemleak-report-fails "$good" \
	"${log}[ 7.0] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)\n"
# Every report of lib/kernel_log_policy.def, the table the guest reads too.
expect 1 lock-held-when-returning-fails "$good" \
	"${log}[ 7.1] ================================================\n[ 7.1] kms_fault/90 is leaving the kernel with locks still held!\n[ 7.1] lock held when returning to user space!\n"
vbl_head='[ 8.0] ------------[ cut here ]------------\n[ 8.0] WARNING: CPU: 0 PID: 70 at drivers/gpu/drm/vkms/vkms_crtc.c:103 vkms_get_vblank_timestamp+0x116/0x150 [vkms]\n[ 8.0] Call Trace:\n[ 8.0]  drm_crtc_get_last_vbltimestamp+0xfe/0x125\n'
vbl_warn="${vbl_head}[ 8.0]  drm_crtc_next_vblank_start+0xf1/0x1c3\n[ 8.0]  drm_atomic_helper_wait_for_fences+0x18e/0x463 [drm_kms_helper]\n"
vbl_end='[ 8.0] ---[ end trace 0000000000000000 ]---\n'
expect 0 vblank-timer-warn-passes "$good" "$log$vbl_warn$vbl_end"
n=$((n + 1))
if grep -q '^SKIP .*/kernel-log: vkms_get_vblank_timestamp() WARNed 1 time(s) # SKIP' \
	"$tmp/vblank-timer-warn-passes/out"; then
	echo "ok $n - vblank-timer-warn-counted-as-skip"
else
	echo "not ok $n - vblank-timer-warn-counted-as-skip"
	failed=$((failed + 1))
fi
expect 1 lockdep-inside-vblank-warn-fails "$good" \
	"$log${vbl_warn}[ 8.0] WARNING: possible circular locking dependency detected\n$vbl_end"
expect 1 ubsan-inside-vblank-warn-fails "$good" \
	"$log${vbl_warn}[ 8.0] UBSAN: shift-out-of-bounds in drivers/gpu/drm/x.c:1:2\n$vbl_end"
expect 1 vblank-warn-other-caller-fails "$good" \
	"$log${vbl_head}[ 8.0]  drm_update_vblank_count+0x1/0x2\n$vbl_end"
expect 1 other-vkms-crtc-warn-fails "$good" \
	"${log}[ 8.0] ------------[ cut here ]------------\n[ 8.0] WARNING: CPU: 0 PID: 70 at drivers/gpu/drm/vkms/vkms_crtc.c:120 vkms_atomic_crtc_duplicate_state+0x1/0x2 [vkms]\n[ 8.0] Call Trace:\n$vbl_end"
expect 1 warn-through-vblank-timestamp-fails "$good" \
	"${log}[ 8.0] ------------[ cut here ]------------\n[ 8.0] WARNING: CPU: 1 PID: 7 at drivers/gpu/drm/drm_vblank.c:700 drm_update_vblank_count+0x1/0x2\n[ 8.0] Call Trace:\n[ 8.0]  ? vkms_get_vblank_timestamp+0x116/0x150 [vkms]\n[ 8.0]  drm_crtc_next_vblank_start+0xf1/0x1c3\n$vbl_end"
expect 1 warn-holding-vblank-warn-fails "$good" \
	"${log}[ 7.9] ------------[ cut here ]------------\n[ 7.9] WARNING: CPU: 1 PID: 9 at drivers/gpu/drm/vkms/vkms_plane.c:50 vkms_plane_atomic_check+0x1/0x2 [vkms]\n$vbl_warn${vbl_end}[ 8.1]  vkms_plane_atomic_check+0x1/0x2 [vkms]\n"
expect 1 unclosed-vblank-warn-fails "$good" "$log$vbl_warn"
expect 1 kasan-after-vblank-warn-fails "$good" \
	"$log$vbl_warn${vbl_end}[ 8.2] BUG: KASAN: slab-use-after-free in vkms_vblank_simulate\n"
expect 0 exit-line-with-seconds-passes \
	'## suite s\n1..1\nok 1 - a\n## exit s 0 12.5\n## done\n' "$log"
expect 1 nonzero-exit-with-seconds-fails \
	'## suite s\n1..1\nok 1 - a\n## exit s 1 12.5\n## done\n' "$log"
expect 1 snake-case-suite-name-fails \
	'## suite clients:drm_info\nok 1 - a\n1..1\n## exit clients:drm_info 0\n## done\n' "$log"
expect 1 file-name-suite-name-fails \
	'## suite clients:clients-modetest.sh\nok 1 - a\n1..1\n## exit clients:clients-modetest.sh 0\n## done\n' "$log"
expect 0 kebab-suite-name-in-parts-passes \
	'## suite cursor:sweep@chrome\nok 1 - a\n1..1\n## exit cursor:sweep@chrome 0\n## done\n' "$log"
dc='## suite amdgpu-cursor-dc\n1..1\nok 1 - amdgpu_dm_cursor_dc: seed 0x16c0ffee\n## exit amdgpu-cursor-dc 0\n'
expect_cfg 1 amd-without-dc-comparison-fails@6-12 \
	"a/6.12/results/amd" "$good" "$log"
expect_cfg 0 amd-with-dc-comparison-passes@6-12 "b/6.12/results/amd" "$dc$good" "$log"
expect_cfg 1 amd-without-dc-comparison-fails@6-1 \
	"c/6.1/results/amd" "$good" "$log"
expect_cfg 0 amd-with-dc-comparison-passes@6-1 "d/6.1/results/amd" "$dc$good" "$log"
expect_cfg 0 base-needs-no-dc-comparison@6-1 "e/6.1/results/base" "$good" "$log"
# The plan at the end: counted by the run, not by hand.
echo "1..$n"
[ $failed -eq 0 ]
