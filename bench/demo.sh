#!/bin/sh
# make demo: build the patched base kernel and boot it once, showing the
# vkms device and the atomic-only capability on the terminal.
set -eu
. "$(dirname "$0")/lib.sh"

"$REPO/bench/deps.sh"
"$REPO/bench/tree.sh"
"$REPO/bench/kernel.sh" base
"$REPO/bench/guest.sh" base
"$REPO/bench/boot.sh" base demo "$BUILD/results/demo"
say "demo finished in $(elapsed) s"
