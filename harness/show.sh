#!/bin/sh
# make demo: build the patched base kernel and boot it once, its console on
# the terminal: the capability and the per-plane cursor story, whose frames
# come back as PNG files with an index.html in build/<tree>/demo/. (make bench is
# bench/bench.sh: it boots the unpatched kernel too.)
set -eu
. "$(dirname "$0")/lib.sh"

mode=${1:?usage: show.sh demo}
[ "$mode" = demo ] || die "show.sh only runs the demo; make bench is bench/bench.sh"
"$REPO/harness/deps.sh"
"$REPO/harness/tree.sh"
"$REPO/harness/kernel.sh" base
"$REPO/harness/guest.sh" base
"$REPO/harness/boot.sh" base "$mode" "$BUILD/results/$mode"
if [ "$mode" = demo ]; then
	page=$BUILD/demo
	rm -rf "$page"
	mkdir -p "$page"
	# The guest sends each file as base64 between "## file NAME" and "## end";
	# its tty turned each newline into CR LF.
	tr -d '\r' < "$BUILD/results/demo/results.tap" | awk -v dir="$page" '
		/^## file / { name = $3; out = dir "/" name ".b64"; next }
		/^## end/ { close(out); out = ""; next }
		out != "" { print > out }
	'
	for f in "$page"/*.b64; do
		[ -f "$f" ] || die "demo: the guest sent no pictures (see the console above)"
		base64 -d "$f" > "${f%.b64}" || die "demo: $f is damaged"
		rm "$f"
	done
	[ -f "$page/index.html" ] || die "demo: no index.html came back"
	say "demo: $(ls "$page"/*.png | wc -l) pictures, open $page/index.html"
fi
say "$mode finished in $(elapsed) s"
