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
	OP("CURSOR set", CURSOR_TAG, legacy_cursor_set, atomic_cursor),
	OP("CURSOR move", CURSOR_TAG, legacy_cursor_move, atomic_cursor_move),
	OP("CURSOR2", CURSOR_TAG, legacy_cursor2, atomic_cursor),
	OP("SETPLANE cursor plane", SETPLANE_TAG, legacy_setplane_cursor, atomic_cursor),
};

/* Every other legacy ioctl that changes KMS state: holders keep them. */
static const struct legacy_op accepted_ops[] = {
	OP("SETCRTC", NULL, legacy_setcrtc, NULL),
	OP("SETPLANE primary plane", NULL, legacy_setplane, NULL),
	OP("PAGE_FLIP", NULL, legacy_page_flip, NULL),
	{ .name = "SETGAMMA", .legacy = legacy_setgamma, .driver_may_refuse = true },
	OP("SETPROPERTY connector DPMS", NULL, legacy_connector_dpms, NULL),
	OP("OBJ_SETPROPERTY plane CRTC_X", NULL, legacy_plane_prop, NULL),
	OP("OBJ_SETPROPERTY crtc ACTIVE", NULL, legacy_crtc_prop, NULL),
	OP("OBJ_SETPROPERTY connector CRTC_ID", NULL, legacy_connector_prop, NULL),
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

static void check_ops_allowed(struct ctx *c, const struct legacy_op *ops, size_t n,
			      const char *when)
{
	for (size_t i = 0; i < n; i++) {
		int err;
		bool ok = legacy_allowed(c, &ops[i], &err);

		tap_ok(ok, "%s: legacy %s works, not refused, its commit not marked (%s)",
		       when, ops[i].name, strerror(-err));
	}
}

static void check_legacy_allowed(struct ctx *c, const char *when)
{
	check_ops_allowed(c, refused_ops, N_REFUSED, when);
	check_ops_allowed(c, accepted_ops, N_ACCEPTED, when);
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

/* Clearing the capability: refused with EINVAL and its debug line. */
static bool clear_refused(int fd)
{
	int ret;

	kmsg_mark();
	ret = kms_set_cap(fd, DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 0);
	return ret == -EINVAL && kmsg_seen(CLEAR_REFUSAL, NULL);
}

#define CAP_SETTING_TESTS 8

/* On a file of its own, not master: only SET_CLIENT_CAP is looked at. */
static void test_cap_setting(void)
{
	int fd = kms_open_driver("vkms");

	if (fd < 0) {
		for (int i = 0; i < CAP_SETTING_TESTS; i++)
			tap_ok(false, "cap setting: could not open a second file");
		return;
	}
	tap_ok(kms_set_cap(fd, DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 1) == -EINVAL,
	       "cap setting: NO_LEGACY_CURSOR without ATOMIC fails with EINVAL");
	tap_ok(kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 1) == 0,
	       "cap setting: ATOMIC=1 succeeds");
	tap_ok(kms_set_cap(fd, DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 2) == -EINVAL,
	       "cap setting: NO_LEGACY_CURSOR=2 fails with EINVAL");
	tap_ok(kms_set_cap(fd, DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 0) == 0,
	       "cap setting: NO_LEGACY_CURSOR=0 before it was set succeeds (nothing to clear)");
	tap_ok(kms_set_cap(fd, DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 1) == 0,
	       "cap setting: NO_LEGACY_CURSOR=1 after ATOMIC succeeds");
	tap_ok(kms_set_cap(fd, DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 1) == 0,
	       "cap setting: NO_LEGACY_CURSOR=1 again succeeds");
	tap_ok(clear_refused(fd),
	       "cap setting: NO_LEGACY_CURSOR=0 after 1 fails with EINVAL and a debug line");
	kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 0);
	kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 1);
	tap_ok(clear_refused(fd),
	       "cap setting: clearing ATOMIC and setting it again did not clear NO_LEGACY_CURSOR");
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
		tap_ok(err == -EINVAL && logged,
		       "%s: legacy %s refused with EINVAL and a debug line (%s%s)",
		       when, op->name, strerror(-err), logged ? "" : ", no debug line");
		if (!atomic)
			continue;
		err = op->atomic(c);
		tap_ok(err == 0, "%s: atomic equivalent of %s succeeds (%s)",
		       when, op->name, strerror(-err));
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
		refused = kmsg_seen_either(REFUSAL, CLEAR_REFUSAL);
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
		for (size_t i = 0; i < N_REFUSED + N_ACCEPTED + 1; i++)
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
	       "second file: its atomic commits are not marked " MARK);
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
	const int planned = CAP_SETTING_TESTS + 9 + 6 * N_REFUSED + 3 * N_ACCEPTED +
			    N_GETTERS;
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
	       "without cap: atomic commits are not marked " MARK);
	check_legacy_allowed(&c, "without cap");

	tap_ok(kms_set_cap(fd, DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 1) == 0,
	       "with cap: NO_LEGACY_CURSOR=1 accepted");
	tap_ok(check_marked(&c, &marked) == 0 && marked,
	       "with cap: atomic commits are marked " MARK);
	test_refusals(&c, "with cap", true);
	check_ops_allowed(&c, accepted_ops, N_ACCEPTED, "with cap");
	test_getters(&c);

	/* The promise holds for the file's lifetime. */
	tap_ok(clear_refused(fd),
	       "clearing: NO_LEGACY_CURSOR=0 refused with EINVAL and a debug line");
	test_refusals(&c, "after the refused clear", false);
	tap_ok(check_marked(&c, &marked) == 0 && marked,
	       "after the refused clear: atomic commits are still marked " MARK);
	ret = kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 0);
	if (!ret) {
		kmsg_mark();
		ret = legacy_cursor_move(&c);
		ret = ret == -EINVAL && kmsg_seen(CURSOR_TAG, REFUSAL) ? 0 : -1;
	}
	tap_ok(ret == 0, "clearing ATOMIC leaves NO_LEGACY_CURSOR set: legacy cursor move refused");
	tap_ok(kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 1) == 0,
	       "ATOMIC=1 again accepted");

	test_second_file(&c);
	test_refusals(&c, "after another file was master", false);

	kms_fb_destroy(fd, &c.cursor);
	kms_fb_destroy(fd, &c.fb[0]);
	kms_fb_destroy(fd, &c.fb[1]);
	close(fd);
	return tap_exit_status();
}
