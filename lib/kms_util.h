/* SPDX-License-Identifier: MIT */
/*
 * Small libdrm helpers shared by the guest tests: find the vkms device and
 * its objects, look up properties by name, build atomic requests, allocate
 * dumb framebuffers, and read the kernel log for drm debug lines.
 */
#ifndef KMS_UTIL_H
#define KMS_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#define KMS_MAX_OVERLAYS 8
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
/*
 * How long to wait for something the kernel does by itself (an event, a
 * CRC, a writeback fence): a frame is 16 ms, but a TCG vCPU beside a
 * build can stall for seconds, and only a lost one should fail.
 */
#define KMS_WAIT_MS 10000

struct kms_device {
	int fd;
	uint32_t crtc_id;
	unsigned int crtc_index;
	uint32_t connector_id;
	uint32_t primary_id;
	uint32_t cursor_id;
	uint32_t overlay_ids[KMS_MAX_OVERLAYS];
	unsigned int overlay_count;
	drmModeModeInfo mode;
	uint32_t mode_blob_id;
	uint32_t gamma_size;
};

struct kms_fb {
	uint32_t handle;
	uint32_t fb_id;
	uint32_t width;
	uint32_t height;
	uint32_t pitch;
	uint64_t size;
	uint32_t *pixels;
};

/* Opens the first DRM primary node driven by @driver; -errno on failure. */
int kms_open_driver(const char *driver);
/* Fills @kms from @fd: the CRTC, its connected connector and its planes. */
int kms_probe(struct kms_device *kms, int fd);
int kms_set_cap(int fd, uint64_t cap, uint64_t value);
/*
 * Makes @fd a compositor that opted in: ATOMIC, WRITEBACK_CONNECTORS and
 * DRM_CLIENT_CAP_NO_LEGACY_CURSOR, which holds until the file is closed.
 * Returns @fd, or -errno with @fd closed; a negative @fd is passed through.
 */
int kms_make_holder(int fd);
/* The writeback connector (needs DRM_CLIENT_CAP_WRITEBACK_CONNECTORS), or 0. */
uint32_t kms_find_writeback(int fd);

/* Property id of @name on object @obj_id, or 0 if the object has none. */
uint32_t kms_prop_id(int fd, uint32_t obj_id, uint32_t obj_type, const char *name);
int kms_prop_value(int fd, uint32_t obj_id, uint32_t obj_type, const char *name,
		   uint64_t *value);
/* Adds obj.name = value to @req; -ENOENT when the property does not exist. */
int kms_add(int fd, drmModeAtomicReqPtr req, uint32_t obj_id, uint32_t obj_type,
	    const char *name, uint64_t value);
/* The same for a property id already looked up (0: the object has none). */
int kms_add_id(drmModeAtomicReqPtr req, uint32_t obj_id, uint32_t prop_id,
	       const char *name, uint64_t value);
/*
 * A full plane assignment, source from 0,0: unscaled unless the source and
 * destination sizes differ. kms_plane_geometry() fills @values for the
 * properties named in kms_plane_props, in that order.
 */
enum { KMS_PLANE_PROPS = 10 };
extern const char *const kms_plane_props[KMS_PLANE_PROPS];
void kms_plane_geometry(uint64_t values[KMS_PLANE_PROPS], uint32_t crtc_id, uint32_t fb_id,
			uint32_t src_w, uint32_t src_h,
			int32_t crtc_x, int32_t crtc_y, uint32_t crtc_w, uint32_t crtc_h);
int kms_add_plane(int fd, drmModeAtomicReqPtr req, uint32_t plane_id,
		  uint32_t crtc_id, uint32_t fb_id,
		  uint32_t src_w, uint32_t src_h,
		  int32_t crtc_x, int32_t crtc_y, uint32_t crtc_w, uint32_t crtc_h);
int kms_commit(int fd, drmModeAtomicReqPtr req, uint32_t flags);

int kms_fb_create(int fd, uint32_t width, uint32_t height, uint32_t format,
		  struct kms_fb *fb);
void kms_fb_fill(struct kms_fb *fb, uint32_t argb);
void kms_fb_destroy(int fd, struct kms_fb *fb);

/* Seconds of CLOCK_MONOTONIC. */
double kms_now_s(void);

/* Waits up to @timeout_ms for one page-flip or vblank event. */
int kms_wait_event(int fd, int timeout_ms);

/*
 * The kernel log, read through /dev/kmsg: kmsg_open() starts at the end,
 * kmsg_mark() forgets what was logged so far, kmsg_seen() looks for a record
 * logged since the mark that contains every one of the given strings.
 */
int kmsg_open(void);
void kmsg_mark(void);
/* Reads the records from @fd instead (host tests feed made-up logs). */
void kmsg_read_from(int fd);
bool kmsg_seen(const char *a, const char *b);
/* Like kmsg_seen(), for a record that contains @a or @b. */
bool kmsg_seen_either(const char *a, const char *b);
/*
 * The kernel log policy of lib/kernel_log_policy.def, which
 * harness/verdict.sh applies to the whole console.
 */
struct kernel_warn_upstream {
	const char *function, *caller, *reference;
};

struct kernel_warn_expected {
	const char *function, *holds, *window;
};

/* Whether @msg, one record, is a kernel report. */
bool kernel_log_report(const char *msg);
/* The upstream WARN whose WARNING line @msg is, or NULL. */
const struct kernel_warn_upstream *kernel_log_upstream_warn(const char *msg);
/* The WARN a test provokes between the markers of @window, or NULL. */
const struct kernel_warn_expected *kernel_log_expected_warn(const char *window);
/* The start (or end) marker of @window; NULL if there is no such window. */
const char *kernel_log_window_marker(const char *window, bool start);
/*
 * Like kmsg_seen(), for a record that contains @a (if not NULL) or is a
 * kernel report, but an upstream WARN with its caller a reliable frame of
 * its trace.
 */
bool kmsg_seen_or_warned(const char *a);
/* Writes @value to a sysfs or debugfs file; 0 or -errno. */
int kms_write_file(const char *path, const char *value);

/* Makes sure the drm.debug categories in @mask are enabled. */
int drm_debug_enable(unsigned int mask);

#endif
