#!/bin/sh
# Guest side of "make bench": what the per-pipe cursor emulation costs, as
# figures against plain vkms in one boot: composition at 1024x768, the
# cursor path (legacy moves, TEST_ONLY commits), composition of a scaled
# overlay at 1920x1080.
modprobe vkms enable_overlay=1
# The kernel logs every atomic check at drm.debug=0x14 (set for the tests):
# off here, or the cursor path would mostly measure printk.
echo 0 > /sys/module/drm/parameters/debug
/bench/compose_cost
/bench/cursor_cost
/bench/scale_cost
