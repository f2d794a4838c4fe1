#!/bin/sh
# Guest side of "make bench": composition cost of the per-pipe cursor
# emulation against plain vkms, in one boot.
modprobe vkms enable_overlay=1
/bench/compose_cost
