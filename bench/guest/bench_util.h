/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the make-bench programs: the vkms switches, a monotonic
 * clock, order statistics and a writeback capture that times one frame.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "../../tests/kms_util.h"

/* vkms.per_pipe_cursor (read by every atomic check that includes the CRTC). */
int bench_set_per_pipe(bool on);
/* debugfs vkms_skip_cursor_validation of the first DRM device. */
int bench_set_skip_validation(bool on);
/* Seconds, CLOCK_MONOTONIC. */
double bench_now(void);
/* Median, minimum and maximum of @n values (@v is reordered). */
void bench_stats(double *v, int n, double *median, double *min, double *max);
/*
 * One frame through the writeback connector @wb into @wb_fb: commits the
 * CRTC (so that it is checked anew) with the writeback job, waits for the
 * writeback fence and returns the seconds from commit to fence, or -1.
 */
double bench_capture(int fd, const struct kms_device *kms, uint32_t wb, uint32_t wb_fb);

#endif
