# The two entry points of the project; everything else is in bench/.
#   make demo   boot the patched kernel and show the capability at work
#   make test   build, boot and check every configuration, print the verdict
CONFIGS ?= base debug

demo:
	@bench/demo.sh

test:
	@bench/test.sh $(CONFIGS)

# Drop build products but keep the unpacked kernel tree.
clean:
	rm -rf build/obj-* build/initramfs-* build/results build/tests build/demo \
		build/twin-* build/modcheck-*

distclean:
	rm -rf build

.PHONY: demo test clean distclean
