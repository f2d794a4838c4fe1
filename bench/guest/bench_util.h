/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the make-bench program: the clocks (the vkms switches are
 * lib/vkms.h's).
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "kms_util.h"
#include "vkms.h"

/*
 * A fine clock in ticks of unknown frequency: the guest kernel's clocks
 * advance by whole jiffies (4 ms) under TCG, where the TSC cannot be
 * calibrated, but the TSC itself (the host's, under TCG) still ticks
 * finely. The first bench_tick_hz() call starts measuring the ticks'
 * rate against CLOCK_MONOTONIC (and returns 0), later ones return the rate
 * since: precise once seconds have passed.
 */
uint64_t bench_ticks(void);
double bench_tick_hz(void);

#endif
