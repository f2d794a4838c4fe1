// SPDX-License-Identifier: MIT
#include "bench_util.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#ifdef __x86_64__
#include <x86intrin.h>
#endif

/* The first change of CLOCK_MONOTONIC from now on, and the ticks then. */
static double mono_edge(uint64_t *ticks)
{
	double t0 = kms_now_s(), t;

	while ((t = kms_now_s()) == t0)
		;
	*ticks = bench_ticks();
	return t;
}

static double calib_mono;
static uint64_t calib_ticks;

uint64_t bench_ticks(void)
{
#ifdef __x86_64__
	return __rdtsc();
#else
	return kms_now_s() * 1e9;
#endif
}

double bench_tick_hz(void)
{
	uint64_t ticks;
	double t;

	if (!calib_ticks) {
		calib_mono = mono_edge(&calib_ticks);
		return 0;
	}
	t = mono_edge(&ticks);
	return (ticks - calib_ticks) / (t - calib_mono);
}
