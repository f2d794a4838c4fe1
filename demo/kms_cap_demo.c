// SPDX-License-Identifier: MIT
/*
 * kms_cap_demo: what a compositor sees on the patched kernel. Lists the
 * CRTC, connector and planes of vkms, then shows
 * DRM_CLIENT_CAP_NO_LEGACY_CURSOR at work: the legacy cursor ioctl before and
 * after opting in, the same cursor move as an atomic commit, a legacy page
 * flip the cap leaves alone, and the cap staying set when asked to go.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <drm_fourcc.h>

#include "kms_util.h"

static const char *plane_type_name(uint64_t type)
{
	switch (type) {
	case DRM_PLANE_TYPE_PRIMARY: return "primary";
	case DRM_PLANE_TYPE_CURSOR: return "cursor";
	case DRM_PLANE_TYPE_OVERLAY: return "overlay";
	}
	return "?";
}

static void list_planes(int fd)
{
	drmModePlaneResPtr res = drmModeGetPlaneResources(fd);

	for (uint32_t i = 0; res && i < res->count_planes; i++) {
		drmModePlanePtr p = drmModeGetPlane(fd, res->planes[i]);
		uint64_t type = 0, zpos;
		char zbuf[32] = "none";

		if (!p)
			continue;
		kms_prop_value(fd, p->plane_id, DRM_MODE_OBJECT_PLANE, "type", &type);
		if (!kms_prop_value(fd, p->plane_id, DRM_MODE_OBJECT_PLANE, "zpos", &zpos))
			snprintf(zbuf, sizeof(zbuf), "%llu", (unsigned long long)zpos);
		printf("  plane %u: %-7s crtcs 0x%x, %u formats, zpos %s\n", p->plane_id,
		       plane_type_name(type), p->possible_crtcs, p->count_formats, zbuf);
		drmModeFreePlane(p);
	}
	drmModeFreePlaneResources(res);
}

static const char *result(int ret)
{
	return ret ? strerror(-ret) : "ok";
}

static int move_cursor_atomic(int fd, const struct kms_device *kms, int x)
{
	drmModeAtomicReqPtr req = drmModeAtomicAlloc();
	int ret = kms_add(fd, req, kms->cursor_id, DRM_MODE_OBJECT_PLANE, "CRTC_X", x);

	if (!ret)
		ret = kms_commit(fd, req, 0);
	drmModeAtomicFree(req);
	return ret;
}

int main(void)
{
	struct kms_device kms;
	struct kms_fb primary, cursor;
	drmModeAtomicReqPtr req;
	int fd, ret;

	fd = kms_open_driver("vkms");
	if (fd < 0 || kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 1) || kms_probe(&kms, fd)) {
		fprintf(stderr, "no usable vkms device\n");
		return 1;
	}
	printf("vkms: CRTC %u, connector %u, mode %s\n", kms.crtc_id,
	       kms.connector_id, kms.mode.name);
	list_planes(fd);

	if (kms_fb_create(fd, kms.mode.hdisplay, kms.mode.vdisplay,
			  DRM_FORMAT_XRGB8888, &primary) ||
	    kms_fb_create(fd, 64, 64, DRM_FORMAT_ARGB8888, &cursor))
		return 1;
	req = drmModeAtomicAlloc();
	kms_add(fd, req, kms.connector_id, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID", kms.crtc_id);
	kms_add(fd, req, kms.crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID", kms.mode_blob_id);
	kms_add(fd, req, kms.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1);
	kms_add_plane(fd, req, kms.primary_id, kms.crtc_id, primary.fb_id,
		      primary.width, primary.height, 0, 0, primary.width, primary.height);
	kms_add_plane(fd, req, kms.cursor_id, kms.crtc_id, cursor.fb_id, 64, 64,
		      10, 10, 64, 64);
	ret = kms_commit(fd, req, DRM_MODE_ATOMIC_ALLOW_MODESET);
	drmModeAtomicFree(req);
	printf("\natomic modeset with primary and cursor: %s\n", result(ret));

	ret = drmModeMoveCursor(fd, kms.crtc_id, 50, 50) ? -errno : 0;
	printf("without the cap:  legacy DRM_IOCTL_MODE_CURSOR move:   %s\n", result(ret));
	ret = kms_set_cap(fd, DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 1);
	printf("set DRM_CLIENT_CAP_NO_LEGACY_CURSOR=1 (cap %d):      %s\n",
	       DRM_CLIENT_CAP_NO_LEGACY_CURSOR, result(ret));
	ret = drmModeMoveCursor(fd, kms.crtc_id, 60, 60) ? -errno : 0;
	printf("with the cap:     legacy DRM_IOCTL_MODE_CURSOR move:   %s\n", result(ret));
	printf("with the cap:     cursor move as an atomic commit:     %s\n",
	       result(move_cursor_atomic(fd, &kms, 60)));
	ret = drmModePageFlip(fd, kms.crtc_id, primary.fb_id, DRM_MODE_PAGE_FLIP_EVENT, NULL) ?
	      -errno : kms_wait_event(fd, 2000);
	printf("with the cap:     legacy DRM_IOCTL_MODE_PAGE_FLIP:     %s\n", result(ret));
	ret = kms_set_cap(fd, DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 0);
	printf("clear the cap (it holds until close):                %s\n", result(ret));
	ret = drmModeMoveCursor(fd, kms.crtc_id, 70, 70) ? -errno : 0;
	printf("after that:       legacy DRM_IOCTL_MODE_CURSOR move:   %s\n", result(ret));

	kms_fb_destroy(fd, &cursor);
	kms_fb_destroy(fd, &primary);
	close(fd);
	return 0;
}
