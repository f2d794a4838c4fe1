// SPDX-License-Identifier: MIT
/*
 * kms_writeback_rows: the writeback connector stores each composed row at
 * its own CRTC row, whatever the rotation of the topmost plane.
 *
 * vkms composes the CRTC row by row. Before the fix, each row went to the
 * writeback buffer at the row index the topmost plane was read from: with
 * that plane rotated or reflected, the picture came back shuffled, and a
 * rotate-90 overlay away from the CRTC's origin made vkms write outside
 * the writeback framebuffer. The reference needs no model of rotation:
 * the same scene with a small unrotated plane on top (whose row index is
 * the CRTC row) must come back the same outside that small plane, and
 * outside both planes the picture is the primary's alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kms_scene.h"
#include "kms_util.h"
#include "tap.h"

static struct rig rig;

static void setup(void)
{
	rig_open_or_exit(&rig);
}

static void teardown(void)
{
	rig_close(&rig);
}

struct rect {
	int x, y;
	unsigned int w, h;
};

static bool inside(const struct rect *r, unsigned int x, unsigned int y)
{
	return (int)x >= r->x && (int)x < r->x + (int)r->w &&
	       (int)y >= r->y && (int)y < r->y + (int)r->h;
}

/* Pixels that differ between @a and @b outside @skip[0..n). */
static long diff_outside(const struct image *a, const struct image *b,
			 const struct rect *skip, unsigned int n, int *first_x, int *first_y)
{
	long count = 0;

	for (unsigned int y = 0; y < a->h; y++) {
		for (unsigned int x = 0; x < a->w; x++) {
			const uint16_t *pa = a->px + (y * a->w + x) * 4;
			const uint16_t *pb = b->px + (y * b->w + x) * 4;
			bool skipped = false;

			for (unsigned int i = 0; i < n; i++)
				skipped |= inside(&skip[i], x, y);
			if (skipped || memcmp(pa, pb, 3 * sizeof(*pa)) == 0)
				continue;
			if (!count++) {
				*first_x = x;
				*first_y = y;
			}
		}
	}
	return count;
}

static const struct {
	const char *label;
	unsigned int rotation;
} rotations[] = {
	{ "rotate-90", DRM_MODE_ROTATE_90 },
	{ "rotate-180", DRM_MODE_ROTATE_180 },
	{ "rotate-270", DRM_MODE_ROTATE_270 },
	{ "reflect-x", DRM_MODE_ROTATE_0 | DRM_MODE_REFLECT_X },
	{ "reflect-y", DRM_MODE_ROTATE_0 | DRM_MODE_REFLECT_Y },
	{ "rotate-90-reflect-x", DRM_MODE_ROTATE_90 | DRM_MODE_REFLECT_X },
};

/* The rotated overlay: 64x32 on the CRTC at 30,20, unscaled. */
static const struct rect rotated_at = { 30, 20, 64, 32 };
/* The small unrotated overlay of the reference, away from it. */
static const struct rect small_at = { 200, 130, 8, 8 };

static void test_rotated_top_plane(char **argv)
{
	struct image with_rotated = { }, reference = { }, primary_only = { };
	struct scene s0;
	bool have_rotation = kms_prop_id(rig.fd, rig.kms.overlay_ids[0],
					 DRM_MODE_OBJECT_PLANE, "rotation") != 0;
	int ret;

	(void)argv;
	if (image_alloc(&with_rotated) || image_alloc(&reference) || image_alloc(&primary_only)) {
		tap_diag("out of memory");
		exit(1);
	}
	for (size_t i = 0; i < ARRAY_SIZE(rotations); i++) {
		const char *l = rotations[i].label;
		bool quarter = rotations[i].rotation & (DRM_MODE_ROTATE_90 | DRM_MODE_ROTATE_270);
		struct rect both[2] = { rotated_at, small_at };
		struct scene s;
		int fx = -1, fy = -1;
		long diff;

		if (!have_rotation) {
			tap_skip(tap_name("captured@%s", l), "this vkms has no rotation property");
			tap_skip(tap_name("rows-as-under-an-unrotated-top-plane@%s", l),
				 "this vkms has no rotation property");
			tap_skip(tap_name("primary-unchanged-outside-the-planes@%s", l),
				 "this vkms has no rotation property");
			continue;
		}
		scene_default(&s);
		ret = scene_capture(&rig, &s, &primary_only);

		s.overlay[0] = (struct plane_cfg) {
			.on = true, .x = rotated_at.x, .y = rotated_at.y,
			.w = rotated_at.w, .h = rotated_at.h,
			.src_w = quarter ? rotated_at.h : rotated_at.w,
			.src_h = quarter ? rotated_at.w : rotated_at.h,
			.zpos = 1, .rotation = rotations[i].rotation,
		};
		if (!ret)
			ret = scene_capture(&rig, &s, &with_rotated);
		s.overlay[1] = (struct plane_cfg) {
			.on = true, .x = small_at.x, .y = small_at.y, .w = small_at.w,
			.h = small_at.h, .src_w = small_at.w, .src_h = small_at.h, .zpos = 2,
		};
		if (!ret)
			ret = scene_capture(&rig, &s, &reference);
		tap_okf(ret == 0, tap_name("captured@%s", l), "capture: %s", strerror(-ret));

		diff = ret ? -1 : diff_outside(&with_rotated, &reference, &small_at, 1, &fx, &fy);
		tap_okf(diff == 0, tap_name("rows-as-under-an-unrotated-top-plane@%s", l),
			"%ld pixels differ outside the small plane, first at %d,%d", diff, fx, fy);
		diff = ret ? -1 : diff_outside(&with_rotated, &primary_only, both, 2, &fx, &fy);
		tap_okf(diff == 0, tap_name("primary-unchanged-outside-the-planes@%s", l),
			"%ld pixels differ outside both planes, first at %d,%d", diff, fx, fy);
	}
	/* Leave no rotation behind for the next program on this vkms. */
	scene_default(&s0);
	ret = scene_commit(&rig, &s0, 0);
	tap_okf(ret == 0, "rotation-reset", "committing the primary alone: %s", strerror(-ret));
	image_free(&with_rotated);
	image_free(&reference);
	image_free(&primary_only);
}

static const struct tap_subtest subtests[] = {
	{ "rotated-top-plane", "", 0, test_rotated_top_plane },
};

int main(int argc, char **argv)
{
	const struct tap_program program = { subtests, ARRAY_SIZE(subtests), setup, teardown };

	return tap_main(&program, argc, argv);
}
