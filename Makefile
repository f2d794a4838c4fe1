# The entry points of the project; the harness behind them is in harness/,
# make bench's own scripts in bench/.
#   make demo   boot the patched kernel and show the capability at work
#   make test   build, boot and check every configuration, print the verdict
#               (CONFIGS=base for the fast one only)
#   make bench  what the series costs against the unpatched kernel, same
#               configuration, booted alternately (figures, not a verdict)
# TREES=6.12 or TREES=6.1 for one tree; CONFIGS=base for one configuration.
TREES ?= 6.12 6.1
export TREES

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
		build/*/twin-* build/*/modcheck-* build/*/bench

distclean:
	rm -rf build

.PHONY: demo test bench clean distclean
