// SPDX-License-Identifier: MIT
/*
 * compose_cost: what per-pipe cursor emulation costs the vkms composer,
 * against plain vkms (the cursor plane blended on top), in the same boot.
 *
 * A 1024x768 frame with a primary plane, a 2x upscaled overlay, a
 * translucent overlay and a 64x64 cursor over both is read back through the
 * writeback connector, alternately with per_pipe_cursor off and on. At this
 * size composing takes far longer than the wait for the next vblank, so
 * the capture latency measures the composer. Prints one line per mode and
 * the ratio.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <drm_fourcc.h>

#include "../../tests/kms_util.h"
#include "bench_util.h"

#define W 1024
#define H 768
#define ROUNDS 6

int main(void)
{
	struct kms_fb primary, up, alpha, cursor, wbfb;
	double total[2] = { 0, 0 };
	drmModeAtomicReqPtr req;
	drmModeModeInfo mode;
	struct kms_device kms;
	uint32_t wb, blob;
	int fd, ret = 0;

	fd = kms_open_driver("vkms");
	if (fd < 0 || kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 1) ||
	    kms_set_cap(fd, DRM_CLIENT_CAP_WRITEBACK_CONNECTORS, 1) ||
	    kms_probe(&kms, fd) || kms.overlay_count < 2 || !(wb = kms_find_writeback(fd))) {
		fprintf(stderr, "compose_cost: needs vkms with overlays and writeback\n");
		return 1;
	}
	mode = kms.mode;
	if (mode.hdisplay != W || mode.vdisplay != H) {
		fprintf(stderr, "compose_cost: preferred mode is not %dx%d\n", W, H);
		return 1;
	}
	if (drmModeCreatePropertyBlob(fd, &mode, sizeof(mode), &blob) ||
	    kms_fb_create(fd, W, H, DRM_FORMAT_XRGB8888, &primary) ||
	    kms_fb_create(fd, W / 4, H / 4, DRM_FORMAT_XRGB8888, &up) ||
	    kms_fb_create(fd, W / 2, H / 2, DRM_FORMAT_ARGB8888, &alpha) ||
	    kms_fb_create(fd, 64, 64, DRM_FORMAT_ARGB8888, &cursor) ||
	    kms_fb_create(fd, W, H, DRM_FORMAT_XRGB8888, &wbfb))
		return 1;
	kms_fb_fill(&primary, 0xff304050);
	kms_fb_fill(&up, 0xff806040);
	kms_fb_fill(&alpha, 0x80402010);
	kms_fb_fill(&cursor, 0xffffffff);

	req = drmModeAtomicAlloc();
	ret |= kms_add(fd, req, kms.connector_id, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID", 0);
	ret |= kms_add(fd, req, wb, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID", kms.crtc_id);
	ret |= kms_add(fd, req, kms.crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID", blob);
	ret |= kms_add(fd, req, kms.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1);
	ret |= kms_add_plane(fd, req, kms.primary_id, kms.crtc_id, primary.fb_id, W, H,
			     0, 0, W, H);
	ret |= kms_add_plane(fd, req, kms.overlay_ids[0], kms.crtc_id, up.fb_id, W / 4, H / 4,
			     100, 100, W / 2, H / 2);
	ret |= kms_add_plane(fd, req, kms.overlay_ids[1], kms.crtc_id, alpha.fb_id, W / 2, H / 2,
			     300, 200, W / 2, H / 2);
	ret |= kms_add_plane(fd, req, kms.cursor_id, kms.crtc_id, cursor.fb_id, 64, 64,
			     320, 220, 64, 64);
	if (!ret)
		ret = kms_commit(fd, req, DRM_MODE_ATOMIC_ALLOW_MODESET);
	drmModeAtomicFree(req);
	if (ret) {
		fprintf(stderr, "compose_cost: modeset failed: %s\n", strerror(-ret));
		return 1;
	}

	/* Validation stays on: this scene is refused per pipe, skip it. */
	if (bench_set_skip_validation(true))
		fprintf(stderr, "compose_cost: cannot skip validation\n");
	/* Alternate so that drift in the host's speed hits both modes alike. */
	for (int r = 0; r < ROUNDS; r++) {
		for (int on = 0; on < 2; on++) {
			double t;

			bench_set_per_pipe(on);
			bench_capture(fd, &kms, wb, wbfb.fb_id);	/* applies the mode */
			t = bench_capture(fd, &kms, wb, wbfb.fb_id);
			if (t < 0) {
				fprintf(stderr, "compose_cost: capture failed\n");
				return 1;
			}
			total[on] += t;
		}
	}
	bench_set_per_pipe(false);
	printf("compose_cost: %dx%d, primary + 2x overlay + translucent overlay + 64x64 cursor\n",
	       W, H);
	printf("compose_cost: plain vkms      %7.1f ms per frame\n", 1e3 * total[0] / ROUNDS);
	printf("compose_cost: per-pipe cursor %7.1f ms per frame\n", 1e3 * total[1] / ROUNDS);
	printf("compose_cost: ratio per-pipe / plain = %.3f\n", total[1] / total[0]);
	return 0;
}
