#!/bin/sh
# Configure and build one guest kernel configuration: bzImage, modules,
# installed modules and uapi headers, all under build/<tree>/obj-<config>. A
# configuration without modules (i386) gets bzImage only. pristine is the
# base configuration built from Debian's unpatched tree (make bench's
# reference); released is the amd configuration on the series without the
# fixes to amdgpu's cursor mode decision (harness/released-rule.sh).
set -eu
. "$(dirname "$0")/lib.sh"

cfg=${1:?usage: kernel.sh base|debug|amd|i386|pristine|released}
obj=$(objdir "$cfg")
arch=$(karch "$cfg")
frags=$(fragments "$cfg")
base_src=$SRC
SRC=$(srcdir "$cfg")
if [ "$cfg" = pristine ]; then
	# A detached worktree of the tag: the series' tree stays as it is,
	# other builds may be using it right now.
	[ -d "$base_src/.git" ] || die "pristine: run harness/tree.sh first"
	if [ ! -e "$SRC/.git" ]; then
		say "pristine: checking out the unpatched tree in $SRC"
		# A worktree deleted by hand is still registered: forget it.
		git -C "$base_src" worktree prune
		git -C "$base_src" worktree add -q --detach "$SRC" pristine
	fi
	if [ "$(git -C "$SRC" rev-parse HEAD)" != "$(git -C "$base_src" rev-parse pristine)" ] ||
	   [ -n "$(git -C "$SRC" status --porcelain)" ]; then
		die "pristine: $SRC is not the clean tag 'pristine'"
	fi
fi
if [ "$cfg" = pristine ] || [ "$cfg" = released ]; then
	[ -d "$SRC" ] || die "$cfg: no tree at $SRC"
	# The fragments name a few symbols that only the series, or its later
	# patches, define (its KUnit tests): they cannot exist here and
	# configure nothing these kernels run, so they are dropped, by name,
	# rather than failing the check below. Any other symbol must still
	# take.
	mkdir -p "$obj"
	defined=$obj/kconfig.symbols
	grep -rhs --include='Kconfig*' -E '^(menu)?config [A-Za-z0-9_]+$' "$SRC" |
		cut -d' ' -f2 | sort -u > "$defined"
	# shellcheck disable=SC2086
	cat $frags | while IFS= read -r line; do
		sym=$(echo "$line" | sed -n 's/^CONFIG_\([A-Za-z0-9_]*\)=.*/\1/p')
		if [ -n "$sym" ] && ! grep -qx "$sym" "$defined"; then
			say "$cfg: dropping $line (not defined in this tree)"
			continue
		fi
		printf '%s\n' "$line"
	done > "$obj/$cfg.config"
	frags=$obj/$cfg.config
fi
# amd is base plus amdgpu: start from base's objects, kbuild rebuilds what
# the configuration change touches (it tracks each CONFIG_ symbol a file
# uses). Same source tree, so the recorded dependencies stay valid.
if [ "$cfg" = amd ] && [ ! -f "$obj/.config" ] && [ -f "$(objdir base)/vmlinux" ]; then
	say "$cfg: starting from the base objects"
	copy_objdir "$(objdir base)" "$obj"
	rm -rf "$obj/mods" "$obj/hdr" "$obj/build.log"
fi
mkdir -p "$obj"

# shellcheck disable=SC2086
want=$(cat $frags | sha256sum | cut -d' ' -f1)
if [ ! -f "$obj/.config" ] || [ "$(cat "$obj/fragments.stamp" 2>/dev/null)" != "$want" ]; then
	say "$cfg: configuring (tinyconfig + $(echo "$frags" | xargs -n1 basename | xargs))"
	log=$obj/config.log
	# shellcheck disable=SC2086
	{
		make -s -C "$SRC" O="$obj" $arch tinyconfig &&
		"$SRC/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" $frags &&
		make -s -C "$SRC" O="$obj" $arch olddefconfig
	} > "$log" 2>&1 || { cat "$log" >&2; die "$cfg: configuration failed"; }
	# A symbol whose dependencies are missing is silently dropped by
	# kconfig: refuse to build something other than what was asked for.
	# shellcheck disable=SC2086
	grep -h '^CONFIG_' $frags > "$obj/wanted.config"
	while read -r line; do
		grep -qx "$line" "$obj/.config" || die "$cfg: '$line' did not take (unmet dependency?)"
	done < "$obj/wanted.config"
	echo "$want" > "$obj/fragments.stamp"
fi

if ! grep -qx 'CONFIG_MODULES=y' "$obj/.config"; then
	say "$cfg: building kernel (make -j$JOBS)"
	# shellcheck disable=SC2086
	make -s -C "$SRC" O="$obj" $arch -j"$JOBS" bzImage
	say "$cfg: kernel $(kernel_release "$cfg") ready at $(elapsed) s"
	exit 0
fi
say "$cfg: building kernel and modules (make -j$JOBS)"
# The log is kept for the checks that read modpost's verdict (tests/host/amd.sh).
if ! make -s -C "$SRC" O="$obj" -j"$JOBS" bzImage modules > "$obj/build.log" 2>&1; then
	cat "$obj/build.log" >&2
	die "$cfg: build failed"
fi
cat "$obj/build.log" >&2
rm -rf "$obj/mods"
make -s -C "$SRC" O="$obj" INSTALL_MOD_PATH="$obj/mods" INSTALL_MOD_STRIP=1 \
	modules_install >/dev/null
make -s -C "$SRC" O="$obj" INSTALL_HDR_PATH="$obj/hdr" headers_install >/dev/null
say "$cfg: kernel $(kernel_release "$cfg") ready at $(elapsed) s"
