// SPDX-License-Identifier: MIT
/*
 * kms_cost: the figures of "make bench", on the patched kernel and on the
 * unpatched one alike (the same binary boots on both).
 *
 *   test_nocap  atomic TEST_ONLY commit of the whole state (connector, CRTC,
 *               primary + 3 opaque unscaled overlays + 64x64 cursor at the
 *               next position of a path across the overlays' edges), by a
 *               client without DRM_CLIENT_CAP_NO_LEGACY_CURSOR;
 *   test_cap    the same by a client holding the cap, a second file that
 *               holds it from its open (patched kernel only: the unpatched
 *               one refuses cap 10);
 *   move        legacy cursor move, drmModeMoveCursor(), no cap;
 *   compose     vkms composition of one 1920x1080 frame: primary + 3 opaque
 *               unscaled overlays + 64x64 cursor across an overlay's edge;
 *   scaled      the same size with one overlay 2x upscaled under the cursor
 *               (patched kernel only: the unpatched vkms cannot scale).
 *
 * The per-call figures are timed in batches of @calls calls by the TSC
 * (bench_ticks(): the guest's own clocks advance by 4 ms under TCG). The
 * frames are timed one by one by the kernel's stamps, from the vblank that
 * starts the composition to the writeback out-fence: the wait for that
 * vblank, up to a frame period, is not the composer's; the stamps' 4 ms
 * steps are a percent of a frame, the same on both kernels.
 * On the patched kernel every round times each figure with
 * vkms.per_plane_cursor off and on, which goes first alternating between
 * rounds; a first round warms up and is not recorded. Output: TAP, the
 * records in the YAML block of its last test ("figures-recorded"), as one
 * JSON object: the fine clock's rate and, per batch or frame, [figure,
 * setting, round, seconds per call], setting off, on or "-" (unpatched),
 * for the host to aggregate over boots (bench/report.py).
 *
 * usage: kms_cost figures ROUNDS CALLS FRAMES
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <drm_fourcc.h>
#include <linux/sync_file.h>
#include <sys/ioctl.h>

#include "bench_util.h"
#include "tap.h"

#ifndef DRM_CLIENT_CAP_NO_LEGACY_CURSOR
#error "needs the patched uapi headers (DRM_CLIENT_CAP_NO_LEGACY_CURSOR)"
#endif

#define CURSOR 64
#define NUM_OVERLAYS 3
#define FRAME_W 1920
#define FRAME_H 1080
/* The scaled overlay: its top-left quarter spread over all of it. */
#define SCALED_W 1760
#define SCALED_H 960

enum { P_FB, P_CRTC, P_SX, P_SY, P_SW, P_SH, P_CX, P_CY, P_CW, P_CH, NPROPS };
static const char *const prop_name[NPROPS] = {
	"FB_ID", "CRTC_ID", "SRC_X", "SRC_Y", "SRC_W", "SRC_H",
	"CRTC_X", "CRTC_Y", "CRTC_W", "CRTC_H",
};

struct plane {
	uint32_t id;
	uint32_t prop[NPROPS];
};

struct bench {
	int fd;			/* the file that commits now, DRM master */
	int plain_fd;		/* without the cap */
	int cap_fd;		/* with DRM_CLIENT_CAP_NO_LEGACY_CURSOR, or -1 */
	struct kms_device kms;
	char debugfs[64];	/* vkms_skip_cursor_validation's directory */
	uint32_t wb;
	bool patched;		/* vkms has per_plane_cursor */
	bool cap;		/* DRM_CLIENT_CAP_NO_LEGACY_CURSOR accepted */
	struct plane primary, cursor, overlay[KMS_MAX_OVERLAYS];
	uint32_t conn_crtc, wb_crtc, wb_fb, wb_fence, crtc_active, crtc_mode;
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

/* @p shows @src_w x @src_h of @fb_id (0: off) at @x,@y, @w x @h. */
static int add_plane(drmModeAtomicReqPtr req, const struct plane *p, uint32_t crtc_id,
		     uint32_t fb_id, uint32_t src_w, uint32_t src_h,
		     int32_t x, int32_t y, uint32_t w, uint32_t h)
{
	int ret = 0;

	ret |= add(req, p->id, p->prop[P_FB], fb_id);
	ret |= add(req, p->id, p->prop[P_CRTC], fb_id ? crtc_id : 0);
	if (!fb_id)
		return ret;
	ret |= add(req, p->id, p->prop[P_SX], 0);
	ret |= add(req, p->id, p->prop[P_SY], 0);
	ret |= add(req, p->id, p->prop[P_SW], (uint64_t)src_w << 16);
	ret |= add(req, p->id, p->prop[P_SH], (uint64_t)src_h << 16);
	ret |= add(req, p->id, p->prop[P_CX], (uint64_t)(int64_t)x);
	ret |= add(req, p->id, p->prop[P_CY], (uint64_t)(int64_t)y);
	ret |= add(req, p->id, p->prop[P_CW], w);
	ret |= add(req, p->id, p->prop[P_CH], h);
	return ret;
}

/* The i-th cursor position of the path: a walk that keeps crossing edges. */
static void path(int i, int w, int h, int32_t *x, int32_t *y)
{
	*x = 16 + (i * 53) % (w - CURSOR - 32);
	*y = 16 + (i * 29) % (h - CURSOR - 32);
}

/* Overlay @i of the unscaled layout on a @w x @h screen: apart, inside. */
static void overlay_rect(int i, int w, int h, int32_t *x, int32_t *y, uint32_t *ow,
			 uint32_t *oh)
{
	*ow = w / 4;
	*oh = h / 3;
	*x = w / 16 + i * (w / 4 + w / 16);
	*y = h / 8 + i * (h / 6);
}

static const char *setting(const struct bench *b, int on)
{
	return b->patched ? (on ? "on" : "off") : "-";
}

/* Kept until the end, when the ticks' rate is known. */
struct record {
	const char *figure, *setting;
	int round, calls;	/* calls 0: @time is in seconds, not ticks */
	double time;
};

static struct record *records;
static int num_records, max_records;

static int record(const char *figure, const char *set, int round, double time, int calls)
{
	if (round < 0)
		return 0;
	if (num_records == max_records) {
		struct record *r;

		max_records = max_records ? 2 * max_records : 256;
		r = realloc(records, max_records * sizeof(*r));
		if (!r)
			return -ENOMEM;
		records = r;
	}
	records[num_records++] = (struct record) { figure, set, round, calls, time };
	return 0;
}

/*
 * The cap holds until its file is closed: commits "with the cap" come from
 * a second file that holds it, made master for them (the request carries
 * ids only, which are the device's).
 */
static int use_cap(struct bench *b, bool on)
{
	int fd = on && b->cap ? b->cap_fd : b->plain_fd;

	if (fd == b->fd)
		return 0;
	if (drmDropMaster(b->fd) || drmSetMaster(fd))
		return -errno;
	b->fd = fd;
	return 0;
}

/* A second file with the cap; false on a kernel that does not know it. */
static bool open_cap_file(struct bench *b)
{
	b->cap_fd = kms_open_driver("vkms");
	if (b->cap_fd >= 0 && !kms_set_cap(b->cap_fd, DRM_CLIENT_CAP_ATOMIC, 1) &&
	    !kms_set_cap(b->cap_fd, DRM_CLIENT_CAP_WRITEBACK_CONNECTORS, 1) &&
	    !kms_set_cap(b->cap_fd, DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 1))
		return true;
	if (b->cap_fd >= 0)
		close(b->cap_fd);
	b->cap_fd = -1;
	return false;
}

/*
 * The first NUM_OVERLAYS overlays, opaque and unscaled, on framebuffers of
 * their own in @fbs, where overlay_rect() puts them on a @w x @h mode; any
 * further overlay off.
 */
static int add_overlays(struct bench *b, drmModeAtomicReqPtr req, int w, int h,
			struct kms_fb fbs[NUM_OVERLAYS])
{
	const struct kms_device *k = &b->kms;
	int ret = 0;

	for (unsigned int i = 0; i < k->overlay_count; i++) {
		uint32_t ow, oh, fb = 0;
		int32_t x, y;

		overlay_rect(i, w, h, &x, &y, &ow, &oh);
		if (i < NUM_OVERLAYS) {
			if (kms_fb_create(b->fd, ow, oh, DRM_FORMAT_XRGB8888, &fbs[i]))
				return -ENOMEM;
			kms_fb_fill(&fbs[i], 0xff000000 | (0x50 << (8 * i)));
			fb = fbs[i].fb_id;
		}
		ret |= add_plane(req, &b->overlay[i], k->crtc_id, fb, ow, oh, x, y, ow, oh);
	}
	return ret;
}

/*
 * Times @calls cursor updates along path(): TEST_ONLY commits of @req with
 * the cursor's position at its cursor @pos, or legacy moves if @req is NULL.
 */
static int cursor_batch(struct bench *b, drmModeAtomicReqPtr req, int pos, int calls,
			uint64_t *ticks)
{
	const struct kms_device *k = &b->kms;
	int w = k->mode.hdisplay, h = k->mode.vdisplay;
	uint64_t t0 = bench_ticks();

	for (int i = 0; i < calls; i++) {
		int32_t x, y;
		int fail;

		path(i, w, h, &x, &y);
		if (req) {
			drmModeAtomicSetCursor(req, pos);
			fail = add(req, b->cursor.id, b->cursor.prop[P_CX], x) ||
			       add(req, b->cursor.id, b->cursor.prop[P_CY], y) ||
			       drmModeAtomicCommit(b->fd, req, DRM_MODE_ATOMIC_TEST_ONLY, NULL);
		} else {
			fail = drmModeMoveCursor(b->fd, k->crtc_id, x, y);
		}
		if (fail) {
			tap_diag("%s, cursor at %d,%d: %s", req ? "TEST_ONLY" : "legacy move", x, y,
				 strerror(errno));
			return -EIO;
		}
	}
	*ticks = bench_ticks() - t0;
	return 0;
}

/*
 * The cursor figures, at the connector's preferred mode. @req holds the
 * whole state but the cursor's position, which each call adds.
 */
static int cursor_figures(struct bench *b, int rounds, int calls)
{
	const struct kms_device *k = &b->kms;
	int w = k->mode.hdisplay, h = k->mode.vdisplay, ret = 0, pos;
	struct kms_fb fb_primary, fb_overlay[NUM_OVERLAYS], fb_cursor;
	drmModeAtomicReqPtr req = drmModeAtomicAlloc();

	if (!req || kms_fb_create(b->fd, w, h, DRM_FORMAT_XRGB8888, &fb_primary) ||
	    kms_fb_create(b->fd, CURSOR, CURSOR, DRM_FORMAT_ARGB8888, &fb_cursor))
		return -ENOMEM;
	kms_fb_fill(&fb_primary, 0xff304050);
	kms_fb_fill(&fb_cursor, 0xc0ffffff);
	if (b->wb)
		ret |= add(req, b->wb, b->wb_crtc, 0);
	ret |= add(req, k->connector_id, b->conn_crtc, k->crtc_id);
	ret |= add(req, k->crtc_id, b->crtc_mode, k->mode_blob_id);
	ret |= add(req, k->crtc_id, b->crtc_active, 1);
	ret |= add_plane(req, &b->primary, k->crtc_id, fb_primary.fb_id, w, h, 0, 0, w, h);
	ret |= add_overlays(b, req, w, h, fb_overlay);
	ret |= add(req, b->cursor.id, b->cursor.prop[P_FB], fb_cursor.fb_id);
	ret |= add(req, b->cursor.id, b->cursor.prop[P_CRTC], k->crtc_id);
	ret |= add(req, b->cursor.id, b->cursor.prop[P_SX], 0);
	ret |= add(req, b->cursor.id, b->cursor.prop[P_SY], 0);
	ret |= add(req, b->cursor.id, b->cursor.prop[P_SW], CURSOR << 16);
	ret |= add(req, b->cursor.id, b->cursor.prop[P_SH], CURSOR << 16);
	ret |= add(req, b->cursor.id, b->cursor.prop[P_CW], CURSOR);
	ret |= add(req, b->cursor.id, b->cursor.prop[P_CH], CURSOR);
	pos = drmModeAtomicGetCursor(req);
	ret |= add(req, b->cursor.id, b->cursor.prop[P_CX], w / 2);
	ret |= add(req, b->cursor.id, b->cursor.prop[P_CY], h / 2);

	/* Validation as shipped; the emulation off for the modeset. */
	vkms_set_skip_validation(b->debugfs, false);
	set_per_pipe(false);
	ret = ret ? ret : kms_commit(b->fd, req, DRM_MODE_ATOMIC_ALLOW_MODESET);
	if (ret) {
		tap_diag("cursor scene modeset: %s", strerror(-ret));
		return ret;
	}
	tap_diag("cursor figures: %dx%d, %d rounds of batches of %d calls", w, h, rounds, calls);

	/* Round -1 warms up (page tables, caches) and is not recorded. */
	for (int r = -1; r < rounds; r++) {
		for (int k2 = 0; k2 < (b->patched ? 2 : 1); k2++) {
			int on = b->patched ? (r + 2 + k2) % 2 : 0;
			uint64_t ticks;

			set_per_pipe(on);
			for (int cap = 0; cap < (b->cap ? 2 : 1); cap++) {
				if (use_cap(b, cap) || cursor_batch(b, req, pos, calls, &ticks))
					return -EIO;
				if (record(cap ? "test_cap" : "test_nocap", setting(b, on), r,
					   ticks, calls))
					return -ENOMEM;
			}
			if (use_cap(b, false) || cursor_batch(b, NULL, 0, calls, &ticks))
				return -EIO;
			if (record("move", setting(b, on), r, ticks, calls))
				return -ENOMEM;
		}
	}
	set_per_pipe(false);
	drmModeAtomicFree(req);
	return 0;
}

static void page_flip(int fd, unsigned int seq, unsigned int sec, unsigned int usec,
		      unsigned int crtc_id, void *data)
{
	(void)fd, (void)seq, (void)crtc_id;
	*(double *)data = sec + usec / 1e6;
}

/* When @fence signalled, CLOCK_MONOTONIC seconds; -1 if it did not. */
static double fence_time(int fence)
{
	struct sync_fence_info fi = { 0 };
	struct sync_file_info info = {
		.num_fences = 1,
		.sync_fence_info = (uint64_t)(uintptr_t)&fi,
	};

	if (ioctl(fence, SYNC_IOC_FILE_INFO, &info) || info.status != 1)
		return -1;
	return fi.timestamp_ns / 1e9;
}

/*
 * One frame through the writeback connector, committed with @req (the
 * scene's change, if any, and the writeback job): seconds from the vblank
 * that starts its composition (the timestamp of the commit's flip event)
 * to the signal of its out-fence, both as the kernel stamped them, or -1
 * if the frame was lost. Kernel stamps, not this thread's clock: under a
 * busy host the thread can be woken long after either.
 */
static double frame(struct bench *b, drmModeAtomicReqPtr req, uint32_t wb_fb)
{
	drmEventContext ev = { .version = 3, .page_flip_handler2 = page_flip };
	int pos = drmModeAtomicGetCursor(req), ret = 0;
	double vblank = -1, done = -1;
	int32_t fence = -1;
	struct pollfd pfd;

	ret |= add(req, b->wb, b->wb_fb, wb_fb);
	ret |= add(req, b->wb, b->wb_fence, (uint64_t)(uintptr_t)&fence);
	ret |= add(req, b->kms.crtc_id, b->crtc_active, 1);
	if (!ret)
		ret = drmModeAtomicCommit(b->fd, req, DRM_MODE_PAGE_FLIP_EVENT, &vblank) ?
		      -errno : 0;
	drmModeAtomicSetCursor(req, pos);
	if (ret || fence < 0) {
		tap_diag("writeback commit: %s", strerror(-ret));
		return -1;
	}
	pfd = (struct pollfd) { .fd = b->fd, .events = POLLIN };
	if (poll(&pfd, 1, 5000) == 1)
		drmHandleEvent(b->fd, &ev);
	/*
	 * The unpatched vkms can lose a writeback job (the race patch 1
	 * fixes): its fence then never signals. Bounded wait, the caller
	 * retries.
	 */
	pfd = (struct pollfd) { .fd = fence, .events = POLLIN };
	if (poll(&pfd, 1, 3000) == 1)
		done = fence_time(fence);
	close(fence);
	return vblank < 0 || done < 0 ? -1 : done - vblank;
}

/*
 * A frame's figure. The job's cleanup, which stops the composer, runs
 * after the fence from a worker: the pause lets it finish (the unpatched
 * vkms otherwise loses the next job) and lets no composition of the
 * previous job overlap the timed one.
 */
static int timed_frame(struct bench *b, drmModeAtomicReqPtr req, uint32_t wb_fb, double *t)
{
	for (int attempt = 0; attempt < 3; attempt++) {
		double t0 = kms_now_s();

		*t = frame(b, req, wb_fb);
		/*
		 * Vblanks during the composition queued another one (of the
		 * same state, without the job, maybe more until the cleanup
		 * stops the composer): twice the frame, by the coarse clock.
		 */
		usleep(2 * (kms_now_s() - t0) * 1e6 + 30000);
		if (*t > 0)
			return 0;
		tap_diag("writeback frame lost, retried");
	}
	return -EIO;
}

static bool find_mode(int fd, uint32_t connector_id, int w, int h, drmModeModeInfo *mode)
{
	drmModeConnectorPtr c = drmModeGetConnector(fd, connector_id);
	bool found = false;

	for (int i = 0; c && i < c->count_modes && !found; i++) {
		if (c->modes[i].hdisplay == w && c->modes[i].vdisplay == h) {
			*mode = c->modes[i];
			found = true;
		}
	}
	drmModeFreeConnector(c);
	return found;
}

/*
 * The composition figures at 1920x1080, the writeback connector alone on
 * the CRTC. Overlay 0 is either one of the unscaled layout or, for
 * "scaled", a large overlay upscaled 2x with the cursor on it.
 */
/*
 * The composition figures: @scene[0] unscaled, @scene[1] with a 2x overlay
 * under the cursor, each with the emulation off and on (patched kernel),
 * the order rotating between rounds; round -1 warms up.
 */
static int compose_rounds(struct bench *b, drmModeAtomicReqPtr scene[2], uint32_t wb_fb,
			  int rounds)
{
	for (int r = -1; r < rounds; r++) {
		for (int k2 = 0; k2 < (b->patched ? 4 : 1); k2++) {
			int c = b->patched ? (r + 4 + k2) % 4 : 0;
			bool scaled = c >= 2, on = c & 1;
			double t;

			set_per_pipe(on);
			/*
			 * Scaled, the emulation would keep the cursor out of the
			 * overlay (a pipe of its own): validation skipped so that
			 * it composes the scaled copy, the work it would do
			 * natively, the costlier case.
			 */
			vkms_set_skip_validation(b->debugfs, scaled);
			if (timed_frame(b, scene[scaled], wb_fb, &t))
				return -EIO;
			if (record(scaled ? "scaled" : "compose", setting(b, on), r, t, 0))
				return -ENOMEM;
		}
	}
	set_per_pipe(false);
	vkms_set_skip_validation(b->debugfs, false);
	return 0;
}

static int compose_figures(struct bench *b, int rounds)
{
	const struct kms_device *k = &b->kms;
	struct kms_fb fb_primary, fb_overlay[NUM_OVERLAYS], fb_big, fb_cursor, fb_wb;
	drmModeAtomicReqPtr setup = drmModeAtomicAlloc(), scene[2];
	int32_t ox, oy, cx, cy;
	drmModeModeInfo mode;
	uint32_t ow, oh, blob;
	int ret = 0;

	if (!b->wb || !find_mode(b->fd, k->connector_id, FRAME_W, FRAME_H, &mode)) {
		tap_diag("needs writeback and a %dx%d mode", FRAME_W, FRAME_H);
		return -ENODEV;
	}
	if (!setup || drmModeCreatePropertyBlob(b->fd, &mode, sizeof(mode), &blob) ||
	    kms_fb_create(b->fd, FRAME_W, FRAME_H, DRM_FORMAT_XRGB8888, &fb_primary) ||
	    kms_fb_create(b->fd, FRAME_W, FRAME_H, DRM_FORMAT_XRGB8888, &fb_wb) ||
	    kms_fb_create(b->fd, SCALED_W, SCALED_H, DRM_FORMAT_XRGB8888, &fb_big) ||
	    kms_fb_create(b->fd, CURSOR, CURSOR, DRM_FORMAT_ARGB8888, &fb_cursor))
		return -ENOMEM;
	kms_fb_fill(&fb_primary, 0xff304050);
	kms_fb_fill(&fb_big, 0xff806040);
	kms_fb_fill(&fb_cursor, 0xc0ffffff);

	ret |= add(setup, k->connector_id, b->conn_crtc, 0);
	ret |= add(setup, b->wb, b->wb_crtc, k->crtc_id);
	ret |= add(setup, k->crtc_id, b->crtc_mode, blob);
	ret |= add(setup, k->crtc_id, b->crtc_active, 1);
	ret |= add_plane(setup, &b->primary, k->crtc_id, fb_primary.fb_id, FRAME_W, FRAME_H,
			 0, 0, FRAME_W, FRAME_H);
	ret |= add_overlays(b, setup, FRAME_W, FRAME_H, fb_overlay);
	/* Across overlay 0's top-left corner: a copy in it and in the primary. */
	overlay_rect(0, FRAME_W, FRAME_H, &ox, &oy, &ow, &oh);
	cx = ox - CURSOR / 2;
	cy = oy - CURSOR / 2;
	ret |= add_plane(setup, &b->cursor, k->crtc_id, fb_cursor.fb_id, CURSOR, CURSOR,
			 cx, cy, CURSOR, CURSOR);
	vkms_set_skip_validation(b->debugfs, false);
	set_per_pipe(false);
	ret = ret ? ret : kms_commit(b->fd, setup, DRM_MODE_ATOMIC_ALLOW_MODESET);
	drmModeAtomicFree(setup);
	if (ret) {
		tap_diag("%dx%d modeset: %s", FRAME_W, FRAME_H, strerror(-ret));
		return ret;
	}

	/* The two scenes differ by overlay 0 (and where the cursor is). */
	scene[0] = drmModeAtomicAlloc();
	scene[1] = drmModeAtomicAlloc();
	if (!scene[0] || !scene[1])
		return -ENOMEM;
	ret |= add_plane(scene[0], &b->overlay[0], k->crtc_id, fb_overlay[0].fb_id, ow, oh,
			 ox, oy, ow, oh);
	ret |= add_plane(scene[0], &b->cursor, k->crtc_id, fb_cursor.fb_id, CURSOR, CURSOR,
			 cx, cy, CURSOR, CURSOR);
	ret |= add_plane(scene[1], &b->overlay[0], k->crtc_id, fb_big.fb_id,
			 SCALED_W / 2, SCALED_H / 2, (FRAME_W - SCALED_W) / 2,
			 (FRAME_H - SCALED_H) / 2, SCALED_W, SCALED_H);
	/* Overlay 1 and 2 would be under the big one: off, so 3 pipes. */
	for (int i = 1; i < NUM_OVERLAYS; i++)
		ret |= add_plane(scene[1], &b->overlay[i], k->crtc_id, 0, 0, 0, 0, 0, 0, 0);
	ret |= add_plane(scene[1], &b->cursor, k->crtc_id, fb_cursor.fb_id, CURSOR, CURSOR,
			 FRAME_W / 2 - 20, FRAME_H / 2 - 20, CURSOR, CURSOR);
	/* scene[0] must bring overlays 1 and 2 back after scene[1]. */
	for (int i = 1; i < NUM_OVERLAYS; i++) {
		overlay_rect(i, FRAME_W, FRAME_H, &ox, &oy, &ow, &oh);
		ret |= add_plane(scene[0], &b->overlay[i], k->crtc_id, fb_overlay[i].fb_id,
				 ow, oh, ox, oy, ow, oh);
	}
	if (ret)
		return -ENOMEM;
	tap_diag("composition: %dx%d, %d rounds of one frame per case", FRAME_W, FRAME_H, rounds);
	return compose_rounds(b, scene, fb_wb.fb_id, rounds);
}

/* The device, its planes and properties; 0 or a negative errno. */
static int bench_open(struct bench *b)
{
	b->fd = kms_open_driver("vkms");
	if (b->fd < 0 || kms_set_cap(b->fd, DRM_CLIENT_CAP_ATOMIC, 1) ||
	    kms_set_cap(b->fd, DRM_CLIENT_CAP_WRITEBACK_CONNECTORS, 1) ||
	    kms_probe(&b->kms, b->fd) || b->kms.overlay_count < NUM_OVERLAYS ||
	    !b->kms.cursor_id || vkms_debugfs_dir(b->fd, b->debugfs, sizeof(b->debugfs)))
		return -ENODEV;
	b->patched = access(VKMS_PARAMS "per_plane_cursor", F_OK) == 0;
	b->plain_fd = b->fd;
	b->cap = open_cap_file(b);
	b->wb = kms_find_writeback(b->fd);
	b->conn_crtc = kms_prop_id(b->fd, b->kms.connector_id, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID");
	b->crtc_active = kms_prop_id(b->fd, b->kms.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE");
	b->crtc_mode = kms_prop_id(b->fd, b->kms.crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID");
	if (b->wb) {
		b->wb_crtc = kms_prop_id(b->fd, b->wb, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID");
		b->wb_fb = kms_prop_id(b->fd, b->wb, DRM_MODE_OBJECT_CONNECTOR, "WRITEBACK_FB_ID");
		b->wb_fence = kms_prop_id(b->fd, b->wb, DRM_MODE_OBJECT_CONNECTOR,
					  "WRITEBACK_OUT_FENCE_PTR");
	}
	if (!b->conn_crtc || !b->crtc_active || !b->crtc_mode ||
	    (b->wb && (!b->wb_crtc || !b->wb_fb || !b->wb_fence)) ||
	    plane_init(b->fd, &b->primary, b->kms.primary_id) ||
	    plane_init(b->fd, &b->cursor, b->kms.cursor_id))
		return -ENOENT;
	for (unsigned int i = 0; i < b->kms.overlay_count; i++)
		if (plane_init(b->fd, &b->overlay[i], b->kms.overlay_ids[i]))
			return -ENOENT;
	return 0;
}

/*
 * The records as one JSON object in the YAML block of the last test:
 * seconds per call (per frame for compose and scaled).
 */
static void print_records(double hz)
{
	tap_json_begin();
	printf("{\"tick_hz\": %.0f, \"records\": [", hz);
	for (int i = 0; i < num_records; i++) {
		const struct record *r = &records[i];

		printf("%s[\"%s\", \"%s\", %d, %.9g]", i ? ", " : "", r->figure, r->setting,
		       r->round, r->calls ? r->time / hz / r->calls : r->time);
	}
	printf("]}");
	tap_json_end();
}

/* usage: kms_cost figures ROUNDS CALLS FRAMES */
static void figures(char **argv)
{
	int rounds = atoi(argv[0]), calls = atoi(argv[1]), frames = atoi(argv[2]);
	struct bench b = { 0 };
	double hz;
	bool ok;
	int ret;

	/* Every run reports the same tests: those after a failure fail too. */
	ret = bench_open(&b);
	ok = tap_ok(ret == 0, "device-ready");
	if (ok)
		tap_diag("kernel %s: per_plane_cursor %s, DRM_CLIENT_CAP_NO_LEGACY_CURSOR %s",
			 b.patched ? "patched" : "unpatched", b.patched ? "present" : "absent",
			 b.cap ? "accepted" : "refused");
	else
		tap_diag("needs vkms with %d overlays and a cursor: %s", NUM_OVERLAYS,
			 strerror(-ret));

	bench_tick_hz();
	ok = tap_ok(ok && cursor_figures(&b, rounds, calls) == 0, "cursor-figures-measured");
	ok = tap_ok(ok && compose_figures(&b, frames) == 0, "composition-figures-measured");
	hz = bench_tick_hz();
	if (!tap_ok(ok && hz > 0 && num_records > 0, "figures-recorded"))
		return;
	print_records(hz);
	tap_diag("%d records, fine clock %.0f ticks per second", num_records, hz);
}

static const struct tap_subtest subtests[] = {
	{ "figures", "ROUNDS CALLS FRAMES", 3, figures },
};

int main(int argc, char **argv)
{
	const struct tap_program program = { subtests, ARRAY_SIZE(subtests), NULL, NULL };

	return tap_main(&program, argc, argv);
}
