#!/bin/sh
# Guest side of "make bench", the same on the patched and the unpatched
# kernel: kms_cost's TAP, its records in the last test's YAML block, goes to
# ttyS1 (the host aggregates the records over boots), its diagnostics to
# the console too.
modprobe vkms enable_overlay=1
# The kernel logs every atomic check at drm.debug=0x14 (set for the tests):
# off here, or the cursor path would mostly measure printk.
echo 0 > /sys/module/drm/parameters/debug
# 12 rounds of batches of 600 calls per cursor figure and setting, 8 of one
# frame per composition case and setting: about a minute of guest time on
# the patched kernel under TCG, a third of it on the unpatched one.
/bench/kms_cost figures 12 600 8 > /tmp/cost 2> /dev/console
echo "## kms_cost exit $?" >> /tmp/cost
grep '^#' /tmp/cost
cat /tmp/cost > /dev/ttyS1
