/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/csv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"

void csv_problem(struct csv *c, int line, const char *fmt, ...)
{
	c->problems++;
	if (c->problems > CSV_MAX_PROBLEMS)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(c->errout, "%s:%d: ", c->name, line);
	vfprintf(c->errout, fmt, ap);
	fputc('\n', c->errout);
	va_end(ap);
}

/* A cell as it may appear in a message: at most 40 bytes, anything unprintable as '?'. */
const char *csv_shown(const struct csv_field *f, char *buf, size_t size)
{
	size_t n = f->len < size - 4 ? f->len : size - 4;
	if (n > 40)
		n = 40;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)f->s[i];
		buf[i] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	if (n < f->len) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	return buf;
}

static int is_space(char ch)
{
	return ch == ' ' || ch == '\t';
}

/* Splits one line (CR and LF removed) into c->fields. 1, or -1 when malformed (reported). */
static int csv_split(struct csv *c, const char *s, size_t len)
{
	char *out = c->scratch;
	size_t i = 0;
	c->n_fields = 0;
	for (;;) {
		if (c->n_fields == CSV_MAX_COLUMNS) {
			csv_problem(c, c->line, "more than %d fields", CSV_MAX_COLUMNS);
			return -1;
		}
		struct csv_field *f = &c->fields[c->n_fields++];
		while (i < len && is_space(s[i]))
			i++;
		f->s = out;
		if (i < len && s[i] == '"') {
			/* RFC 4180: "" is a quote; a quoted field may hold commas, not newlines. */
			i++;
			for (;;) {
				if (i == len) {
					csv_problem(c, c->line, "field %zu: no closing quote",
						    c->n_fields);
					return -1;
				}
				if (s[i] == '"') {
					if (i + 1 < len && s[i + 1] == '"') {
						*out++ = '"';
						i += 2;
						continue;
					}
					i++;
					break;
				}
				*out++ = s[i++];
			}
			while (i < len && is_space(s[i]))
				i++;
			if (i < len && s[i] != ',') {
				csv_problem(c, c->line, "field %zu: text after the closing quote",
					    c->n_fields);
				return -1;
			}
			f->len = (size_t)(out - f->s);
		} else {
			while (i < len && s[i] != ',') {
				if (s[i] == '"') {
					csv_problem(c, c->line,
						    "field %zu: a quote inside an unquoted field",
						    c->n_fields);
					return -1;
				}
				*out++ = s[i++];
			}
			f->len = (size_t)(out - f->s);
			while (f->len > 0 && is_space(f->s[f->len - 1]))
				f->len--;
		}
		if (i == len)
			return 1;
		i++; /* the comma */
	}
}

/* The next record that isn't blank: 1, 0 at the end, -1 for a malformed line (reported). */
static int csv_next(struct csv *c)
{
	for (;;) {
		if (c->p >= c->end)
			return 0;
		const char *s = c->p;
		const char *nl = memchr(s, '\n', (size_t)(c->end - s));
		const char *eol = nl ? nl : c->end;
		c->p = nl ? nl + 1 : c->end;
		c->line = c->next_line++;
		if (eol > s && eol[-1] == '\r')
			eol--;
		size_t len = (size_t)(eol - s);
		if (len > CSV_MAX_LINE) {
			csv_problem(c, c->line, "line longer than %d bytes", CSV_MAX_LINE);
			return -1;
		}
		size_t i = 0;
		while (i < len && is_space(s[i]))
			i++;
		if (i == len)
			continue;
		return csv_split(c, s, len);
	}
}

int csv_field_is(const struct csv_field *f, const char *name)
{
	return f->len == strlen(name) && !memcmp(f->s, name, f->len);
}


/* Reads the header row and finds the columns. 0, or -1 (reported). *width: fields per row. */
static int csv_header(struct csv *c, struct csv_column *cols, size_t n, size_t *width)
{
	int rc = csv_next(c);
	if (rc == 0) {
		csv_problem(c, c->next_line > 1 ? c->next_line - 1 : 1, "no header row");
		return -1;
	}
	if (rc < 0)
		return -1;
	int bad = 0;
	for (size_t k = 0; k < n; k++) {
		cols[k].index = -1;
		for (size_t i = 0; i < c->n_fields; i++) {
			if (!csv_field_is(&c->fields[i], cols[k].name))
				continue;
			if (cols[k].index >= 0) {
				csv_problem(c, c->line, "column %s appears twice", cols[k].name);
				bad = 1;
			}
			cols[k].index = (int)i;
		}
		if (cols[k].index < 0 && cols[k].required) {
			csv_problem(c, c->line, "no column %s", cols[k].name);
			bad = 1;
		}
	}
	*width = c->n_fields;
	return bad ? -1 : 0;
}

/* A name-like cell: printable ASCII, at most CSV_MAX_NAME bytes; empty only if allowed. */
char *csv_text(struct csv *c, const struct csv_field *f, const char *column, int allow_empty)
{
	char buf[64];
	if (f->len == 0 && !allow_empty) {
		csv_problem(c, c->line, "%s is empty", column);
		return NULL;
	}
	if (f->len > CSV_MAX_NAME) {
		csv_problem(c, c->line, "%s is longer than %d bytes", column, CSV_MAX_NAME);
		return NULL;
	}
	for (size_t i = 0; i < f->len; i++) {
		unsigned char ch = (unsigned char)f->s[i];
		if (ch < 0x20 || ch >= 0x7f) {
			csv_problem(c, c->line, "%s \"%s\": only printable ASCII is accepted",
				    column, csv_shown(f, buf, sizeof(buf)));
			return NULL;
		}
	}
	char *s = malloc(f->len + 1);
	if (!s)
		return NULL;
	memcpy(s, f->s, f->len);
	s[f->len] = '\0';
	return s;
}

/* A whole decimal number in 0..max ("12.0" is accepted: pandas writes floats so). 0 or -1. */
int csv_int(struct csv *c, const struct csv_field *f, const char *column, int64_t max, int64_t *out)
{
	char buf[64];
	if (f->len == 0) {
		csv_problem(c, c->line, "%s is empty", column);
		return -1;
	}
	int64_t v = 0;
	size_t i = 0;
	int range = 0;
	for (; i < f->len && f->s[i] >= '0' && f->s[i] <= '9'; i++) {
		int d = f->s[i] - '0';
		if (v > (max - d) / 10)
			range = 1;
		else
			v = v * 10 + d;
	}
	size_t digits = i;
	if (i < f->len && f->s[i] == '.') {
		for (i++; i < f->len && f->s[i] == '0'; i++)
			;
	}
	if (digits == 0 || i != f->len) {
		csv_problem(c, c->line, "%s \"%s\" is not a whole number", column,
			    csv_shown(f, buf, sizeof(buf)));
		return -1;
	}
	if (range) {
		csv_problem(c, c->line, "%s %s is out of range (0..%" PRId64 ")", column,
			    csv_shown(f, buf, sizeof(buf)), max);
		return -1;
	}
	*out = v;
	return 0;
}

static void csv_init(struct csv *c, const char *name, const char *data, size_t len, FILE *errout)
{
	memset(c, 0, sizeof(*c));
	c->name = name;
	c->p = data;
	c->end = data + len;
	c->next_line = 1;
	c->errout = errout;
	if (len >= 3 && !memcmp(data, "\xef\xbb\xbf", 3))
		c->p += 3; /* a UTF-8 byte order mark */
}

/* Starts reading a file: the reader set up and its header row read into cols. 0; -ENOMEM; or
 * -1 for a header that is wrong (reported: csv_finish says REPLAY_INVALID). */
int csv_start(struct csv *c, const char *name, const char *data, size_t len, FILE *errout,
	      struct csv_column *cols, size_t n, size_t *width)
{
	csv_init(c, name, data, len, errout);
	c->scratch = malloc(CSV_MAX_LINE + 1);
	if (!c->scratch)
		return -ENOMEM;
	return csv_header(c, cols, n, width);
}

/* Reads up to the next row with the header's width (others are reported and skipped): 1, or 0
 * at the end or once `have` reached max rows of `what` (reported). */
int csv_row(struct csv *c, size_t width, size_t have, size_t max, const char *what)
{
	for (;;) {
		int rc = csv_next(c);
		if (rc == 0)
			return 0;
		if (rc < 0)
			continue;
		if (c->n_fields != width) {
			csv_problem(c, c->line, "%zu fields, the header has %zu", c->n_fields,
				    width);
			continue;
		}
		if (have == max) {
			csv_problem(c, c->line, "more than %zu %s", max, what);
			return 0;
		}
		return 1;
	}
}

int csv_finish(struct csv *c)
{
	if (c->problems > CSV_MAX_PROBLEMS)
		fprintf(c->errout, "%s: %d more problems\n", c->name,
			c->problems - CSV_MAX_PROBLEMS);
	free(c->scratch);
	c->scratch = NULL;
	return c->problems;
}

int csv_read_file(const char *path, size_t max, char **data, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 0;
	*data = NULL;
	*len = 0;
	if (!f)
		return -errno;
	for (;;) {
		if (*len == cap) {
			if (cap > max) {
				fclose(f);
				return -EFBIG;
			}
			if (GROW(*data, cap, *len + 65536) != 0) {
				fclose(f);
				return -ENOMEM;
			}
		}
		size_t got = fread(*data + *len, 1, cap - *len, f);
		*len += got;
		if (got == 0) {
			int err = ferror(f) ? -EIO : *len > max ? -EFBIG : 0;
			fclose(f);
			return err;
		}
	}
}
