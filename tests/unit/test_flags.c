/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests for util/flags: pflag's spellings, POSIX's end of flags, messages, help. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/flags.h"

struct values {
	int all, verbose, color, help;
	const char *name;
	int64_t count;
	uint64_t seed;
	double ratio;
	const char *seen_args[4];
	int nargs;
};

static const char *const colors[] = { "red", "green", "blue", NULL };

static int even_flag(void *dest, const char *value)
{
	if (strlen(value) % 2)
		return strlen(value) > 4 ? -E2BIG : -EINVAL;
	*(const char **)dest = value;
	return 0;
}

static int take(void *arg, const char *value)
{
	struct values *v = arg;
	if (v->nargs == 4)
		return -ENOSPC;
	v->seen_args[v->nargs++] = value;
	return 0;
}

enum { F_ALL, F_VERBOSE, F_NAME, F_COUNT, F_SEED, F_RATIO, F_COLOR, F_EVEN, F_HELP, NFLAGS };

static char errors[512];

/* Parses the words of line (split at spaces) against the test table. */
static int parse(const char *line, struct values *v, int posix, uint64_t *seen)
{
	static const char *even;
	struct flag flags[NFLAGS] = {
		[F_ALL] = { "all", 'A', FLAG_BOOL, &v->all, .help = "every one" },
		[F_VERBOSE] = { "verbose", 'v', FLAG_BOOL, &v->verbose, .help = NULL },
		[F_NAME] = { "name", 'n', FLAG_STRING, &v->name, "NAME",
			     .help = "the name\nof the thing" },
		[F_COUNT] = { "count", 0, FLAG_INT, &v->count, "N", .min = -5, .max = 5 },
		[F_SEED] = { "seed", 0, FLAG_UINT, &v->seed, .umax = 1000 },
		[F_RATIO] = { "ratio", 0, FLAG_DOUBLE, &v->ratio, .dmin = 0, .dmax = 1 },
		[F_COLOR] = { "color", 'c', FLAG_CHOICE, &v->color, .choices = colors },
		[F_EVEN] = { "even", 0, FLAG_CALL, &even, .call = even_flag },
		[F_HELP] = { "a-rather-long-flag-name", 'h', FLAG_BOOL, &v->help, .help = "long" },
	};
	char copy[256], *argv[32] = { "prog" };
	int argc = 1;
	snprintf(copy, sizeof(copy), "%s", line);
	for (char *save, *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	FILE *err = fmemopen(errors, sizeof(errors), "w");
	assert_non_null(err);
	struct flag_parser p = { .flags = flags,
				 .nflags = NFLAGS,
				 .prefix = "prog: ",
				 .err = err,
				 .positional = posix ? NULL : take,
				 .arg = v };
	memset(v, 0, sizeof(*v));
	v->color = -1;
	int rc = flags_parse(&p, argc, argv, seen);
	fclose(err);
	/* The words point into copy: keep what the tests look at. */
	static char keep[256];
	memcpy(keep, copy, sizeof(copy));
	for (int i = 0; i < v->nargs; i++)
		v->seen_args[i] = keep + (v->seen_args[i] - copy);
	if (v->name)
		v->name = keep + (v->name - copy);
	return rc;
}

static void test_spellings(void **state)
{
	struct values v;
	uint64_t seen;
	(void)state;
	assert_int_equal(parse("a --name=x b -Av --count -5 --seed 1000 --ratio=.5 -cgreen c", &v,
			       0, &seen),
			 12);
	assert_true(v.all && v.verbose);
	assert_string_equal(v.name, "x");
	assert_int_equal(v.count, -5);
	assert_int_equal(v.seed, 1000);
	assert_true(v.ratio == 0.5);
	assert_int_equal(v.color, 1);
	assert_int_equal(v.nargs, 3);
	assert_string_equal(v.seen_args[2], "c");
	assert_true(seen == ((1u << F_ALL) | (1u << F_VERBOSE) | (1u << F_NAME) | (1u << F_COUNT) |
			     (1u << F_SEED) | (1u << F_RATIO) | (1u << F_COLOR)));
	/* -n=VALUE, -nVALUE, a value that looks like a flag, "--" and "-". */
	assert_int_equal(parse("-n=y", &v, 0, &seen), 2);
	assert_string_equal(v.name, "y");
	assert_int_equal(parse("-nz --all=false", &v, 0, &seen), 3);
	assert_string_equal(v.name, "z");
	assert_false(v.all);
	assert_int_equal(parse("--name --all", &v, 0, &seen), 3);
	assert_string_equal(v.name, "--all");
	assert_false(v.all);
	assert_int_equal(parse("- -- -A --name", &v, 0, &seen), 5);
	assert_int_equal(v.nargs, 3);
	assert_string_equal(v.seen_args[0], "-");
	assert_string_equal(v.seen_args[2], "--name");
	assert_false(v.all);
	/* POSIX: the first positional argument ends the flags; its index is returned. */
	assert_int_equal(parse("-A file -v", &v, 1, &seen), 2);
	assert_true(v.all);
	assert_false(v.verbose);
	assert_int_equal(parse("-- -v", &v, 1, &seen), 2);
	assert_int_equal(parse("-v", &v, 1, &seen), 2);
	/* What the positional callback returns stops the parse. */
	assert_int_equal(parse("a b c d e", &v, 0, &seen), -ENOSPC);
}

static void test_errors(void **state)
{
	static const struct {
		const char *line, *message;
	} cases[] = {
		{ "--frob", "prog: unknown flag: --frob\n" },
		{ "--frob=1", "prog: unknown flag: --frob\n" },
		{ "--nam x", "prog: unknown flag: --nam\n" }, /* never abbreviated */
		{ "-x", "prog: unknown shorthand flag: 'x' in -x\n" },
		{ "-A=true", "prog: unknown shorthand flag: '=' in -A=true\n" },
		{ "--name", "prog: flag needs an argument: --name\n" },
		{ "-An", "prog: flag needs an argument: 'n' in -An\n" },
		{ "--all=yes", "prog: invalid argument \"yes\" for \"--all\" flag\n" },
		{ "--count 6", "prog: --count must be a number from -5 to 5, not \"6\"\n" },
		{ "--count 99999999999999999999",
		  "prog: --count must be a number from -5 to 5, not "
		  "\"99999999999999999999\"\n" },
		{ "--count=", "prog: --count must be a number from -5 to 5, not \"\"\n" },
		{ "--seed -1", "prog: --seed must be a number from 0 to 1000, not \"-1\"\n" },
		{ "--ratio 1.5", "prog: --ratio must be a number from 0 to 1, not \"1.5\"\n" },
		{ "--ratio inf", "prog: --ratio must be a number from 0 to 1, not \"inf\"\n" },
		{ "-c yellow", "prog: --color must be red, green or blue, not \"yellow\"\n" },
		{ "--even abc", "prog: invalid even \"abc\"\n" },
		{ "--even abcde", "prog: --even given too many times\n" },
		/* The first problem is the one reported. */
		{ "--count 9 --frob", "prog: --count must be a number from -5 to 5, not \"9\"\n" },
	};
	struct values v;
	uint64_t seen;
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse(cases[i].line, &v, 0, &seen), -EINVAL);
		assert_string_equal(errors, cases[i].message);
	}
}

static void test_help(void **state)
{
	static const struct flag flags[] = {
		{ "all", 'A', FLAG_BOOL, NULL, .help = "every one" },
		{ "name", 0, FLAG_STRING, NULL, "NAME", .help = "the name\nof the thing" },
		{ "hidden", 0, FLAG_BOOL, NULL, .help = NULL },
		{ "a-rather-long-flag", 'l', FLAG_BOOL, NULL, .help = "long" },
	};
	struct flag_parser p = { .flags = flags, .nflags = 4 };
	char out[512] = "";
	(void)state;
	FILE *f = fmemopen(out, sizeof(out), "w");
	assert_non_null(f);
	assert_int_equal(flags_help(&p, f, 20), 0);
	fclose(f);
	assert_string_equal(out, "  -A, --all         every one\n"
				 "      --name NAME   the name\n"
				 "                    of the thing\n"
				 "  -l, --a-rather-long-flag\n"
				 "                    long\n");
	/* No shorthand in the table: no column for one. */
	p.nflags = 2;
	p.flags = flags + 1;
	f = fmemopen(out, sizeof(out), "w");
	assert_non_null(f);
	assert_int_equal(flags_help(&p, f, 16), 0);
	fclose(f);
	assert_string_equal(out, "  --name NAME   the name\n"
				 "                of the thing\n");
}

static int usages;

static void count_usage(FILE *out)
{
	(void)out;
	usages++;
}

static void test_command(void **state)
{
	int help = 0;
	uint64_t seen;
	const struct flag flags[] = { { "help", 0, FLAG_BOOL, &help, .help = NULL } };
	char *go[] = { "prog", NULL }, *extra[] = { "prog", "--help=false", "x", NULL },
	     *asked[] = { "prog", "--help", "x", NULL };
	(void)state;
	FILE *err = fmemopen(errors, sizeof(errors), "w");
	assert_non_null(err);
	struct flag_parser p = { .flags = flags, .nflags = 1, .prefix = "prog: ", .err = err };
	assert_int_equal(flags_parse_command(&p, 1, go, &help, count_usage, &seen), 0);
	assert_int_equal(usages, 0);
	assert_int_equal(flags_parse_command(&p, 3, extra, &help, count_usage, &seen), -EINVAL);
	assert_int_equal(usages, 1);
	/* The help wins over what else the line says. */
	assert_int_equal(flags_parse_command(&p, 3, asked, &help, count_usage, &seen), 1);
	assert_int_equal(usages, 2);
	fclose(err);
	assert_string_equal(errors, "prog: unexpected argument x\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spellings),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
