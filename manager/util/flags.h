/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Command-line flags from a table, parsed as kubectl's (pflag) are, for every muster command:
 *
 *	--name VALUE, --name=VALUE      a flag with a value (the next argument, whatever it is)
 *	-x VALUE, -xVALUE, -x=VALUE     its shorthand
 *	--name, --name=true|false, -x   a boolean; shorthand booleans combine ("-Ah", "-Ao json")
 *	--                              ends the flags: what follows is positional
 *	-                               a positional argument (stdin, by convention)
 *
 * Flags may come anywhere among the positional arguments (as pflag), or only before the first
 * of them (as POSIX getopt), as flag_parser.positional says. Long names are never abbreviated.
 * A value is checked when its flag is read, in order, so the first problem on the line is the
 * one reported.
 *
 * The table and every string are the caller's; parsed values borrow from argv.
 */
#ifndef MUSTER_FLAGS_H
#define MUSTER_FLAGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum flag_kind {
	FLAG_BOOL, /* int: 1 for --name, -x or --name=true; 0 for --name=false */
	FLAG_STRING, /* const char *: the value, borrowed from argv */
	FLAG_INT, /* int64_t: a whole number in [min, max] (core/num.h) */
	FLAG_UINT, /* uint64_t: an unsigned whole number up to umax */
	FLAG_DOUBLE, /* double: a number in [dmin, dmax] */
	FLAG_CHOICE, /* int: the index of the value in choices */
	FLAG_CALL, /* call(dest, value) checks and keeps the value */
};

struct flag {
	const char *name; /* the long name, without "--" */
	char shorthand; /* '\0': none */
	enum flag_kind kind;
	void *dest; /* of the type kind names; NULL: the flag is only seen */
	const char *value_name; /* the value in the help ("FILE"); NULL for a boolean */
	const char *help; /* NULL: not listed; each '\n' starts an indented line */
	int64_t min, max; /* FLAG_INT */
	uint64_t umax; /* FLAG_UINT */
	double dmin, dmax; /* FLAG_DOUBLE */
	const char *const *choices; /* FLAG_CHOICE: NULL-terminated */
	/* FLAG_CALL: 0, -EINVAL for a value it does not take, -E2BIG for one too many. */
	int (*call)(void *dest, const char *value);
	/* What a valid value is, for the error "--name must be EXPECT, not "VALUE"". NULL: said
	 * from min and max, or the choices; a FLAG_CALL without it gets "invalid NAME "VALUE"". */
	const char *expect;
};

struct flag_parser {
	const struct flag *flags;
	size_t nflags; /* at most 64 */
	const char *prefix; /* starts every message: "error: ", "muster simulate: " */
	FILE *err; /* where messages go */
	/* Takes each positional argument, in order, among the flags: 0, or a negative errno to
	 * stop (after writing its message). NULL: the flags end at the first positional one. */
	int (*positional)(void *arg, const char *value);
	void *arg;
};

/*
 * Parses argv[1..argc) (argv[0] is the program; argv is not changed). Bit i of *seen is set
 * for each flags[i] given. Returns the index of the first argument not parsed (argc when
 * none is left, as always with positional), or -EINVAL after writing "<prefix><problem>\n",
 * or what positional returned.
 */
int flags_parse(const struct flag_parser *p, int argc, char **argv, uint64_t *seen);

/*
 * The whole line of a command that takes flags and no positional argument: parses it, and
 * with *help set (by the table's help flag) writes usage to stdout and returns 1. A problem,
 * an argument that is not a flag among them, is written with usage after it to p->err:
 * -EINVAL. 0: the flags are set, go on.
 */
int flags_parse_command(const struct flag_parser *p, int argc, char **argv, const int *help,
			void (*usage)(FILE *out), uint64_t *seen);

/*
 * Writes one entry per flag with help, the flag's spelling ("  -n, --namespace NAMESPACE";
 * the shorthand column only when some flag has a shorthand) then its help from column on,
 * or on the next line when the spelling leaves less than two spaces. 0 or -EIO.
 */
int flags_help(const struct flag_parser *p, FILE *out, int column);

#endif
