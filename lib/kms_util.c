// SPDX-License-Identifier: MIT
#include "kms_util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <drm_fourcc.h>

int kms_open_driver(const char *driver)
{
	char path[64];

	for (int i = 0; i < 16; i++) {
		drmVersionPtr ver;
		int fd;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		ver = drmGetVersion(fd);
		if (ver && strcmp(ver->name, driver) == 0) {
			drmFreeVersion(ver);
			return fd;
		}
		drmFreeVersion(ver);
		close(fd);
	}
	return -ENODEV;
}

uint32_t kms_find_writeback(int fd)
{
	drmModeResPtr res = drmModeGetResources(fd);
	uint32_t id = 0;

	for (int i = 0; res && i < res->count_connectors && !id; i++) {
		drmModeConnectorPtr c = drmModeGetConnector(fd, res->connectors[i]);

		if (c && c->connector_type == DRM_MODE_CONNECTOR_WRITEBACK)
			id = c->connector_id;
		drmModeFreeConnector(c);
	}
	drmModeFreeResources(res);
	return id;
}

int kms_set_cap(int fd, uint64_t cap, uint64_t value)
{
	return drmSetClientCap(fd, cap, value) ? -errno : 0;
}

int kms_make_holder(int fd)
{
	int ret;

	if (fd < 0)
		return fd;
	ret = kms_set_cap(fd, DRM_CLIENT_CAP_ATOMIC, 1) ?:
	      kms_set_cap(fd, DRM_CLIENT_CAP_WRITEBACK_CONNECTORS, 1) ?:
	      kms_set_cap(fd, DRM_CLIENT_CAP_NO_LEGACY_CURSOR, 1);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

static int plane_type(int fd, uint32_t plane_id, uint64_t *type)
{
	return kms_prop_value(fd, plane_id, DRM_MODE_OBJECT_PLANE, "type", type);
}

int kms_probe(struct kms_device *kms, int fd)
{
	drmModeResPtr res;
	drmModePlaneResPtr pres;
	drmModeCrtcPtr crtc;
	int ret = -ENODEV;

	memset(kms, 0, sizeof(*kms));
	kms->fd = fd;
	/* Plane types are only visible with universal planes. */
	if (kms_set_cap(fd, DRM_CLIENT_CAP_UNIVERSAL_PLANES, 1))
		return -errno;

	res = drmModeGetResources(fd);
	if (!res)
		return -errno;
	if (res->count_crtcs < 1)
		goto out;
	kms->crtc_id = res->crtcs[0];
	kms->crtc_index = 0;

	for (int i = 0; i < res->count_connectors && !kms->connector_id; i++) {
		drmModeConnectorPtr conn = drmModeGetConnector(fd, res->connectors[i]);

		if (conn && conn->connection == DRM_MODE_CONNECTED &&
		    conn->count_modes > 0 &&
		    conn->connector_type != DRM_MODE_CONNECTOR_WRITEBACK) {
			kms->connector_id = conn->connector_id;
			kms->mode = conn->modes[0];
			for (int m = 0; m < conn->count_modes; m++) {
				if (conn->modes[m].type & DRM_MODE_TYPE_PREFERRED) {
					kms->mode = conn->modes[m];
					break;
				}
			}
		}
		drmModeFreeConnector(conn);
	}
	if (!kms->connector_id)
		goto out;

	crtc = drmModeGetCrtc(fd, kms->crtc_id);
	if (crtc) {
		kms->gamma_size = crtc->gamma_size;
		drmModeFreeCrtc(crtc);
	}

	pres = drmModeGetPlaneResources(fd);
	if (!pres)
		goto out;
	for (uint32_t i = 0; i < pres->count_planes; i++) {
		drmModePlanePtr plane = drmModeGetPlane(fd, pres->planes[i]);
		uint64_t type;

		if (!plane)
			continue;
		if ((plane->possible_crtcs & (1u << kms->crtc_index)) &&
		    !plane_type(fd, plane->plane_id, &type)) {
			if (type == DRM_PLANE_TYPE_PRIMARY && !kms->primary_id)
				kms->primary_id = plane->plane_id;
			else if (type == DRM_PLANE_TYPE_CURSOR && !kms->cursor_id)
				kms->cursor_id = plane->plane_id;
			else if (type == DRM_PLANE_TYPE_OVERLAY &&
				 kms->overlay_count < KMS_MAX_OVERLAYS)
				kms->overlay_ids[kms->overlay_count++] = plane->plane_id;
		}
		drmModeFreePlane(plane);
	}
	drmModeFreePlaneResources(pres);
	if (!kms->primary_id)
		goto out;

	if (drmModeCreatePropertyBlob(fd, &kms->mode, sizeof(kms->mode),
				      &kms->mode_blob_id)) {
		ret = -errno;
		goto out;
	}
	ret = 0;
out:
	drmModeFreeResources(res);
	return ret;
}

static drmModePropertyPtr find_prop(int fd, uint32_t obj_id, uint32_t obj_type,
				    const char *name, uint64_t *value)
{
	drmModeObjectPropertiesPtr props;
	drmModePropertyPtr found = NULL;

	props = drmModeObjectGetProperties(fd, obj_id, obj_type);
	if (!props)
		return NULL;
	for (uint32_t i = 0; i < props->count_props && !found; i++) {
		drmModePropertyPtr prop = drmModeGetProperty(fd, props->props[i]);

		if (prop && strcmp(prop->name, name) == 0) {
			found = prop;
			if (value)
				*value = props->prop_values[i];
		} else {
			drmModeFreeProperty(prop);
		}
	}
	drmModeFreeObjectProperties(props);
	return found;
}

uint32_t kms_prop_id(int fd, uint32_t obj_id, uint32_t obj_type, const char *name)
{
	drmModePropertyPtr prop = find_prop(fd, obj_id, obj_type, name, NULL);
	uint32_t id = prop ? prop->prop_id : 0;

	drmModeFreeProperty(prop);
	return id;
}

int kms_prop_value(int fd, uint32_t obj_id, uint32_t obj_type, const char *name,
		   uint64_t *value)
{
	drmModePropertyPtr prop = find_prop(fd, obj_id, obj_type, name, value);

	if (!prop)
		return -ENOENT;
	drmModeFreeProperty(prop);
	return 0;
}

int kms_add_id(drmModeAtomicReqPtr req, uint32_t obj_id, uint32_t prop_id,
	       const char *name, uint64_t value)
{
	if (!prop_id) {
		fprintf(stderr, "object %u has no property %s\n", obj_id, name);
		return -ENOENT;
	}
	return drmModeAtomicAddProperty(req, obj_id, prop_id, value) < 0 ? -ENOMEM : 0;
}

int kms_add(int fd, drmModeAtomicReqPtr req, uint32_t obj_id, uint32_t obj_type,
	    const char *name, uint64_t value)
{
	return kms_add_id(req, obj_id, kms_prop_id(fd, obj_id, obj_type, name), name, value);
}

const char *const kms_plane_props[KMS_PLANE_PROPS] = {
	"FB_ID", "CRTC_ID", "SRC_X", "SRC_Y", "SRC_W", "SRC_H",
	"CRTC_X", "CRTC_Y", "CRTC_W", "CRTC_H",
};

void kms_plane_geometry(uint64_t values[KMS_PLANE_PROPS], uint32_t crtc_id, uint32_t fb_id,
			uint32_t src_w, uint32_t src_h,
			int32_t crtc_x, int32_t crtc_y, uint32_t crtc_w, uint32_t crtc_h)
{
	const uint64_t v[KMS_PLANE_PROPS] = {
		fb_id, crtc_id, 0, 0, (uint64_t)src_w << 16, (uint64_t)src_h << 16,
		(uint64_t)(int64_t)crtc_x, (uint64_t)(int64_t)crtc_y, crtc_w, crtc_h,
	};

	memcpy(values, v, sizeof(v));
}

int kms_add_plane(int fd, drmModeAtomicReqPtr req, uint32_t plane_id,
		  uint32_t crtc_id, uint32_t fb_id,
		  uint32_t src_w, uint32_t src_h,
		  int32_t crtc_x, int32_t crtc_y, uint32_t crtc_w, uint32_t crtc_h)
{
	uint64_t v[KMS_PLANE_PROPS];
	int ret = 0;

	kms_plane_geometry(v, crtc_id, fb_id, src_w, src_h, crtc_x, crtc_y, crtc_w, crtc_h);
	for (int i = 0; i < KMS_PLANE_PROPS; i++)
		ret |= kms_add(fd, req, plane_id, DRM_MODE_OBJECT_PLANE, kms_plane_props[i], v[i]);
	return ret ? -EINVAL : 0;
}

int kms_commit(int fd, drmModeAtomicReqPtr req, uint32_t flags)
{
	return drmModeAtomicCommit(fd, req, flags, NULL) ? -errno : 0;
}

int kms_fb_create(int fd, uint32_t width, uint32_t height, uint32_t format,
		  struct kms_fb *fb)
{
	uint32_t handles[4] = { 0 }, pitches[4] = { 0 }, offsets[4] = { 0 };
	uint32_t bpp = 32;
	uint64_t map_offset;
	void *map;

	if (format == DRM_FORMAT_RGB565)
		bpp = 16;
	else if (format == DRM_FORMAT_XRGB16161616 || format == DRM_FORMAT_ARGB16161616)
		bpp = 64;
	memset(fb, 0, sizeof(*fb));
	if (drmModeCreateDumbBuffer(fd, width, height, bpp, 0, &fb->handle,
				    &fb->pitch, &fb->size))
		return -errno;
	fb->width = width;
	fb->height = height;
	handles[0] = fb->handle;
	pitches[0] = fb->pitch;
	if (drmModeAddFB2(fd, width, height, format, handles, pitches, offsets,
			  &fb->fb_id, 0))
		goto fail;
	if (drmModeMapDumbBuffer(fd, fb->handle, &map_offset))
		goto fail;
	map = mmap(NULL, fb->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, map_offset);
	if (map == MAP_FAILED)
		goto fail;
	fb->pixels = map;
	return 0;
fail:
	{
		int err = -errno;

		kms_fb_destroy(fd, fb);
		return err;
	}
}

void kms_fb_fill(struct kms_fb *fb, uint32_t argb)
{
	for (uint32_t y = 0; y < fb->height; y++)
		for (uint32_t x = 0; x < fb->width; x++)
			fb->pixels[y * (fb->pitch / 4) + x] = argb;
}

void kms_fb_destroy(int fd, struct kms_fb *fb)
{
	if (fb->pixels)
		munmap(fb->pixels, fb->size);
	if (fb->fb_id)
		drmModeRmFB(fd, fb->fb_id);
	if (fb->handle)
		drmModeDestroyDumbBuffer(fd, fb->handle);
	memset(fb, 0, sizeof(*fb));
}

/* Callers only need to know that an event arrived, not its contents. */
static void on_event(int fd, unsigned int seq, unsigned int sec,
		     unsigned int usec, void *data)
{
	(void)fd; (void)seq; (void)sec; (void)usec; (void)data;
}

int kms_wait_event(int fd, int timeout_ms)
{
	drmEventContext ctx = {
		.version = 2,
		.vblank_handler = on_event,
		.page_flip_handler = on_event,
	};
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret;

	ret = poll(&pfd, 1, timeout_ms);
	if (ret < 0)
		return -errno;
	if (ret == 0)
		return -ETIMEDOUT;
	return drmHandleEvent(fd, &ctx) ? -EIO : 0;
}

double kms_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int kmsg_fd = -1;

int kmsg_open(void)
{
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg_fd < 0)
		return -errno;
	kmsg_mark();
	return 0;
}

void kmsg_read_from(int fd)
{
	kmsg_fd = fd;
}

void kmsg_mark(void)
{
	lseek(kmsg_fd, 0, SEEK_END);
}

/* ---- the kernel log policy (kernel_log_policy.def) ---- */

static const char *const report_words[] = {
#define KERNEL_REPORT(text) text,
#include "kernel_log_policy.def"
};

static const char *const not_reports[] = {
#define KERNEL_LOG_NOT_A_REPORT(text) text,
#include "kernel_log_policy.def"
};

static const struct kernel_warn_upstream upstream_warns[] = {
#define KERNEL_WARN_UPSTREAM(function, caller, reference) { function, caller, reference },
#include "kernel_log_policy.def"
};

static const struct kernel_warn_expected expected_warns[] = {
#define KERNEL_WARN_EXPECTED(function, holds, window) { function, holds, window },
#include "kernel_log_policy.def"
};

static const struct { const char *name, *start, *end; } windows[] = {
#define KERNEL_LOG_WINDOW(name, start, end) { name, start, end },
#include "kernel_log_policy.def"
};

bool kernel_log_report(const char *msg)
{
	bool report = false;

	for (size_t i = 0; i < ARRAY_SIZE(report_words) && !report; i++)
		report = strstr(msg, report_words[i]);
	for (size_t i = 0; i < ARRAY_SIZE(not_reports) && report; i++)
		report = !strstr(msg, not_reports[i]);
	return report;
}

const struct kernel_warn_upstream *kernel_log_upstream_warn(const char *msg)
{
	if (!strstr(msg, "WARNING:"))
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(upstream_warns); i++)
		if (strstr(msg, upstream_warns[i].function))
			return &upstream_warns[i];
	return NULL;
}

const struct kernel_warn_expected *kernel_log_expected_warn(const char *window)
{
	for (size_t i = 0; i < ARRAY_SIZE(expected_warns); i++)
		if (!strcmp(expected_warns[i].window, window))
			return &expected_warns[i];
	return NULL;
}

const char *kernel_log_window_marker(const char *window, bool start)
{
	for (size_t i = 0; i < ARRAY_SIZE(windows); i++)
		if (!strcmp(windows[i].name, window))
			return start ? windows[i].start : windows[i].end;
	return NULL;
}

struct kmsg_match {
	const char *a, *b;
	/* kmsg_seen_or_warned(): inside an upstream WARN, and its caller seen. */
	const struct kernel_warn_upstream *upstream;
	bool upstream_caller;
};

/*
 * Reads every record logged since the mark; true if @match is true of
 * one. A record is one line of printk.
 */
static bool kmsg_scan(bool (*match)(const char *rec, struct kmsg_match *m),
		      struct kmsg_match *m)
{
	char rec[8192];
	bool found = false;

	for (;;) {
		ssize_t n = read(kmsg_fd, rec, sizeof(rec) - 1);

		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: keep reading */
		if (n <= 0)
			break;
		rec[n] = '\0';
		found |= match(rec, m);
	}
	return found;
}

static bool holds_both(const char *rec, struct kmsg_match *m)
{
	return strstr(rec, m->a) && (!m->b || strstr(rec, m->b));
}

static bool holds_either(const char *rec, struct kmsg_match *m)
{
	return strstr(rec, m->a) || (m->b && strstr(rec, m->b));
}

/*
 * An upstream WARN is held until the end of its trace, which must name its
 * caller as a reliable frame (not "? ", which may be a stale address).
 * Another CPU's records may land inside the trace: each is still judged,
 * and a second upstream WARN inside the first is not excused.
 */
static bool holds_or_warns(const char *rec, struct kmsg_match *m)
{
	const char *msg = strchr(rec, ';') ? strchr(rec, ';') + 1 : rec;
	const char *frame = msg + strspn(msg, " ");
	const struct kernel_warn_upstream *upstream = kernel_log_upstream_warn(msg);

	if ((m->a && strstr(msg, m->a)) || (!upstream && kernel_log_report(msg)))
		return true;
	if (upstream) {
		if (m->upstream)
			return true;
		m->upstream = upstream;
		m->upstream_caller = false;
		return false;
	}
	if (!m->upstream)
		return false;
	if (!strncmp(frame, m->upstream->caller, strlen(m->upstream->caller)))
		m->upstream_caller = true;
	if (!strstr(msg, "---[ end trace"))
		return false;
	m->upstream = NULL;
	return !m->upstream_caller;
}

bool kmsg_seen(const char *a, const char *b)
{
	struct kmsg_match m = { .a = a, .b = b };

	return kmsg_scan(holds_both, &m);
}

bool kmsg_seen_either(const char *a, const char *b)
{
	struct kmsg_match m = { .a = a, .b = b };

	return kmsg_scan(holds_either, &m);
}

bool kmsg_seen_or_warned(const char *a)
{
	struct kmsg_match m = { .a = a };
	bool found = kmsg_scan(holds_or_warns, &m);

	/* A trace still being printed (by a kworker, say): its end awaited. */
	for (int i = 0; i < 10 && !found && m.upstream; i++) {
		usleep(100 * 1000);
		found = kmsg_scan(holds_or_warns, &m);
	}
	/* A trace cut short is not known to be upstream's. */
	return found || m.upstream;
}

int drm_debug_enable(unsigned int mask)
{
	const char *path = "/sys/module/drm/parameters/debug";
	unsigned int cur = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (fscanf(f, "%u", &cur) != 1)
		cur = 0;
	fclose(f);
	if ((cur & mask) == mask)
		return 0;
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fprintf(f, "%u\n", cur | mask);
	return fclose(f) ? -errno : 0;
}

int kms_write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, value, strlen(value));
	close(fd);
	return n < 0 ? -errno : 0;
}
