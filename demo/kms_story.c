// SPDX-License-Identifier: MIT
/*
 * kms_story: the per-plane cursor story in pictures. A desktop with a video
 * in a window (an overlay scaled 2x that does not cover the screen) and two
 * small overlays, the cursor over the video's edge, over the video and over
 * the desktop, shown by a ChromeOS-style client (atomic planes, legacy
 * cursor) and by a client holding DRM_CLIENT_CAP_NO_LEGACY_CURSOR, on vkms
 * emulating AMD's per-plane cursors. Every frame is read back through the
 * writeback connector, written as PNG next to the frame the user meant to
 * see (the same layout with the cursor as a plane of its own, emulation
 * off) and compared with it pixel by pixel; index.html puts them side by
 * side and the terminal gets the table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <drm_fourcc.h>
#include <png.h>

#include "kms_scene.h"

#define CURSOR_SIZE 32

/* The video: 80x50 source pixels shown at 160x100, the classic case. */
#define VIDEO_X 64
#define VIDEO_Y 24
#define VIDEO_SRC_W 80
#define VIDEO_SRC_H 50

static struct rig rig;
static struct kms_fb legacy_cursor;
static const char *outdir;
static FILE *html;

/* ---- pictures in the framebuffers ---------------------------------------- */

static void put(struct kms_fb *fb, unsigned int x, unsigned int y, uint32_t argb)
{
	fb->pixels[y * (fb->pitch / 4) + x] = argb;
}

static bool in_triangle(int x, int y)
{
	/* Tip at 1,1; left edge straight down; right edge at 45 degrees. */
	return y >= 1 && y <= 21 && x >= 1 && x <= 1 + (y - 1) * 2 / 3 + (y > 15 ? 15 - y : 0);
}

static bool in_tail(int x, int y)
{
	int left = 5 + (y - 13) / 2;

	return y >= 13 && y <= 27 && x >= left && x <= left + 3;
}

static bool arrow_inside(int x, int y)
{
	return in_triangle(x, y) || in_tail(x, y);
}

/* A white arrow with a black outline; transparent around it (premultiplied). */
static void draw_arrow(struct kms_fb *fb)
{
	for (int y = 0; y < CURSOR_SIZE; y++) {
		for (int x = 0; x < CURSOR_SIZE; x++) {
			uint32_t px = 0;

			if (arrow_inside(x, y))
				px = arrow_inside(x - 1, y) && arrow_inside(x + 1, y) &&
				     arrow_inside(x, y - 1) && arrow_inside(x, y + 1) ?
				     0xffffffff : 0xff000000;
			put(fb, x, y, px);
		}
	}
}

static void draw_desktop(struct kms_fb *fb)
{
	for (unsigned int y = 0; y < fb->height; y++) {
		for (unsigned int x = 0; x < fb->width; x++) {
			uint32_t px = 0xff2e4a5c + ((y / 8) & 1) * 0x020202;

			/* A document window in the lower right corner. */
			if (x >= 150 && x < 246 && y >= 96 && y < 152)
				px = y < 104 ? 0xff5b7fa3 : 0xffe8e8e0;
			if (x >= 156 && x < 240 && y >= 110 && y < 148 && (y % 6) == 0)
				px = 0xff9a9a9a;
			put(fb, x, y, px);
		}
	}
}

/*
 * A landscape of 80x50 pixels, each drawn @scale x @scale: sky, sun, hills;
 * what a decoder would deliver.
 */
static void draw_video(struct kms_fb *fb, int scale)
{
	for (int py = 0; py < scale * VIDEO_SRC_H; py++) {
		for (int px_x = 0; px_x < scale * VIDEO_SRC_W; px_x++) {
			int x = px_x / scale, y = py / scale;
			int hill = 34 + (x - 40) * (x - 40) / 120;
			int dx = x - 58, dy = y - 13;
			uint32_t px = 0xff000000 | (uint32_t)(60 + y * 2) << 16 |
				      (uint32_t)(120 + y * 2) << 8 | 0xf0;

			if (dx * dx + dy * dy < 49)
				px = 0xfff8d030;
			if (y > hill)
				px = 0xff000000 | (uint32_t)(40 + (x * 3 % 20)) << 16 |
				     (uint32_t)(140 + (y - hill) * 2) << 8 | 0x40;
			put(fb, px_x, py, px);
		}
	}
}

static void draw_badge(struct kms_fb *fb, uint32_t colour)
{
	for (unsigned int y = 0; y < 24; y++)
		for (unsigned int x = 0; x < 48; x++)
			put(fb, x, y, (x + y) % 8 < 2 ? 0xfff0f0f0 : colour);
}

/*
 * The fallback of a client whose overlay was refused: the video drawn into
 * its own primary buffer (what a GPU composition pass does, at a cost).
 */
static void composite_video_into_primary(void)
{
	const struct kms_fb *video = &rig.overlay_fb[0][0];

	for (int y = 0; y < 2 * VIDEO_SRC_H; y++)
		for (int x = 0; x < 2 * VIDEO_SRC_W; x++)
			put(&rig.primary_fb, VIDEO_X + x, VIDEO_Y + y,
			    video->pixels[(y / 2) * (video->pitch / 4) + x / 2]);
}

/* ---- the layout --------------------------------------------------------- */

enum where { EDGE, INSIDE, DESKTOP, WHERE_COUNT };

static const struct { int x, y; const char *name; } cursor_at[WHERE_COUNT] = {
	[EDGE] = { VIDEO_X - 12, VIDEO_Y + 30, "over the video's left edge" },
	[INSIDE] = { VIDEO_X + 70, VIDEO_Y + 40, "inside the video" },
	[DESKTOP] = { 20, 140, "over the desktop" },
};

/* The video is scaled 2x from 80x50, or shown 1:1 from a 160x100 picture. */
static void layout_scaled(struct scene *s, bool video_plane, bool badges, enum where w,
			  bool scaled)
{
	int src_div = scaled ? 2 : 1;

	memset(s, 0, sizeof(*s));
	s->primary = (struct plane_cfg){ .on = true, .w = SCENE_W, .h = SCENE_H,
					 .src_w = SCENE_W, .src_h = SCENE_H };
	s->overlay[0] = (struct plane_cfg){ .on = video_plane, .x = VIDEO_X, .y = VIDEO_Y,
					    .w = 2 * VIDEO_SRC_W, .h = 2 * VIDEO_SRC_H,
					    .src_w = 2 * VIDEO_SRC_W / src_div,
					    .src_h = 2 * VIDEO_SRC_H / src_div, .zpos = 1 };
	s->overlay[1] = (struct plane_cfg){ .on = badges, .x = 8, .y = 4, .w = 48, .h = 24,
					    .src_w = 48, .src_h = 24, .zpos = 2 };
	s->overlay[2] = (struct plane_cfg){ .on = badges, .x = 200, .y = 4, .w = 48, .h = 24,
					    .src_w = 48, .src_h = 24, .zpos = 3 };
	s->cursor = (struct cursor_cfg){ .on = true, .x = cursor_at[w].x, .y = cursor_at[w].y,
					 .w = CURSOR_SIZE, .h = CURSOR_SIZE };
}

static void layout(struct scene *s, bool video_plane, bool badges, enum where w)
{
	layout_scaled(s, video_plane, badges, w, true);
}

static unsigned int hw_planes(const struct scene *s)
{
	unsigned int n = s->primary.on;

	for (int i = 0; i < SCENE_MAX_OVERLAYS; i++)
		n += s->overlay[i].on;
	return n;
}

/* ---- output ------------------------------------------------------------- */

static int write_png(const char *name, const struct image *img, const struct image *mask_of)
{
	char path[256];
	png_structp png;
	png_infop info;
	uint8_t *row;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	f = fopen(path, "wb");
	if (!f)
		return -errno;
	row = malloc(img->w * 3);
	png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
	info = png ? png_create_info_struct(png) : NULL;
	if (!row || !info || setjmp(png_jmpbuf(png))) {
		png_destroy_write_struct(&png, &info);
		free(row);
		fclose(f);
		return -EIO;
	}
	png_init_io(png, f);
	png_set_IHDR(png, info, img->w, img->h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
		     PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
	png_write_info(png, info);
	for (unsigned int y = 0; y < img->h; y++) {
		for (unsigned int x = 0; x < img->w; x++) {
			const uint16_t *p = img->px + (y * img->w + x) * 4;
			struct image one = { .w = 1, .h = 1 };
			uint16_t q[4];

			/* XRGB16161616 is b, g, r, x in memory. */
			row[x * 3 + 0] = p[2] >> 8;
			row[x * 3 + 1] = p[1] >> 8;
			row[x * 3 + 2] = p[0] >> 8;
			if (!mask_of)
				continue;
			/* The difference picture: the wrong pixels red, the rest dimmed. */
			memcpy(q, mask_of->px + (y * img->w + x) * 4, sizeof(q));
			one.px = q;
			if (image_diff(&one, &(struct image){ (uint16_t *)p, 1, 1 }, NULL, NULL)) {
				row[x * 3 + 0] = 0xff;
				row[x * 3 + 1] = 0;
				row[x * 3 + 2] = 0;
			} else {
				for (int c = 0; c < 3; c++)
					row[x * 3 + c] /= 3;
			}
		}
		png_write_row(png, row);
	}
	png_write_end(png, NULL);
	png_destroy_write_struct(&png, &info);
	free(row);
	return fclose(f) ? -errno : 0;
}

struct shot {
	const char *chapter;
	const char *client;
	const char *what;
	const char *kernel_said;	/* the verdicts the client got */
	const char *caption;
};

static unsigned int shots, artifacts, not_as_meant;

static void html_begin(void)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/index.html", outdir);
	html = fopen(path, "w");
	if (!html)
		return;
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
	      "<title>Per-plane hardware cursors: the bug, the workaround, the opt-in</title>\n"
	      "<style>body{font-family:sans-serif;max-width:1400px;margin:auto}"
	      "img{width:384px;image-rendering:pixelated;border:1px solid #888}"
	      "td{vertical-align:top;padding:4px}figcaption{max-width:384px;font-size:90%}"
	      ".bad{color:#b00;font-weight:bold}.good{color:#070;font-weight:bold}</style>\n"
	      "</head><body>\n<h1>Per-plane hardware cursors on vkms</h1>\n"
	      "<p>Every picture is a frame read back through the vkms writeback connector "
	      "(256x160, shown 1.5 times as large). vkms emulates AMD's display pipes: every plane is a pipe "
	      "that draws its own copy of the cursor, clipped and scaled like the plane. "
	      "Left: what the screen shows. Middle: what the user meant to see (the same "
	      "layout, the cursor a plane of its own). Right: the pixels that differ, in "
	      "red.</p>\n<table>\n", html);
}

static void html_row(unsigned int n, const struct shot *sh, const char *mode, long artifact,
		     long diff)
{
	if (!html)
		return;
	fprintf(html, "<tr><td colspan=\"3\"><h3>%u. %s</h3><p><b>%s</b>: %s<br>kernel: %s; "
		"cursor mode: %s; %s; %s</p></td></tr>\n<tr>"
		"<td><figure><img src=\"%02u-shown.png\"><figcaption>shown. %s</figcaption></figure></td>"
		"<td><figure><img src=\"%02u-meant.png\"><figcaption>meant</figcaption></figure></td>",
		n, sh->chapter, sh->client, sh->what, sh->kernel_said, mode,
		artifact ? "<span class=\"bad\">cursor artifact</span>" :
			   "<span class=\"good\">no artifact</span>",
		diff ? "<span class=\"bad\">not as meant</span>" :
		       "<span class=\"good\">as meant</span>",
		n, sh->caption, n);
	if (diff)
		fprintf(html, "<td><figure><img src=\"%02u-diff.png\"><figcaption>%ld pixels differ "
			"from what was meant</figcaption></figure></td></tr>\n", n, diff);
	else
		fputs("<td></td></tr>\n", html);
}

static void html_end(void)
{
	if (!html)
		return;
	fputs("</table>\n<p>Produced by <code>make demo</code> (demo/kms_story.c) on the patched "
	      "kernel in QEMU.</p></body></html>\n", html);
	fclose(html);
}

/* ---- one shot ----------------------------------------------------------- */

/*
 * DRM_CLIENT_CAP_NO_LEGACY_CURSOR holds until its file is closed: the
 * opted-in compositor is a file of its own, DRM master while it commits the
 * rig's scenes (framebuffers and property ids are the device's).
 */
static int plain_fd = -1, holder_fd = -1;

static int opt_in(void)
{
	int fd = kms_make_holder(kms_open_driver("vkms"));
	int ret = 0;

	if (fd < 0)
		return fd;
	if (drmDropMaster(rig.fd) || drmSetMaster(fd))
		ret = -errno;
	if (ret) {
		drmSetMaster(rig.fd);
		close(fd);
		return ret;
	}
	plain_fd = rig.fd;
	holder_fd = fd;
	rig.fd = fd;
	rig.kms.fd = fd;
	return 0;
}

static void opt_out(void)
{
	if (holder_fd < 0)
		return;
	drmDropMaster(holder_fd);
	drmSetMaster(plain_fd);
	rig.fd = plain_fd;
	rig.kms.fd = plain_fd;
	close(holder_fd);
	holder_fd = -1;
}

static int reset_all(void)
{
	opt_out();
	drmModeSetCursor(rig.fd, rig.kms.crtc_id, 0, 0, 0);
	vkms_set_skip_validation(rig.debugfs, false);
	return rig_reset(&rig);
}

/* The ideal picture of @s: composed with the cursor as a plane of its own. */
static int capture_ideal(const struct scene *s, struct image *img)
{
	int ret;

	set_per_pipe(false);
	ret = reset_all() ?: scene_capture(&rig, s, img);
	set_per_pipe(true);
	return ret;
}

/*
 * Records the frame on screen now against @meant. The primary buffer may
 * hold a composited video: it is redrawn afterwards either way.
 */
static bool plane_on(uint32_t plane_id)
{
	uint64_t fb = 0;

	kms_prop_value(rig.fd, plane_id, DRM_MODE_OBJECT_PLANE, "FB_ID", &fb);
	return fb != 0;
}

/*
 * The layout the kernel holds, read back from it: which of @meant's planes
 * are on and where the cursor is. Refused commits and moves leave the
 * previous state, which is what the screen must show.
 */
static void held_by_kernel(const struct scene *meant, struct scene *held)
{
	uint64_t x = 0, y = 0;

	*held = *meant;
	held->primary.on = plane_on(rig.kms.primary_id);
	for (int i = 0; i < SCENE_MAX_OVERLAYS; i++)
		held->overlay[i].on = plane_on(rig.kms.overlay_ids[i]);
	held->cursor.on = plane_on(rig.kms.cursor_id);
	kms_prop_value(rig.fd, rig.kms.cursor_id, DRM_MODE_OBJECT_PLANE, "CRTC_X", &x);
	kms_prop_value(rig.fd, rig.kms.cursor_id, DRM_MODE_OBJECT_PLANE, "CRTC_Y", &y);
	held->cursor.x = (int32_t)x;
	held->cursor.y = (int32_t)y;
}

/*
 * Records the frame on screen now. An artifact is a difference from the
 * ideal picture of the state the kernel holds (the cursor a plane of its
 * own, emulation off, same buffers): a doubled, cut or scaled cursor. "As
 * meant" compares with the layout the client asked for, so a refused
 * layout or a cursor left behind by a refused move counts there only. The
 * primary buffer may hold a composited video until both ideal pictures are
 * taken; it is redrawn in between.
 */
static void record(const struct shot *sh, const struct scene *meant)
{
	struct image shown, want, ideal;
	struct cursor_state cs;
	char name[32], mode[32] = "-";
	long diff = -1, artifact = -1;
	struct scene held;
	int ret;

	if (image_alloc(&shown) || image_alloc(&want) || image_alloc(&ideal)) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	ret = scene_capture(&rig, NULL, &shown);
	if (!ret && !vkms_read_cursor_state(rig.debugfs, &cs))
		snprintf(mode, sizeof(mode), "%s", cursor_mode_name(cs.mode));
	held_by_kernel(meant, &held);
	if (!ret)
		ret = capture_ideal(&held, &ideal);
	draw_desktop(&rig.primary_fb);
	if (!ret)
		ret = capture_ideal(meant, &want);
	if (!ret) {
		diff = image_diff(&shown, &want, NULL, NULL);
		artifact = image_diff(&shown, &ideal, NULL, NULL);
	}
	shots++;
	if (ret || diff < 0 || artifact < 0) {
		fprintf(stderr, "kms_story: frame %u: capture failed: %s\n", shots,
			strerror(ret ? -ret : EINVAL));
		exit(1);
	}
	artifacts += artifact > 0;
	not_as_meant += diff > 0;
	snprintf(name, sizeof(name), "%02u-shown.png", shots);
	ret = write_png(name, &shown, NULL);
	snprintf(name, sizeof(name), "%02u-meant.png", shots);
	ret = ret ?: write_png(name, &want, NULL);
	snprintf(name, sizeof(name), "%02u-diff.png", shots);
	if (diff)
		ret = ret ?: write_png(name, &shown, &want);
	if (ret) {
		fprintf(stderr, "writing %s/%s: %s\n", outdir, name, strerror(-ret));
		exit(1);
	}
	printf("| %2u | %-28s | %-19s | %-40s | %-9s | %-8s | %-8s |\n", shots, sh->chapter,
	       sh->client, sh->kernel_said, mode, artifact ? "yes" : "no", diff ? "no" : "yes");
	html_row(shots, sh, mode, artifact, diff);
	image_free(&shown);
	image_free(&want);
	image_free(&ideal);
}

static const char *verdict(int ret)
{
	return ret ? (ret == -EINVAL ? "EINVAL" : strerror(-ret)) : "ok";
}

/*
 * A ChromeOS-style client: planes in one atomic commit, then the cursor
 * through the legacy ioctls, which the kernel checks on their own.
 */
static int chrome_planes(const struct scene *s)
{
	struct scene planes = *s;

	planes.cursor.on = false;
	return scene_commit(&rig, &planes, 0);
}

/* Moves first, so that the cursor never appears where it was last time. */
static int legacy_cursor_to(enum where w)
{
	if (drmModeMoveCursor(rig.fd, rig.kms.crtc_id, cursor_at[w].x, cursor_at[w].y) ||
	    drmModeSetCursor(rig.fd, rig.kms.crtc_id, legacy_cursor.handle, CURSOR_SIZE,
			     CURSOR_SIZE))
		return -errno;
	return 0;
}

static void bug(enum where w, const char *caption)
{
	struct shot sh = { "the bug: no check", "ChromeOS-style", NULL,
			   NULL, caption };
	char said[64], what[128];
	struct scene s;
	int planes, cursor;

	layout(&s, true, true, w);
	reset_all();
	vkms_set_skip_validation(rig.debugfs, true);
	planes = chrome_planes(&s);
	cursor = legacy_cursor_to(w);
	snprintf(said, sizeof(said), "planes %s; cursor %s", verdict(planes), verdict(cursor));
	snprintf(what, sizeof(what), "4 planes (video scaled 2x), legacy cursor %s",
		 cursor_at[w].name);
	sh.what = what;
	sh.kernel_said = said;
	record(&sh, &s);
}

/*
 * The client's answer to a refused layout, as ChromeOS and libliftoff do:
 * draw the video into the primary buffer and use one plane less.
 */
static int without_video_plane(struct scene *s)
{
	composite_video_into_primary();
	s->overlay[0].on = false;
	return chrome_planes(s);
}

/*
 * A ChromeOS-style frame: its planes in one atomic commit, without the
 * video's plane if that is refused, then the legacy cursor to @w; what the
 * kernel said goes into @said. Returns the planes' commit result.
 */
static int chrome_frame(struct scene *s, enum where w, char *said, size_t len)
{
	unsigned int n = hw_planes(s);
	int planes = chrome_planes(s);
	int fallback = planes ? without_video_plane(s) : 0;
	int cursor = legacy_cursor_to(w);

	snprintf(said, len, "%u planes %s%s; cursor %s", n, verdict(planes),
		 planes ? (fallback ? ", 3 EINVAL" : ", 3 ok") : "", verdict(cursor));
	return planes;
}

static void guarded(void)
{
	struct shot sh = { "conservative: keep a pipe",
			   "ChromeOS-style", NULL, NULL, NULL };
	char said[96];
	struct scene s, meant;
	int planes;

	layout(&meant, true, true, EDGE);
	s = meant;
	reset_all();
	set_protect_legacy(true);
	planes = chrome_frame(&s, EDGE, said, sizeof(said));
	sh.what = "4 planes (video scaled 2x), legacy cursor over the video's left edge";
	sh.kernel_said = said;
	sh.caption = planes ? "The video overlay is refused: all four pipes would be in use and "
			      "a later legacy cursor over it could not be shown right. The "
			      "client composites the video into its primary buffer (GPU work, "
			      "power); the cursor then gets the free pipe." :
			      "Unexpected: the conservative rule accepted the layout.";
	record(&sh, &meant);
}

static void unguarded(void)
{
	struct shot sh = { "no reserve for legacy", "ChromeOS-style", NULL, NULL,
			   "protect_legacy_cursor=0: the four planes are accepted and the cursor "
			   "shows right over the desktop; the legacy move over the video's edge "
			   "is refused (no pipe free, per-plane copies would be wrong), so the "
			   "cursor stays behind: right pixels, wrong place." };
	char said[96];
	struct scene s;
	int planes, cursor;

	layout(&s, true, true, EDGE);
	reset_all();
	set_protect_legacy(false);
	planes = chrome_planes(&s);
	legacy_cursor_to(DESKTOP);
	cursor = drmModeMoveCursor(rig.fd, rig.kms.crtc_id, cursor_at[EDGE].x,
				   cursor_at[EDGE].y) ? -errno : 0;
	snprintf(said, sizeof(said), "planes %s; move to edge %s", verdict(planes),
		 verdict(cursor));
	sh.what = "4 planes (video scaled 2x), legacy cursor from the desktop to the video's edge";
	sh.kernel_said = said;
	record(&sh, &s);
	set_protect_legacy(true);
}

static void modes(bool scaled, unsigned int planes_wanted, const char *caption)
{
	struct shot sh = { scaled ? "modes: a pipe is free" : "modes: video 1:1",
			   "ChromeOS-style", NULL, NULL, caption };
	char said[64], what[128];
	struct scene s;
	int planes, cursor;

	layout_scaled(&s, true, planes_wanted == 4, EDGE, scaled);
	if (!scaled)
		draw_video(&rig.overlay_fb[0][0], 2);
	reset_all();
	planes = chrome_planes(&s);
	cursor = legacy_cursor_to(EDGE);
	snprintf(said, sizeof(said), "planes %s; cursor %s", verdict(planes), verdict(cursor));
	snprintf(what, sizeof(what), "%u planes (video %s), legacy cursor %s", hw_planes(&s),
		 scaled ? "scaled 2x" : "1:1", cursor_at[EDGE].name);
	sh.what = what;
	sh.kernel_said = said;
	record(&sh, &s);
	draw_video(&rig.overlay_fb[0][0], 1);
}

/*
 * amdgpu's own rule since Linux 6.11 (vkms.amdgpu_cursor_rule), the same
 * for every client and blind to where the cursor is: a scaled video needs
 * the cursor on a pipe of its own. As released, a video scaled in one
 * direction only does not, whatever that does to the cursor; with
 * amdgpu's fix it does.
 */
static void amdgpu_rule(enum amdgpu_rule rule, bool one_axis, enum where w, const char *caption)
{
	bool fixed = rule == AMDGPU_RULE_FIXED;
	struct shot sh = { one_axis ? (fixed ? "amdgpu rule, fixed: video 2x tall" :
					       "amdgpu 6.11 rule: video 2x tall") :
				      "amdgpu 6.11 rule: four planes",
			   "ChromeOS-style", NULL, NULL, caption };
	char said[96], what[128];
	struct scene s, meant;

	layout(&meant, true, !one_axis, w);
	if (one_axis)
		meant.overlay[0].w = VIDEO_SRC_W;
	s = meant;
	reset_all();
	set_amdgpu_rule(rule);
	chrome_frame(&s, w, said, sizeof(said));
	snprintf(what, sizeof(what), "%u planes (video scaled 2x%s), legacy cursor %s",
		 hw_planes(&meant), one_axis ? " in height only" : "", cursor_at[w].name);
	sh.what = what;
	sh.kernel_said = said;
	record(&sh, &meant);
	set_amdgpu_rule(AMDGPU_RULE_OFF);
}

static void opted_in(enum where w, const char *caption)
{
	struct shot sh = { "the fix: opt-in", "opted-in compositor", NULL,
			   NULL, caption };
	char said[96], what[128];
	struct scene s, meant;
	int cap, test, fallback = 0, ret;

	layout(&meant, true, true, w);
	s = meant;
	reset_all();
	cap = opt_in();
	/* A compositor tests its layout first, then commits what passed. */
	test = scene_commit(&rig, &s, DRM_MODE_ATOMIC_TEST_ONLY);
	if (test) {
		composite_video_into_primary();
		s.overlay[0].on = false;
	}
	ret = scene_commit(&rig, &s, 0);
	if (test)
		fallback = ret;
	snprintf(said, sizeof(said), "cap %s; 4 planes+cursor %s%s", cap ? "EINVAL" : "ok",
		 verdict(test), test ? (fallback ? ", 3 EINVAL" : ", 3 ok") : "");
	snprintf(what, sizeof(what), "4 planes (video scaled 2x) and the cursor %s, one atomic "
		 "commit (%u planes on pipes)", cursor_at[w].name, hw_planes(&s));
	sh.what = what;
	sh.kernel_said = said;
	record(&sh, &meant);
}

int main(int argc, char **argv)
{
	int ret;

	outdir = argc > 1 ? argv[1] : "/tmp/demo";
	mkdir(outdir, 0755);
	ret = rig_open(&rig);
	if (!ret)
		ret = kms_fb_create(rig.fd, CURSOR_SIZE, CURSOR_SIZE, DRM_FORMAT_ARGB8888,
				    &legacy_cursor);
	if (ret) {
		fprintf(stderr, "kms_story: no vkms with overlays and writeback: %s\n",
			strerror(-ret));
		return 1;
	}
	draw_arrow(&legacy_cursor);
	memset(rig.cursor_fb.pixels, 0, rig.cursor_fb.size);
	draw_arrow(&rig.cursor_fb);
	draw_desktop(&rig.primary_fb);
	draw_video(&rig.overlay_fb[0][0], 1);
	draw_badge(&rig.overlay_fb[1][0], 0xffd06020);
	draw_badge(&rig.overlay_fb[2][0], 0xff7040b0);
	set_hw_pipes(HW_PIPES_DEFAULT);
	set_per_pipe(true);
	html_begin();

	printf("| %2s | %-28s | %-19s | %-40s | %-9s | %-8s | %-8s |\n", "#", "scenario", "client",
	       "kernel said", "cursor", "artifact", "as meant");
	printf("|----|------------------------------|---------------------|"
	       "------------------------------------------|-----------|----------|----------|\n");
	bug(EDGE, "Per-plane hardware without a check (amdgpu after the 2021 revert, for a "
		  "client like this): the desktop pipe draws the arrow, the video pipe draws "
		  "it again, twice as large and cut at the video's edge.");
	bug(INSIDE, "Inside the video the desktop pipe's copy is hidden (a pipe above covers "
		    "it) but the video pipe's copy is scaled like the video: the arrow is twice "
		    "its size.");
	guarded();
	unguarded();
	modes(true, 2, "Two planes: a pipe is free, so the kernel gives the cursor a pipe of its "
		       "own (dedicated mode, like amdgpu's overlay cursor in 6.11), wherever the "
		       "cursor goes: a later legacy move needs no new check.");
	modes(false, 4, "An unscaled opaque video: each pipe's copy is exactly the part of the "
			"cursor that pipe shows, so native copies are right anywhere and all four "
			"pipes serve planes.");
	opted_in(DESKTOP, "The opted-in compositor keeps all four planes, which the conservative "
			  "rule refuses to a legacy client: no pipe is kept in reserve because "
			  "this client will never move the cursor behind the kernel's back.");
	opted_in(EDGE, "Over the video's edge the precise rule refuses the four planes for this "
		       "cursor; the compositor composites the video for these frames and the "
		       "cursor gets the freed pipe.");
	if (have_amdgpu_rule()) {
		amdgpu_rule(AMDGPU_RULE_RELEASED, false, DESKTOP,
			    "amdgpu's rule (6.11 and later) decides the cursor mode only while "
			    "the cursor is on: the four planes pass without it. The legacy "
			    "SetCursor that follows needs a pipe of its own (a plane is scaled, "
			    "wherever the cursor is), none is free, and it fails: this client "
			    "has no cursor at all.");
		amdgpu_rule(AMDGPU_RULE_RELEASED, true, INSIDE,
			    "A video scaled in one direction only keeps the native cursor under "
			    "amdgpu's rule as released (the scales must differ in both "
			    "directions): the video pipe's copy of the arrow is stretched to "
			    "twice its height.");
		amdgpu_rule(AMDGPU_RULE_FIXED, true, INSIDE,
			    "The same frame with amdgpu's fix (a scale that differs in either "
			    "direction): the cursor gets a pipe of its own and keeps its shape. "
			    "The fix is for every client; this one does not opt in to anything.");
	}
	html_end();
	reset_all();
	set_per_pipe(false);
	printf("%u frames: %u with a cursor artifact, %u not as the client meant\n", shots,
	       artifacts, not_as_meant);
	rig_close(&rig);
	return 0;
}
