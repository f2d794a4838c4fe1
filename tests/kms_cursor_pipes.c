// SPDX-License-Identifier: MIT
/*
 * kms_cursor_pipes: vkms emulating per-pipe hardware cursors, the two
 * validation rules and DRM_CLIENT_CAP_ATOMIC_ONLY, measured pixel by pixel.
 *
 * The oracle composes a state twice through the writeback connector, once
 * with per-pipe cursors (validation skipped through debugfs) and once with
 * the ideal cursor plane on top, and reports the pixels that differ. The
 * validator's verdicts come from TEST_ONLY commits under three policies:
 *
 *   atomic-only  the client holds DRM_CLIENT_CAP_ATOMIC_ONLY
 *   guarded      a client without it, protect_legacy_cursor=1
 *   unguarded    a client without it, protect_legacy_cursor=0
 *
 * and, for reference only, amdgpu's historical validate_overlay() rule
 * (seed 001), evaluated here in user space.
 *
 * usage: kms_cursor_pipes scaling | scenarios | clients | handover |
 *                         sweep COUNT SEED | stress OPS   [--comm NAME]
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <drm_fourcc.h>

#include "kms_scene.h"
#include "tap.h"

enum policy { ATOMIC_ONLY, GUARDED, UNGUARDED, SEED_RULE, N_POLICIES };

static const char *const policy_name[N_POLICIES] = {
	"atomic-only", "guarded", "unguarded", "seed-001",
};

static struct rig rig;
static struct image img_pipes, img_ideal, img_scratch;

static void check_setup(int ret, const char *what)
{
	if (ret) {
		tap_diag("setup: %s failed: %s", what, strerror(-ret));
		exit(1);
	}
}

/* Refusals by the cursor rules that came without their debug line. */
static unsigned int silent_refusals;

/* The verdict of the kernel's validation for @s under policy @p. */
static bool accepted(const struct scene *s, enum policy p)
{
	int ret;

	kms_set_cap(rig.fd, DRM_CLIENT_CAP_ATOMIC_ONLY, p == ATOMIC_ONLY);
	set_protect_legacy(p != UNGUARDED);
	kmsg_mark();
	ret = scene_commit(&rig, s, DRM_MODE_ATOMIC_TEST_ONLY);
	kms_set_cap(rig.fd, DRM_CLIENT_CAP_ATOMIC_ONLY, 0);
	if (ret && ret != -EINVAL)
		tap_diag("unexpected error %s from a TEST_ONLY commit", strerror(-ret));
	if (ret == -EINVAL && !kmsg_seen("per-pipe cursor: [PLANE:", NULL))
		silent_refusals++;
	return ret == 0;
}

static bool contains(const struct plane_cfg *outer, const struct plane_cfg *inner)
{
	return outer->x <= inner->x && outer->y <= inner->y &&
	       outer->x + (int)outer->w >= inner->x + (int)inner->w &&
	       outer->y + (int)outer->h >= inner->y + (int)inner->h;
}

/* Seed 001: an enabled overlay must cover the primary plane. */
static bool seed_rule_accepts(const struct scene *s)
{
	for (int i = 0; i < SCENE_MAX_OVERLAYS; i++)
		if (s->overlay[i].on && !contains(&s->overlay[i], &s->primary))
			return false;
	return true;
}

static bool verdict(const struct scene *s, enum policy p)
{
	return p == SEED_RULE ? seed_rule_accepts(s) : accepted(s, p);
}

/*
 * Pixels that differ between the per-pipe and the ideal picture of @s, or
 * -errno if the state cannot be composed at all.
 */
static long oracle(const struct scene *s, int *x, int *y)
{
	int ret;

	set_skip_validation(&rig, true);
	set_per_pipe(true);
	ret = scene_capture(&rig, s, &img_pipes);
	set_per_pipe(false);
	if (!ret)
		ret = scene_capture(&rig, s, &img_ideal);
	set_per_pipe(true);
	set_skip_validation(&rig, false);
	if (ret)
		return ret;
	return image_diff(&img_pipes, &img_ideal, x, y);
}

/*
 * What is on screen now, composed per pipe, against the ideal picture of
 * the same state. Validation is skipped for the captures: they must show
 * the state as it is, not be refused for it.
 */
static long displayed_artifacts(void)
{
	int ret, x = -1, y = -1;
	long diff;

	set_skip_validation(&rig, true);
	ret = scene_capture(&rig, NULL, &img_pipes);
	set_per_pipe(false);
	if (!ret)
		ret = scene_capture(&rig, NULL, &img_ideal);
	set_per_pipe(true);
	/* Back to per-pipe composition for whatever the test does next. */
	if (!ret)
		ret = scene_capture(&rig, NULL, &img_scratch);
	set_skip_validation(&rig, false);
	if (ret) {
		tap_diag("capturing the displayed state failed: %s", strerror(-ret));
		return ret;
	}
	diff = image_diff(&img_pipes, &img_ideal, &x, &y);
	if (diff) {
		const uint16_t *a = img_pipes.px + (y * img_pipes.w + x) * 4;
		const uint16_t *b = img_ideal.px + (y * img_ideal.w + x) * 4;

		tap_diag("%ld pixels differ, first at %d,%d: per pipe %04x %04x %04x, ideal %04x %04x %04x",
			 diff, x, y, a[2], a[1], a[0], b[2], b[1], b[0]);
	}
	return diff;
}

static struct plane_cfg overlay(bool translucent, int x, int y, unsigned int w,
				unsigned int h, unsigned int src_w, unsigned int src_h,
				unsigned int zpos)
{
	return (struct plane_cfg) {
		.on = true, .translucent = translucent, .x = x, .y = y, .w = w, .h = h,
		.src_w = src_w, .src_h = src_h, .zpos = zpos,
	};
}

static struct cursor_cfg cursor(int x, int y, unsigned int w, unsigned int h)
{
	return (struct cursor_cfg) { .on = true, .x = x, .y = y, .w = w, .h = h };
}

/* ---- scaling and zpos, against a software reference ---------------------- */

static int src_pixel(int dst_len, int src_len, int i)
{
	if (src_len == dst_len)
		return i;
	return (int)(((2 * (int64_t)i + 1) * src_len) / (2 * dst_len));
}

/* Opaque planes only: the top plane's source pixel is the result. */
static void reference(const struct scene *s, struct image *img)
{
	for (unsigned int y = 0; y < img->h; y++) {
		for (unsigned int x = 0; x < img->w; x++) {
			uint32_t argb = pattern_plane(0, false, x, y);
			unsigned int best = s->primary.zpos;
			uint16_t *px = img->px + (y * img->w + x) * 4;

			for (int i = 0; i < SCENE_MAX_OVERLAYS; i++) {
				const struct plane_cfg *p = &s->overlay[i];
				int dx = (int)x - p->x, dy = (int)y - p->y;

				if (!p->on || dx < 0 || dy < 0 || dx >= (int)p->w ||
				    dy >= (int)p->h || p->zpos < best)
					continue;
				best = p->zpos;
				argb = pattern_plane(i + 1, false, src_pixel(p->w, p->src_w, dx),
						     src_pixel(p->h, p->src_h, dy));
			}
			px[0] = (argb & 0xff) * 257;
			px[1] = (argb >> 8 & 0xff) * 257;
			px[2] = (argb >> 16 & 0xff) * 257;
		}
	}
}

static void test_scaling(void)
{
	static const struct { const char *name; unsigned int w, h, sw, sh; } cases[] = {
		{ "unscaled", 100, 60, 100, 60 },
		{ "upscaled 2x", 120, 80, 60, 40 },
		{ "upscaled 4x", 160, 120, 40, 30 },
		{ "downscaled 2x", 90, 50, 180, 100 },
		{ "downscaled 4x", 60, 40, 240, 160 },
		{ "scaled by 3/2", 150, 90, 100, 60 },
		{ "scaled by 5/7", 100, 100, 140, 140 },
	};
	struct image ref;
	struct scene s;

	tap_plan(ARRAY_SIZE(cases) + 4);
	check_setup(image_alloc(&ref), "image");
	set_per_pipe(false);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		long diff;
		int x = 0, y = 0, ret;

		scene_default(&s);
		s.overlay[0] = overlay(false, 37, 21, cases[i].w, cases[i].h,
				       cases[i].sw, cases[i].sh, 1);
		ret = scene_capture(&rig, &s, &img_ideal);
		reference(&s, &ref);
		diff = ret ? ret : image_diff(&img_ideal, &ref, &x, &y);
		tap_ok(diff == 0, "overlay %s composes like the reference (%ld pixels differ, first %d,%d)",
		       cases[i].name, diff, x, y);
	}

	scene_default(&s);
	s.overlay[0] = overlay(false, 10, 10, 100, 60, 25, 15, 0);
	s.primary.zpos = 1;
	tap_ok(scene_capture(&rig, &s, &img_ideal) == 0 &&
	       (reference(&s, &ref), image_diff(&img_ideal, &ref, NULL, NULL) == 0),
	       "an overlay below the opaque primary is hidden");

	scene_default(&s);
	s.overlay[0] = overlay(false, 10, 10, 100, 60, 100, 60, 2);
	s.overlay[1] = overlay(false, 50, 30, 100, 60, 50, 30, 1);
	tap_ok(scene_capture(&rig, &s, &img_ideal) == 0 &&
	       (reference(&s, &ref), image_diff(&img_ideal, &ref, NULL, NULL) == 0),
	       "zpos, not plane order, decides which overlay is on top");

	scene_default(&s);
	s.overlay[0] = overlay(false, 10, 10, 100, 60, 500, 300, 1);
	tap_ok(scene_commit(&rig, &s, DRM_MODE_ATOMIC_TEST_ONLY) == -ERANGE,
	       "downscaling by more than 4 is refused with ERANGE");
	s.overlay[0] = overlay(false, 10, 10, 100, 60, 20, 12, 1);
	tap_ok(scene_commit(&rig, &s, DRM_MODE_ATOMIC_TEST_ONLY) == -ERANGE,
	       "upscaling by more than 4 is refused with ERANGE");
	image_free(&ref);
	set_per_pipe(true);
}

/* ---- named scenarios -------------------------------------------------------- */

/* Overlays are given by the first of SCENE_MAX_OVERLAYS; the primary is full screen. */
struct scenario {
	const char *name;
	struct plane_cfg overlay[2];
	bool primary_on_top;
	struct cursor_cfg cursor;
	bool accept[3];		/* atomic-only, guarded, unguarded */
	bool artifact;
};

#define OVERLAY(_alpha, _x, _y, _w, _h, _sw, _sh, _z) \
	{ .on = true, .translucent = (_alpha), .x = (_x), .y = (_y), .w = (_w), .h = (_h), \
	  .src_w = (_sw), .src_h = (_sh), .zpos = (_z) }
#define CURSOR(_x, _y, _w, _h) { .on = true, .x = (_x), .y = (_y), .w = (_w), .h = (_h) }
#define VIDEO OVERLAY(false, 60, 40, 120, 80, 60, 40, 1)	/* 2x, partial */

static const struct scenario scenarios[] = {
	{ "primary only, cursor in the middle",
	  .cursor = CURSOR(100, 60, 32, 32), .accept = { 1, 1, 1 } },
	{ "unscaled opaque overlay, cursor straddling its edge",
	  .overlay = { OVERLAY(false, 60, 40, 120, 80, 120, 80, 1) },
	  .cursor = CURSOR(165, 100, 32, 32), .accept = { 1, 1, 1 } },
	{ "scaled video overlay, cursor away from it", .overlay = { VIDEO },
	  .cursor = CURSOR(200, 10, 32, 32), .accept = { 1, 0, 1 } },
	{ "scaled video overlay, cursor over it", .overlay = { VIDEO },
	  .cursor = CURSOR(100, 60, 32, 32), .artifact = true },
	{ "scaled video overlay, cursor straddling its edge", .overlay = { VIDEO },
	  .cursor = CURSOR(170, 70, 32, 32), .artifact = true },
	{ "translucent overlay, cursor away from it",
	  .overlay = { OVERLAY(true, 60, 40, 120, 80, 120, 80, 1) },
	  .cursor = CURSOR(200, 10, 32, 32), .accept = { 1, 0, 1 } },
	{ "translucent overlay, cursor over it",
	  .overlay = { OVERLAY(true, 60, 40, 120, 80, 120, 80, 1) },
	  .cursor = CURSOR(100, 60, 32, 32), .artifact = true },
	{ "scaled overlay under the opaque primary",
	  .overlay = { OVERLAY(false, 60, 40, 120, 80, 60, 40, 0) }, .primary_on_top = true,
	  .cursor = CURSOR(100, 60, 32, 32), .accept = { 1, 1, 1 } },
	{ "unscaled overlay covering the primary (seed 001's rule)",
	  .overlay = { OVERLAY(false, 0, 0, SCENE_W, SCENE_H, SCENE_W, SCENE_H, 1) },
	  .cursor = CURSOR(100, 60, 32, 32), .accept = { 1, 1, 1 } },
	{ "scaled overlay covering the primary (seed 001 accepts it)",
	  .overlay = { OVERLAY(false, 0, 0, SCENE_W, SCENE_H, SCENE_W / 2, SCENE_H / 2, 1) },
	  .cursor = CURSOR(100, 60, 32, 32), .artifact = true },
	{ "upscaled overlay draws an off-screen cursor on screen",
	  .overlay = { OVERLAY(false, 0, 0, SCENE_W, SCENE_H, SCENE_W / 4, SCENE_H / 4, 1) },
	  .cursor = CURSOR(-100, -100, 64, 64), .artifact = true },
	{ "scaled overlay, no cursor", .overlay = { VIDEO }, .accept = { 1, 0, 1 } },
	{ "translucent overlay over an opaque one, cursor in both",
	  .overlay = { OVERLAY(false, 20, 20, 80, 60, 80, 60, 1),
		       OVERLAY(true, 60, 40, 80, 60, 80, 60, 2) },
	  .cursor = CURSOR(70, 50, 16, 16), .artifact = true },
	{ "opaque overlay over a translucent one, cursor in both",
	  .overlay = { OVERLAY(true, 20, 20, 80, 60, 80, 60, 1),
		       OVERLAY(false, 60, 40, 80, 60, 80, 60, 2) },
	  .cursor = CURSOR(70, 50, 16, 16), .accept = { 1, 0, 1 } },
};

static void scenario_scene(const struct scenario *c, struct scene *s)
{
	scene_default(s);
	s->overlay[0] = c->overlay[0];
	s->overlay[1] = c->overlay[1];
	if (c->primary_on_top)
		s->primary.zpos = 1;
	s->cursor = c->cursor;
}

static void test_scenarios(void)
{
	tap_plan(ARRAY_SIZE(scenarios) * 5 + 1);
	silent_refusals = 0;
	for (size_t i = 0; i < ARRAY_SIZE(scenarios); i++) {
		const struct scenario *c = &scenarios[i];
		struct scene scene;
		int x = -1, y = -1;
		long diff;

		scenario_scene(c, &scene);

		for (int p = ATOMIC_ONLY; p <= UNGUARDED; p++) {
			bool got = accepted(&scene, p);

			tap_ok(got == c->accept[p], "%s: %s client %s", c->name,
			       policy_name[p], got ? "accepted" : "refused");
		}
		diff = oracle(&scene, &x, &y);
		tap_ok(diff >= 0 && (diff > 0) == c->artifact,
		       "%s: oracle finds %ld differing pixels (first at %d,%d)",
		       c->name, diff, x, y);
		/* Whatever a policy accepted must be clean. */
		tap_ok(diff == 0 || !(c->accept[0] || c->accept[1] || c->accept[2]),
		       "%s: no accepted state shows an artifact", c->name);
	}
	tap_ok(silent_refusals == 0,
	       "every refusal logged a drm_dbg_atomic line naming the plane (%u did not)",
	       silent_refusals);
}

/* ---- clients -------------------------------------------------------------- */

static int legacy_move(int x, int y)
{
	return drmModeMoveCursor(rig.fd, rig.kms.crtc_id, x, y) ? -errno : 0;
}

/* Vblanks that pass while @n cursor updates go through @update. */
static unsigned int vblanks_during(int (*update)(int i), int n)
{
	drmVBlank a = { .request.type = DRM_VBLANK_RELATIVE }, b = a;

	drmWaitVBlank(rig.fd, &a);
	for (int i = 0; i < n; i++)
		update(i);
	drmWaitVBlank(rig.fd, &b);
	return b.reply.sequence - a.reply.sequence;
}

static int legacy_step(int i)
{
	return legacy_move(10 + i % 50, 10);
}

static int atomic_step(int i)
{
	drmModeAtomicReqPtr req = drmModeAtomicAlloc();
	int ret = kms_add(rig.fd, req, rig.kms.cursor_id, DRM_MODE_OBJECT_PLANE,
			  "CRTC_X", 10 + i % 50);

	if (!ret)
		ret = kms_commit(rig.fd, req, 0);
	drmModeAtomicFree(req);
	return ret;
}

struct probe { const char *where; int x, y; bool bad_when_scaled; };

static const struct probe probes[] = {
	{ "far from the overlay", 200, 10, false },
	{ "inside the overlay", 100, 60, true },
	{ "straddling the overlay's left edge", 45, 60, true },
	{ "straddling the overlay's bottom edge", 100, 110, true },
	{ "partly off-screen", SCENE_W - 10, SCENE_H - 10, false },
};

static void test_clients(void)
{
	struct scene s;
	int ret;

	tap_plan(4 + 2 * ARRAY_SIZE(probes) + 2 + 3 * ARRAY_SIZE(probes) + 5 + 3);

	/* ChromeOS-style: atomic planes, legacy cursor, protected by the guard. */
	set_protect_legacy(true);
	scene_default(&s);
	s.overlay[0] = overlay(false, 60, 40, 120, 80, 120, 80, 1);
	s.cursor = cursor(200, 10, 64, 64);
	tap_ok(scene_commit(&rig, &s, 0) == 0,
	       "chromeos-style, guarded: unscaled opaque overlay accepted");
	check_setup(drmModeSetCursor(rig.fd, rig.kms.crtc_id, rig.cursor_fb.handle, 64, 64) ?
		    -errno : 0, "legacy cursor");
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++) {
		ret = legacy_move(probes[i].x, probes[i].y);
		tap_ok(ret == 0, "chromeos-style, guarded, unscaled overlay: legacy cursor %s accepted (%s)",
		       probes[i].where, strerror(-ret));
		tap_ok(displayed_artifacts() == 0,
		       "chromeos-style, guarded, unscaled overlay: nothing wrong displayed with the cursor %s",
		       probes[i].where);
	}
	{
		unsigned int legacy, atomic;

		/*
		 * At 30 Hz a frame is long against the cost of an ioctl even
		 * under KASAN, so vblanks count waits, not CPU time.
		 */
		check_setup(rig_set_refresh(&rig, 30), "30 Hz mode");
		legacy = vblanks_during(legacy_step, 30);
		atomic = vblanks_during(atomic_step, 30);
		check_setup(rig_set_refresh(&rig, 0), "fast mode");
		tap_ok(4 * legacy < atomic,
		       "chromeos-style, guarded: legacy cursor moves keep the fast path (%u vblanks for 30 moves, %u for 30 blocking atomic moves)",
		       legacy, atomic);
	}
	s.overlay[0] = overlay(false, 60, 40, 120, 80, 60, 40, 1);
	s.cursor = cursor(200, 10, 64, 64);
	tap_ok(scene_commit(&rig, &s, 0) == -EINVAL,
	       "chromeos-style, guarded: scaled overlay refused though the cursor is away");
	tap_ok(displayed_artifacts() == 0, "chromeos-style, guarded: nothing wrong displayed");

	/* The same client on a system that does not protect legacy clients. */
	set_protect_legacy(false);
	ret = scene_commit(&rig, &s, 0);
	tap_ok(ret == 0, "chromeos-style, unguarded: scaled overlay accepted with the cursor away (%s)",
	       strerror(-ret));
	tap_ok(displayed_artifacts() == 0, "chromeos-style, unguarded: nothing wrong displayed");
	for (size_t i = 0; i < ARRAY_SIZE(probes); i++) {
		ret = legacy_move(probes[i].x, probes[i].y);
		tap_ok(probes[i].bad_when_scaled ? ret == -EINVAL : ret == 0,
		       "chromeos-style, unguarded, scaled overlay: legacy cursor %s %s",
		       probes[i].where, ret ? "refused" : "accepted");
		tap_ok(displayed_artifacts() == 0,
		       "chromeos-style, unguarded, scaled overlay: nothing wrong displayed after the cursor %s",
		       probes[i].where);
		tap_ok(probes[i].bad_when_scaled || legacy_move(200, 10) == 0,
		       "chromeos-style, unguarded: cursor moves back to a safe place");
	}

	/* Opted in: everything atomic, each commit checked as a whole. */
	set_protect_legacy(true);
	kms_set_cap(rig.fd, DRM_CLIENT_CAP_ATOMIC_ONLY, 1);
	s.cursor = cursor(200, 10, 64, 64);
	tap_ok(scene_commit(&rig, &s, 0) == 0,
	       "atomic-only: scaled overlay accepted with the cursor away, guard on");
	s.cursor = cursor(100, 60, 64, 64);
	tap_ok(scene_commit(&rig, &s, 0) == -EINVAL,
	       "atomic-only: moving the cursor over the scaled overlay is refused");
	tap_ok(legacy_move(100, 60) == -EINVAL,
	       "atomic-only: the legacy cursor ioctl is refused by the capability");
	s.cursor = cursor(220, 120, 32, 32);
	tap_ok(scene_commit(&rig, &s, 0) == 0, "atomic-only: another safe cursor position accepted");
	tap_ok(displayed_artifacts() == 0, "atomic-only: nothing wrong displayed");
	kms_set_cap(rig.fd, DRM_CLIENT_CAP_ATOMIC_ONLY, 0);

	/* A plain atomic client without the capability is treated like a legacy one. */
	tap_ok(scene_commit(&rig, &s, DRM_MODE_ATOMIC_TEST_ONLY) == -EINVAL,
	       "plain atomic client, guarded: the same scaled overlay is refused");
	set_protect_legacy(false);
	tap_ok(scene_commit(&rig, &s, DRM_MODE_ATOMIC_TEST_ONLY) == 0,
	       "plain atomic client, unguarded: accepted");
	set_protect_legacy(true);
	scene_default(&s);
	tap_ok(scene_commit(&rig, &s, 0) == 0, "back to the primary plane alone");
}

/* ---- master handover -------------------------------------------------------- */

static void test_handover(void)
{
	int compositor = rig.fd, legacy;
	struct scene s;
	int ret;

	tap_plan(9);
	set_protect_legacy(true);
	kms_set_cap(compositor, DRM_CLIENT_CAP_ATOMIC_ONLY, 1);
	scene_default(&s);
	s.overlay[0] = overlay(false, 60, 40, 120, 80, 60, 40, 1);
	s.cursor = cursor(200, 10, 32, 32);
	tap_ok(scene_commit(&rig, &s, 0) == 0,
	       "compositor (atomic-only) leaves a scaled overlay that does not cover the primary");

	legacy = kms_open_driver("vkms");
	ret = legacy >= 0 && drmDropMaster(compositor) == 0 && drmSetMaster(legacy) == 0;
	tap_ok(ret, "a legacy client becomes DRM master");
	rig.fd = legacy;
	ret = drmModeMoveCursor(legacy, rig.kms.crtc_id, 100, 60) ? -errno : 0;
	tap_ok(ret == -EINVAL, "guarded: its cursor move over the overlay is refused (%s)",
	       strerror(-ret));
	ret = drmModeMoveCursor(legacy, rig.kms.crtc_id, 210, 20) ? -errno : 0;
	tap_ok(ret == -EINVAL,
	       "guarded: a move to a safe place is refused too, the state is unsafe for legacy clients (%s)",
	       strerror(-ret));
	set_protect_legacy(false);
	ret = drmModeMoveCursor(legacy, rig.kms.crtc_id, 210, 20) ? -errno : 0;
	tap_ok(ret == 0, "unguarded: the move to a safe place is accepted (%s)", strerror(-ret));
	ret = drmModeMoveCursor(legacy, rig.kms.crtc_id, 100, 60) ? -errno : 0;
	tap_ok(ret == -EINVAL, "unguarded: the move over the overlay is refused (%s)",
	       strerror(-ret));
	rig.fd = compositor;
	drmDropMaster(legacy);
	tap_ok(drmSetMaster(compositor) == 0, "the compositor takes master back");
	tap_ok(displayed_artifacts() == 0, "no artifact was ever left on screen");
	kms_set_cap(compositor, DRM_CLIENT_CAP_ATOMIC_ONLY, 0);
	scene_default(&s);
	tap_ok(scene_commit(&rig, &s, 0) == 0, "the compositor restores a plain state");
	set_protect_legacy(true);
	if (legacy >= 0)
		close(legacy);
}

/* ---- randomized sweep ------------------------------------------------------- */

static uint32_t rnd_state;

static uint32_t rnd(uint32_t n)
{
	/* xorshift32: reproducible from the seed on every libc. */
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return n ? rnd_state % n : 0;
}

static void random_scene(struct scene *s)
{
	static const unsigned int num[] = { 1, 1, 1, 1, 2, 1, 3, 2, 4, 1, 3 };
	static const unsigned int den[] = { 1, 1, 1, 1, 1, 2, 2, 3, 1, 4, 4 };
	unsigned int overlays = rnd(SCENE_MAX_OVERLAYS + 1);
	unsigned int z[SCENE_MAX_OVERLAYS + 1];

	scene_default(s);
	for (unsigned int i = 0; i <= overlays; i++)
		z[i] = i;
	for (unsigned int i = overlays; i > 0; i--) {
		unsigned int j = rnd(i + 1), t = z[i];

		z[i] = z[j];
		z[j] = t;
	}
	s->primary.zpos = z[0];
	for (unsigned int i = 0; i < overlays; i++) {
		struct plane_cfg *p = &s->overlay[i];
		unsigned int k = rnd(ARRAY_SIZE(num));

		p->on = true;
		p->translucent = rnd(3) == 0;
		p->zpos = z[i + 1];
		if (rnd(5) == 0) {
			p->w = SCENE_W;
			p->h = SCENE_H;
		} else {
			p->w = 8 + rnd(SCENE_W - 8);
			p->h = 8 + rnd(SCENE_H - 8);
			p->x = (int)rnd(SCENE_W) - (int)p->w / 4;
			p->y = (int)rnd(SCENE_H) - (int)p->h / 4;
		}
		p->src_w = p->w * num[k] / den[k];
		p->src_h = p->h * num[k] / den[k];
		if (!p->src_w || !p->src_h || p->src_w * 4 < p->w || p->src_h * 4 < p->h ||
		    p->src_w > 4 * p->w || p->src_h > 4 * p->h) {
			p->src_w = p->w;
			p->src_h = p->h;
		}
	}
	if (rnd(10)) {
		s->cursor.on = true;
		s->cursor.w = 1 + rnd(SCENE_CURSOR_MAX);
		s->cursor.h = 1 + rnd(SCENE_CURSOR_MAX);
		s->cursor.x = (int)rnd(SCENE_W + s->cursor.w) - (int)s->cursor.w;
		s->cursor.y = (int)rnd(SCENE_H + s->cursor.h) - (int)s->cursor.h;
	}
}

struct counts {
	unsigned long accepted_clean, accepted_artifact, refused_clean, refused_artifact;
};

static double pct(unsigned long a, unsigned long b)
{
	return b ? 100.0 * a / b : 100.0;
}

static void test_sweep(unsigned int count, uint32_t seed)
{
	struct counts c[N_POLICIES] = { };
	unsigned long artifacts = 0, invalid = 0, runs = 0;
	char desc[512];

	time_t start = time(NULL);

	tap_plan(3 + 2);
	rnd_state = seed ? seed : 1;
	tap_diag("sweep: %u configurations, seed %u, %dx%d", count, seed, SCENE_W, SCENE_H);
	for (unsigned int n = 0; n < count; n++) {
		bool ok[N_POLICIES];
		struct scene s;
		long diff;
		int x = -1, y = -1;

		random_scene(&s);
		for (int p = 0; p < N_POLICIES; p++)
			ok[p] = verdict(&s, p);
		diff = oracle(&s, &x, &y);
		if (diff < 0) {
			invalid++;
			continue;
		}
		runs++;
		artifacts += diff > 0;
		for (int p = 0; p < N_POLICIES; p++) {
			if (ok[p] && diff) {
				c[p].accepted_artifact++;
				if (p != SEED_RULE) {
					scene_describe(&s, desc, sizeof(desc));
					tap_diag("%s accepted an artifact (%ld px at %d,%d): %s",
						 policy_name[p], diff, x, y, desc);
				}
			} else if (ok[p]) {
				c[p].accepted_clean++;
			} else if (diff) {
				c[p].refused_artifact++;
			} else {
				c[p].refused_clean++;
			}
		}
	}

	tap_diag("sweep took %ld s", (long)(time(NULL) - start));
	tap_diag("configurations composed: %lu, not composable: %lu, with artifacts (validation off): %lu",
		 runs, invalid, artifacts);
	tap_diag("%-12s %9s %9s %9s %9s %10s %8s", "policy", "acc-clean", "acc-artif",
		 "ref-clean", "ref-artif", "precision", "recall");
	for (int p = 0; p < N_POLICIES; p++)
		tap_diag("%-12s %9lu %9lu %9lu %9lu %9.2f%% %7.2f%%", policy_name[p],
			 c[p].accepted_clean, c[p].accepted_artifact, c[p].refused_clean,
			 c[p].refused_artifact,
			 pct(c[p].accepted_clean, c[p].accepted_clean + c[p].accepted_artifact),
			 pct(c[p].accepted_clean, c[p].accepted_clean + c[p].refused_clean));

	for (int p = ATOMIC_ONLY; p <= UNGUARDED; p++)
		tap_ok(c[p].accepted_artifact == 0,
		       "sweep: %s policy accepts no state with an artifact (precision %.2f%%)",
		       policy_name[p], pct(c[p].accepted_clean,
					  c[p].accepted_clean + c[p].accepted_artifact));
	tap_ok(artifacts > 0, "sweep: with validation off the oracle finds artifacts (%lu)",
	       artifacts);
	tap_ok(pct(c[ATOMIC_ONLY].accepted_clean,
		   c[ATOMIC_ONLY].accepted_clean + c[ATOMIC_ONLY].refused_clean) >= 99.0,
	       "sweep: atomic-only recall is at least 99%% (%.2f%%)",
	       pct(c[ATOMIC_ONLY].accepted_clean,
		   c[ATOMIC_ONLY].accepted_clean + c[ATOMIC_ONLY].refused_clean));
}

/* ---- stress ----------------------------------------------------------------- */

struct stress {
	int ops;
	int errors;
};

static void *cursor_thread(void *arg)
{
	struct stress *st = arg;

	for (int i = 0; i < st->ops; i++) {
		int ret = legacy_move((i * 37) % (SCENE_W + 64) - 32, (i * 23) % (SCENE_H + 64) - 32);

		/* Refusals are fine while the other thread has an unsafe overlay up. */
		if (ret && ret != -EINVAL)
			st->errors++;
	}
	return NULL;
}

static void test_stress(int ops)
{
	struct stress cur = { .ops = ops * 4 / 5 };
	int commits = ops - cur.ops, bad = 0, accepted_unsafe = 0;
	pthread_t thread;
	struct scene s;

	tap_plan(4);
	set_protect_legacy(false);
	check_setup(drmModeSetCursor(rig.fd, rig.kms.crtc_id, rig.cursor_fb.handle, 32, 32) ?
		    -errno : 0, "legacy cursor");
	pthread_create(&thread, NULL, cursor_thread, &cur);
	for (int i = 0; i < commits; i++) {
		bool scaled = i % 3 == 0;
		int ret;

		scene_default(&s);
		s.overlay[0] = overlay(i % 5 == 0, (i * 13) % SCENE_W - 40, (i * 7) % SCENE_H - 20,
				       80, 60, scaled ? 40 : 80, scaled ? 30 : 60, 1);
		/* The cursor stays where the other thread put it: omit it. */
		{
			drmModeAtomicReqPtr req = drmModeAtomicAlloc();
			const struct plane_cfg *p = &s.overlay[0];

			ret = kms_add_plane(rig.fd, req, rig.kms.overlay_ids[0], rig.kms.crtc_id,
					    rig.overlay_fb[0][p->translucent].fb_id,
					    p->src_w, p->src_h, p->x, p->y, p->w, p->h);
			if (!ret)
				ret = kms_commit(rig.fd, req, 0);
			drmModeAtomicFree(req);
		}
		if (ret && ret != -EINVAL)
			bad++;
		accepted_unsafe += !ret && scaled;
	}
	pthread_join(thread, NULL);
	tap_ok(cur.errors == 0, "stress: %d legacy cursor moves, no error but EINVAL (%d)",
	       cur.ops, cur.errors);
	tap_ok(bad == 0, "stress: %d overlay commits, no error but EINVAL (%d)", commits, bad);
	tap_ok(displayed_artifacts() == 0, "stress: nothing wrong displayed at the end");
	scene_default(&s);
	tap_ok(scene_commit(&rig, &s, 0) == 0, "stress: the device still takes a plain state");
	tap_diag("stress: %d scaled overlay commits accepted (cursor was away)", accepted_unsafe);
	set_protect_legacy(true);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], "--comm") == 0)
			prctl(PR_SET_NAME, argv[i + 1]);

	check_setup(rig_open(&rig), "vkms with overlays, cursor and writeback");
	check_setup(kmsg_open() ?: drm_debug_enable(0x10), "/dev/kmsg and drm.debug");
	check_setup(image_alloc(&img_pipes) ?: image_alloc(&img_ideal) ?:
		    image_alloc(&img_scratch), "images");
	check_setup(set_per_pipe(true), "per_pipe_cursor parameter");
	check_setup(set_skip_validation(&rig, false), "debugfs switch");

	if (strcmp(what, "scaling") == 0)
		test_scaling();
	else if (strcmp(what, "scenarios") == 0)
		test_scenarios();
	else if (strcmp(what, "clients") == 0)
		test_clients();
	else if (strcmp(what, "handover") == 0)
		test_handover();
	else if (strcmp(what, "sweep") == 0 && argc > 3)
		test_sweep(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0));
	else if (strcmp(what, "stress") == 0 && argc > 2)
		test_stress(atoi(argv[2]));
	else {
		fprintf(stderr, "usage: %s scaling|scenarios|clients|handover|sweep N SEED|stress OPS\n",
			argv[0]);
		return 2;
	}

	set_per_pipe(false);
	image_free(&img_pipes);
	image_free(&img_ideal);
	image_free(&img_scratch);
	rig_close(&rig);
	return tap_exit_status();
}
