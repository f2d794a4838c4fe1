/* SPDX-License-Identifier: MIT */
/*
 * Minimal TAP 13 producer for the guest tests: a plan up front, one line per
 * test, "# SKIP" for tests the device cannot run, diagnostics as comments.
 */
#ifndef TAP_H
#define TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

struct tap {
	int planned;
	int run;
	int failed;
};

extern struct tap tap;

void tap_plan(int count);
/* Reports one test; returns @ok so callers can chain on the verdict. */
bool tap_ok(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tap_skip(const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Exit status for main(): non-zero when a test failed or the plan was missed. */
int tap_exit_status(void);

#endif
