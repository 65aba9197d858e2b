/* SPDX-License-Identifier: Apache-2.0 */
#include "util/flags.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "core/num.h"

static int fail(const struct flag_parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(const struct flag_parser *p, const char *fmt, ...)
{
	va_list ap;
	fputs(p->prefix, p->err);
	va_start(ap, fmt);
	vfprintf(p->err, fmt, ap);
	va_end(ap);
	fputc('\n', p->err);
	return -EINVAL;
}

/* What a valid value of f is, for its error: the flag's own words, else its range or choices;
 * "" when there is nothing to say. */
static void expected(const struct flag *f, char *buf, size_t size)
{
	size_t used = 0;
	buf[0] = '\0';
	if (f->expect) {
		snprintf(buf, size, "%s", f->expect);
		return;
	}
	switch (f->kind) {
	case FLAG_INT:
		snprintf(buf, size, "a number from %" PRId64 " to %" PRId64, f->min, f->max);
		break;
	case FLAG_UINT:
		snprintf(buf, size, "a number from 0 to %" PRIu64, f->umax);
		break;
	case FLAG_DOUBLE:
		snprintf(buf, size, "a number from %g to %g", f->dmin, f->dmax);
		break;
	case FLAG_CHOICE: /* "a, b or c" */
		for (size_t i = 0; f->choices[i] && used < size; i++) {
			const char *sep = i == 0 ? "" : f->choices[i + 1] ? ", " : " or ";
			int n = snprintf(buf + used, size - used, "%s%s", sep, f->choices[i]);
			used += n > 0 ? (size_t)n : 0;
		}
		break;
	default:
		break;
	}
}

/* Checks and keeps the value of a flag that takes one. 0 or -EINVAL (reported). */
static int set_value(const struct flag_parser *p, const struct flag *f, const char *value)
{
	int rc = -EINVAL;
	switch (f->kind) {
	case FLAG_STRING:
		if (f->dest)
			*(const char **)f->dest = value;
		return 0;
	case FLAG_INT: {
		int64_t v;
		if ((rc = num_parse_i64(value, f->min, f->max, &v)) == 0 && f->dest)
			*(int64_t *)f->dest = v;
		break;
	}
	case FLAG_UINT: {
		uint64_t v;
		if ((rc = num_parse_u64(value, f->umax, &v)) == 0 && f->dest)
			*(uint64_t *)f->dest = v;
		break;
	}
	case FLAG_DOUBLE: {
		double v;
		if ((rc = num_parse_double(value, f->dmin, f->dmax, &v)) == 0 && f->dest)
			*(double *)f->dest = v;
		break;
	}
	case FLAG_CHOICE:
		for (int i = 0; f->choices[i]; i++) {
			if (!strcmp(f->choices[i], value)) {
				if (f->dest)
					*(int *)f->dest = i;
				return 0;
			}
		}
		break;
	case FLAG_CALL:
		rc = f->call(f->dest, value);
		break;
	case FLAG_BOOL:
		break;
	}
	if (rc == 0)
		return 0;
	if (rc == -E2BIG)
		return fail(p, "--%s given too many times", f->name);
	char what[256];
	expected(f, what, sizeof(what));
	if (!*what)
		return fail(p, "invalid %s \"%s\"", f->name, value);
	return fail(p, "--%s must be %s, not \"%s\"", f->name, what, value);
}

static void set_bool(const struct flag *f, int on)
{
	if (f->dest)
		*(int *)f->dest = on;
}

/* One argument starting with "--". *i moves past a value taken from the next argument. */
static int parse_long(const struct flag_parser *p, int argc, char **argv, int *i, uint64_t *seen)
{
	const char *name = argv[*i] + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	size_t k = 0;
	while (k < p->nflags &&
	       (strlen(p->flags[k].name) != len || strncmp(p->flags[k].name, name, len) != 0))
		k++;
	if (k == p->nflags)
		return fail(p, "unknown flag: --%.*s", (int)len, name);
	const struct flag *f = &p->flags[k];
	*seen |= UINT64_C(1) << k;
	if (f->kind == FLAG_BOOL) {
		if (eq && strcmp(eq + 1, "true") && strcmp(eq + 1, "false"))
			return fail(p, "invalid argument \"%s\" for \"--%s\" flag", eq + 1,
				    f->name);
		set_bool(f, !eq || !strcmp(eq + 1, "true"));
		return 0;
	}
	if (eq)
		return set_value(p, f, eq + 1);
	if (*i + 1 >= argc)
		return fail(p, "flag needs an argument: --%s", f->name);
	return set_value(p, f, argv[++*i]);
}

/* One argument of shorthands, "-A", "-Ah", "-n NS", "-nNS" or "-n=NS". */
static int parse_short(const struct flag_parser *p, int argc, char **argv, int *i, uint64_t *seen)
{
	const char *arg = argv[*i];
	for (const char *c = arg + 1; *c; c++) {
		size_t k = 0;
		while (k < p->nflags && p->flags[k].shorthand != *c)
			k++;
		if (k == p->nflags)
			return fail(p, "unknown shorthand flag: '%c' in %s", *c, arg);
		const struct flag *f = &p->flags[k];
		*seen |= UINT64_C(1) << k;
		if (f->kind == FLAG_BOOL) {
			set_bool(f, 1);
			continue;
		}
		const char *value = c[1] == '=' ? c + 2 : c + 1;
		if (!*value) {
			if (*i + 1 >= argc)
				return fail(p, "flag needs an argument: '%c' in %s", *c, arg);
			value = argv[++*i];
		}
		return set_value(p, f, value);
	}
	return 0;
}

int flags_parse(const struct flag_parser *p, int argc, char **argv, uint64_t *seen)
{
	int flags_done = 0, rc = 0, i;
	*seen = 0;
	for (i = 1; i < argc && rc == 0; i++) {
		const char *arg = argv[i];
		if (!flags_done && !strcmp(arg, "--"))
			flags_done = 1;
		else if (!flags_done && !strncmp(arg, "--", 2))
			rc = parse_long(p, argc, argv, &i, seen);
		else if (!flags_done && arg[0] == '-' && arg[1])
			rc = parse_short(p, argc, argv, &i, seen);
		else if (p->positional)
			rc = p->positional(p->arg, arg);
		else
			return i;
	}
	return rc < 0 ? rc : i;
}

int flags_parse_command(const struct flag_parser *p, int argc, char **argv, const int *help,
			void (*usage)(FILE *out), uint64_t *seen)
{
	int end = flags_parse(p, argc, argv, seen);
	if (end >= 0 && *help) {
		usage(stdout);
		return 1;
	}
	if (end >= 0 && end < argc)
		end = fail(p, "unexpected argument %s", argv[end]);
	if (end < 0) {
		usage(p->err);
		return -EINVAL;
	}
	return 0;
}

int flags_help(const struct flag_parser *p, FILE *out, int column)
{
	int shorthands = 0;
	for (size_t k = 0; k < p->nflags; k++)
		shorthands |= p->flags[k].shorthand != '\0';
	for (size_t k = 0; k < p->nflags; k++) {
		const struct flag *f = &p->flags[k];
		char shorthand[5] = "    ";
		if (!f->help)
			continue;
		if (f->shorthand)
			snprintf(shorthand, sizeof(shorthand), "-%c, ", f->shorthand);
		int n = fprintf(out, "  %s--%s%s%s", shorthands ? shorthand : "", f->name,
				f->value_name ? " " : "", f->value_name ? f->value_name : "");
		if (n + 2 > column)
			fprintf(out, "\n%*s", column, "");
		else
			fprintf(out, "%*s", column - n, "");
		for (const char *h = f->help; *h; h++) {
			fputc(*h, out);
			if (*h == '\n' && h[1])
				fprintf(out, "%*s", column, "");
		}
		fputc('\n', out);
	}
	return ferror(out) ? -EIO : 0;
}
