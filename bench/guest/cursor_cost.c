// SPDX-License-Identifier: MIT
/*
 * cursor_cost: what the per-pipe cursor model costs the cursor path, with
 * vkms.per_pipe_cursor off and on, in the same boot.
 *
 * The state: a full-screen primary, three opaque unscaled overlays and a
 * 64x64 cursor, as a client without DRM_CLIENT_CAP_ATOMIC_ONLY sets it
 * (validation on, protect_legacy_cursor as loaded). Two operations, each
 * in batches of BATCH calls along the same path of cursor positions across
 * the overlays' edges:
 *   - a legacy cursor move, drmModeMoveCursor();
 *   - an atomic TEST_ONLY commit of the whole state (connector, CRTC, every
 *     plane), the cursor at the next position of the path.
 * Batches alternate between off, on and off again (the rotation changes
 * every round), ROUNDS rounds; per setting the median, minimum and maximum
 * of the batches in microseconds per call, then the ratios on/off and the
 * noise floor off-again/off. Figures only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <drm_fourcc.h>

#include "bench_util.h"

#define ROUNDS 10
#define BATCH 2000
#define CURSOR 64
#define NUM_OVERLAYS 3

enum { OFF, ON, OFF2, SETTINGS };
static const char *const setting_name[SETTINGS] = { "off", "on", "off again" };

enum { P_FB, P_CRTC, P_SX, P_SY, P_SW, P_SH, P_CX, P_CY, P_CW, P_CH, NPROPS };
static const char *const prop_name[NPROPS] = {
	"FB_ID", "CRTC_ID", "SRC_X", "SRC_Y", "SRC_W", "SRC_H",
	"CRTC_X", "CRTC_Y", "CRTC_W", "CRTC_H",
};

struct plane {
	uint32_t id;
	uint32_t prop[NPROPS];
	uint32_t fb_id, w, h;
	int32_t x, y;
};

static int plane_init(int fd, struct plane *p, uint32_t id)
{
	p->id = id;
	for (int i = 0; i < NPROPS; i++)
		if (!(p->prop[i] = kms_prop_id(fd, id, DRM_MODE_OBJECT_PLANE, prop_name[i])))
			return -ENOENT;
	return 0;
}

static int add(drmModeAtomicReqPtr req, uint32_t obj, uint32_t prop, uint64_t value)
{
	return drmModeAtomicAddProperty(req, obj, prop, value) < 0 ? -ENOMEM : 0;
}

/* Everything of @p but its position, which the caller adds. */
static int add_plane_but_position(drmModeAtomicReqPtr req, const struct plane *p,
				  uint32_t crtc_id)
{
	int ret = 0;

	ret |= add(req, p->id, p->prop[P_FB], p->fb_id);
	ret |= add(req, p->id, p->prop[P_CRTC], p->fb_id ? crtc_id : 0);
	ret |= add(req, p->id, p->prop[P_SX], 0);
	ret |= add(req, p->id, p->prop[P_SY], 0);
	ret |= add(req, p->id, p->prop[P_SW], (uint64_t)p->w << 16);
	ret |= add(req, p->id, p->prop[P_SH], (uint64_t)p->h << 16);
	ret |= add(req, p->id, p->prop[P_CW], p->w);
	ret |= add(req, p->id, p->prop[P_CH], p->h);
	return ret;
}

static int add_position(drmModeAtomicReqPtr req, const struct plane *p, int32_t x, int32_t y)
{
	return add(req, p->id, p->prop[P_CX], (uint64_t)(int64_t)x) |
	       add(req, p->id, p->prop[P_CY], (uint64_t)(int64_t)y);
}

/* The i-th cursor position of the path: a walk that keeps crossing edges. */
static void path(int i, int w, int h, int32_t *x, int32_t *y)
{
	*x = 16 + (i * 53) % (w - CURSOR - 32);
	*y = 16 + (i * 29) % (h - CURSOR - 32);
}

static void report(const char *what, double t[SETTINGS][ROUNDS])
{
	double med[SETTINGS], min[SETTINGS], max[SETTINGS];

	for (int s = 0; s < SETTINGS; s++) {
		bench_stats(t[s], ROUNDS, &med[s], &min[s], &max[s]);
		printf("cursor_cost: %-16s per_pipe_cursor %-9s median %8.1f us, min %8.1f, max %8.1f\n",
		       what, setting_name[s], 1e6 * med[s] / BATCH, 1e6 * min[s] / BATCH,
		       1e6 * max[s] / BATCH);
	}
	printf("cursor_cost: %-16s ratio on/off          median %.3f, min %.3f\n",
	       what, med[ON] / med[OFF], min[ON] / min[OFF]);
	printf("cursor_cost: %-16s noise off again/off   median %.3f, min %.3f\n",
	       what, med[OFF2] / med[OFF], min[OFF2] / min[OFF]);
}

int main(void)
{
	static double t_move[SETTINGS][ROUNDS], t_test[SETTINGS][ROUNDS];
	struct plane primary, overlay[NUM_OVERLAYS], cursor, unused[KMS_MAX_OVERLAYS];
	struct kms_fb fb_primary, fb_overlay[NUM_OVERLAYS], fb_cursor;
	uint32_t conn_crtc, crtc_active, crtc_mode;
	drmModeAtomicReqPtr req;
	struct kms_device kms;
	int fd, w, h, ret = 0, n_unused = 0, pos;
	uint32_t wb;

	fd = kms_open_driver("vkms");
	if (fd < 0 || kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 1) ||
	    kms_set_cap(fd, DRM_CLIENT_CAP_WRITEBACK_CONNECTORS, 1) || kms_probe(&kms, fd) ||
	    kms.overlay_count < NUM_OVERLAYS || !kms.cursor_id) {
		fprintf(stderr, "cursor_cost: needs vkms with %d overlays and a cursor\n",
			NUM_OVERLAYS);
		return 1;
	}
	w = kms.mode.hdisplay;
	h = kms.mode.vdisplay;
	conn_crtc = kms_prop_id(fd, kms.connector_id, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID");
	crtc_active = kms_prop_id(fd, kms.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE");
	crtc_mode = kms_prop_id(fd, kms.crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID");
	if (!conn_crtc || !crtc_active || !crtc_mode ||
	    plane_init(fd, &primary, kms.primary_id) || plane_init(fd, &cursor, kms.cursor_id))
		return 1;
	for (unsigned int i = 0; i < kms.overlay_count; i++) {
		struct plane *p = i < NUM_OVERLAYS ? &overlay[i] : &unused[n_unused++];

		memset(p, 0, sizeof(*p));
		if (plane_init(fd, p, kms.overlay_ids[i]))
			return 1;
	}

	/* Three opaque overlays side by side, apart, each well inside the screen. */
	if (kms_fb_create(fd, w, h, DRM_FORMAT_XRGB8888, &fb_primary) ||
	    kms_fb_create(fd, CURSOR, CURSOR, DRM_FORMAT_ARGB8888, &fb_cursor))
		return 1;
	kms_fb_fill(&fb_primary, 0xff304050);
	kms_fb_fill(&fb_cursor, 0xc0ffffff);
	primary.fb_id = fb_primary.fb_id;
	primary.w = w;
	primary.h = h;
	cursor.fb_id = fb_cursor.fb_id;
	cursor.w = cursor.h = CURSOR;
	for (int i = 0; i < NUM_OVERLAYS; i++) {
		if (kms_fb_create(fd, w / 4, h / 3, DRM_FORMAT_XRGB8888, &fb_overlay[i]))
			return 1;
		kms_fb_fill(&fb_overlay[i], 0xff000000 | (0x50 << (8 * i)));
		overlay[i].fb_id = fb_overlay[i].fb_id;
		overlay[i].w = w / 4;
		overlay[i].h = h / 3;
		overlay[i].x = w / 16 + i * (w / 4 + w / 16);
		overlay[i].y = h / 8 + i * (h / 6);
	}

	/* The state: the path's cursor position is added per call. */
	req = drmModeAtomicAlloc();
	/* vkms cannot clone: a writeback connector left on the CRTC goes. */
	wb = kms_find_writeback(fd);
	if (wb)
		ret |= kms_add(fd, req, wb, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID", 0);
	ret |= add(req, kms.connector_id, conn_crtc, kms.crtc_id);
	ret |= add(req, kms.crtc_id, crtc_mode, kms.mode_blob_id);
	ret |= add(req, kms.crtc_id, crtc_active, 1);
	ret |= add_plane_but_position(req, &primary, kms.crtc_id);
	ret |= add_position(req, &primary, 0, 0);
	for (int i = 0; i < NUM_OVERLAYS; i++) {
		ret |= add_plane_but_position(req, &overlay[i], kms.crtc_id);
		ret |= add_position(req, &overlay[i], overlay[i].x, overlay[i].y);
	}
	for (int i = 0; i < n_unused; i++) {
		ret |= add(req, unused[i].id, unused[i].prop[P_FB], 0);
		ret |= add(req, unused[i].id, unused[i].prop[P_CRTC], 0);
	}
	ret |= add_plane_but_position(req, &cursor, kms.crtc_id);
	pos = drmModeAtomicGetCursor(req);

	/* Validation as shipped; the emulation off for the modeset. */
	bench_set_skip_validation(false);
	bench_set_per_pipe(false);
	if (!ret) {
		ret |= add_position(req, &cursor, w / 2, h / 2);
		ret = ret ? ret : kms_commit(fd, req, DRM_MODE_ATOMIC_ALLOW_MODESET);
	}
	if (ret) {
		fprintf(stderr, "cursor_cost: modeset failed: %s\n", strerror(-ret));
		return 1;
	}

	for (int r = 0; r < ROUNDS; r++) {
		for (int k = 0; k < SETTINGS; k++) {
			int s = (r + k) % SETTINGS;	/* rotate who goes first */
			double t0;

			bench_set_per_pipe(s == ON);
			t0 = bench_now();
			for (int i = 0; i < BATCH; i++) {
				int32_t x, y;

				path(i, w, h, &x, &y);
				if (drmModeMoveCursor(fd, kms.crtc_id, x, y)) {
					fprintf(stderr, "cursor_cost: cursor move to %d,%d (%s): %s\n",
						x, y, setting_name[s], strerror(errno));
					return 1;
				}
			}
			t_move[s][r] = bench_now() - t0;

			t0 = bench_now();
			for (int i = 0; i < BATCH; i++) {
				int32_t x, y;

				path(i, w, h, &x, &y);
				drmModeAtomicSetCursor(req, pos);
				if (add_position(req, &cursor, x, y) ||
				    drmModeAtomicCommit(fd, req, DRM_MODE_ATOMIC_TEST_ONLY, NULL)) {
					fprintf(stderr, "cursor_cost: TEST_ONLY with the cursor at %d,%d (%s): %s\n",
						x, y, setting_name[s], strerror(errno));
					return 1;
				}
			}
			t_test[s][r] = bench_now() - t0;
		}
	}
	bench_set_per_pipe(false);

	printf("cursor_cost: %dx%d, primary + %d opaque unscaled overlays + %dx%d cursor, no atomic-only cap\n",
	       w, h, NUM_OVERLAYS, CURSOR, CURSOR);
	printf("cursor_cost: %d rounds of batches of %d calls, per_pipe_cursor off / on / off again, rotating\n",
	       ROUNDS, BATCH);
	printf("cursor_cost: microseconds per call; the project aims at on/off <= 1.2\n");
	report("legacy move", t_move);
	report("TEST_ONLY commit", t_test);
	return 0;
}
