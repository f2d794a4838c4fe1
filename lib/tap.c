// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "tap.h"

struct tap tap;

/* Every name reported so far, to refuse a repeated one. */
static char **names;
static size_t names_len, names_cap;

void tap_start(void)
{
	printf("TAP version 13\n");
	fflush(stdout);
}

static bool name_is_kebab(const char *name)
{
	bool variant = false;
	char prev = '-';

	if (!*name)
		return false;
	for (const char *c = name; *c; prev = *c++) {
		if (*c == '@' && !variant && prev != '-') {
			variant = true;
			continue;
		}
		if (*c == '-' && prev != '-' && prev != '@')
			continue;
		if ((*c < 'a' || *c > 'z') && (*c < '0' || *c > '9'))
			return false;
	}
	return prev != '-' && prev != '@';
}

/* Why @name cannot stand, or NULL; remembers it. */
static const char *name_fault(const char *name)
{
	if (!name_is_kebab(name))
		return "not a kebab-case test name";
	for (size_t i = 0; i < names_len; i++)
		if (strcmp(names[i], name) == 0)
			return "test name used twice";
	if (names_len == names_cap) {
		size_t cap = names_cap ? 2 * names_cap : 64;
		char **grown = realloc(names, cap * sizeof(*names));

		if (!grown)
			return NULL;
		names = grown;
		names_cap = cap;
	}
	names[names_len] = strdup(name);
	if (names[names_len])
		names_len++;
	return NULL;
}

static bool tap_line(bool ok, const char *name, const char *skip)
{
	const char *fault = name_fault(name);

	if (fault)
		ok = false;
	printf("%s %d - %s", ok ? "ok" : "not ok", ++tap.run, name);
	if (skip && ok)
		printf(" # SKIP %s", skip);
	printf("\n");
	if (fault)
		printf("# %s: %s\n", fault, name);
	if (!ok)
		tap.failed++;
	fflush(stdout);
	return ok;
}

bool tap_ok(bool ok, const char *name)
{
	return tap_line(ok, name, NULL);
}

static void tap_vdiag(const char *fmt, va_list ap)
{
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

bool tap_okf(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	ok = tap_line(ok, name, NULL);
	va_start(ap, fmt);
	tap_vdiag(fmt, ap);
	va_end(ap);
	return ok;
}

void tap_skip(const char *name, const char *reason_fmt, ...)
{
	char reason[256];
	va_list ap;

	va_start(ap, reason_fmt);
	vsnprintf(reason, sizeof(reason), reason_fmt, ap);
	va_end(ap);
	tap_line(true, name, reason);
}

void tap_diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vdiag(fmt, ap);
	va_end(ap);
}

void tap_json_begin(void)
{
	printf("  ---\n  ");
}

void tap_json_end(void)
{
	printf("\n  ...\n");
	fflush(stdout);
}

struct tap_name_buf tap_name_fmt(const char *fmt, ...)
{
	struct tap_name_buf name;
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(name.s, sizeof(name.s), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(name.s)) {
		name.s[sizeof(name.s) - 2] = '?';
		name.s[sizeof(name.s) - 1] = '\0';
	}
	return name;
}

int tap_done(void)
{
	/* A subtest that returned before its first test proved nothing. */
	if (!tap.run)
		tap_ok(false, "ran-a-test");
	printf("1..%d\n", tap.run);
	fflush(stdout);
	return tap.failed ? 1 : 0;
}

/*
 * Which name the kernel sees, for the runner's check that a copy run as
 * "chrome" really was one.
 */
static void tap_identity(void)
{
	char comm[32] = "?", exe[256] = "?";
	FILE *f = fopen("/proc/self/comm", "r");
	ssize_t n;

	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0)
		exe[n] = '\0';
	tap_diag("running as comm=%s exe=%s", comm, exe);
}

/* Every subtest argument is a size or a seed: a decimal from 1 to 2^31 - 1. */
bool tap_arg_is_count(const char *arg)
{
	size_t len = strspn(arg, "0123456789");

	return arg[0] >= '1' && arg[0] <= '9' && !arg[len] &&
	       (len < 10 || (len == 10 && strcmp(arg, "2147483647") <= 0));
}

static void usage(const struct tap_program *prog, const char *argv0)
{
	fprintf(stderr, "usage: %s --list | SUBTEST [ARGS] [--comm NAME]\nsubtests:\n", argv0);
	for (size_t i = 0; i < prog->count; i++)
		fprintf(stderr, "  %s %s\n", prog->subtests[i].name, prog->subtests[i].args);
}

int tap_main(const struct tap_program *prog, int argc, char **argv)
{
	const struct tap_subtest *t = NULL;

	/* "--comm NAME", anywhere: the name the kernel sees for this process. */
	for (int i = 1; i + 1 < argc; i++) {
		if (strcmp(argv[i], "--comm") != 0)
			continue;
		prctl(PR_SET_NAME, argv[i + 1]);
		memmove(&argv[i], &argv[i + 2], (argc - i - 1) * sizeof(*argv));
		argc -= 2;
		i--;
	}
	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (size_t i = 0; i < prog->count; i++)
			printf("%s%s%s\n", prog->subtests[i].name,
			       *prog->subtests[i].args ? " " : "", prog->subtests[i].args);
		return 0;
	}
	for (size_t i = 0; argc > 1 && i < prog->count; i++)
		if (strcmp(argv[1], prog->subtests[i].name) == 0)
			t = &prog->subtests[i];
	if (!t || argc != 2 + t->nargs) {
		usage(prog, argv[0]);
		return 2;
	}

	tap_start();
	for (int i = 2; i < argc; i++) {
		if (tap_arg_is_count(argv[i]))
			continue;
		tap_okf(false, "arguments-are-counts", "%s %s: \"%s\" is not a count from 1",
			t->name, t->args, argv[i]);
		return tap_done();
	}
	tap_identity();
	if (prog->setup)
		prog->setup();
	t->run(argv + 2);
	if (prog->teardown)
		prog->teardown();
	return tap_done();
}
