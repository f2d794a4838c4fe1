// SPDX-License-Identifier: MIT
#include "bench_util.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int write_flag(const char *path, bool on)
{
	int fd = open(path, O_WRONLY);
	int ret = fd < 0 || write(fd, on ? "1" : "0", 1) != 1 ? -1 : 0;

	if (fd >= 0)
		close(fd);
	return ret;
}

int bench_set_per_pipe(bool on)
{
	return write_flag("/sys/module/vkms/parameters/per_pipe_cursor", on);
}

int bench_set_skip_validation(bool on)
{
	return write_flag("/sys/kernel/debug/dri/0/vkms_skip_cursor_validation", on);
}

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void bench_stats(double *v, int n, double *median, double *min, double *max)
{
	qsort(v, n, sizeof(*v), cmp_double);
	*min = v[0];
	*max = v[n - 1];
	*median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double bench_capture(int fd, const struct kms_device *kms, uint32_t wb, uint32_t wb_fb)
{
	drmModeAtomicReqPtr req = drmModeAtomicAlloc();
	int32_t fence = -1;
	struct pollfd pfd;
	double t0;
	int ret = 0;

	if (!req)
		return -1;
	ret |= kms_add(fd, req, kms->crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1);
	ret |= kms_add(fd, req, wb, DRM_MODE_OBJECT_CONNECTOR, "WRITEBACK_FB_ID", wb_fb);
	ret |= kms_add(fd, req, wb, DRM_MODE_OBJECT_CONNECTOR, "WRITEBACK_OUT_FENCE_PTR",
		       (uint64_t)(uintptr_t)&fence);
	t0 = bench_now();	/* the property look-ups above are not the composer */
	if (!ret)
		ret = kms_commit(fd, req, 0);
	drmModeAtomicFree(req);
	if (ret || fence < 0)
		return -1;
	pfd = (struct pollfd) { .fd = fence, .events = POLLIN };
	ret = poll(&pfd, 1, 20000);
	close(fence);
	return ret == 1 ? bench_now() - t0 : -1;
}
