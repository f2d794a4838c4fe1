#!/bin/sh
# Guest side of "make demo": the capability, then per-pipe cursors.
echo
echo "=== $(uname -sr) on QEMU: vkms with DRM_CLIENT_CAP_ATOMIC_ONLY ==="
modprobe vkms enable_overlay=1
/demo/kms_cap_demo
echo
echo "=== per-pipe hardware cursors: who is allowed what, and what the screen shows ==="
echo "(verdicts of the three policies, then the pixel oracle: per-pipe frame vs ideal frame)"
/tests/kms_cursor_pipes scenarios | grep -E '^(not )?ok' | sed 's/^ok [0-9]* - /  /; s/^not ok [0-9]* - /  UNEXPECTED: /'
echo "=== demo done ==="
