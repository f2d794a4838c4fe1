// SPDX-License-Identifier: MIT
/*
 * kms_atomic_only: DRM_CLIENT_CAP_ATOMIC_ONLY, end to end on vkms.
 *
 * A client that sets the capability promises to change KMS state only with
 * atomic commits. The kernel holds it to that: every legacy state-changing
 * ioctl of that file fails with EINVAL and a drm debug line naming the
 * handler, while the same change through DRM_IOCTL_MODE_ATOMIC succeeds and
 * is checked as coming from an atomic-only client. Other files, and the same
 * file after clearing the capability, keep the legacy behaviour.
 *
 * Each legacy operation is first run without the capability and must
 * succeed: an EINVAL caused by a bad argument can then never pass for the
 * refusal. "--comm NAME" renames the process first, to show that the kernel
 * does not care what the client is called.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <drm_fourcc.h>

#include "kms_util.h"
#include "tap.h"

#ifndef DRM_CLIENT_CAP_ATOMIC_ONLY
#error "build against the patched kernel's uapi headers (make headers_install)"
#endif

#define CURSOR_SIZE 64
#define DRM_UT_KMS 0x04
#define DRM_UT_ATOMIC 0x10
#define REFUSAL "refused: file holds DRM_CLIENT_CAP_ATOMIC_ONLY"
#define ATOMIC_ONLY_CHECK "(atomic-only client)"

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
	return kms_wait_event(c->fd, 2000);
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

static int fill_flip(struct ctx *c, drmModeAtomicReqPtr req)
{
	return kms_add(c->fd, req, c->kms.primary_id, DRM_MODE_OBJECT_PLANE,
		       "FB_ID", c->fb[!c->front].fb_id);
}

static int fill_plane_prop(struct ctx *c, drmModeAtomicReqPtr req)
{
	return kms_add(c->fd, req, c->kms.primary_id, DRM_MODE_OBJECT_PLANE, "CRTC_X", 0);
}

static int fill_crtc_prop(struct ctx *c, drmModeAtomicReqPtr req)
{
	return kms_add(c->fd, req, c->kms.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1);
}

static int fill_connector_prop(struct ctx *c, drmModeAtomicReqPtr req)
{
	return kms_add(c->fd, req, c->kms.connector_id, DRM_MODE_OBJECT_CONNECTOR,
		       "CRTC_ID", c->kms.crtc_id);
}

static int atomic_modeset(struct ctx *c)
{
	return atomic_do(c, fill_modeset, DRM_MODE_ATOMIC_ALLOW_MODESET);
}

static int atomic_primary(struct ctx *c)
{
	return atomic_do(c, fill_primary, 0);
}

static int atomic_cursor(struct ctx *c)
{
	return atomic_do(c, fill_cursor, 0);
}

static int atomic_cursor_move(struct ctx *c)
{
	return atomic_do(c, fill_cursor_move, 0);
}

static int atomic_flip(struct ctx *c)
{
	int ret = atomic_do(c, fill_flip,
			    DRM_MODE_ATOMIC_NONBLOCK | DRM_MODE_PAGE_FLIP_EVENT);

	if (ret)
		return ret;
	c->front = !c->front;
	return kms_wait_event(c->fd, 2000);
}

static int atomic_plane_prop(struct ctx *c)
{
	return atomic_do(c, fill_plane_prop, 0);
}

static int atomic_crtc_prop(struct ctx *c)
{
	return atomic_do(c, fill_crtc_prop, 0);
}

static int atomic_connector_prop(struct ctx *c)
{
	return atomic_do(c, fill_connector_prop, 0);
}

struct legacy_op {
	const char *name;
	/* Kernel handler, as the refusal's debug line names it. */
	const char *handler;
	int (*legacy)(struct ctx *c);
	/* The same change through DRM_IOCTL_MODE_ATOMIC, if the device has one. */
	int (*atomic)(struct ctx *c);
	/* vkms has no gamma table: SETGAMMA fails on its own, but not with EINVAL. */
	bool driver_may_refuse;
};

#define OP(_name, _handler, _legacy, _atomic) \
	{ .name = _name, .handler = _handler, .legacy = _legacy, .atomic = _atomic }

static const struct legacy_op ops[] = {
	OP("SETCRTC", "drm_mode_setcrtc", legacy_setcrtc, atomic_modeset),
	OP("SETPLANE", "drm_mode_setplane", legacy_setplane, atomic_primary),
	OP("CURSOR set", "drm_mode_cursor_ioctl", legacy_cursor_set, atomic_cursor),
	OP("CURSOR move", "drm_mode_cursor_ioctl", legacy_cursor_move, atomic_cursor_move),
	OP("CURSOR2", "drm_mode_cursor2_ioctl", legacy_cursor2, atomic_cursor),
	OP("PAGE_FLIP", "drm_mode_page_flip_ioctl", legacy_page_flip, atomic_flip),
	{ .name = "SETGAMMA", .handler = "drm_mode_gamma_set_ioctl",
	  .legacy = legacy_setgamma, .driver_may_refuse = true },
	OP("SETPROPERTY connector DPMS", "drm_connector_property_set_ioctl",
	   legacy_connector_dpms, atomic_crtc_prop),
	OP("OBJ_SETPROPERTY plane CRTC_X", "drm_mode_obj_set_property_ioctl",
	   legacy_plane_prop, atomic_plane_prop),
	OP("OBJ_SETPROPERTY crtc ACTIVE", "drm_mode_obj_set_property_ioctl",
	   legacy_crtc_prop, atomic_crtc_prop),
	OP("OBJ_SETPROPERTY connector CRTC_ID", "drm_mode_obj_set_property_ioctl",
	   legacy_connector_prop, atomic_connector_prop),
};

#define N_OPS (sizeof(ops) / sizeof(ops[0]))

/*
 * A legacy call that the atomic-only rule did not touch: it either worked,
 * or (for ops the driver itself may refuse) failed with something other
 * than the rule's EINVAL, and logged no refusal.
 */
static bool legacy_allowed(struct ctx *c, const struct legacy_op *op, int *err)
{
	bool refused;

	kmsg_mark();
	*err = op->legacy(c);
	refused = kmsg_seen(op->handler, REFUSAL);
	if (op->driver_may_refuse)
		return !refused && *err != -EINVAL;
	return !refused && *err == 0;
}

static void check_legacy_allowed(struct ctx *c, const char *when)
{
	for (size_t i = 0; i < N_OPS; i++) {
		int err;
		bool ok = legacy_allowed(c, &ops[i], &err);

		tap_ok(ok, "%s: legacy %s works (%s)", when, ops[i].name, strerror(-err));
	}
}

/* One TEST_ONLY commit; reports whether its check ran as atomic-only. */
static int check_marked(struct ctx *c, bool *marked)
{
	int ret;

	kmsg_mark();
	ret = atomic_do(c, fill_primary, DRM_MODE_ATOMIC_TEST_ONLY);
	*marked = kmsg_seen("checking", ATOMIC_ONLY_CHECK);
	return ret;
}

static void test_cap_setting(void)
{
	int fd = kms_open_driver("vkms");

	if (fd < 0) {
		for (int i = 0; i < 6; i++)
			tap_ok(false, "cap setting: could not open a second file");
		return;
	}
	tap_ok(kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC_ONLY, 1) == -EINVAL,
	       "cap setting: ATOMIC_ONLY without ATOMIC fails with EINVAL");
	tap_ok(kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 1) == 0,
	       "cap setting: ATOMIC=1 succeeds");
	tap_ok(kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC_ONLY, 2) == -EINVAL,
	       "cap setting: ATOMIC_ONLY=2 fails with EINVAL");
	tap_ok(kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC_ONLY, 1) == 0,
	       "cap setting: ATOMIC_ONLY=1 after ATOMIC succeeds");
	tap_ok(kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC_ONLY, 0) == 0,
	       "cap setting: ATOMIC_ONLY=0 clears it");
	kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 0);
	tap_ok(kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC_ONLY, 1) == -EINVAL,
	       "cap setting: ATOMIC_ONLY after ATOMIC was cleared fails with EINVAL");
	close(fd);
}

static void test_refusals(struct ctx *c)
{
	for (size_t i = 0; i < N_OPS; i++) {
		const struct legacy_op *op = &ops[i];
		int err;
		bool logged;

		kmsg_mark();
		err = op->legacy(c);
		logged = kmsg_seen(op->handler, REFUSAL);
		tap_ok(err == -EINVAL && logged,
		       "with cap: legacy %s refused with EINVAL and a debug line (%s%s)",
		       op->name, strerror(-err), logged ? "" : ", no debug line");

		if (!op->atomic) {
			tap_skip("no atomic equivalent on this device",
				 "with cap: atomic equivalent of %s succeeds", op->name);
			continue;
		}
		err = op->atomic(c);
		tap_ok(err == 0, "with cap: atomic equivalent of %s succeeds (%s)",
		       op->name, strerror(-err));
	}
}

struct getter {
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
	{ "GETRESOURCES", get_resources },
	{ "GETCONNECTOR", get_connector },
	{ "GETENCODER", get_encoder },
	{ "GETCRTC", get_crtc },
	{ "GETPLANERESOURCES and GETPLANE", get_planes },
	{ "OBJ_GETPROPERTIES and GETPROPERTY", get_properties },
	{ "GETPROPBLOB", get_blob },
	{ "GETFB2", get_fb },
	{ "WAIT_VBLANK", wait_vblank },
	{ "CREATE_DUMB, ADDFB2, RMFB", buffer_management },
};

#define N_GETTERS (sizeof(getters) / sizeof(getters[0]))

static void test_getters(struct ctx *c)
{
	for (size_t i = 0; i < N_GETTERS; i++) {
		bool refused, ok;

		kmsg_mark();
		ok = getters[i].run(c);
		refused = kmsg_seen(REFUSAL, NULL);
		tap_ok(ok && !refused, "with cap: %s still works", getters[i].name);
	}
}

/* A second file of the device is master while the first holds the cap. */
static void test_second_file(struct ctx *c)
{
	int first = c->fd, second = kms_open_driver("vkms");
	struct kms_fb first_cursor;
	bool marked = true;
	bool ready;

	ready = second >= 0 &&
		kms_set_cap(second, DRM_CLIENT_CAP_ATOMIC, 1) == 0 &&
		drmDropMaster(first) == 0 && drmSetMaster(second) == 0;
	tap_ok(ready, "second file: becomes master while the first holds the cap");
	if (!ready) {
		for (size_t i = 0; i < N_OPS + 1; i++)
			tap_ok(false, "second file: not run");
		goto out;
	}
	/* GEM handles are per file: the second file needs its own cursor. */
	first_cursor = c->cursor;
	if (kms_fb_create(second, CURSOR_SIZE, CURSOR_SIZE, DRM_FORMAT_ARGB8888,
			  &c->cursor))
		tap_diag("second file: no cursor buffer: %s", strerror(errno));
	c->fd = second;
	check_legacy_allowed(c, "second file");
	tap_ok(check_marked(c, &marked) == 0 && !marked,
	       "second file: its atomic commits are not checked as atomic-only");
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

static int setup(struct ctx *c, int fd)
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

static void print_identity(void)
{
	char comm[32] = "", exe[256] = "";
	FILE *f = fopen("/proc/self/comm", "r");
	ssize_t n;

	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0)
		exe[n] = '\0';
	tap_diag("running as comm=%s exe=%s", comm, exe);
}

int main(int argc, char **argv)
{
	/* cap setting, marks, masters and clearing: 15; per op: 5; getters */
	const int planned = 15 + 5 * N_OPS + N_GETTERS;
	struct ctx c;
	bool marked;
	int fd, ret;

	if (argc == 3 && strcmp(argv[1], "--comm") == 0)
		prctl(PR_SET_NAME, argv[2]);
	tap_plan(planned);
	print_identity();

	fd = kms_open_driver("vkms");
	if (fd < 0 || kmsg_open() || drm_debug_enable(DRM_UT_KMS | DRM_UT_ATOMIC)) {
		tap_diag("no vkms device, /dev/kmsg or drm.debug: %s", strerror(errno));
		return 1;
	}
	ret = setup(&c, fd);
	if (ret) {
		tap_diag("setup failed: %s", strerror(-ret));
		return 1;
	}

	test_cap_setting();

	tap_ok(check_marked(&c, &marked) == 0 && !marked,
	       "without cap: atomic commits are not checked as atomic-only");
	check_legacy_allowed(&c, "without cap");

	tap_ok(kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC_ONLY, 1) == 0,
	       "with cap: ATOMIC_ONLY=1 accepted");
	tap_ok(check_marked(&c, &marked) == 0 && marked,
	       "with cap: atomic commits are checked as atomic-only");
	test_refusals(&c);
	test_getters(&c);

	test_second_file(&c);

	tap_ok(kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC_ONLY, 0) == 0,
	       "after clearing: ATOMIC_ONLY=0 accepted");
	check_legacy_allowed(&c, "after clearing");
	tap_ok(check_marked(&c, &marked) == 0 && !marked,
	       "after clearing: atomic commits are not checked as atomic-only");

	kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC_ONLY, 1);
	kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 0);
	tap_ok(legacy_cursor_move(&c) == 0,
	       "clearing ATOMIC withdraws ATOMIC_ONLY: legacy cursor move works");
	kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 1);
	tap_ok(legacy_cursor_move(&c) == 0,
	       "re-enabling ATOMIC does not bring ATOMIC_ONLY back");

	kms_fb_destroy(fd, &c.cursor);
	kms_fb_destroy(fd, &c.fb[0]);
	kms_fb_destroy(fd, &c.fb[1]);
	close(fd);
	return tap_exit_status();
}
