// SPDX-License-Identifier: MIT
/*
 * scale_cost: what a scaled overlay costs the vkms composer at 1920x1080,
 * against the same overlay unscaled, with per_pipe_cursor off and on, in
 * the same boot.
 *
 * A full-screen primary, an overlay covering most of the screen and a
 * 64x64 cursor over the overlay, read back through the writeback connector.
 * The overlay's framebuffer is 1760x960 and so is its place on the CRTC;
 * "scaled" samples its top-left 880x480 (2x upscale), "unscaled" all of it.
 * The four combinations alternate (the rotation changes every round);
 * per combination the median, minimum and maximum time from commit to the
 * writeback fence, in ms per frame (this includes the wait for the next
 * vblank, under 17 ms), then the ratios scaled/unscaled and on/off.
 * Cursor validation is skipped so that per pipe the cursor is drawn scaled
 * into the overlay, the work the emulation really does. Figures only.
 */
#include <stdio.h>
#include <string.h>

#include <drm_fourcc.h>

#include "bench_util.h"

#define W 1920
#define H 1080
#define OV_W 1760
#define OV_H 960
#define ROUNDS 12

enum { SCALED_OFF, SCALED_ON, UNSCALED_OFF, UNSCALED_ON, COMBOS };
static const char *const combo_name[COMBOS] = {
	"scaled 2x, per_pipe_cursor off", "scaled 2x, per_pipe_cursor on ",
	"unscaled,  per_pipe_cursor off", "unscaled,  per_pipe_cursor on ",
};

static bool find_mode(int fd, uint32_t connector_id, drmModeModeInfo *mode)
{
	drmModeConnectorPtr c = drmModeGetConnector(fd, connector_id);
	bool found = false;

	for (int i = 0; c && i < c->count_modes && !found; i++) {
		if (c->modes[i].hdisplay == W && c->modes[i].vdisplay == H) {
			*mode = c->modes[i];
			found = true;
		}
	}
	drmModeFreeConnector(c);
	return found;
}

int main(void)
{
	double t[COMBOS][ROUNDS], med[COMBOS], min[COMBOS], max[COMBOS];
	struct kms_fb primary, overlay, cursor, wbfb;
	drmModeAtomicReqPtr req, src[2];
	drmModeModeInfo mode;
	struct kms_device kms;
	uint32_t wb, blob;
	int fd, ret = 0;

	fd = kms_open_driver("vkms");
	if (fd < 0 || kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 1) ||
	    kms_set_cap(fd, DRM_CLIENT_CAP_WRITEBACK_CONNECTORS, 1) ||
	    kms_probe(&kms, fd) || kms.overlay_count < 1 || !kms.cursor_id ||
	    !(wb = kms_find_writeback(fd))) {
		fprintf(stderr, "scale_cost: needs vkms with an overlay, a cursor and writeback\n");
		return 1;
	}
	if (!find_mode(fd, kms.connector_id, &mode)) {
		fprintf(stderr, "scale_cost: no %dx%d mode\n", W, H);
		return 1;
	}
	if (drmModeCreatePropertyBlob(fd, &mode, sizeof(mode), &blob) ||
	    kms_fb_create(fd, W, H, DRM_FORMAT_XRGB8888, &primary) ||
	    kms_fb_create(fd, OV_W, OV_H, DRM_FORMAT_XRGB8888, &overlay) ||
	    kms_fb_create(fd, 64, 64, DRM_FORMAT_ARGB8888, &cursor) ||
	    kms_fb_create(fd, W, H, DRM_FORMAT_XRGB8888, &wbfb))
		return 1;
	kms_fb_fill(&primary, 0xff304050);
	kms_fb_fill(&overlay, 0xff806040);
	kms_fb_fill(&cursor, 0xffffffff);

	req = drmModeAtomicAlloc();
	ret |= kms_add(fd, req, kms.connector_id, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID", 0);
	ret |= kms_add(fd, req, wb, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID", kms.crtc_id);
	ret |= kms_add(fd, req, kms.crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID", blob);
	ret |= kms_add(fd, req, kms.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1);
	ret |= kms_add_plane(fd, req, kms.primary_id, kms.crtc_id, primary.fb_id, W, H,
			     0, 0, W, H);
	ret |= kms_add_plane(fd, req, kms.overlay_ids[0], kms.crtc_id, overlay.fb_id,
			     OV_W, OV_H, (W - OV_W) / 2, (H - OV_H) / 2, OV_W, OV_H);
	for (unsigned int i = 1; i < kms.overlay_count; i++) {
		ret |= kms_add(fd, req, kms.overlay_ids[i], DRM_MODE_OBJECT_PLANE, "FB_ID", 0);
		ret |= kms_add(fd, req, kms.overlay_ids[i], DRM_MODE_OBJECT_PLANE, "CRTC_ID", 0);
	}
	ret |= kms_add_plane(fd, req, kms.cursor_id, kms.crtc_id, cursor.fb_id, 64, 64,
			     W / 2 - 20, H / 2 - 20, 64, 64);
	/* Validation skipped: per pipe, this cursor shows scaled (refused). */
	bench_set_skip_validation(true);
	bench_set_per_pipe(false);
	if (!ret)
		ret = kms_commit(fd, req, DRM_MODE_ATOMIC_ALLOW_MODESET);
	drmModeAtomicFree(req);
	if (ret) {
		fprintf(stderr, "scale_cost: modeset failed: %s\n", strerror(-ret));
		return 1;
	}

	/*
	 * Each case is applied by a commit of the CRTC (checked anew, so the
	 * emulation switch takes) and the overlay's source rectangle, without
	 * writeback: nothing is composed until the timed frame.
	 */
	for (int u = 0; u < 2; u++) {
		src[u] = drmModeAtomicAlloc();
		ret |= kms_add(fd, src[u], kms.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1);
		ret |= kms_add(fd, src[u], kms.overlay_ids[0], DRM_MODE_OBJECT_PLANE, "SRC_W",
			       (uint64_t)(u ? OV_W : OV_W / 2) << 16);
		ret |= kms_add(fd, src[u], kms.overlay_ids[0], DRM_MODE_OBJECT_PLANE, "SRC_H",
			       (uint64_t)(u ? OV_H : OV_H / 2) << 16);
	}
	if (ret)
		return 1;

	for (int r = 0; r < ROUNDS; r++) {
		for (int k = 0; k < COMBOS; k++) {
			int c = (r + k) % COMBOS;
			bool unscaled = c == UNSCALED_OFF || c == UNSCALED_ON;

			bench_set_per_pipe(c == SCALED_ON || c == UNSCALED_ON);
			if (kms_commit(fd, src[unscaled], 0) ||
			    (t[c][r] = bench_capture(fd, &kms, wb, wbfb.fb_id)) < 0) {
				fprintf(stderr, "scale_cost: commit or capture failed (%s)\n",
					combo_name[c]);
				return 1;
			}
		}
	}
	bench_set_per_pipe(false);
	bench_set_skip_validation(false);

	printf("scale_cost: %dx%d, primary + %dx%d overlay (2x upscaled or unscaled) + 64x64 cursor on it\n",
	       W, H, OV_W, OV_H);
	printf("scale_cost: %d rounds, the four cases rotating; ms per frame, commit to writeback fence\n",
	       ROUNDS);
	for (int c = 0; c < COMBOS; c++) {
		bench_stats(t[c], ROUNDS, &med[c], &min[c], &max[c]);
		printf("scale_cost: %s  median %7.1f ms, min %7.1f, max %7.1f\n",
		       combo_name[c], 1e3 * med[c], 1e3 * min[c], 1e3 * max[c]);
	}
	printf("scale_cost: ratio scaled/unscaled, per_pipe_cursor off  median %.3f, min %.3f\n",
	       med[SCALED_OFF] / med[UNSCALED_OFF], min[SCALED_OFF] / min[UNSCALED_OFF]);
	printf("scale_cost: ratio scaled/unscaled, per_pipe_cursor on   median %.3f, min %.3f\n",
	       med[SCALED_ON] / med[UNSCALED_ON], min[SCALED_ON] / min[UNSCALED_ON]);
	printf("scale_cost: ratio on/off, scaled                        median %.3f, min %.3f\n",
	       med[SCALED_ON] / med[SCALED_OFF], min[SCALED_ON] / min[SCALED_OFF]);
	printf("scale_cost: ratio on/off, unscaled                      median %.3f, min %.3f\n",
	       med[UNSCALED_ON] / med[UNSCALED_OFF], min[UNSCALED_ON] / min[UNSCALED_OFF]);
	return 0;
}
