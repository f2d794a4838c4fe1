# The entry points of the project; the harness behind them is in harness/,
# make bench's own scripts in bench/.
#   make demo   boot the patched kernel and show the capability at work
#   make test   build, boot and check every configuration, print the verdict
#               (CONFIGS=base for the fast one only)
#   make bench  what the series costs against the unpatched kernel, same
#               configuration, booted alternately (figures, not a verdict)
# TREE=6.12 or TREE=6.1 selects one tree for all three (make test runs
# both without it, make demo and make bench 6.12); CONFIGS=base one
# configuration of make test; HARNESS_ONLY='<glob>' the guest suites whose
# names match.

demo:
	@harness/show.sh demo

test:
	@harness/test.sh $(CONFIGS)

bench:
	@bench/bench.sh

# Drop build products but keep the unpacked kernel tree.
clean:
	rm -rf build/*/obj-* build/*/initramfs-* build/*/results build/*/tests build/*/demo \
		build/*/demo-bin build/*/bench-bin build/*/liftoff \
		build/*/twin-* build/*/hotspot-* build/*/modcheck-* build/*/bench

distclean:
	rm -rf build

.PHONY: demo test bench clean distclean
