// SPDX-License-Identifier: MIT
/*
 * kms_no_legacy_cursor: DRM_CLIENT_CAP_NO_LEGACY_CURSOR, end to end on vkms.
 *
 * A client that sets the capability promises, for the lifetime of its file,
 * not to update the cursor through the legacy cursor uAPI: CURSOR, CURSOR2,
 * and SETPLANE of the cursor plane, the requests the kernel sends down the
 * legacy cursor path. The kernel holds it to that: those fail with EINVAL
 * and a drm debug line, while the same change through DRM_IOCTL_MODE_ATOMIC
 * succeeds and is checked as a commit no legacy cursor update follows.
 * Every other legacy ioctl keeps working: they build full commits that the
 * driver checks like any other, and those commits do not carry the mark.
 * The capability cannot be cleared, not even by clearing ATOMIC; other
 * files keep the legacy behaviour.
 *
 * Each legacy operation is first run without the capability and must
 * succeed: an EINVAL caused by a bad argument can then never pass for the
 * refusal. "capability --comm NAME" renames the process first, to show that
 * the kernel does not care what the client is called: no test name depends
 * on it, so that the runner compares the two runs name by name, and
 * tap_main() logs the name the kernel sees ("# running as comm=...").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <drm_fourcc.h>

#include "kms_util.h"
#include "tap.h"

#ifndef DRM_CLIENT_CAP_NO_LEGACY_CURSOR
#error "build against the patched kernel's uapi headers (make headers_install)"
#endif

#define CURSOR_SIZE 64
#define DRM_UT_KMS 0x04
#define DRM_UT_ATOMIC 0x10
#define REFUSAL "refused: file holds DRM_CLIENT_CAP_NO_LEGACY_CURSOR"
#define CLEAR_REFUSAL "DRM_CLIENT_CAP_NO_LEGACY_CURSOR cannot be cleared"
/* drm_atomic_check_only()'s debug line for a commit with the bit set */
#define MARK "(no legacy cursor)"

struct ctx {
	struct kms_device kms;
	int fd;			/* the file the operations run on */
	struct kms_fb fb[2];	/* primary framebuffers, flipped between */
	unsigned int front;
	struct kms_fb cursor;
};

static int ret_errno(int ret)
{
	return ret ? -errno : 0;
}

static int legacy_setcrtc(struct ctx *c)
{
	return ret_errno(drmModeSetCrtc(c->fd, c->kms.crtc_id, c->fb[c->front].fb_id,
					0, 0, &c->kms.connector_id, 1, &c->kms.mode));
}

static int legacy_setplane(struct ctx *c)
{
	const struct kms_fb *fb = &c->fb[c->front];

	return ret_errno(drmModeSetPlane(c->fd, c->kms.primary_id, c->kms.crtc_id,
					 fb->fb_id, 0, 0, 0, fb->width, fb->height,
					 0, 0, fb->width << 16, fb->height << 16));
}

static int legacy_setplane_cursor(struct ctx *c)
{
	return ret_errno(drmModeSetPlane(c->fd, c->kms.cursor_id, c->kms.crtc_id,
					 c->cursor.fb_id, 0, 100, 80, CURSOR_SIZE, CURSOR_SIZE,
					 0, 0, CURSOR_SIZE << 16, CURSOR_SIZE << 16));
}

static int legacy_cursor_set(struct ctx *c)
{
	return ret_errno(drmModeSetCursor(c->fd, c->kms.crtc_id, c->cursor.handle,
					  CURSOR_SIZE, CURSOR_SIZE));
}

static int legacy_cursor_move(struct ctx *c)
{
	return ret_errno(drmModeMoveCursor(c->fd, c->kms.crtc_id, 100, 80));
}

static int legacy_cursor2(struct ctx *c)
{
	return ret_errno(drmModeSetCursor2(c->fd, c->kms.crtc_id, c->cursor.handle,
					   CURSOR_SIZE, CURSOR_SIZE, 4, 4));
}

static int legacy_page_flip(struct ctx *c)
{
	unsigned int back = !c->front;
	int ret;

	ret = ret_errno(drmModePageFlip(c->fd, c->kms.crtc_id, c->fb[back].fb_id,
					DRM_MODE_PAGE_FLIP_EVENT, NULL));
	if (ret)
		return ret;
	c->front = back;
	return kms_wait_event(c->fd, KMS_WAIT_MS);
}

static int legacy_setgamma(struct ctx *c)
{
	uint32_t size = c->kms.gamma_size ? c->kms.gamma_size : 256;
	uint16_t *lut = calloc(3 * size, sizeof(*lut));
	int ret;

	if (!lut)
		return -ENOMEM;
	for (uint32_t i = 0; i < size; i++)
		lut[i] = lut[size + i] = lut[2 * size + i] = i * 0xffff / (size - 1);
	ret = ret_errno(drmModeCrtcSetGamma(c->fd, c->kms.crtc_id, size,
					    lut, lut + size, lut + 2 * size));
	free(lut);
	return ret;
}

static int legacy_connector_dpms(struct ctx *c)
{
	uint32_t prop = kms_prop_id(c->fd, c->kms.connector_id,
				    DRM_MODE_OBJECT_CONNECTOR, "DPMS");

	return ret_errno(drmModeConnectorSetProperty(c->fd, c->kms.connector_id,
						     prop, DRM_MODE_DPMS_ON));
}

static int legacy_obj_prop(struct ctx *c, uint32_t obj, uint32_t type,
			   const char *name, uint64_t value)
{
	uint32_t prop = kms_prop_id(c->fd, obj, type, name);

	if (!prop)
		return -ENOENT;
	return ret_errno(drmModeObjectSetProperty(c->fd, obj, type, prop, value));
}

static int legacy_plane_prop(struct ctx *c)
{
	return legacy_obj_prop(c, c->kms.primary_id, DRM_MODE_OBJECT_PLANE, "CRTC_X", 0);
}

static int legacy_crtc_prop(struct ctx *c)
{
	return legacy_obj_prop(c, c->kms.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1);
}

static int legacy_connector_prop(struct ctx *c)
{
	return legacy_obj_prop(c, c->kms.connector_id, DRM_MODE_OBJECT_CONNECTOR,
			       "CRTC_ID", c->kms.crtc_id);
}

/* Builds and commits one atomic request through @fill. */
static int atomic_do(struct ctx *c, int (*fill)(struct ctx *, drmModeAtomicReqPtr),
		     uint32_t flags)
{
	drmModeAtomicReqPtr req = drmModeAtomicAlloc();
	int ret;

	if (!req)
		return -ENOMEM;
	ret = fill(c, req);
	if (!ret)
		ret = kms_commit(c->fd, req, flags);
	drmModeAtomicFree(req);
	return ret;
}

static int fill_primary(struct ctx *c, drmModeAtomicReqPtr req)
{
	const struct kms_fb *fb = &c->fb[c->front];

	return kms_add_plane(c->fd, req, c->kms.primary_id, c->kms.crtc_id, fb->fb_id,
			     fb->width, fb->height, 0, 0, fb->width, fb->height);
}

static int fill_modeset(struct ctx *c, drmModeAtomicReqPtr req)
{
	int ret = 0;

	ret |= kms_add(c->fd, req, c->kms.connector_id, DRM_MODE_OBJECT_CONNECTOR,
		       "CRTC_ID", c->kms.crtc_id);
	ret |= kms_add(c->fd, req, c->kms.crtc_id, DRM_MODE_OBJECT_CRTC,
		       "MODE_ID", c->kms.mode_blob_id);
	ret |= kms_add(c->fd, req, c->kms.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1);
	return ret ? -EINVAL : fill_primary(c, req);
}

static int fill_cursor(struct ctx *c, drmModeAtomicReqPtr req)
{
	return kms_add_plane(c->fd, req, c->kms.cursor_id, c->kms.crtc_id,
			     c->cursor.fb_id, CURSOR_SIZE, CURSOR_SIZE,
			     100, 80, CURSOR_SIZE, CURSOR_SIZE);
}

static int fill_cursor_move(struct ctx *c, drmModeAtomicReqPtr req)
{
	return kms_add(c->fd, req, c->kms.cursor_id, DRM_MODE_OBJECT_PLANE, "CRTC_X", 120);
}

static int atomic_modeset(struct ctx *c)
{
	return atomic_do(c, fill_modeset, DRM_MODE_ATOMIC_ALLOW_MODESET);
}

static int atomic_cursor(struct ctx *c)
{
	return atomic_do(c, fill_cursor, 0);
}

static int atomic_cursor_move(struct ctx *c)
{
	return atomic_do(c, fill_cursor_move, 0);
}

struct legacy_op {
	/* The variant of its tests' names. */
	const char *name;
	/* What the refusal's debug line names, for the refused ones. */
	const char *tag;
	int (*legacy)(struct ctx *c);
	/* The same change through DRM_IOCTL_MODE_ATOMIC, if the device has one. */
	int (*atomic)(struct ctx *c);
	/* 6.1's vkms has no gamma table: SETGAMMA fails there, but not with EINVAL. */
	bool driver_may_refuse;
};

#define CURSOR_TAG "CURSOR ioctl"
#define SETPLANE_TAG "SETPLANE of a cursor plane"

#define OP(_name, _tag, _legacy, _atomic) \
	{ .name = _name, .tag = _tag, .legacy = _legacy, .atomic = _atomic }

/* The legacy cursor uAPI: refused to holders of the capability. */
static const struct legacy_op refused_ops[] = {
	OP("cursor-set", CURSOR_TAG, legacy_cursor_set, atomic_cursor),
	OP("cursor-move", CURSOR_TAG, legacy_cursor_move, atomic_cursor_move),
	OP("cursor2", CURSOR_TAG, legacy_cursor2, atomic_cursor),
	OP("setplane-cursor-plane", SETPLANE_TAG, legacy_setplane_cursor, atomic_cursor),
};

/* Every other legacy ioctl that changes KMS state: holders keep them. */
static const struct legacy_op accepted_ops[] = {
	OP("setcrtc", NULL, legacy_setcrtc, NULL),
	OP("setplane-primary-plane", NULL, legacy_setplane, NULL),
	OP("page-flip", NULL, legacy_page_flip, NULL),
	{ .name = "setgamma", .legacy = legacy_setgamma, .driver_may_refuse = true },
	OP("setproperty-connector-dpms", NULL, legacy_connector_dpms, NULL),
	OP("obj-setproperty-plane-crtc-x", NULL, legacy_plane_prop, NULL),
	OP("obj-setproperty-crtc-active", NULL, legacy_crtc_prop, NULL),
	OP("obj-setproperty-connector-crtc-id", NULL, legacy_connector_prop, NULL),
};

#define N_REFUSED (sizeof(refused_ops) / sizeof(refused_ops[0]))
#define N_ACCEPTED (sizeof(accepted_ops) / sizeof(accepted_ops[0]))

/*
 * A legacy call that the capability did not touch: it either worked, or
 * (for ops the driver itself may refuse) failed with something other than
 * the refusal's EINVAL; it logged no refusal, and no commit it made was
 * checked as one no legacy cursor update follows (the helpers that build
 * it do not know the file).
 */
static bool legacy_allowed(struct ctx *c, const struct legacy_op *op, int *err)
{
	bool refused_or_marked;

	kmsg_mark();
	*err = op->legacy(c);
	refused_or_marked = kmsg_seen_either(REFUSAL, MARK);
	if (op->driver_may_refuse)
		return !refused_or_marked && *err != -EINVAL;
	return !refused_or_marked && *err == 0;
}

/*
 * "@when-legacy-allowed@op": the legacy call worked, was not refused, and
 * its commit was not marked. @when is a stable label of the file's state.
 */
static struct tap_name_buf allowed_name(const char *when, const struct legacy_op *op)
{
	return tap_name_fmt("%s-legacy-allowed@%s", when, op->name);
}

static void check_ops_allowed(struct ctx *c, const struct legacy_op *ops, size_t n,
			      const char *when)
{
	for (size_t i = 0; i < n; i++) {
		int err;
		bool ok = legacy_allowed(c, &ops[i], &err);

		tap_okf(ok, allowed_name(when, &ops[i]).s, "%s", strerror(-err));
	}
}

static void check_legacy_allowed(struct ctx *c, const char *when)
{
	check_ops_allowed(c, refused_ops, N_REFUSED, when);
	check_ops_allowed(c, accepted_ops, N_ACCEPTED, when);
}

/* The tests check_legacy_allowed() would have reported, failed. */
static void fail_legacy_allowed(const char *when, const char *why)
{
	for (size_t i = 0; i < N_REFUSED; i++)
		tap_okf(false, allowed_name(when, &refused_ops[i]).s, "not run: %s", why);
	for (size_t i = 0; i < N_ACCEPTED; i++)
		tap_okf(false, allowed_name(when, &accepted_ops[i]).s, "not run: %s", why);
}

/* One TEST_ONLY commit; reports whether it was checked with the mark. */
static int check_marked(struct ctx *c, bool *marked)
{
	int ret;

	kmsg_mark();
	ret = atomic_do(c, fill_primary, DRM_MODE_ATOMIC_TEST_ONLY);
	*marked = kmsg_seen("checking", MARK);
	return ret;
}

/* Reports whether a TEST_ONLY commit was checked with the mark, as @want. */
static void check_commit_marked(struct ctx *c, bool want, const char *name)
{
	bool marked = !want;
	int ret = check_marked(c, &marked);

	tap_okf(ret == 0 && marked == want, name, "TEST_ONLY commit: %s, checked %s " MARK,
		strerror(-ret), marked ? "with" : "without");
}

/* Clearing the capability: refused with EINVAL and its debug line. */
static bool clear_refused(int fd)
{
	int ret;

	kmsg_mark();
	ret = kms_set_cap(fd, DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 0);
	return ret == -EINVAL && kmsg_seen(CLEAR_REFUSAL, NULL);
}

/* Setting the capability on a fresh file, in this order. */
static const struct cap_step {
	const char *name;
	uint64_t cap, value;
	int expect;
} cap_steps[] = {
	{ "cap-setting-without-atomic-einval", DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 1, -EINVAL },
	{ "cap-setting-atomic-accepted", DRM_CLIENT_CAP_ATOMIC, 1, 0 },
	{ "cap-setting-value-2-einval", DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 2, -EINVAL },
	/* Nothing to clear before it was set. */
	{ "cap-setting-clear-unset-accepted", DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 0, 0 },
	{ "cap-setting-set-after-atomic-accepted", DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 1, 0 },
	{ "cap-setting-set-again-accepted", DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 1, 0 },
};

/*
 * On a file of its own, not master: only SET_CLIENT_CAP is looked at.
 * Without that file every step still runs, on the bad descriptor, and fails.
 */
static void test_cap_setting(void)
{
	int fd = kms_open_driver("vkms");

	if (fd < 0)
		tap_diag("cap setting: could not open a second file: %s", strerror(-fd));
	for (size_t i = 0; i < ARRAY_SIZE(cap_steps); i++) {
		const struct cap_step *step = &cap_steps[i];
		int ret = kms_set_cap(fd, step->cap, step->value);

		tap_okf(ret == step->expect, step->name, "%s, expected %s",
			strerror(-ret), strerror(-step->expect));
	}
	tap_ok(clear_refused(fd), "cap-setting-clear-refused");
	kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 0);
	kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 1);
	tap_ok(clear_refused(fd), "cap-setting-atomic-reset-keeps-cap");
	if (fd >= 0)
		close(fd);
}

/*
 * The legacy cursor uAPI on a holder's file: EINVAL and the debug line
 * naming the path; with @atomic, the atomic equivalent succeeds.
 */
static void test_refusals(struct ctx *c, const char *when, bool atomic)
{
	for (size_t i = 0; i < N_REFUSED; i++) {
		const struct legacy_op *op = &refused_ops[i];
		int err;
		bool logged;

		kmsg_mark();
		err = op->legacy(c);
		logged = kmsg_seen(op->tag, REFUSAL);
		tap_okf(err == -EINVAL && logged, tap_name("%s-legacy-refused@%s", when, op->name),
			"%s, %s", strerror(-err), logged ? "debug line logged" : "no debug line");
		if (!atomic)
			continue;
		err = op->atomic(c);
		tap_okf(err == 0, tap_name("%s-atomic-equivalent-works@%s", when, op->name),
			"%s", strerror(-err));
	}
}

struct getter {
	/* The variant of its test's name. */
	const char *name;
	bool (*run)(struct ctx *c);
};

static bool get_resources(struct ctx *c)
{
	drmModeResPtr r = drmModeGetResources(c->fd);

	drmModeFreeResources(r);
	return r;
}

static bool get_connector(struct ctx *c)
{
	drmModeConnectorPtr p = drmModeGetConnector(c->fd, c->kms.connector_id);

	drmModeFreeConnector(p);
	return p;
}

static bool get_encoder(struct ctx *c)
{
	drmModeConnectorPtr conn = drmModeGetConnector(c->fd, c->kms.connector_id);
	drmModeEncoderPtr enc = NULL;

	if (conn && conn->count_encoders)
		enc = drmModeGetEncoder(c->fd, conn->encoders[0]);
	drmModeFreeConnector(conn);
	drmModeFreeEncoder(enc);
	return enc;
}

static bool get_crtc(struct ctx *c)
{
	drmModeCrtcPtr p = drmModeGetCrtc(c->fd, c->kms.crtc_id);
	bool ok = p && p->mode_valid;

	drmModeFreeCrtc(p);
	return ok;
}

static bool get_planes(struct ctx *c)
{
	drmModePlaneResPtr r = drmModeGetPlaneResources(c->fd);
	drmModePlanePtr p = drmModeGetPlane(c->fd, c->kms.primary_id);
	bool ok = r && p && p->crtc_id == c->kms.crtc_id;

	drmModeFreePlaneResources(r);
	drmModeFreePlane(p);
	return ok;
}

static bool get_properties(struct ctx *c)
{
	uint64_t active = 0;

	return kms_prop_value(c->fd, c->kms.crtc_id, DRM_MODE_OBJECT_CRTC,
			      "ACTIVE", &active) == 0 && active == 1;
}

static bool get_blob(struct ctx *c)
{
	drmModePropertyBlobPtr b = drmModeGetPropertyBlob(c->fd, c->kms.mode_blob_id);
	bool ok = b && b->length == sizeof(drmModeModeInfo);

	drmModeFreePropertyBlob(b);
	return ok;
}

static bool get_fb(struct ctx *c)
{
	drmModeFB2Ptr fb = drmModeGetFB2(c->fd, c->fb[0].fb_id);
	bool ok = fb && fb->width == c->fb[0].width;

	drmModeFreeFB2(fb);
	return ok;
}

static bool wait_vblank(struct ctx *c)
{
	drmVBlank vbl = { .request.type = DRM_VBLANK_RELATIVE, .request.sequence = 1 };

	return drmWaitVBlank(c->fd, &vbl) == 0;
}

static bool buffer_management(struct ctx *c)
{
	struct kms_fb fb;
	bool ok = kms_fb_create(c->fd, 64, 64, DRM_FORMAT_XRGB8888, &fb) == 0;

	kms_fb_destroy(c->fd, &fb);
	return ok;
}

static const struct getter getters[] = {
	{ "getresources", get_resources },
	{ "getconnector", get_connector },
	{ "getencoder", get_encoder },
	{ "getcrtc", get_crtc },
	{ "getplaneresources-getplane", get_planes },
	{ "obj-getproperties-getproperty", get_properties },
	{ "getpropblob", get_blob },
	{ "getfb2", get_fb },
	{ "wait-vblank", wait_vblank },
	{ "create-dumb-addfb2-rmfb", buffer_management },
};

#define N_GETTERS (sizeof(getters) / sizeof(getters[0]))

static void test_getters(struct ctx *c)
{
	for (size_t i = 0; i < N_GETTERS; i++) {
		bool refused, ok;

		kmsg_mark();
		ok = getters[i].run(c);
		refused = kmsg_seen_either(REFUSAL, CLEAR_REFUSAL);
		tap_okf(ok && !refused, tap_name("with-cap-still-works@%s", getters[i].name),
			"%s, %s", ok ? "worked" : "failed",
			refused ? "a refusal was logged" : "no refusal logged");
	}
}

#define NOT_MASTER "the second file is not master"

/* A second file of the device is master while the first holds the cap. */
static void test_second_file(struct ctx *c)
{
	int first = c->fd, second = kms_open_driver("vkms");
	struct kms_fb first_cursor;
	bool ready;

	ready = second >= 0 &&
		kms_set_cap(second, DRM_CLIENT_CAP_ATOMIC, 1) == 0 &&
		drmDropMaster(first) == 0 && drmSetMaster(second) == 0;
	tap_okf(ready, "second-file-master", "%s",
		ready ? "master" : strerror(second < 0 ? -second : errno));
	if (!ready) {
		fail_legacy_allowed("second-file", NOT_MASTER);
		tap_okf(false, "second-file-commit-unmarked", "not run: %s", NOT_MASTER);
		goto out;
	}
	/* GEM handles are per file: the second file needs its own cursor. */
	first_cursor = c->cursor;
	if (kms_fb_create(second, CURSOR_SIZE, CURSOR_SIZE, DRM_FORMAT_ARGB8888,
			  &c->cursor))
		tap_diag("second file: no cursor buffer: %s", strerror(errno));
	c->fd = second;
	check_legacy_allowed(c, "second-file");
	check_commit_marked(c, false, "second-file-commit-unmarked");
	kms_fb_destroy(second, &c->cursor);
	c->cursor = first_cursor;
	c->fd = first;
	drmDropMaster(second);
out:
	if (drmSetMaster(first))
		tap_diag("first file could not take master back: %s", strerror(errno));
	if (second >= 0)
		close(second);
}

static int ctx_setup(struct ctx *c, int fd)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->fd = fd;
	ret = kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 1);
	if (!ret)
		ret = kms_probe(&c->kms, fd);
	if (ret)
		return ret;
	if (!c->kms.cursor_id)
		return -ENODEV;
	for (int i = 0; i < 2 && !ret; i++) {
		ret = kms_fb_create(fd, c->kms.mode.hdisplay, c->kms.mode.vdisplay,
				    DRM_FORMAT_XRGB8888, &c->fb[i]);
		if (!ret)
			kms_fb_fill(&c->fb[i], i ? 0xff203040 : 0xff405060);
	}
	if (!ret)
		ret = kms_fb_create(fd, CURSOR_SIZE, CURSOR_SIZE, DRM_FORMAT_ARGB8888,
				    &c->cursor);
	if (!ret) {
		kms_fb_fill(&c->cursor, 0xffffffff);
		ret = atomic_modeset(c);
	}
	return ret;
}

static struct ctx ctx;

static void setup(void)
{
	int fd, ret;

	fd = kms_open_driver("vkms");
	if (fd < 0 || kmsg_open() || drm_debug_enable(DRM_UT_KMS | DRM_UT_ATOMIC)) {
		tap_diag("no vkms device, /dev/kmsg or drm.debug: %s",
			 strerror(fd < 0 ? -fd : errno));
		exit(1);
	}
	ret = ctx_setup(&ctx, fd);
	if (ret) {
		tap_diag("setup failed: %s", strerror(-ret));
		exit(1);
	}
}

static void teardown(void)
{
	kms_fb_destroy(ctx.fd, &ctx.cursor);
	kms_fb_destroy(ctx.fd, &ctx.fb[0]);
	kms_fb_destroy(ctx.fd, &ctx.fb[1]);
	close(ctx.fd);
}

static void test_without_cap(struct ctx *c)
{
	check_commit_marked(c, false, "without-cap-commit-unmarked");
	check_legacy_allowed(c, "without-cap");
}

static void test_with_cap(struct ctx *c)
{
	int ret = kms_set_cap(c->fd, DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 1);

	tap_okf(ret == 0, "with-cap-set-accepted", "%s", strerror(-ret));
	check_commit_marked(c, true, "with-cap-commit-marked");
	test_refusals(c, "with-cap", true);
	check_ops_allowed(c, accepted_ops, N_ACCEPTED, "with-cap");
	test_getters(c);
}

/* The promise holds for the file's lifetime. */
static void test_clearing(struct ctx *c)
{
	int ret, err = 0;
	bool logged = false;

	tap_ok(clear_refused(c->fd), "clear-refused");
	test_refusals(c, "after-clear", false);
	check_commit_marked(c, true, "after-clear-commit-marked");
	ret = kms_set_cap(c->fd, DRM_CLIENT_CAP_ATOMIC, 0);
	if (!ret) {
		kmsg_mark();
		err = legacy_cursor_move(c);
		logged = kmsg_seen(CURSOR_TAG, REFUSAL);
	}
	tap_okf(!ret && err == -EINVAL && logged, "atomic-cleared-cursor-move-refused",
		"ATOMIC=0: %s; legacy cursor move: %s, %s", strerror(-ret),
		ret ? "not run" : strerror(-err), logged ? "debug line logged" : "no debug line");
	ret = kms_set_cap(c->fd, DRM_CLIENT_CAP_ATOMIC, 1);
	tap_okf(ret == 0, "atomic-set-again-accepted", "%s", strerror(-ret));
}

#ifdef DRM_CLIENT_CAP_CURSOR_PLANE_HOTSPOT
#define HOTSPOT_MODULE "/tests/cursor_hotspot_device.ko"
#define HOTSPOT_MODULE_NAME "cursor_hotspot_device"
#define HOTSPOT_NEEDED "needs DRM_CLIENT_CAP_CURSOR_PLANE_HOTSPOT on this driver"

/* Which file of the two a step runs on. */
enum { HOLDER, OTHER };

/*
 * A driver needing hotspots shows the cursor plane only to files holding
 * CURSOR_PLANE_HOTSPOT: NO_LEGACY_CURSOR needs it first. Clearing it later
 * is the client's own business, and files without NO_LEGACY_CURSOR are as
 * before.
 */
static const struct hotspot_step {
	const char *name;
	int file;
	uint64_t cap, value;
	int expect;
	const char *logged;	/* the debug line a refusal logs */
} hotspot_steps[] = {
	{ "hotspot-atomic-accepted", HOLDER, DRM_CLIENT_CAP_ATOMIC, 1, 0, NULL },
	{ "hotspot-cap-refused-without-hotspot-cap", HOLDER,
	  DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 1, -EINVAL, HOTSPOT_NEEDED },
	{ "hotspot-hotspot-cap-accepted", HOLDER, DRM_CLIENT_CAP_CURSOR_PLANE_HOTSPOT, 1, 0, NULL },
	{ "hotspot-cap-accepted-after-hotspot-cap", HOLDER,
	  DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 1, 0, NULL },
	{ "hotspot-holder-clearing-hotspot-cap-accepted", HOLDER,
	  DRM_CLIENT_CAP_CURSOR_PLANE_HOTSPOT, 0, 0, NULL },
	{ "hotspot-other-atomic-accepted", OTHER, DRM_CLIENT_CAP_ATOMIC, 1, 0, NULL },
	{ "hotspot-other-hotspot-cap-accepted", OTHER,
	  DRM_CLIENT_CAP_CURSOR_PLANE_HOTSPOT, 1, 0, NULL },
	{ "hotspot-other-clearing-hotspot-cap-accepted", OTHER,
	  DRM_CLIENT_CAP_CURSOR_PLANE_HOTSPOT, 0, 0, NULL },
};

static int load_module(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, "", 0) ? -errno : 0;
	close(fd);
	return ret;
}

/* On a device declaring DRIVER_CURSOR_HOTSPOT, loaded from a test module. */
static void test_hotspot_driver(char **argv)
{
	int fd[2], ret;

	(void)argv;
	ret = load_module(HOTSPOT_MODULE);
	if (!tap_okf(ret == 0, "hotspot-device-loaded", "%s: %s", HOTSPOT_MODULE,
		     strerror(-ret)))
		return;
	fd[HOLDER] = kms_open_driver("cursor_hotspot");
	fd[OTHER] = kms_open_driver("cursor_hotspot");
	ret = fd[HOLDER] < 0 ? fd[HOLDER] : fd[OTHER] < 0 ? fd[OTHER] : 0;
	tap_okf(ret == 0, "hotspot-device-opened", "two files: %s", strerror(-ret));
	for (size_t i = 0; i < ARRAY_SIZE(hotspot_steps); i++) {
		const struct hotspot_step *step = &hotspot_steps[i];
		bool logged;

		kmsg_mark();
		ret = kms_set_cap(fd[step->file], step->cap, step->value);
		logged = !step->logged || kmsg_seen(step->logged, NULL);
		tap_okf(ret == step->expect && logged, step->name, "%s, expected %s%s",
			strerror(-ret), strerror(-step->expect),
			logged ? "" : ", no debug line");
	}
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	ret = syscall(SYS_delete_module, HOTSPOT_MODULE_NAME, O_NONBLOCK) ? -errno : 0;
	tap_okf(ret == 0, "hotspot-device-unloaded", "%s", strerror(-ret));
}
#else
static void test_hotspot_driver(char **argv)
{
	(void)argv;
	tap_skip("hotspot-driver", "this kernel has no DRIVER_CURSOR_HOTSPOT");
}
#endif

/* One story on one file: the capability, once set, is never cleared. */
static void test_capability(char **argv)
{
	(void)argv;
	test_cap_setting();
	test_without_cap(&ctx);
	test_with_cap(&ctx);
	test_clearing(&ctx);
	test_second_file(&ctx);
	test_refusals(&ctx, "after-second-file", false);
}

static const struct tap_subtest subtests[] = {
	{ "capability", "", 0, test_capability },
	{ "hotspot-driver", "", 0, test_hotspot_driver },
};

int main(int argc, char **argv)
{
	const struct tap_program program = { subtests, ARRAY_SIZE(subtests), setup, teardown };

	return tap_main(&program, argc, argv);
}
