#!/bin/sh
# The i386 configuration of "make test": the series compiled and linked for a
# 32-bit kernel (a plain 64-bit "/" there needs libgcc's __divdi3, which the
# kernel does not have), then booted without any user space. vkms and the
# KUnit suites are built in, so the suites run before init and print KTAP on
# the console; kunit_shutdown=reboot then ends the guest, which QEMU
# (-no-reboot) turns into an exit.
#
# usage: i386.sh <outdir>
#
# Writes <outdir>/host.tap with the build as the suite "build:i386" and, if
# the kernel built, console.log and results.tap with each KUnit suite framed
# as "kunit-i386:NAME", for harness/verdict.sh. A build failure is a failed test
# carrying the first error line, never a reason to stop "make test".
set -eu
. "$(dirname "$0")/lib.sh"

out=${1:?usage: i386.sh outdir}
cfg=i386
obj=$(objdir "$cfg")
# The suites the project needs (tests/kunit-suites; base loads exactly
# these modules). The executor takes one glob; this one matches them and no
# other suite of this kernel. A suite that should have run and did not is a
# failure.
SUITES=$(grep -v '^#' "$REPO/tests/kunit-suites")
GLOB='*[ms]_[cr][eou][cmr]*'
for s in $SUITES; do
	# shellcheck disable=SC2254
	case $s in $GLOB) ;; *) die "i386: kunit.filter_glob $GLOB misses suite $s" ;; esac
done
limit=${I386_TIMEOUT:-300}

mkdir -p "$out"
rm -f "$out/host.tap" "$out/console.log" "$out/results.tap" "$out/timeout"
log=$out/build.log
t=$(elapsed)
if "$REPO/harness/kernel.sh" "$cfg" > "$log" 2>&1; then build_rc=0; else build_rc=$?; fi
grep '^\[harness\] ' "$log" >&2 || true

# The line that says why: compiler, linker, modpost or kconfig, with the
# function the linker names on the line before an undefined reference.
first_error() {
	awk '/: in function `/ { sub(/^ld: /, ""); where = $0 " "; next }
	     /: (fatal )?error: |undefined reference to |^ERROR: |^\[harness\] error: / {
		     print where $0; found = 1; exit }
	     END { if (!found) print "make failed, see build.log" }' "$1"
}

{
	echo "## suite build:$cfg"
	echo "1..1"
	if [ "$build_rc" -eq 0 ]; then
		echo "ok 1 - the series compiles and links for i386 (vkms and KUnit built in)"
	else
		echo "not ok 1 - the series compiles and links for i386: $(first_error "$log")"
		grep -E 'error|undefined|ERROR' "$log" | grep -v '^make' | head -20 | sed 's/^/# /'
	fi
	echo "## exit build:$cfg $build_rc"
} > "$out/host.tap"
if [ "$build_rc" -ne 0 ]; then
	say "$cfg: build failed after $(( $(elapsed) - t )) s: $(first_error "$log")"
	exit 0
fi
tb=$(elapsed)

# A killed guest is still parsed: its missing suites fail below.
boot_qemu "$cfg" "$limit" "$out" qemu-system-i386 \
	-machine pc -accel tcg -cpu max -m 256M \
	-nodefaults -display none -no-reboot \
	-kernel "$obj/arch/x86/boot/bzImage" \
	-append "console=ttyS0 panic=-1 kunit.filter_glob=$GLOB kunit_shutdown=reboot" \
	-serial "file:$out/console.log" || true

# KTAP from the console to framed suites, each "kunit-i386:NAME" holding
# that suite's KTAP as a document of its own (for harness/verdict.sh,
# which reads it with the tree's kunit.py); "## done" once every suite of
# the top-level plan has reported. A suite that never ran fails here.
tr -d '\r' < "$out/console.log" | awk -v want="$SUITES" '
	/^KTAP version 1$/ && !plan_seen { ktap = 1; next }
	ktap && !plan_seen && /^1\.\.[0-9]+$/ { plan = substr($0, 4) + 0; plan_seen = 1; next }
	/^    # Subtest: / {
		suite = $3; ran[suite] = 1
		print "## suite kunit-i386:" suite
		print "KTAP version 1\n1..1\n    KTAP version 1\n" $0
		next
	}
	suite != "" && /^    / { print; next }
	suite != "" && /^(not )?ok [0-9]+ / {
		# The suite is test 1 of its own document.
		sub(/ok [0-9]+ /, "ok 1 ")
		print
		print "## exit kunit-i386:" suite " 0"; suite = ""; done++; next
	}
	END {
		n = split(want, w, " ")
		for (i = 1; i <= n; i++)
			if (!(w[i] in ran)) {
				# Suite names are kebab-case; the kernel name goes in a diagnostic.
				s = w[i]
				gsub(/_/, "-", s)
				printf "## suite i386:%s\nnot ok 1 - ran-at-boot\n# KUnit suite %s\n1..1\n## exit i386:%s 1\n", s, w[i], s
			}
		if (plan_seen && done == plan)
			print "## done"
	}' > "$out/results.tap"
say "$cfg: built in $((tb - t)) s, guest ran $(cat "$out/boot.seconds") s;" \
    "$(grep -c '^## suite kunit-i386:' "$out/results.tap") KUnit suites"
