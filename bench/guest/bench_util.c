// SPDX-License-Identifier: MIT
#include "bench_util.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#ifdef __x86_64__
#include <x86intrin.h>
#endif

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The first change of CLOCK_MONOTONIC from now on, and the ticks then. */
static double mono_edge(uint64_t *ticks)
{
	double t0 = bench_now(), t;

	while ((t = bench_now()) == t0)
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
	return bench_now() * 1e9;
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
