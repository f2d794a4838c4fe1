/* SPDX-License-Identifier: MIT */
/*
 * TAP 13 for the guest programs, and their list of subtests.
 *
 * A test's name is stable and kebab-case: lower-case letters, digits and
 * '-', with "@variant" for one of several cases of the same check
 * ("legacy-move-accepted@top-left"). Measured values, errno strings and
 * modes go into the diagnostic line under the result, never into the
 * name, so that two runs compare by name. A malformed or repeated name
 * fails the test that carries it.
 *
 * The plan is printed last, from the count of tests that ran: a program
 * that dies before tap_done() has no plan, which the host counts as a
 * failure.
 *
 * Each program is a list of subtests (struct tap_subtest) run by
 * tap_main(): "prog --list" prints them, "prog NAME [ARGS]" runs one.
 */
#ifndef TAP_H
#define TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct tap {
	int run;
	int failed;
};

extern struct tap tap;

void tap_start(void);
/* Reports one test; returns @ok so callers can chain on the verdict. */
bool tap_ok(bool ok, const char *name);
/* The same, with a diagnostic line (the measured values) under it. */
bool tap_okf(bool ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void tap_skip(const char *name, const char *reason_fmt, ...)
	__attribute__((format(printf, 2, 3)));
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * Data for the host under the test just reported by tap_ok() (not
 * tap_okf(): the block must follow its test line directly): TAP 13's YAML
 * block, holding one line of JSON (YAML's flow style) that the caller
 * prints between the two calls, strings escaped.
 */
void tap_json_begin(void);
void tap_json_end(void);
/* A test name built from stable labels ("probe@%s"). */
struct tap_name_buf {
	char s[128];
};
struct tap_name_buf tap_name_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * The name as a string for the call around it: it lives until the end of
 * that full expression, which only C11 promises for an array in a
 * returned struct. To keep a name longer, keep the struct tap_name_buf. A
 * name too long for it ends in '?', which fails the test that carries it
 * rather than merging two names.
 */
_Static_assert(__STDC_VERSION__ >= 201112L, "tap_name() needs C11's temporary lifetime");
#define tap_name(...) (tap_name_fmt(__VA_ARGS__).s)
/* Whether @arg is a count from 1 to 2^31 - 1, as subtest arguments are. */
bool tap_arg_is_count(const char *arg);
/* Prints the plan; the exit status for main(): non-zero if a test failed. */
int tap_done(void);

/**
 * struct tap_subtest - one subtest of a guest program
 * @name: kebab-case, what "--list" prints and the guest runner passes back
 * @args: the names of its arguments, for the usage line ("" if none);
 *	every argument is a size or a seed, a decimal from 1 to 2^31 - 1,
 *	which tap_main() checks before the subtest runs
 * @nargs: how many arguments it takes
 * @run: runs it; @argv holds its @nargs arguments
 */
struct tap_subtest {
	const char *name;
	const char *args;
	int nargs;
	void (*run)(char **argv);
};

/**
 * struct tap_program - what tap_main() runs around a subtest
 * @subtests: the program's subtests, in the order the runner should use
 * @count: how many
 * @setup: before the subtest, NULL if none; exits on failure
 * @teardown: after it, NULL if none
 */
struct tap_program {
	const struct tap_subtest *subtests;
	size_t count;
	void (*setup)(void);
	void (*teardown)(void);
};

/*
 * "--list": one line per subtest, "NAME ARGS...". "NAME [ARGS] [--comm C]":
 * runs it under the command name C if given, framed by TAP. Returns the
 * exit status: 2 for a usage error.
 */
int tap_main(const struct tap_program *prog, int argc, char **argv);

#endif
