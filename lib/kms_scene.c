// SPDX-License-Identifier: MIT
#include "kms_scene.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <drm_fourcc.h>

/* A high refresh rate keeps the wait for the next composition short. */
#define SCENE_REFRESH 240
/* Blending in another order rounds differently: up to one unit per blend. */
#define ROUNDING_TOLERANCE 4


static uint32_t premultiply(uint32_t a, uint32_t r, uint32_t g, uint32_t b)
{
	r = r * a / 0xff;
	g = g * a / 0xff;
	b = b * a / 0xff;
	return a << 24 | r << 16 | g << 8 | b;
}

uint32_t pattern_plane(unsigned int plane, bool translucent, unsigned int x, unsigned int y)
{
	uint32_t r = (x * 7 + plane * 50) & 0xff;
	uint32_t g = (y * 5 + plane * 90) & 0xff;
	uint32_t b = (plane * 60 + (x ^ y)) & 0xff;

	return premultiply(translucent ? 0x80 : 0xff, r, g, b);
}

uint32_t pattern_cursor(unsigned int u, unsigned int v)
{
	/* Never transparent, so that every misplaced cursor pixel shows. */
	return premultiply((u + v) & 1 ? 0xff : 0xa0, 0xff - u, 0x40 + v, 0xe0);
}

static void fill(struct kms_fb *fb, unsigned int plane, bool translucent, bool cursor)
{
	for (uint32_t y = 0; y < fb->height; y++)
		for (uint32_t x = 0; x < fb->width; x++)
			fb->pixels[y * (fb->pitch / 4) + x] = cursor ?
				pattern_cursor(x, y) : pattern_plane(plane, translucent, x, y);
}

static void small_mode(drmModeModeInfo *m, unsigned int refresh)
{
	memset(m, 0, sizeof(*m));
	m->hdisplay = SCENE_W;
	m->hsync_start = SCENE_W + 4;
	m->hsync_end = SCENE_W + 8;
	m->htotal = SCENE_W + 16;
	m->vdisplay = SCENE_H;
	m->vsync_start = SCENE_H + 2;
	m->vsync_end = SCENE_H + 4;
	m->vtotal = SCENE_H + 8;
	m->vrefresh = refresh;
	m->clock = m->htotal * m->vtotal * refresh / 1000;
	m->type = DRM_MODE_TYPE_USERDEF;
	snprintf(m->name, sizeof(m->name), "%ux%u", SCENE_W, SCENE_H);
}

void scene_default(struct scene *s)
{
	memset(s, 0, sizeof(*s));
	s->primary = (struct plane_cfg) {
		.on = true, .w = SCENE_W, .h = SCENE_H,
		.src_w = SCENE_W, .src_h = SCENE_H, .zpos = 0,
	};
	for (int i = 0; i < SCENE_MAX_OVERLAYS; i++)
		s->overlay[i].zpos = i + 1;
}

/*
 * Property ids of the rig's objects, looked up once: a lookup by name is a
 * round of GETPROPERTY ioctls per property, which dominated the time of
 * every commit under emulation. Ids do not change while the device exists;
 * @name is always a string literal here.
 */
static uint32_t rig_prop(struct rig *b, uint32_t obj, uint32_t type, const char *name)
{
	uint32_t id;

	for (unsigned int i = 0; i < b->n_props; i++)
		if (b->props[i].obj == obj && strcmp(b->props[i].name, name) == 0)
			return b->props[i].id;
	id = kms_prop_id(b->fd, obj, type, name);
	if (id && b->n_props < ARRAY_SIZE(b->props)) {
		b->props[b->n_props].obj = obj;
		b->props[b->n_props].name = name;
		b->props[b->n_props++].id = id;
	}
	return id;
}

static int rig_add(struct rig *b, drmModeAtomicReqPtr req, uint32_t obj, uint32_t type,
		   const char *name, uint64_t value)
{
	return kms_add_id(req, obj, rig_prop(b, obj, type, name), name, value);
}

/* A plane on the rig's CRTC, source from 0,0, scaled if the sizes differ. */
static int rig_add_plane(struct rig *b, drmModeAtomicReqPtr req, uint32_t plane,
			 uint32_t fb_id, uint32_t src_w, uint32_t src_h,
			 int32_t x, int32_t y, uint32_t w, uint32_t h)
{
	uint64_t v[KMS_PLANE_PROPS];
	int ret = 0;

	kms_plane_geometry(v, b->kms.crtc_id, fb_id, src_w, src_h, x, y, w, h);
	for (int i = 0; i < KMS_PLANE_PROPS; i++)
		ret |= rig_add(b, req, plane, DRM_MODE_OBJECT_PLANE, kms_plane_props[i], v[i]);
	return ret ? -EINVAL : 0;
}

static int add_plane(struct rig *b, drmModeAtomicReqPtr req, uint32_t plane_id,
		     const struct kms_fb *fb, const struct plane_cfg *p)
{
	uint32_t rotation = p->on && p->rotation ? p->rotation : DRM_MODE_ROTATE_0;
	int ret;

	/*
	 * A rotation stays until changed, also on a plane switched off:
	 * every scene sets it where the plane has the property, so that a
	 * scene is the whole state whatever was committed before.
	 */
	if (rig_prop(b, plane_id, DRM_MODE_OBJECT_PLANE, "rotation")) {
		if (rig_add(b, req, plane_id, DRM_MODE_OBJECT_PLANE, "rotation", rotation))
			return -EINVAL;
	} else if (rotation != DRM_MODE_ROTATE_0) {
		return -EOPNOTSUPP;
	}
	if (!p->on)
		return rig_add(b, req, plane_id, DRM_MODE_OBJECT_PLANE, "FB_ID", 0) |
		       rig_add(b, req, plane_id, DRM_MODE_OBJECT_PLANE, "CRTC_ID", 0);
	ret = rig_add_plane(b, req, plane_id, fb->fb_id, p->src_w, p->src_h,
			    p->x, p->y, p->w, p->h);
	if (!ret && rig_prop(b, plane_id, DRM_MODE_OBJECT_PLANE, "zpos"))
		ret = rig_add(b, req, plane_id, DRM_MODE_OBJECT_PLANE, "zpos", p->zpos);
	return ret;
}

static int build(struct rig *b, drmModeAtomicReqPtr req, const struct scene *s)
{
	const struct cursor_cfg *c = &s->cursor;
	int ret;

	ret = add_plane(b, req, b->kms.primary_id, &b->primary_fb, &s->primary);
	for (int i = 0; i < SCENE_MAX_OVERLAYS && !ret; i++)
		ret = add_plane(b, req, b->kms.overlay_ids[i],
				&b->overlay_fb[i][s->overlay[i].translucent], &s->overlay[i]);
	if (ret)
		return ret;
	if (!c->on)
		return rig_add(b, req, b->kms.cursor_id, DRM_MODE_OBJECT_PLANE, "FB_ID", 0) |
		       rig_add(b, req, b->kms.cursor_id, DRM_MODE_OBJECT_PLANE, "CRTC_ID", 0);
	return rig_add_plane(b, req, b->kms.cursor_id, b->cursor_fb.fb_id,
			     c->w, c->h, c->x, c->y, c->w, c->h);
}

int scene_commit(struct rig *b, const struct scene *s, uint32_t flags)
{
	drmModeAtomicReqPtr req = drmModeAtomicAlloc();
	int ret;

	if (!req)
		return -ENOMEM;
	ret = build(b, req, s);
	if (!ret)
		ret = (b->commit ?: kms_commit)(b->fd, req, flags);
	drmModeAtomicFree(req);
	return ret;
}

int scene_capture(struct rig *b, const struct scene *s, struct image *out)
{
	drmModeAtomicReqPtr req = drmModeAtomicAlloc();
	int32_t fence = -1;
	int ret = 0;

	if (!req)
		return -ENOMEM;
	if (s)
		ret = build(b, req, s);
	/* Pull the CRTC in, so that it is checked and composed anew. */
	ret |= rig_add(b, req, b->kms.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1);
	ret |= rig_add(b, req, b->wb_connector, DRM_MODE_OBJECT_CONNECTOR,
		       "WRITEBACK_FB_ID", b->wb_fb.fb_id);
	ret |= rig_add(b, req, b->wb_connector, DRM_MODE_OBJECT_CONNECTOR,
		       "WRITEBACK_OUT_FENCE_PTR", (uint64_t)(uintptr_t)&fence);
	if (!ret)
		ret = (b->commit ?: kms_commit)(b->fd, req, 0);
	drmModeAtomicFree(req);
	if (ret) {
		/* A refused job must not have installed its fence. */
		if (fence >= 0) {
			close(fence);
			return -EBADFD;
		}
		return ret;
	}
	if (fence >= 0) {
		/*
		 * After two lost jobs in a row, the next ones wait 2 s (two
		 * frames of the slowest mode) until one completes again: a
		 * program capturing thousands of frames from a broken vkms
		 * ends with named failures, not at the guest's time limit.
		 */
		static unsigned int lost;
		struct pollfd pfd = { .fd = fence, .events = POLLIN };

		ret = poll(&pfd, 1, lost >= 2 ? 2000 : KMS_WAIT_MS) == 1 ? 0 : -ETIMEDOUT;
		lost = ret ? lost + 1 : 0;
		close(fence);
	} else {
		ret = -EIO;
	}
	if (ret)
		return ret;
	for (unsigned int y = 0; y < out->h; y++)
		memcpy(out->px + y * out->w * 4,
		       (uint8_t *)b->wb_fb.pixels + y * b->wb_fb.pitch, out->w * 8);
	return 0;
}

int image_alloc(struct image *img)
{
	img->w = SCENE_W;
	img->h = SCENE_H;
	img->px = calloc(img->w * img->h * 4, sizeof(*img->px));
	return img->px ? 0 : -ENOMEM;
}

void image_free(struct image *img)
{
	free(img->px);
	img->px = NULL;
}

long image_diff(const struct image *a, const struct image *b, int *first_x, int *first_y)
{
	long count = 0;

	if (a->w != b->w || a->h != b->h)
		return -1;
	for (unsigned int y = 0; y < a->h; y++) {
		for (unsigned int x = 0; x < a->w; x++) {
			const uint16_t *pa = a->px + (y * a->w + x) * 4;
			const uint16_t *pb = b->px + (y * b->w + x) * 4;
			bool differs = false;

			for (int c = 0; c < 3; c++)
				differs |= abs((int)pa[c] - (int)pb[c]) > ROUNDING_TOLERANCE;
			if (differs && !count++ && first_x) {
				*first_x = x;
				*first_y = y;
			}
		}
	}
	return count;
}

void scene_describe(const struct scene *s, char *buf, size_t len)
{
	size_t n = snprintf(buf, len, "primary z%u", s->primary.zpos);

	for (int i = 0; i < SCENE_MAX_OVERLAYS && n < len; i++) {
		const struct plane_cfg *p = &s->overlay[i];

		if (p->on)
			n += snprintf(buf + n, len - n, "; ov%d %s %ux%u->%ux%u@%d,%d z%u", i,
				      p->translucent ? "argb" : "xrgb", p->src_w, p->src_h,
				      p->w, p->h, p->x, p->y, p->zpos);
	}
	if (n < len && s->cursor.on)
		snprintf(buf + n, len - n, "; cursor %ux%u@%d,%d", s->cursor.w, s->cursor.h,
			 s->cursor.x, s->cursor.y);
}

int rig_reset(struct rig *b)
{
	drmModeAtomicReqPtr req = drmModeAtomicAlloc();
	struct scene s;
	int ret = 0;

	scene_default(&s);
	ret |= rig_add(b, req, b->kms.connector_id, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID", 0);
	ret |= rig_add(b, req, b->wb_connector, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID",
		       b->kms.crtc_id);
	/*
	 * vkms' encoders cannot be cloned: a legacy SETCRTC put the virtual
	 * connector back on the CRTC, take it off for the writeback one.
	 */
	ret |= rig_add(b, req, b->kms.connector_id, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID", 0);
	ret |= rig_add(b, req, b->kms.crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID", b->mode_blob);
	ret |= rig_add(b, req, b->kms.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1);
	ret |= build(b, req, &s);
	if (!ret)
		ret = kms_commit(b->fd, req, DRM_MODE_ATOMIC_ALLOW_MODESET);
	drmModeAtomicFree(req);
	return ret;
}

int rig_set_refresh(struct rig *b, unsigned int refresh)
{
	drmModeAtomicReqPtr req;
	drmModeModeInfo mode;
	uint32_t blob;
	int ret;

	small_mode(&mode, refresh ? refresh : SCENE_REFRESH);
	if (drmModeCreatePropertyBlob(b->fd, &mode, sizeof(mode), &blob))
		return -errno;
	req = drmModeAtomicAlloc();
	ret = rig_add(b, req, b->kms.crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID", blob);
	if (!ret)
		ret = kms_commit(b->fd, req, DRM_MODE_ATOMIC_ALLOW_MODESET);
	drmModeAtomicFree(req);
	drmModeDestroyPropertyBlob(b->fd, blob);
	return ret;
}

/* A rig's own file of the vkms device; no cap holder yet. */
static int rig_open_file(struct rig *b)
{
	memset(b, 0, sizeof(*b));
	b->holder_fd = -1;
	b->fd = kms_open_driver("vkms");
	b->plain_fd = b->fd;
	return b->fd;
}

int rig_open(struct rig *b)
{
	int ret;

	if (rig_open_file(b) < 0)
		return b->fd;
	if (kms_set_cap(b->fd, DRM_CLIENT_CAP_ATOMIC, 1) ||
	    kms_set_cap(b->fd, DRM_CLIENT_CAP_WRITEBACK_CONNECTORS, 1))
		return -errno;
	ret = kms_probe(&b->kms, b->fd);
	if (ret)
		return ret;
	if (b->kms.overlay_count < SCENE_MAX_OVERLAYS || !b->kms.cursor_id)
		return -ENODEV;
	b->wb_connector = kms_find_writeback(b->fd);
	if (!b->wb_connector)
		return -ENODEV;
	ret = vkms_debugfs_dir(b->fd, b->debugfs, sizeof(b->debugfs));
	if (ret)
		return ret;

	small_mode(&b->mode, SCENE_REFRESH);
	if (drmModeCreatePropertyBlob(b->fd, &b->mode, sizeof(b->mode), &b->mode_blob))
		return -errno;

	ret = kms_fb_create(b->fd, SCENE_W, SCENE_H, DRM_FORMAT_XRGB8888, &b->primary_fb);
	for (int i = 0; i < SCENE_MAX_OVERLAYS && !ret; i++) {
		for (int t = 0; t < 2 && !ret; t++) {
			ret = kms_fb_create(b->fd, 4 * SCENE_W, 4 * SCENE_H,
					    t ? DRM_FORMAT_ARGB8888 : DRM_FORMAT_XRGB8888,
					    &b->overlay_fb[i][t]);
			if (!ret)
				fill(&b->overlay_fb[i][t], i + 1, t, false);
		}
	}
	if (!ret)
		ret = kms_fb_create(b->fd, SCENE_CURSOR_MAX, SCENE_CURSOR_MAX,
				    DRM_FORMAT_ARGB8888, &b->cursor_fb);
	if (!ret)
		ret = kms_fb_create(b->fd, SCENE_W, SCENE_H, DRM_FORMAT_XRGB16161616,
				    &b->wb_fb);
	if (ret)
		return ret;
	fill(&b->primary_fb, 0, false, false);
	fill(&b->cursor_fb, 0, false, true);
	return rig_reset(b);
}

void rig_open_or_exit(struct rig *b)
{
	int ret = rig_open(b);

	if (ret) {
		printf("# vkms set-up failed: %s\n", strerror(-ret));
		exit(1);
	}
}

int rig_attach_writeback(struct rig *b)
{
	drmModeAtomicReqPtr req = drmModeAtomicAlloc();
	int ret = 0;

	if (!req)
		return -ENOMEM;
	ret |= rig_add(b, req, b->wb_connector, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID",
		       b->kms.crtc_id);
	/*
	 * vkms' encoders cannot be cloned: a legacy SETCRTC put the virtual
	 * connector back on the CRTC, take it off for the writeback one.
	 */
	ret |= rig_add(b, req, b->kms.connector_id, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID", 0);
	ret |= rig_add(b, req, b->kms.crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID", b->mode_blob);
	ret |= rig_add(b, req, b->kms.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1);
	if (!ret)
		ret = kms_commit(b->fd, req, DRM_MODE_ATOMIC_ALLOW_MODESET);
	drmModeAtomicFree(req);
	return ret;
}

int rig_open_client(struct rig *client, const struct rig *main)
{
	if (rig_open_file(client) < 0)
		return client->fd;
	if (kms_set_cap(client->fd, DRM_CLIENT_CAP_ATOMIC, 1))
		return -errno;
	client->kms = main->kms;
	client->kms.fd = client->fd;
	client->wb_connector = main->wb_connector;
	client->mode_blob = main->mode_blob;
	client->mode = main->mode;
	memcpy(client->debugfs, main->debugfs, sizeof(client->debugfs));
	client->main = main;
	return 0;
}

/*
 * Creates @fb the first time, with the pattern of @same (the main rig's
 * buffer for the same plane, copied: computing it again is slow under
 * emulation), or only its framebuffer object again if it was removed
 * (fb_id cleared): the buffer keeps its pattern.
 */
static int client_fb(int fd, struct kms_fb *fb, const struct kms_fb *same, uint32_t format)
{
	uint32_t handles[4] = { fb->handle }, pitches[4] = { fb->pitch }, offsets[4] = { 0 };
	int ret;

	if (fb->fb_id)
		return 0;
	if (fb->handle)
		return drmModeAddFB2(fd, fb->width, fb->height, format, handles, pitches, offsets,
				     &fb->fb_id, 0) ? -errno : 0;
	ret = kms_fb_create(fd, same->width, same->height, format, fb);
	if (!ret && fb->size == same->size)
		memcpy(fb->pixels, same->pixels, fb->size);
	else if (!ret)
		ret = -EINVAL;
	return ret;
}

int rig_client_prepare(struct rig *c, const struct scene *s)
{
	int ret = 0;

	if (s->primary.on)
		ret = client_fb(c->fd, &c->primary_fb, &c->main->primary_fb, DRM_FORMAT_XRGB8888);
	for (int i = 0; i < SCENE_MAX_OVERLAYS && !ret; i++) {
		bool t = s->overlay[i].translucent;

		if (s->overlay[i].on)
			ret = client_fb(c->fd, &c->overlay_fb[i][t], &c->main->overlay_fb[i][t],
					t ? DRM_FORMAT_ARGB8888 : DRM_FORMAT_XRGB8888);
	}
	if (!ret && s->cursor.on)
		ret = client_fb(c->fd, &c->cursor_fb, &c->main->cursor_fb, DRM_FORMAT_ARGB8888);
	return ret;
}

static void unmap_fb(struct kms_fb *fb)
{
	if (fb->pixels)
		munmap(fb->pixels, fb->size);
	memset(fb, 0, sizeof(*fb));
}

void rig_close_client(struct rig *c)
{
	/* No RMFB: closing the file is what releases the framebuffers. */
	unmap_fb(&c->primary_fb);
	unmap_fb(&c->cursor_fb);
	for (int i = 0; i < SCENE_MAX_OVERLAYS; i++)
		for (int t = 0; t < 2; t++)
			unmap_fb(&c->overlay_fb[i][t]);
	close(c->fd);
	c->fd = -1;
}

int rig_open_holder(struct rig *b)
{
	char path[32];
	struct stat st;
	int fd;

	if (fstat(b->plain_fd, &st))
		return -errno;
	snprintf(path, sizeof(path), "/dev/dri/card%u", minor(st.st_rdev));
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fd = kms_make_holder(fd);
	if (fd < 0)
		return fd;
	b->holder_fd = fd;
	return 0;
}

int rig_commit_from(struct rig *b, int fd)
{
	if (b->fd == fd)
		return 0;
	drmDropMaster(b->fd);
	if (drmSetMaster(fd))
		return -errno;
	b->fd = fd;
	b->kms.fd = fd;
	return 0;
}

void rig_close(struct rig *b)
{
	/* The framebuffers are the plain file's: only it can remove them. */
	int fd = b->plain_fd;

	kms_fb_destroy(fd, &b->wb_fb);
	kms_fb_destroy(fd, &b->cursor_fb);
	for (int i = 0; i < SCENE_MAX_OVERLAYS; i++)
		for (int t = 0; t < 2; t++)
			kms_fb_destroy(fd, &b->overlay_fb[i][t]);
	kms_fb_destroy(fd, &b->primary_fb);
	if (b->holder_fd >= 0)
		close(b->holder_fd);
	close(fd);
}
