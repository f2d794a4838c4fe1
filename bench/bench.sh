#!/bin/sh
# make bench: boot the patched base kernel once and measure what the
# per-pipe cursor emulation costs the composer, as a ratio to plain vkms in
# the same boot. Not a test: it prints figures, it never fails on them.
set -eu
. "$(dirname "$0")/lib.sh"

"$REPO/bench/deps.sh"
"$REPO/bench/tree.sh"
"$REPO/bench/kernel.sh" base
"$REPO/bench/guest.sh" base
"$REPO/bench/boot.sh" base bench "$BUILD/results/bench"
