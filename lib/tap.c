// SPDX-License-Identifier: MIT
#include "tap.h"

struct tap tap;

void tap_plan(int count)
{
	tap.planned = count;
	printf("TAP version 13\n1..%d\n", count);
	fflush(stdout);
}

static void tap_line(const char *verdict, const char *directive,
		     const char *fmt, va_list ap)
{
	printf("%s %d - ", verdict, ++tap.run);
	vprintf(fmt, ap);
	if (directive)
		printf(" # %s", directive);
	printf("\n");
	fflush(stdout);
}

bool tap_ok(bool ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_line(ok ? "ok" : "not ok", NULL, fmt, ap);
	va_end(ap);
	if (!ok)
		tap.failed++;
	return ok;
}

void tap_skip(const char *reason, const char *fmt, ...)
{
	char directive[256];
	va_list ap;

	snprintf(directive, sizeof(directive), "SKIP %s", reason);
	va_start(ap, fmt);
	tap_line("ok", directive, fmt, ap);
	va_end(ap);
}

void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

int tap_exit_status(void)
{
	if (tap.run != tap.planned) {
		tap_diag("planned %d tests, ran %d", tap.planned, tap.run);
		return 1;
	}
	return tap.failed ? 1 : 0;
}
