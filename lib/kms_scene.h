/* SPDX-License-Identifier: MIT */
/*
 * Scenes for the per-plane cursor tests: a primary plane, up to
 * SCENE_MAX_OVERLAYS overlays (scaled, translucent, stacked by zpos) and a
 * cursor, committed as one complete atomic state and read back through the
 * vkms writeback connector.
 */
#ifndef KMS_SCENE_H
#define KMS_SCENE_H

#include <stdbool.h>
#include <stdint.h>

#include "kms_util.h"
#include "vkms.h"

#define SCENE_MAX_OVERLAYS 3
#define SCENE_W 256
#define SCENE_H 160
/* Largest cursor the scenes use; the framebuffer holds a test pattern. */
#define SCENE_CURSOR_MAX 128

struct plane_cfg {
	bool on;
	bool translucent;	/* ARGB8888 with alpha 0x80, else XRGB8888 */
	int x, y;		/* destination on the CRTC */
	unsigned int w, h;
	unsigned int src_w, src_h;	/* source size, from 0,0 */
	unsigned int zpos;
	/*
	 * DRM_MODE_ROTATE_* | DRM_MODE_REFLECT_*, 0 for DRM_MODE_ROTATE_0;
	 * src_w and src_h are then in the framebuffer's orientation.
	 */
	unsigned int rotation;
};

struct cursor_cfg {
	bool on;
	int x, y;
	unsigned int w, h;
};

struct scene {
	struct plane_cfg primary;
	struct plane_cfg overlay[SCENE_MAX_OVERLAYS];
	struct cursor_cfg cursor;
};

struct image {
	uint16_t *px;		/* XRGB16161616: 4 channels per pixel, b g r x */
	unsigned int w, h;
};

struct rig {
	struct kms_device kms;
	int fd;
	uint32_t wb_connector;
	uint32_t mode_blob;
	drmModeModeInfo mode;
	struct kms_fb primary_fb;
	struct kms_fb overlay_fb[SCENE_MAX_OVERLAYS][2];	/* [i][translucent] */
	struct kms_fb cursor_fb;
	struct kms_fb wb_fb;
	char debugfs[64];
	const struct rig *main;	/* a second client: whose patterns to copy */
	/*
	 * The rig's own file and a second one holding
	 * DRM_CLIENT_CAP_NO_LEGACY_CURSOR from its open (rig_open_holder());
	 * @fd is whichever of the two commits now (rig_commit_from()).
	 */
	int plain_fd, holder_fd;
	/*
	 * What scene_commit() and scene_capture() commit with, if not
	 * kms_commit(): kms_fault arms its allocation failures in there.
	 */
	int (*commit)(int fd, drmModeAtomicReqPtr req, uint32_t flags);
	/* Property ids by object and name, looked up once (kms_scene.c). */
	struct { uint32_t obj; const char *name; uint32_t id; } props[128];
	unsigned int n_props;
};

/* Opens vkms with overlays, writeback and a small fast mode. */
int rig_open(struct rig *b);
/*
 * rig_open() for a TAP program's set-up: on failure, says why as a TAP
 * diagnostic and exits, leaving the program without a plan.
 */
void rig_open_or_exit(struct rig *b);
void rig_close(struct rig *b);
/*
 * DRM_CLIENT_CAP_NO_LEGACY_CURSOR holds for the lifetime of a file, so the
 * client holding it is a second file of the device, holding the cap from
 * its open. Framebuffers, blobs and property ids are the device's: the rig
 * commits its scenes from either file unchanged.
 */
int rig_open_holder(struct rig *b);
/* The rig's commits come from @fd (plain_fd or holder_fd), made master. */
int rig_commit_from(struct rig *b, int fd);
/*
 * The rig's own start: only the writeback connector on the CRTC, the small
 * mode, the primary plane alone. A full modeset, also to recover a CRTC
 * that something switched off.
 */
int rig_reset(struct rig *b);
/* Same size, another refresh rate (0: the default, fast one). */
int rig_set_refresh(struct rig *b, unsigned int refresh);
/*
 * A second client of the same device with framebuffers of its own, filled
 * like the rig's: the objects and the mode are copied from @main, nothing is
 * committed. Its framebuffers are created when a scene needs them
 * (rig_client_prepare()), so that removing one affects this file only.
 */
int rig_open_client(struct rig *client, const struct rig *main);
int rig_client_prepare(struct rig *client, const struct scene *s);
void rig_close_client(struct rig *client);
/*
 * Puts the writeback connector back on the CRTC with the rig's mode, after
 * a legacy SETCRTC that did not know about it took it off.
 */
int rig_attach_writeback(struct rig *b);

/* A full-screen unscaled opaque primary and nothing else. */
void scene_default(struct scene *s);
/* Commits @s as a complete state; returns 0 or -errno. */
int scene_commit(struct rig *b, const struct scene *s, uint32_t flags);
/* Commits @s (or only the writeback job if NULL) and reads the frame back. */
int scene_capture(struct rig *b, const struct scene *s, struct image *out);
void scene_describe(const struct scene *s, char *buf, size_t len);

int image_alloc(struct image *img);
void image_free(struct image *img);
/* Pixels differing by more than the rounding of blending; -1 if sizes differ. */
long image_diff(const struct image *a, const struct image *b, int *first_x, int *first_y);

/* Colour of a plane's test pattern at source pixel x, y, as ARGB8888. */
uint32_t pattern_plane(unsigned int plane, bool translucent, unsigned int x, unsigned int y);
uint32_t pattern_cursor(unsigned int u, unsigned int v);

#endif
