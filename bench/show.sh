#!/bin/sh
# make demo / make bench: build the patched base kernel and boot it once in
# the given mode, its console on the terminal. "demo" shows the capability
# and the per-pipe cursor scenarios; "bench" prints what the per-pipe cursor
# emulation costs the composer, as a ratio to plain vkms in the same boot
# (figures only, never a verdict).
set -eu
. "$(dirname "$0")/lib.sh"

mode=${1:?usage: show.sh demo|bench}
"$REPO/bench/deps.sh"
"$REPO/bench/tree.sh"
"$REPO/bench/kernel.sh" base
"$REPO/bench/guest.sh" base
"$REPO/bench/boot.sh" base "$mode" "$BUILD/results/$mode"
say "$mode finished in $(elapsed) s"
