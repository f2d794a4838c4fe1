#!/bin/sh
# Guest side of "make demo": the capability at work, then the per-plane
# cursor story in pictures. The pictures leave the guest base64-encoded on
# the results port (ttyS1), between "## file NAME" and "## end" lines, for
# harness/show.sh to decode into build/<tree>/demo/.
echo
echo "=== $(uname -sr) on QEMU: vkms with DRM_CLIENT_CAP_NO_LEGACY_CURSOR ==="
modprobe vkms enable_overlay=1
/demo/kms_cap_demo
echo
echo "=== per-plane hardware cursors: a desktop, a video scaled 2x in a window, two small overlays ==="
/demo/kms_story /tmp/demo
for f in /tmp/demo/*; do
	[ -f "$f" ] || continue
	{
		echo "## file ${f##*/}"
		base64 "$f"
		echo "## end"
	} > /dev/ttyS1
done
echo "=== demo done ==="
