#!/bin/sh
# Boot one configuration in QEMU (TCG, there is no KVM here) with a hard
# timeout. The kernel console goes to <out>/console.log, the guest's results
# to <out>/results.tap. Exits non-zero if QEMU had to be killed.
set -eu
. "$(dirname "$0")/lib.sh"

cfg=${1:?usage: boot.sh base|debug|amd test|demo|bench outdir}
mode=${2:?}
out=${3:?}
obj=$(objdir "$cfg")

case "$cfg" in
debug) mem=2G; limit=${BOOT_TIMEOUT:-2400} ;;
*) mem=1G; limit=${BOOT_TIMEOUT:-1200} ;;
esac

mkdir -p "$out"
rm -f "$out/console.log" "$out/results.tap"
: > "$out/results.tap"

# drm.debug: KMS (0x04) and ATOMIC (0x10) messages reach the log buffer,
# where the tests read them through /dev/kmsg; loglevel keeps them off the
# slow serial console. The amd guests read none, and its KUnit suites make
# some hundred thousand atomic commits whose messages would push their own
# results out of the log buffer.
loglevel=6
[ "$mode" = test ] || loglevel=4
append="console=ttyS0 loglevel=$loglevel panic=-1 log_buf_len=16M harness.mode=$mode harness.config=$cfg"
case "$cfg" in amd|released) ;; *) append="$append drm.debug=0x14" ;; esac
# 6.1 has no stack filter for fault injection on x86_64: kms_fault's
# targeted runs narrow fail-nth to kmalloc() with failslab's cache filter,
# whose mark 6.1's SLUB sets at boot only. Without the filter on, the mark
# changes nothing (slub_debug also unhashes %p in the log, hence the
# NOTICE banner at boot).
[ "$cfg" = debug ] && [ "$TREE" = 6.1 ] && append="$append slub_debug=A,kmalloc-*"
# Developer shortcut: HARNESS_ONLY=<glob> runs only the guest suites matching it.
[ -n "${HARNESS_ONLY:-}" ] && append="$append harness.only=$HARNESS_ONLY"
# HARNESS_FAULT_SWEEPS=2: the fault suite sweeps twice (default once).
[ -n "${HARNESS_FAULT_SWEEPS:-}" ] && append="$append harness.fault_sweeps=$HARNESS_FAULT_SWEEPS"

if [ "$mode" != test ]; then
	console="-serial stdio"
else
	console="-serial file:$out/console.log"
fi

# BOOT_ICOUNT=1 (make bench): one vCPU whose clock advances one
# nanosecond per instruction, so that the guest's timings count
# instructions, the same in every boot whatever the host does.
cpus="-accel tcg,thread=multi -smp 2"
[ -n "${BOOT_ICOUNT:-}" ] && cpus="-accel tcg,thread=single -icount shift=0,sleep=off -smp 1"

# shellcheck disable=SC2086
boot_qemu "$cfg" "$limit" "$out" qemu-system-x86_64 \
	-machine q35 $cpus -cpu max -m "$mem" \
	-nodefaults -display none -no-reboot \
	-kernel "$obj/arch/x86/boot/bzImage" \
	-initrd "$BUILD/initramfs-$cfg.cpio" \
	-append "$append" \
	$console -serial "file:$out/results.tap"
