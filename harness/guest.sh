#!/bin/sh
# Build the guest side of one configuration: the user-space tests, the
# out-of-tree test module and an initramfs with busybox, all modules of the
# kernel and the test programs.
set -eu
. "$(dirname "$0")/lib.sh"

cfg=${1:?usage: guest.sh base|debug|amd|pristine|released}
obj=$(objdir "$cfg")
rel=$(kernel_release "$cfg")
stage=$BUILD/initramfs-$cfg

# stage_init DIR...: a fresh initramfs tree with busybox, the harness's
# PID 1 and the kernel's modules, and the payload directories DIR...
stage_init() {
	rm -rf "$stage"
	mkdir -p "$stage/bin" "$stage/lib/modules"
	for _d in "$@"; do mkdir -p "$stage/$_d"; done
	cp /bin/busybox "$stage/bin/busybox"
	cp "$REPO/harness/init" "$stage/init"
	chmod +x "$stage/init"
	cp -a "$obj/mods/lib/modules/$rel" "$stage/lib/modules/"
}

# pack: the tree as the configuration's initramfs.
pack() {
	(cd "$stage" && find . | cpio -o -H newc --quiet) > "$BUILD/initramfs-$cfg.cpio"
	say "$cfg: initramfs $(du -h "$BUILD/initramfs-$cfg.cpio" | cut -f1)"
}

# The unpatched kernel (bench/bench.sh's reference) boots only the bench,
# with the very binary the patched kernel runs: built once, against the
# patched uapi headers, it finds out at run time what the kernel offers.
if [ "$cfg" = pristine ]; then
	make -s -C "$REPO/bench/guest" KHDR="$(objdir base)/hdr/include" OUT="$BUILD/bench-bin"
	stage_init bench
	cp "$BUILD"/bench-bin/* "$REPO/bench/guest/run-bench.sh" "$stage/bench/"
	pack
	exit 0
fi

# The released rule's kernel (harness/released-rule.sh) runs amdgpu's KUnit
# suites only.
if [ "$cfg" = released ]; then
	stage_init tests
	cp "$REPO"/tests/run-guest.sh "$REPO"/tests/tap.sh "$REPO"/tests/vkms.sh \
		"$REPO"/tests/kunit-suites "$REPO"/tests/dc-named-situations.* "$stage/tests/"
	pack
	exit 0
fi

make -s -C "$REPO/tests" KHDR="$obj/hdr/include" OUT="$BUILD/tests"
make -s -C "$REPO/demo" KHDR="$obj/hdr/include" OUT="$BUILD/demo-bin"
make -s -C "$REPO/bench/guest" KHDR="$obj/hdr/include" OUT="$BUILD/bench-bin"
make -s -C "$REPO/tests/liftoff" KHDR="$obj/hdr/include" OUT="$BUILD/liftoff"
# test_module NAME DIR: tests/modules/NAME built against this
# configuration in DIR.
test_module() {
	rm -rf "$2" && cp -r "$REPO/tests/modules/$1" "$2"
	make -s -C "$obj" M="$2" modules >/dev/null
}
twin=$BUILD/twin-$cfg
test_module exported_twin "$twin"
# A DRM device declaring DRIVER_CURSOR_HOTSPOT, where the tree has that
# feature (6.8 and later), for kms_no_legacy_cursor's hotspot-driver.
hotspot=$BUILD/hotspot-$cfg
rm -rf "$hotspot"
grep -q DRIVER_CURSOR_HOTSPOT "$SRC/include/drm/drm_drv.h" &&
	test_module cursor_hotspot_device "$hotspot"

stage_init tests demo bench
cp "$BUILD"/tests/* "$REPO"/tests/run-guest.sh "$REPO"/tests/tap.sh "$REPO"/tests/vkms.sh \
	"$REPO"/tests/kunit-suites "$REPO"/tests/dc-named-situations.* "$stage/tests/"
for f in "$REPO"/tests/clients-*.sh; do
	[ -f "$f" ] && cp "$f" "$stage/tests/"
done
cp "$twin/exported_twin.ko" "$stage/tests/"
[ -d "$hotspot" ] && cp "$hotspot/cursor_hotspot_device.ko" "$stage/tests/"
cp "$BUILD"/demo-bin/* "$REPO/demo/run-demo.sh" "$stage/demo/"
cp "$BUILD"/bench-bin/* "$REPO/bench/guest/run-bench.sh" "$stage/bench/"

# Clients nobody here wrote, as Debian ships them, with the shared libraries
# they load (and the guest programs linked against libliftoff).
copy_dynamic() {
	for bin in "$@"; do
		cp "$bin" "$stage/usr/bin/"
		ldd "$bin" | awk '/=>/ { print $3 } /^\t\/lib/ { print $1 }' |
			while read -r lib; do
				[ -e "$stage$lib" ] && continue
				mkdir -p "$stage$(dirname "$lib")"
				cp -L "$lib" "$stage$lib"
			done
	done
}
mkdir -p "$stage/usr/bin"
copy_dynamic /usr/bin/modetest /usr/bin/drm_info
copy_dynamic "$BUILD/liftoff/kms_liftoff"


pack
