#!/bin/sh
# Guest side of "make demo": load vkms with overlays and run the demo.
echo
echo "=== $(uname -sr) on QEMU: vkms with DRM_CLIENT_CAP_ATOMIC_ONLY ==="
modprobe vkms enable_overlay=1
/demo/kms_cap_demo
echo "=== demo done ==="
