// SPDX-License-Identifier: MIT
/*
 * A compositor-like client: it hands its layers to libliftoff, which picks
 * hardware planes for them with TEST_ONLY commits, commits the result for
 * real, and reports how many layers landed on planes and how many the
 * compositor would have to draw into its own buffer.
 *
 * Usage: kms_liftoff [--cap] [--cold] [--verbose]
 *
 * The layouts follow each other as frames of a compositor do: layout N stays
 * on screen until layout N+1's real commit has succeeded, and only then are
 * N's buffers freed. So each layout is checked by the kernel as a transition
 * from the one before it (the first from whatever the CRTC showed when the
 * client started). --cold instead frees each layout's buffers right after
 * its commit, while they are on screen: the kernel's RMFB commits switch
 * those planes off, and the next layout starts from an almost empty CRTC.
 *
 * --cap asks for DRM_CLIENT_CAP_NO_LEGACY_CURSOR (the client moves its
 * cursor in its atomic commits only). A kernel that does not know the cap
 * refuses it with EINVAL; the client then goes on without it, as a real
 * compositor must. One line per layout:
 *
 *   layout NAME cap=set|refused|off planes=N composited=N layers=N
 *          commit=0|-ERRNO mode=MODE pipes=USED/HW composition=used|unused
 *          lit=BEFORE/AFTER on=LAYER:PLANE,...|-
 *
 * planes counts the layers the committed state shows on a plane, the cursor
 * included; it is 0 when the real commit failed. lit counts the planes the
 * kernel had on the CRTC just before the commit and just after it (the
 * composition buffer's included), which shows what each layout started from.
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

#include "kms_util.h"
#include "vkms.h"

#define MAX_LAYERS 8
/*
 * Overlays handed to libliftoff. vkms offers 8 whatever its pipe count; an
 * AMD display engine offers about one plane per pipe, and the search
 * libliftoff makes grows with every plane it may try.
 */
#define LIFTOFF_OVERLAYS 4
/* Room for ",name:plane" per layer, names cut at 15 characters, and a NUL. */
#define ON_LEN (MAX_LAYERS * 28)

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
static void cursor_state_words(const char *debugfs, char *mode, size_t mode_len,
			       char *pipes, size_t pipes_len)
{
	struct cursor_state cs;

	snprintf(mode, mode_len, "-");
	snprintf(pipes, pipes_len, "-");
	if (vkms_read_cursor_state(debugfs, &cs))
		return;
	snprintf(mode, mode_len, "%s", cursor_mode_name(cs.mode));
	snprintf(pipes, pipes_len, "%u/%u", cs.pipes_used, cs.hw_pipes);
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

/* Sets the standard plane properties of @layer; 0 or libliftoff's -errno. */
static int set_layer(struct liftoff_layer *layer, uint32_t fb_id, uint32_t src_w, uint32_t src_h,
		     int32_t x, int32_t y, uint32_t w, uint32_t h, uint32_t zpos)
{
	return liftoff_layer_set_property(layer, "FB_ID", fb_id) ?:
	       liftoff_layer_set_property(layer, "SRC_X", 0) ?:
	       liftoff_layer_set_property(layer, "SRC_Y", 0) ?:
	       liftoff_layer_set_property(layer, "SRC_W", (uint64_t)src_w << 16) ?:
	       liftoff_layer_set_property(layer, "SRC_H", (uint64_t)src_h << 16) ?:
	       liftoff_layer_set_property(layer, "CRTC_X", (uint64_t)x) ?:
	       liftoff_layer_set_property(layer, "CRTC_Y", (uint64_t)y) ?:
	       liftoff_layer_set_property(layer, "CRTC_W", w) ?:
	       liftoff_layer_set_property(layer, "CRTC_H", h) ?:
	       /*
		* libliftoff 0.3.0 only reads a layer's zpos, to keep
		* intersecting layers in order, and never writes it to a
		* plane, so it is set even where planes have none (6.1's
		* vkms): without it a composited layer could end up drawn
		* under a plane that should be below it.
		*/
	       liftoff_layer_set_property(layer, "zpos", zpos);
}

struct client {
	struct kms_device kms;
	char debugfs[64];
	struct liftoff_device *dev;
	struct liftoff_output *output;
	struct liftoff_layer *composition;
	struct kms_fb composition_fb;
	/* The buffers of the layout on screen, freed once the next one is. */
	struct kms_fb shown[MAX_LAYERS];
	bool modeset_done;
	bool cold;
	const char *cap;
};

/* Planes showing a framebuffer on @c's CRTC, as the kernel reports them. */
static unsigned int count_lit(const struct client *c)
{
	uint32_t ids[2 + KMS_MAX_OVERLAYS] = { c->kms.primary_id, c->kms.cursor_id };
	unsigned int lit = 0;

	memcpy(&ids[2], c->kms.overlay_ids, c->kms.overlay_count * sizeof(ids[0]));
	for (unsigned int i = 0; i < 2 + c->kms.overlay_count; i++) {
		drmModePlanePtr p = drmModeGetPlane(c->kms.fd, ids[i]);

		if (p && p->crtc_id == c->kms.crtc_id && p->fb_id)
			lit++;
		drmModeFreePlane(p);
	}
	return lit;
}

static void free_fbs(int fd, struct kms_fb *fbs)
{
	for (unsigned int i = 0; i < MAX_LAYERS; i++)
		if (fbs[i].fb_id)
			kms_fb_destroy(fd, &fbs[i]);
}

/* Sets up one layout, commits it for real and reports where its layers went. */
/*
 * A framebuffer per layer of @l and a libliftoff layer per layer but the
 * cursor, which goes to the cursor plane (@cursor, @cursor_fb). Returns the
 * number of layers, or -errno.
 */
static int create_layers(struct client *c, const struct layout *l,
			 struct liftoff_layer *layers[MAX_LAYERS], struct kms_fb fbs[MAX_LAYERS],
			 const struct layer_spec **cursor, struct kms_fb **cursor_fb)
{
	uint32_t crtc_w = c->kms.mode.hdisplay, crtc_h = c->kms.mode.vdisplay;
	int n, ret;

	for (n = 0; n < MAX_LAYERS && l->layers[n].name; n++) {
		const struct layer_spec *s = &l->layers[n];

		ret = kms_fb_create(c->kms.fd, s->src_w, s->src_h, s->format, &fbs[n]);
		if (ret) {
			fprintf(stderr, "kms_liftoff: framebuffer: %s\n", strerror(-ret));
			return ret;
		}
		kms_fb_fill(&fbs[n], s->colour);
		if (!strcmp(s->name, "cursor")) {
			*cursor = s;
			*cursor_fb = &fbs[n];
			continue;
		}
		layers[n] = liftoff_layer_create(c->output);
		if (!layers[n])
			return -ENOMEM;
		ret = set_layer(layers[n], fbs[n].fb_id, s->src_w, s->src_h, s->x, s->y,
				s->w ? s->w : crtc_w, s->h ? s->h : crtc_h, s->zpos);
		if (ret) {
			fprintf(stderr, "kms_liftoff: layer %s: %s\n", s->name, strerror(-ret));
			return ret;
		}
	}
	return n;
}

/*
 * The request libliftoff completes: the mode with the first commit, which
 * libliftoff's test commits must carry too, and the cursor plane.
 */
static int build_request(struct client *c, drmModeAtomicReqPtr req, uint32_t *flags,
			 const struct layer_spec *cursor, const struct kms_fb *cursor_fb)
{
	int fd = c->kms.fd, ret;

	*flags = 0;
	if (!c->modeset_done) {
		*flags = DRM_MODE_ATOMIC_ALLOW_MODESET;
		if (add_prop(fd, req, c->kms.crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID",
			     c->kms.mode_blob_id) < 0 ||
		    add_prop(fd, req, c->kms.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1) < 0 ||
		    add_prop(fd, req, c->kms.connector_id, DRM_MODE_OBJECT_CONNECTOR,
			     "CRTC_ID", c->kms.crtc_id) < 0)
			return -EINVAL;
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
		return ret;
	}
	ret = liftoff_output_apply(c->output, req, *flags);
	if (ret)
		fprintf(stderr, "kms_liftoff: liftoff_output_apply: %s\n", strerror(-ret));
	return ret;
}

/* The layout's line: what the commit (@ret) put on which plane. */
static void report_layout(struct client *c, const struct layout *l,
			  struct liftoff_layer *layers[MAX_LAYERS], unsigned int n, int ret,
			  unsigned int lit_before)
{
	unsigned int planes = 0, composited = 0;
	char mode[32], pipes[32], on[ON_LEN] = "";

	for (unsigned int i = 0; i < n; i++) {
		struct liftoff_plane *plane = layers[i] ? liftoff_layer_get_plane(layers[i]) : NULL;
		char item[ON_LEN / MAX_LAYERS];

		if (layers[i] && liftoff_layer_needs_composition(layers[i]))
			composited++;
		/* Nothing of a refused commit is on screen. */
		if (ret || (layers[i] && !plane))
			continue;
		planes++;
		/* The cursor (no libliftoff layer) is on the compositor's cursor plane. */
		snprintf(item, sizeof(item), "%s%.15s:%u", on[0] ? "," : "", l->layers[i].name,
			 plane ? liftoff_plane_get_id(plane) : c->kms.cursor_id);
		strcat(on, item);
	}
	cursor_state_words(c->debugfs, mode, sizeof(mode), pipes, sizeof(pipes));
	printf("layout %s cap=%s planes=%u composited=%u layers=%u commit=%d mode=%s pipes=%s"
	       " composition=%s lit=%u/%u on=%s\n",
	       l->name, c->cap, planes, composited, n, ret, mode, pipes,
	       liftoff_layer_get_plane(c->composition) ? "used" : "unused", lit_before,
	       count_lit(c), on[0] ? on : "-");
	fflush(stdout);
}

static int run_layout(struct client *c, const struct layout *l)
{
	struct liftoff_layer *layers[MAX_LAYERS] = { 0 };
	struct kms_fb fbs[MAX_LAYERS] = { 0 };
	const struct layer_spec *cursor = NULL;
	struct kms_fb *cursor_fb = NULL;
	drmModeAtomicReqPtr req = NULL;
	unsigned int lit_before;
	uint32_t flags;
	int fd = c->kms.fd, n, ret;

	n = create_layers(c, l, layers, fbs, &cursor, &cursor_fb);
	ret = n < 0 ? n : 0;
	if (!ret) {
		req = drmModeAtomicAlloc();
		ret = req ? build_request(c, req, &flags, cursor, cursor_fb) : -ENOMEM;
	}
	if (!ret) {
		/*
		 * What a compositor does next: draw the composited layers, then
		 * commit. Blocking, so that vkms_cursor_state shows this state.
		 */
		lit_before = count_lit(c);
		ret = drmModeAtomicCommit(fd, req, flags, NULL);
		if (ret)
			ret = -errno;
		else
			c->modeset_done = true;
		report_layout(c, l, layers, n, ret, lit_before);
	}

	/*
	 * The new frame is up: the old one's buffers are on no plane any
	 * more, so freeing them makes the kernel commit nothing. --cold frees
	 * the new ones too, while they are on screen.
	 */
	if (!ret) {
		free_fbs(fd, c->shown);
		if (c->cold)
			free_fbs(fd, fbs);
		memcpy(c->shown, fbs, sizeof(fbs));
		memset(fbs, 0, sizeof(fbs));
	}
	drmModeAtomicFree(req);
	/*
	 * The layers go with their layout: the next request disables every
	 * plane libliftoff may use before it places the next layers, so what
	 * the kernel shows is unaffected until that commit.
	 */
	for (unsigned int i = 0; i < MAX_LAYERS; i++)
		if (layers[i])
			liftoff_layer_destroy(layers[i]);
	/* Left here only when nothing of them got on screen. */
	free_fbs(fd, fbs);
	return ret;
}

/*
 * The vkms device for @c, atomic, with DRM_CLIENT_CAP_NO_LEGACY_CURSOR if
 * @want_cap and the kernel has it. Returns the descriptor, or -1.
 */
static int open_device(struct client *c, bool want_cap)
{
	uint64_t zpos;
	bool has_zpos;
	int fd, ret;

	fd = kms_open_driver("vkms");
	if (fd < 0) {
		fprintf(stderr, "kms_liftoff: no vkms device: %s\n", strerror(-fd));
		return -1;
	}
	/* kms_probe() also creates the blob of the mode the first commit sets. */
	if (kms_probe(&c->kms, fd) || !c->kms.primary_id || !c->kms.cursor_id) {
		fprintf(stderr, "kms_liftoff: no CRTC with a connector, a primary and a cursor plane\n");
		return -1;
	}
	ret = vkms_debugfs_dir(fd, c->debugfs, sizeof(c->debugfs));
	if (ret) {
		fprintf(stderr, "kms_liftoff: its debugfs directory: %s\n", strerror(-ret));
		return -1;
	}
	ret = kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 1);
	if (ret) {
		fprintf(stderr, "kms_liftoff: no atomic modesetting: %s\n", strerror(-ret));
		return -1;
	}
	if (want_cap) {
		/* The cap is new: an older kernel says EINVAL, and we carry on without it. */
		ret = kms_set_cap(fd, DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 1);
		if (!ret) {
			c->cap = "set";
		} else if (ret == -EINVAL) {
			c->cap = "refused";
			printf("# DRM_CLIENT_CAP_NO_LEGACY_CURSOR refused (EINVAL): going on without it\n");
		} else {
			fprintf(stderr, "kms_liftoff: DRM_CLIENT_CAP_NO_LEGACY_CURSOR: %s\n",
				strerror(-ret));
			return -1;
		}
	}
	has_zpos = !kms_prop_value(fd, c->kms.primary_id, DRM_MODE_OBJECT_PLANE, "zpos", &zpos);
	printf("# mode %ux%u, %u overlays, cursor plane %u, zpos %s\n", c->kms.mode.hdisplay,
	       c->kms.mode.vdisplay, c->kms.overlay_count, c->kms.cursor_id, has_zpos ? "yes" : "no");

	return fd;
}

/* libliftoff's device, planes, output and composition layer for @c. */
static int setup_liftoff(struct client *c, int fd)
{
	int ret;

	/* libliftoff owns the descriptor it is given; the cap belongs to the open file. */
	c->dev = liftoff_device_create(dup(fd));
	if (!c->dev || !liftoff_plane_create(c->dev, c->kms.primary_id)) {
		fprintf(stderr, "kms_liftoff: libliftoff device setup failed\n");
		return -1;
	}
	for (unsigned int i = 0; i < c->kms.overlay_count && i < LIFTOFF_OVERLAYS; i++) {
		if (!liftoff_plane_create(c->dev, c->kms.overlay_ids[i])) {
			fprintf(stderr, "kms_liftoff: overlay %u: libliftoff refused it\n",
				c->kms.overlay_ids[i]);
			return -1;
		}
	}
	c->output = liftoff_output_create(c->dev, c->kms.crtc_id);
	c->composition = c->output ? liftoff_layer_create(c->output) : NULL;
	if (!c->composition ||
	    kms_fb_create(fd, c->kms.mode.hdisplay, c->kms.mode.vdisplay, DRM_FORMAT_XRGB8888,
			  &c->composition_fb)) {
		fprintf(stderr, "kms_liftoff: libliftoff output setup failed\n");
		return -1;
	}
	/* The compositor's own buffer: whatever gets no plane is drawn here. */
	kms_fb_fill(&c->composition_fb, 0xff303860);
	/*
	 * The composition buffer takes the desktop's place: it is the desktop
	 * with the composited layers drawn over it, so it shares the desktop's
	 * zpos 0, under every other layer. Their order among themselves never
	 * matters: libliftoff uses the composition layer only when some layer
	 * is composited, and then composites the full-screen desktop under it
	 * too, so the two are never on planes together.
	 */
	ret = set_layer(c->composition, c->composition_fb.fb_id, c->kms.mode.hdisplay,
			c->kms.mode.vdisplay, 0, 0, c->kms.mode.hdisplay, c->kms.mode.vdisplay, 0);
	if (ret) {
		fprintf(stderr, "kms_liftoff: composition layer: %s\n", strerror(-ret));
		return -1;
	}
	liftoff_output_set_composition_layer(c->output, c->composition);

	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cap", no_argument, NULL, 'c' },
		{ "cold", no_argument, NULL, 'C' },
		{ "verbose", no_argument, NULL, 'v' },
		{ 0 },
	};
	struct client c = { .cap = "off" };
	bool want_cap = false;
	int fd, opt, failed = 0;

	while ((opt = getopt_long(argc, argv, "cCv", opts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			want_cap = true;
			break;
		case 'C':
			c.cold = true;
			break;
		case 'v':
			verbose = true;
			break;
		default:
			fprintf(stderr, "usage: %s [--cap] [--cold] [--verbose]\n", argv[0]);
			return 2;
		}
	}
	liftoff_log_set_handler(log_handler);
	liftoff_log_set_priority(verbose ? LIFTOFF_DEBUG : LIFTOFF_ERROR);

	fd = open_device(&c, want_cap);
	if (fd < 0 || setup_liftoff(&c, fd))
		return 1;

	for (size_t i = 0; i < ARRAY_SIZE(layouts); i++)
		if (run_layout(&c, &layouts[i]))
			failed++;

	free_fbs(fd, c.shown);
	liftoff_layer_destroy(c.composition);
	liftoff_output_destroy(c.output);
	liftoff_device_destroy(c.dev);
	kms_fb_destroy(fd, &c.composition_fb);
	close(fd);
	return failed ? 1 : 0;
}
