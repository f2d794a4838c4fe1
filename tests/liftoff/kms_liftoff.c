// SPDX-License-Identifier: MIT
/*
 * A compositor-like client: it hands its layers to libliftoff, which picks
 * hardware planes for them with TEST_ONLY commits, commits the result for
 * real, and reports how many layers landed on planes and how many the
 * compositor would have to draw into its own buffer.
 *
 * Usage: kms_liftoff [--cap] [--verbose]
 *
 * --cap asks for DRM_CLIENT_CAP_ATOMIC_ONLY. A kernel that does not know the
 * cap refuses it with EINVAL; the client then goes on without it, as a real
 * compositor must. One line per layout:
 *
 *   layout NAME cap=set|refused|off planes=N composited=N layers=N
 *          commit=0|-ERRNO mode=MODE pipes=USED/HW on=LAYER:PLANE,...
 *
 * The cursor plane is the compositor's own, outside libliftoff: libliftoff
 * 0.3.0 treats it like any other plane (it would put a video there, or the
 * cursor on an overlay), which is not how a compositor uses it. The cursor
 * goes into each request before libliftoff's test commits, so they see it.
 * MODE and pipes come from the vkms debugfs file vkms_cursor_state ("-" when
 * the kernel has none). The exit status is 0 when every commit succeeded.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <drm.h>
#include <drm_fourcc.h>
#include <libliftoff.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "../kms_util.h"

#define MAX_LAYERS 8
/*
 * Overlays handed to libliftoff. vkms offers 8 whatever its pipe count; an
 * AMD display engine offers about one plane per pipe, and the search
 * libliftoff makes grows with every plane it may try.
 */
#define LIFTOFF_OVERLAYS 4

/* One layer of a layout: where its buffer comes from and where it goes. */
struct layer_spec {
	const char *name;
	uint32_t src_w, src_h;		/* buffer size */
	int32_t x, y;			/* destination, in CRTC pixels */
	uint32_t w, h;			/* 0: the whole CRTC */
	uint32_t zpos;
	uint32_t format;
	uint32_t colour;
};

struct layout {
	const char *name;
	struct layer_spec layers[MAX_LAYERS];
};

/*
 * The layouts are laid out on 1024x768 (the vkms default mode); a "w" or
 * "h" of 0 means the full CRTC size. The desktop is the compositor's own
 * window content, a full-screen layer that libliftoff puts on the primary
 * plane when nothing needs composition. The cursor is always on top and
 * always over the layer the layout is about.
 */
#define DESKTOP { "desktop", 1024, 768, 0, 0, 0, 0, 0, DRM_FORMAT_XRGB8888, 0xff303860 }
#define CURSOR(cx, cy) { "cursor", 64, 64, cx, cy, 64, 64, 9, DRM_FORMAT_ARGB8888, 0xffffffff }
#define SMALL(n, ox, oy, z) { n, 160, 120, ox, oy, 160, 120, z, DRM_FORMAT_XRGB8888, 0xff40a040 }

static const struct layout layouts[] = {
	{ "video-window", {
		DESKTOP,
		/* 2x upscaled video in a window that covers part of the desktop */
		{ "video", 240, 135, 96, 96, 480, 270, 1, DRM_FORMAT_XRGB8888, 0xffa04040 },
	} },
	{ "video-window+cursor", {
		DESKTOP,
		{ "video", 240, 135, 96, 96, 480, 270, 1, DRM_FORMAT_XRGB8888, 0xffa04040 },
		CURSOR(300, 200),
	} },
	{ "fullscreen-video", {
		DESKTOP,
		{ "video", 512, 384, 0, 0, 0, 0, 1, DRM_FORMAT_XRGB8888, 0xffa04040 },
	} },
	{ "fullscreen-video+cursor", {
		DESKTOP,
		{ "video", 512, 384, 0, 0, 0, 0, 1, DRM_FORMAT_XRGB8888, 0xffa04040 },
		CURSOR(500, 400),
	} },
	{ "3-overlays", {
		DESKTOP,
		SMALL("ovl1", 720, 96, 2), SMALL("ovl2", 720, 320, 3), SMALL("ovl3", 720, 544, 4),
	} },
	{ "3-overlays+cursor", {
		DESKTOP,
		SMALL("ovl1", 720, 96, 2), SMALL("ovl2", 720, 320, 3), SMALL("ovl3", 720, 544, 4),
		/* across the edge of the middle overlay */
		CURSOR(690, 350),
	} },
	{ "video-window+2-overlays", {
		DESKTOP,
		/* 0.5x downscaled video: the scaled pipe that takes the last free one */
		{ "video", 960, 540, 96, 96, 480, 270, 1, DRM_FORMAT_XRGB8888, 0xffa04040 },
		SMALL("ovl1", 720, 96, 2), SMALL("ovl2", 720, 320, 3),
	} },
	{ "video-window+2-overlays+cursor", {
		DESKTOP,
		{ "video", 960, 540, 96, 96, 480, 270, 1, DRM_FORMAT_XRGB8888, 0xffa04040 },
		SMALL("ovl1", 720, 96, 2), SMALL("ovl2", 720, 320, 3),
		CURSOR(300, 200),
	} },
};

static bool verbose;

static void log_handler(enum liftoff_log_priority prio, const char *fmt, va_list args)
{
	if (prio == LIFTOFF_ERROR || verbose) {
		fputs("# liftoff: ", stdout);
		vprintf(fmt, args);
		fputc('\n', stdout);
	}
}

/* mode and "used/hw" from vkms_cursor_state, or "-" when there is none. */
static void read_cursor_state(char *mode, size_t mode_len, char *pipes, size_t pipes_len)
{
	char line[128];
	unsigned int used, hw;
	FILE *f;

	snprintf(mode, mode_len, "-");
	snprintf(pipes, pipes_len, "-");
	f = fopen("/sys/kernel/debug/dri/0/vkms_cursor_state", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "mode: ", 6))
			snprintf(mode, mode_len, "%.31s", line + 6);
		else if (sscanf(line, "pipes: %u of %u", &used, &hw) == 2)
			snprintf(pipes, pipes_len, "%u/%u", used, hw);
	}
	fclose(f);
}

static int add_prop(int fd, drmModeAtomicReqPtr req, uint32_t obj, uint32_t type,
		    const char *name, uint64_t value)
{
	int ret = kms_add(fd, req, obj, type, name, value);

	if (ret < 0)
		fprintf(stderr, "kms_liftoff: property %s on %u: %s\n", name, obj,
			strerror(-ret));
	return ret;
}

struct client {
	struct kms_device kms;
	struct liftoff_device *dev;
	struct liftoff_output *output;
	struct liftoff_layer *composition;
	struct kms_fb composition_fb;
	bool modeset_done;
	const char *cap;
};

/* Sets up one layout, commits it for real and reports where its layers went. */
static int run_layout(struct client *c, const struct layout *l)
{
	struct liftoff_layer *layers[MAX_LAYERS] = { 0 };
	struct kms_fb fbs[MAX_LAYERS] = { 0 };
	const struct layer_spec *cursor = NULL;
	struct kms_fb *cursor_fb = NULL;
	unsigned int n, planes = 0, composited = 0;
	uint32_t crtc_w = c->kms.mode.hdisplay, crtc_h = c->kms.mode.vdisplay;
	uint32_t flags = 0;
	char mode[32], pipes[32], on[256] = "";
	drmModeAtomicReqPtr req;
	int fd = c->kms.fd, ret;

	for (n = 0; n < MAX_LAYERS && l->layers[n].name; n++) {
		const struct layer_spec *s = &l->layers[n];
		struct liftoff_layer *layer;

		ret = kms_fb_create(fd, s->src_w, s->src_h, s->format, &fbs[n]);
		if (ret) {
			fprintf(stderr, "kms_liftoff: framebuffer: %s\n", strerror(-ret));
			goto out;
		}
		kms_fb_fill(&fbs[n], s->colour);
		if (!strcmp(s->name, "cursor")) {
			cursor = s;
			cursor_fb = &fbs[n];
			continue;
		}
		layer = liftoff_layer_create(c->output);
		if (!layer) {
			ret = -ENOMEM;
			goto out;
		}
		layers[n] = layer;
		liftoff_layer_set_property(layer, "FB_ID", fbs[n].fb_id);
		liftoff_layer_set_property(layer, "SRC_X", 0);
		liftoff_layer_set_property(layer, "SRC_Y", 0);
		liftoff_layer_set_property(layer, "SRC_W", (uint64_t)s->src_w << 16);
		liftoff_layer_set_property(layer, "SRC_H", (uint64_t)s->src_h << 16);
		liftoff_layer_set_property(layer, "CRTC_X", (uint64_t)s->x);
		liftoff_layer_set_property(layer, "CRTC_Y", (uint64_t)s->y);
		liftoff_layer_set_property(layer, "CRTC_W", s->w ? s->w : crtc_w);
		liftoff_layer_set_property(layer, "CRTC_H", s->h ? s->h : crtc_h);
		/*
		 * libliftoff 0.3.0 only reads a layer's zpos, to keep
		 * intersecting layers in order, and never writes it to a
		 * plane, so it is set even where planes have none (6.1's
		 * vkms): without it a composited layer could end up drawn
		 * under a plane that should be below it.
		 */
		liftoff_layer_set_property(layer, "zpos", s->zpos);
	}

	req = drmModeAtomicAlloc();
	if (!req) {
		ret = -ENOMEM;
		goto out;
	}
	if (!c->modeset_done) {
		/* The first commit lights the output up: libliftoff's test commits must carry it. */
		flags = DRM_MODE_ATOMIC_ALLOW_MODESET;
		if (add_prop(fd, req, c->kms.crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID",
			     c->kms.mode_blob_id) < 0 ||
		    add_prop(fd, req, c->kms.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1) < 0 ||
		    add_prop(fd, req, c->kms.connector_id, DRM_MODE_OBJECT_CONNECTOR,
			     "CRTC_ID", c->kms.crtc_id) < 0) {
			ret = -EINVAL;
			goto free_req;
		}
	}
	if (cursor)
		ret = kms_add_plane(fd, req, c->kms.cursor_id, c->kms.crtc_id, cursor_fb->fb_id,
				    cursor->src_w, cursor->src_h, cursor->x, cursor->y,
				    cursor->w, cursor->h);
	else
		ret = kms_add(fd, req, c->kms.cursor_id, DRM_MODE_OBJECT_PLANE, "FB_ID", 0) ?:
		      kms_add(fd, req, c->kms.cursor_id, DRM_MODE_OBJECT_PLANE, "CRTC_ID", 0);
	if (ret < 0) {
		fprintf(stderr, "kms_liftoff: cursor plane: %s\n", strerror(-ret));
		goto free_req;
	}
	ret = liftoff_output_apply(c->output, req, flags);
	if (ret) {
		fprintf(stderr, "kms_liftoff: liftoff_output_apply: %s\n", strerror(-ret));
		goto free_req;
	}
	/*
	 * What a compositor does next: draw the composited layers, then
	 * commit. Blocking, so that vkms_cursor_state shows this state.
	 */
	ret = drmModeAtomicCommit(fd, req, flags, NULL);
	if (ret)
		ret = -errno;
	else
		c->modeset_done = true;

	for (unsigned int i = 0; i < n; i++) {
		struct liftoff_plane *plane;
		size_t len = strlen(on);

		if (!layers[i]) {
			/* The cursor: on its plane if the commit went through. */
			if (!ret) {
				planes++;
				snprintf(on + len, sizeof(on) - len, "%scursor:%u",
					 len ? "," : "", c->kms.cursor_id);
			}
			continue;
		}
		plane = liftoff_layer_get_plane(layers[i]);
		if (plane) {
			planes++;
			snprintf(on + len, sizeof(on) - len, "%s%s:%u", len ? "," : "",
				 l->layers[i].name, liftoff_plane_get_id(plane));
		}
		if (liftoff_layer_needs_composition(layers[i]))
			composited++;
	}
	read_cursor_state(mode, sizeof(mode), pipes, sizeof(pipes));
	printf("layout %s cap=%s planes=%u composited=%u layers=%u commit=%d mode=%s pipes=%s"
	       " composition=%s on=%s\n",
	       l->name, c->cap, planes, composited, n, ret, mode, pipes,
	       liftoff_layer_get_plane(c->composition) ? "used" : "unused", on[0] ? on : "-");
	fflush(stdout);

free_req:
	drmModeAtomicFree(req);
out:
	for (unsigned int i = 0; i < MAX_LAYERS; i++) {
		if (layers[i])
			liftoff_layer_destroy(layers[i]);
		if (fbs[i].fb_id)
			kms_fb_destroy(fd, &fbs[i]);
	}
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cap", no_argument, NULL, 'c' },
		{ "verbose", no_argument, NULL, 'v' },
		{ 0 },
	};
	struct client c = { .cap = "off" };
	bool want_cap = false;
	uint64_t zpos;
	bool has_zpos;
	int fd, opt, ret, failed = 0;

	while ((opt = getopt_long(argc, argv, "cv", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			want_cap = true;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			fprintf(stderr, "usage: %s [--cap] [--verbose]\n", argv[0]);
			return 2;
		}
	}
	liftoff_log_set_handler(log_handler);
	liftoff_log_set_priority(verbose ? LIFTOFF_DEBUG : LIFTOFF_ERROR);

	fd = kms_open_driver("vkms");
	if (fd < 0) {
		fprintf(stderr, "kms_liftoff: no vkms device: %s\n", strerror(-fd));
		return 1;
	}
	if (kms_probe(&c.kms, fd) || !c.kms.primary_id || !c.kms.cursor_id) {
		fprintf(stderr, "kms_liftoff: no CRTC with a connector, a primary and a cursor plane\n");
		return 1;
	}
	if (kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 1)) {
		fprintf(stderr, "kms_liftoff: no atomic modesetting: %s\n", strerror(errno));
		return 1;
	}
	if (want_cap) {
		/* The cap is new: an older kernel says EINVAL, and we carry on without it. */
		if (!kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC_ONLY, 1)) {
			c.cap = "set";
		} else if (errno == EINVAL) {
			c.cap = "refused";
			printf("# DRM_CLIENT_CAP_ATOMIC_ONLY refused (EINVAL): going on without it\n");
		} else {
			fprintf(stderr, "kms_liftoff: DRM_CLIENT_CAP_ATOMIC_ONLY: %s\n",
				strerror(errno));
			return 1;
		}
	}
	has_zpos = !kms_prop_value(fd, c.kms.primary_id, DRM_MODE_OBJECT_PLANE, "zpos", &zpos);
	ret = drmModeCreatePropertyBlob(fd, &c.kms.mode, sizeof(c.kms.mode), &c.kms.mode_blob_id);
	if (ret) {
		fprintf(stderr, "kms_liftoff: mode blob: %s\n", strerror(-ret));
		return 1;
	}
	printf("# mode %ux%u, %u overlays, cursor plane %u, zpos %s\n", c.kms.mode.hdisplay,
	       c.kms.mode.vdisplay, c.kms.overlay_count, c.kms.cursor_id, has_zpos ? "yes" : "no");

	/* libliftoff owns the descriptor it is given; the cap belongs to the open file. */
	c.dev = liftoff_device_create(dup(fd));
	if (!c.dev || !liftoff_plane_create(c.dev, c.kms.primary_id)) {
		fprintf(stderr, "kms_liftoff: libliftoff device setup failed\n");
		return 1;
	}
	for (unsigned int i = 0; i < c.kms.overlay_count && i < LIFTOFF_OVERLAYS; i++) {
		if (!liftoff_plane_create(c.dev, c.kms.overlay_ids[i])) {
			fprintf(stderr, "kms_liftoff: overlay %u: libliftoff refused it\n",
				c.kms.overlay_ids[i]);
			return 1;
		}
	}
	c.output = liftoff_output_create(c.dev, c.kms.crtc_id);
	c.composition = c.output ? liftoff_layer_create(c.output) : NULL;
	if (!c.composition ||
	    kms_fb_create(fd, c.kms.mode.hdisplay, c.kms.mode.vdisplay, DRM_FORMAT_XRGB8888,
			  &c.composition_fb)) {
		fprintf(stderr, "kms_liftoff: libliftoff output setup failed\n");
		return 1;
	}
	/* The compositor's own buffer: whatever gets no plane is drawn here. */
	kms_fb_fill(&c.composition_fb, 0xff303860);
	liftoff_layer_set_property(c.composition, "FB_ID", c.composition_fb.fb_id);
	liftoff_layer_set_property(c.composition, "CRTC_X", 0);
	liftoff_layer_set_property(c.composition, "CRTC_Y", 0);
	liftoff_layer_set_property(c.composition, "CRTC_W", c.kms.mode.hdisplay);
	liftoff_layer_set_property(c.composition, "CRTC_H", c.kms.mode.vdisplay);
	liftoff_layer_set_property(c.composition, "SRC_X", 0);
	liftoff_layer_set_property(c.composition, "SRC_Y", 0);
	liftoff_layer_set_property(c.composition, "SRC_W", (uint64_t)c.kms.mode.hdisplay << 16);
	liftoff_layer_set_property(c.composition, "SRC_H", (uint64_t)c.kms.mode.vdisplay << 16);
	liftoff_layer_set_property(c.composition, "zpos", 0);
	liftoff_output_set_composition_layer(c.output, c.composition);

	for (size_t i = 0; i < ARRAY_SIZE(layouts); i++)
		if (run_layout(&c, &layouts[i]))
			failed++;

	liftoff_layer_destroy(c.composition);
	liftoff_output_destroy(c.output);
	liftoff_device_destroy(c.dev);
	kms_fb_destroy(fd, &c.composition_fb);
	close(fd);
	return failed ? 1 : 0;
}
