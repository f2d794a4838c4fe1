// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor_oracle.h"
#include "tap.h"

const char *const policy_name[N_POLICIES] = {
	"no-legacy-cursor", "guarded", "unguarded", "amdgpu-fixed", "amdgpu-released", "validate-overlay",
};

struct rig rig;
struct image img_pipes, img_ideal, img_scratch, img_ref;
struct image img_shown[5];

void check_setup(int ret, const char *what)
{
	if (ret) {
		tap_diag("setup: %s failed: %s", what, strerror(-ret));
		exit(1);
	}
}

void hw_pipes(unsigned int n)
{
	static bool warned;
	int ret = set_hw_pipes(n);

	if (ret && !warned)
		tap_diag("setting hw_pipes=%u failed: %s", n, strerror(-ret));
	warned |= ret != 0;
}

struct cursor_state cursor_state_now(void)
{
	static bool warned;
	struct cursor_state cs = { .mode = CURSOR_MODES };
	int ret = vkms_read_cursor_state(rig.debugfs, &cs);

	if (ret) {
		if (!warned)
			tap_diag("reading vkms_cursor_state failed: %s", strerror(-ret));
		warned = true;
		cs.mode = CURSOR_MODES;
	}
	return cs;
}

static int state_diags_left = 40;

void state_diag(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (state_diags_left <= 0)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	tap_diag("%s", buf);
	if (--state_diags_left == 0)
		tap_diag("(further diagnostics about single states are not shown)");
}

/* ---- scenes ----------------------------------------------------------------- */

unsigned int scene_planes(const struct scene *s)
{
	unsigned int n = s->primary.on;

	for (int i = 0; i < SCENE_MAX_OVERLAYS; i++)
		n += s->overlay[i].on;
	return n;
}

void scene_with(struct scene *s, const struct plane_cfg overlays[SCENE_MAX_OVERLAYS],
		struct cursor_cfg cur)
{
	scene_default(s);
	/* An overlay that is off keeps the default zpos of its slot. */
	for (int i = 0; i < SCENE_MAX_OVERLAYS; i++)
		if (overlays[i].on)
			s->overlay[i] = overlays[i];
	s->cursor = cur;
}

struct plane_cfg overlay(bool translucent, int x, int y, unsigned int w, unsigned int h,
			 unsigned int src_w, unsigned int src_h, unsigned int zpos)
{
	return (struct plane_cfg) {
		.on = true, .translucent = translucent, .x = x, .y = y, .w = w, .h = h,
		.src_w = src_w, .src_h = src_h, .zpos = zpos,
	};
}

struct cursor_cfg cursor(int x, int y, unsigned int w, unsigned int h)
{
	return (struct cursor_cfg) { .on = true, .x = x, .y = y, .w = w, .h = h };
}

/* ---- policies ----------------------------------------------------------------- */

unsigned int silent_refusals;

bool give_master(int from, int to)
{
	drmDropMaster(from);
	return drmSetMaster(to) == 0;
}

void commit_from(int fd)
{
	static bool warned;
	int ret = rig_commit_from(&rig, fd);

	if (ret && !warned) {
		tap_diag("handing master to the %s file failed: %s",
			 fd == rig.holder_fd ? "cap holder's" : "plain", strerror(-ret));
		warned = true;
	}
}

void set_policy(enum policy p)
{
	commit_from(p == NO_LEGACY ? rig.holder_fd : rig.plain_fd);
	set_protect_legacy(p != UNGUARDED);
	set_amdgpu_rule(p == AMDGPU_RULE ? AMDGPU_RULE_FIXED :
			p == AMDGPU_RELEASED ? AMDGPU_RULE_RELEASED : AMDGPU_RULE_OFF);
}

int commit_raw(const struct scene *s, enum policy p, uint32_t flags)
{
	int ret;

	set_policy(p);
	kmsg_mark();
	ret = scene_commit(&rig, s, flags);
	commit_from(rig.plain_fd);
	return ret;
}

/* Every refusal must say why in the log. */
int commit_as(const struct scene *s, enum policy p, uint32_t flags)
{
	int ret = commit_raw(s, p, flags);

	if (ret && ret != -EINVAL)
		tap_diag("unexpected error %s from a commit", strerror(-ret));
	if (ret == -EINVAL && !kmsg_seen("per-plane cursor:", NULL))
		silent_refusals++;
	return ret;
}

bool accepted(const struct scene *s, enum policy p)
{
	return commit_as(s, p, DRM_MODE_ATOMIC_TEST_ONLY) == 0;
}

static bool contains(const struct plane_cfg *outer, const struct plane_cfg *inner)
{
	return outer->x <= inner->x && outer->y <= inner->y &&
	       outer->x + (int)outer->w >= inner->x + (int)inner->w &&
	       outer->y + (int)outer->h >= inner->y + (int)inner->h;
}

/* amdgpu's validate_overlay(): an enabled overlay must cover the primary plane. */
static bool validate_overlay_accepts(const struct scene *s)
{
	for (int i = 0; i < SCENE_MAX_OVERLAYS; i++)
		if (s->overlay[i].on && !contains(&s->overlay[i], &s->primary))
			return false;
	return true;
}

bool verdict(const struct scene *s, enum policy p)
{
	if (amdgpu_policy(p) && !have_amdgpu_rule())
		return false;
	return p == VALIDATE_OVERLAY_RULE ? validate_overlay_accepts(s) : accepted(s, p);
}

int reset_state(void)
{
	struct scene s;

	/*
	 * amdgpu's rule stays in force after a commit made under it, so that
	 * the capture commits that follow keep its mode, as amdgpu would.
	 */
	set_amdgpu_rule(AMDGPU_RULE_OFF);
	scene_default(&s);
	return scene_commit(&rig, &s, 0);
}

/* ---- the oracle and the software reference ----------------------------------- */

long oracle(const struct scene *s, int *x, int *y)
{
	int ret;

	vkms_set_skip_validation(rig.debugfs, true);
	set_per_pipe(true);
	ret = scene_capture(&rig, s, &img_pipes);
	set_per_pipe(false);
	if (!ret)
		ret = scene_capture(&rig, s, &img_ideal);
	set_per_pipe(true);
	vkms_set_skip_validation(rig.debugfs, false);
	if (ret)
		return ret;
	return image_diff(&img_pipes, &img_ideal, x, y);
}

/*
 * Native for any cursor cannot be seen from here, so native and dedicated
 * both pass where a pipe is free and the native picture is right.
 */
bool mode_allowed(const struct cursor_state *cs, unsigned int planes, unsigned int pipes,
		  bool native_right)
{
	bool free_pipe = planes + 1 <= pipes;

	if (cs->hw_pipes != pipes || cs->pipes_used < planes || cs->pipes_used > planes + 1 ||
	    cs->pipes_used > pipes || (planes < pipes && !cs->legacy_safe))
		return false;
	if (cs->mode == CURSOR_DEDICATED)
		return free_pipe;
	if (cs->mode == CURSOR_NATIVE)
		return native_right;
	return false;
}

/*
 * The per-pipe picture from the uAPI alone: each plane as the scene commits
 * it (destination, source from 0,0, zpos, format), the cursor plane's
 * rectangle and its pattern. Written from the sampling rule the helper
 * documents, not from the helper, so that a copy the helper places, scales
 * or cuts elsewhere shows as a mismatch.
 */
struct ref_plane {
	unsigned int pattern;	/* pattern_plane()'s plane: 0 primary, i + 1 overlay i */
	bool translucent, scaled;
	bool copy;		/* draws its copy of the cursor */
	int x1, y1, x2, y2;	/* destination on the CRTC: only what it shows */
	int64_t ox, oy;		/* source column and row of the cursor's first pixel */
	int sx[SCENE_W], sy[SCENE_H];	/* source pixel under each CRTC column and row */
};

static int64_t floor_div(int64_t num, int64_t den)
{
	return num / den - (num % den < 0);
}

/*
 * Nearest sample at the centre of destination pixel @i: the source
 * coordinate (i + 1/2) * src / dst, in whole pixels. Unscaled axes take
 * the pixel itself, so no rounding can move them.
 */
static int src_pixel(unsigned int dst_len, unsigned int src_len, int i)
{
	if (src_len == dst_len)
		return i;
	return (int)floor_div((2 * (int64_t)i + 1) * src_len, 2 * (int64_t)dst_len);
}

/*
 * The source pixel into which the cursor's edge at @offset destination
 * pixels from the plane's edge maps: the copy starts there, at the
 * cursor's own size in source pixels, so it is scaled like the plane.
 * REF_ORIGIN_UP takes the next pixel whenever the edge falls inside one,
 * the control that must not match.
 */
static int64_t cursor_origin(enum ref_rule rule, unsigned int dst_len, unsigned int src_len,
			     int64_t offset)
{
	int64_t num = offset * src_len;

	return rule == REF_ORIGIN_UP ? -floor_div(-num, dst_len) : floor_div(num, dst_len);
}

/*
 * One axis of a plane in 16.16 source and whole destination pixels, cut to
 * [0, @clip_end) as the DRM core does: the clipped source length is the
 * source's share of what is left, rounded towards an unscaled plane.
 */
struct ref_axis {
	int64_t src_start, src_len;
	int dst_start, dst_len;
};

static int64_t clip_share(int64_t src_len, int64_t dst_len, int64_t cut, bool down)
{
	int64_t num = src_len * (dst_len - cut);

	if (src_len < dst_len << 16 && !down)
		return (num + dst_len - 1) / dst_len;
	return num / dst_len;
}

static struct ref_axis ref_axis_clipped(int dst, unsigned int dst_len, unsigned int src_len,
					int clip_end, bool down)
{
	struct ref_axis a = { 0, (int64_t)src_len << 16, dst, (int)dst_len };
	int64_t src_end = a.src_len;

	if (dst < 0) {
		a.src_len = clip_share(a.src_len, a.dst_len, -dst, down);
		a.src_start = src_end - a.src_len;
		a.dst_len += dst;
		a.dst_start = 0;
	}
	if (a.dst_start + a.dst_len > clip_end) {
		int cut = a.dst_start + a.dst_len - clip_end;

		a.src_len = clip_share(a.src_len, a.dst_len, cut, down);
		a.dst_len -= cut;
	}
	return a;
}

/* The source pixel under destination pixel @i of a clipped axis. */
static int clipped_src_pixel(const struct ref_axis *a, int i)
{
	if (a->src_len == (int64_t)a->dst_len << 16)
		return (int)(a->src_start >> 16) + i;
	return (int)((a->src_start + (2 * (int64_t)i + 1) * a->src_len / (2 * a->dst_len)) >> 16);
}

/* Where the cursor's edge at CRTC position @c maps in a clipped axis. */
static int64_t clipped_cursor_origin(const struct ref_axis *a, int c)
{
	int64_t offset = (int64_t)c - a->dst_start;

	if (a->src_len == (int64_t)a->dst_len << 16)
		return (a->src_start >> 16) + offset;
	return floor_div(a->src_start * a->dst_len + offset * a->src_len,
			 (int64_t)a->dst_len << 16);
}

static bool ref_plane_init(struct ref_plane *r, const struct plane_cfg *p, unsigned int pattern,
			   const struct cursor_cfg *c, enum ref_rule rule)
{
	r->pattern = pattern;
	r->translucent = p->translucent;
	r->scaled = p->src_w != p->w || p->src_h != p->h;
	r->copy = c->on;
	r->x1 = p->x < 0 ? 0 : p->x;
	r->y1 = p->y < 0 ? 0 : p->y;
	r->x2 = p->x + (int)p->w > SCENE_W ? SCENE_W : p->x + (int)p->w;
	r->y2 = p->y + (int)p->h > SCENE_H ? SCENE_H : p->y + (int)p->h;
	if (r->x1 >= r->x2 || r->y1 >= r->y2)
		return false;
	if (rule == REF_CORE_CLIP || rule == REF_CLIP_DOWN) {
		bool down = rule == REF_CLIP_DOWN;
		struct ref_axis ax = ref_axis_clipped(p->x, p->w, p->src_w, SCENE_W, down);
		struct ref_axis ay = ref_axis_clipped(p->y, p->h, p->src_h, SCENE_H, down);

		for (int x = r->x1; x < r->x2; x++)
			r->sx[x] = clipped_src_pixel(&ax, x - ax.dst_start);
		for (int y = r->y1; y < r->y2; y++)
			r->sy[y] = clipped_src_pixel(&ay, y - ay.dst_start);
		r->ox = clipped_cursor_origin(&ax, c->x);
		r->oy = clipped_cursor_origin(&ay, c->y);
		return true;
	}
	for (int x = r->x1; x < r->x2; x++)
		r->sx[x] = src_pixel(p->w, p->src_w, x - p->x);
	for (int y = r->y1; y < r->y2; y++)
		r->sy[y] = src_pixel(p->h, p->src_h, y - p->y);
	r->ox = cursor_origin(rule, p->w, p->src_w, (int64_t)c->x - p->x);
	r->oy = cursor_origin(rule, p->h, p->src_h, (int64_t)c->y - p->y);
	return true;
}

static bool ref_contains(const struct ref_plane *outer, const struct ref_plane *inner)
{
	return outer->x1 <= inner->x1 && outer->y1 <= inner->y1 &&
	       outer->x2 >= inner->x2 && outer->y2 >= inner->y2;
}

static bool ref_has(const struct ref_plane *p, int x, int y)
{
	return x >= p->x1 && x < p->x2 && y >= p->y1 && y < p->y2;
}

/*
 * The planes the CRTC shows, bottom first: by zpos, equal zpos in the order
 * of the plane ids (primary, then overlays), as the core normalizes it. A
 * plane's copy is off where a plane above shows all of what it shows (the
 * rule of the hardware the emulation follows: the pipe's cursor would be
 * hidden anyway, were the plane above opaque). Returns how many, or -1 for
 * a scene outside the reference's rules (rotated planes).
 */
static int ref_planes(const struct scene *s, enum ref_rule rule,
		      struct ref_plane r[SCENE_MAX_OVERLAYS + 1])
{
	const struct plane_cfg *p[SCENE_MAX_OVERLAYS + 1] = { &s->primary };
	unsigned int pattern[SCENE_MAX_OVERLAYS + 1] = { 0 };
	int n = s->primary.on, shown = 0;

	for (int i = 0; i < SCENE_MAX_OVERLAYS; i++) {
		if (!s->overlay[i].on)
			continue;
		p[n] = &s->overlay[i];
		pattern[n++] = i + 1;
	}
	/* Insertion sort: stable, so equal zpos keeps the order of the ids. */
	for (int i = 1; i < n; i++) {
		for (int j = i; j > 0 && p[j - 1]->zpos > p[j]->zpos; j--) {
			const struct plane_cfg *t = p[j];
			unsigned int tp = pattern[j];

			p[j] = p[j - 1];
			pattern[j] = pattern[j - 1];
			p[j - 1] = t;
			pattern[j - 1] = tp;
		}
	}
	for (int i = 0; i < n; i++) {
		if (p[i]->rotation)
			return -1;
		shown += ref_plane_init(&r[shown], p[i], pattern[i], &s->cursor, rule);
	}
	for (int i = 0; i < shown; i++)
		for (int j = i + 1; j < shown; j++)
			r[i].copy &= !ref_contains(&r[j], &r[i]);
	return shown;
}

/* Premultiplied "over" of one 16-bit channel, to the nearest value. */
static uint32_t over(uint32_t src, uint32_t dst, uint32_t src_alpha)
{
	return (uint32_t)(((uint64_t)src * 0xffff + (uint64_t)dst * (0xffff - src_alpha) + 0x7fff) /
			  0xffff);
}

/*
 * @src over @dst, channels a, r, g, b from @first on. Most pixels are
 * opaque, and the reference runs on every pixel of thousands of states
 * under emulation: an opaque pixel is copied.
 */
static void blend(uint32_t dst[4], const uint32_t src[4], int first)
{
	for (int k = first; k < 4; k++)
		dst[k] = src[0] == 0xffff ? src[k] : over(src[k], dst[k], src[0]);
}

/* An ARGB8888 pattern pixel as 16-bit channels a, r, g, b. */
static void unpack(uint32_t argb, uint32_t px[4])
{
	for (int c = 0; c < 4; c++)
		px[c] = (argb >> (24 - 8 * c) & 0xff) * 257;
}

bool reference(const struct scene *s, enum ref_rule rule, struct image *img,
	       struct ref_stats *stats)
{
	struct ref_plane r[SCENE_MAX_OVERLAYS + 1];
	const struct cursor_cfg *c = &s->cursor;
	unsigned int shown_copies = 0;
	int n = ref_planes(s, rule, r);

	if (n < 0)
		return false;
	for (unsigned int y = 0; y < img->h; y++) {
		for (unsigned int x = 0; x < img->w; x++) {
			/* On black, opaque: vkms' background. */
			uint32_t out[4] = { 0xffff, 0, 0, 0 };
			uint16_t *px = img->px + (y * img->w + x) * 4;
			int top_copy = -1, i = n;

			/* Nothing below the top opaque plane shows: start there. */
			while (i > 0 && !(ref_has(&r[i - 1], x, y) && !r[i - 1].translucent))
				i--;
			for (i = i ? i - 1 : 0; i < n; i++) {
				const struct ref_plane *p = &r[i];
				uint32_t plane[4], cur[4];
				int64_t u, v;

				if (!ref_has(p, x, y))
					continue;
				unpack(pattern_plane(p->pattern, p->translucent, p->sx[x], p->sy[y]),
				       plane);
				u = p->sx[x] - p->ox;
				v = p->sy[y] - p->oy;
				top_copy = -1;
				if (p->copy && u >= 0 && v >= 0 && u < c->w && v < c->h) {
					/*
					 * Into the plane's pixel, before the plane is
					 * blended: over a translucent plane the copy
					 * lets what is below show through too.
					 */
					unpack(pattern_cursor(u, v), cur);
					blend(plane, cur, 0);
					top_copy = i;
				}
				blend(out, plane, 1);
			}
			if (top_copy >= 0)
				shown_copies |= 1u << top_copy;
			px[0] = out[3];
			px[1] = out[2];
			px[2] = out[1];
		}
	}
	if (stats) {
		*stats = (struct ref_stats) { };
		for (int i = 0; i < n; i++) {
			if (!(shown_copies & 1u << i))
				continue;
			stats->copies_shown++;
			stats->scaled_copy |= r[i].scaled;
		}
	}
	return true;
}

/* ---- what is displayed ------------------------------------------------------- */

void report_diff(const struct image *a, const struct image *b, long diff, int x, int y)
{
	const uint16_t *pa = a->px + (y * a->w + x) * 4;
	const uint16_t *pb = b->px + (y * b->w + x) * 4;

	state_diag("%ld pixels differ, first at %d,%d: displayed %04x %04x %04x, ideal %04x %04x %04x",
		   diff, x, y, pa[2], pa[1], pa[0], pb[2], pb[1], pb[0]);
}

int capture_displayed(struct cursor_state *cs)
{
	int ret = scene_capture(&rig, NULL, &img_pipes);

	*cs = cursor_state_now();
	set_per_pipe(false);
	if (!ret)
		ret = scene_capture(&rig, NULL, &img_ideal);
	return ret;
}

long displayed_diff(struct cursor_state *cs)
{
	int ret, x = -1, y = -1;
	long diff;

	ret = capture_displayed(cs);
	set_per_pipe(true);
	/* Per pipe again, so that what follows starts from the mode vkms picks. */
	if (!ret)
		ret = scene_capture(&rig, NULL, &img_scratch);
	if (ret) {
		tap_diag("capturing the displayed state failed: %s", strerror(-ret));
		return ret;
	}
	diff = image_diff(&img_pipes, &img_ideal, &x, &y);
	if (diff)
		report_diff(&img_pipes, &img_ideal, diff, x, y);
	return diff;
}

char last_look[96];

bool look(enum cursor_mode want)
{
	struct cursor_state cs;
	long diff = displayed_diff(&cs);

	snprintf(last_look, sizeof(last_look), "cursor %s, %ld pixels differ",
		 cursor_mode_name(cs.mode), diff);
	return diff == 0 && (want == ANY_MODE || cs.mode == want);
}

bool look_ok(const char *name, int ret, enum cursor_mode want)
{
	if (ret)
		return tap_okf(false, name, "the commit failed: %s", strerror(-ret));
	return tap_okf(look(want), name, "want cursor %s: %s",
		       want == ANY_MODE ? "in any mode" : cursor_mode_name(want), last_look);
}

bool ret_ok(const char *name, int ret, int want)
{
	return tap_okf(ret == want, name, "returned %s", ret ? strerror(-ret) : "0");
}

/* ---- random states ----------------------------------------------------------- */

static uint32_t rnd_state;

void random_seed(uint32_t seed)
{
	rnd_state = seed ? seed : 1;
}

static uint32_t rnd(uint32_t n)
{
	/* xorshift32: reproducible from the seed on every libc. */
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return n ? rnd_state % n : 0;
}

/* Overlay @p on somewhere, at a random size and scale within vkms' limits. */
static void random_overlay(struct plane_cfg *p)
{
	static const unsigned int num[] = { 1, 1, 1, 1, 2, 1, 3, 2, 4, 1, 3 };
	static const unsigned int den[] = { 1, 1, 1, 1, 1, 2, 2, 3, 1, 4, 4 };
	unsigned int k = rnd(ARRAY_SIZE(num)), kh;

	p->on = true;
	p->translucent = rnd(3) == 0;
	if (rnd(5) == 0) {
		p->w = SCENE_W;
		p->h = SCENE_H;
	} else {
		p->w = 8 + rnd(SCENE_W - 8);
		p->h = 8 + rnd(SCENE_H - 8);
		p->x = (int)rnd(SCENE_W) - (int)p->w / 4;
		p->y = (int)rnd(SCENE_H) - (int)p->h / 4;
	}
	/* One overlay in four is scaled by another factor in height. */
	kh = rnd(4) ? k : rnd(ARRAY_SIZE(num));
	p->src_w = p->w * num[k] / den[k];
	p->src_h = p->h * num[kh] / den[kh];
	if (!p->src_w || !p->src_h || p->src_w * 4 < p->w || p->src_h * 4 < p->h ||
	    p->src_w > 4 * p->w || p->src_h > 4 * p->h) {
		p->src_w = p->w;
		p->src_h = p->h;
	}
}

bool scene_has_translucent(const struct scene *s)
{
	for (int i = 0; i < SCENE_MAX_OVERLAYS; i++)
		if (s->overlay[i].on && s->overlay[i].translucent)
			return true;
	return false;
}

void random_scene(struct scene *s)
{
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
	/* The draws in this order: the states of a seed must not change. */
	for (unsigned int i = 0; i < overlays; i++) {
		s->overlay[i].zpos = z[i + 1];
		random_overlay(&s->overlay[i]);
	}
	if (rnd(10)) {
		s->cursor.on = true;
		s->cursor.w = 1 + rnd(SCENE_CURSOR_MAX);
		s->cursor.h = 1 + rnd(SCENE_CURSOR_MAX);
		s->cursor.x = (int)rnd(SCENE_W + s->cursor.w) - (int)s->cursor.w;
		s->cursor.y = (int)rnd(SCENE_H + s->cursor.h) - (int)s->cursor.h;
	}
}

/* ---- legacy ioctls ------------------------------------------------------------ */

int legacy_move(int x, int y)
{
	return neg_errno(drmModeMoveCursor(rig.fd, rig.kms.crtc_id, x, y));
}

bool crtc_active(int fd)
{
	uint64_t active = 0;

	kms_prop_value(fd, rig.kms.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", &active);
	return active;
}
