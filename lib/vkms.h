/* SPDX-License-Identifier: MIT */
/*
 * The vkms controls and state the guest programs use: module parameters,
 * the test-only debugfs switch and the cursor state vkms reports in
 * debugfs, per DRM minor.
 */
#ifndef VKMS_H
#define VKMS_H

#include <stdbool.h>
#include <stddef.h>

#define VKMS_PARAMS "/sys/module/vkms/parameters/"

/* The debugfs directory of the DRM device open as @fd. */
int vkms_debugfs_dir(int fd, char *dir, size_t len);
/* Whether vkms.per_plane_cursor is on (false on kernels without it). */
bool vkms_per_plane_cursor(void);

/* The vkms module parameters and the test-only debugfs switch. */
int set_per_pipe(bool on);
int set_protect_legacy(bool on);
/* Hardware pipes of the emulated display engine; the default is 4. */
#define HW_PIPES_DEFAULT 4
int set_hw_pipes(unsigned int pipes);
/*
 * vkms.amdgpu_cursor_rule: vkms chooses the cursor mode as amdgpu_dm does
 * since Linux 6.11 (dm_crtc_get_cursor_mode()), for every client alike:
 * with amdgpu's fixes for planes scaled in one direction and for moved
 * planes (the 6.12 series' first patches), or as 6.11 to 6.12 released
 * it. Only kernels that offer it have it: the 6.12 series.
 */
enum amdgpu_rule { AMDGPU_RULE_OFF, AMDGPU_RULE_FIXED, AMDGPU_RULE_RELEASED };
bool have_amdgpu_rule(void);
int set_amdgpu_rule(enum amdgpu_rule rule);
int vkms_set_skip_validation(const char *debugfs, bool on);

/* How vkms draws the cursor of the current CRTC state (debugfs). */
enum cursor_mode {
	CURSOR_NATIVE,		/* one copy per pipe */
	CURSOR_DEDICATED,	/* a pipe of its own, on top */
	CURSOR_HIDDEN,		/* not drawn: no pipe could show it right */
	CURSOR_PLANE,		/* per-plane emulation off */
	CURSOR_MODES,
};

struct cursor_state {
	enum cursor_mode mode;
	bool cursor_on;
	unsigned int pipes_used;
	unsigned int hw_pipes;
	bool legacy_safe;
	unsigned long hidden_count;
};

const char *cursor_mode_name(enum cursor_mode mode);
/*
 * Parses vkms_cursor_state; -ENOENT when the kernel has no such file,
 * -EPROTO when its contents are not exactly the five documented lines.
 */
int vkms_read_cursor_state(const char *debugfs, struct cursor_state *cs);

#endif
