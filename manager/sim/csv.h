/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CSV reader of the trace replays (sim/replay.h, sim/philly.h): a file's bytes, a header
 * row naming the columns, then records. Blank lines are skipped; CRLF line ends, a UTF-8 BOM
 * and RFC 4180 quoted fields (within one line) are accepted. Every problem is written to errout
 * as "FILE:LINE: what" (the first CSV_MAX_PROBLEMS of them, then a count), and the record is
 * skipped, so one run reports what is wrong with the whole file. Sizes are bounded (CSV_MAX_*).
 *
 * Ownership: the reader borrows the file's bytes and owns one scratch line; a field points into
 * that scratch (not NUL-terminated) and is valid until the next csv_row. csv_text returns a copy
 * the caller frees.
 */
#ifndef MUSTER_CSV_H
#define MUSTER_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CSV_MAX_LINE 65536 /* bytes per line */
#define CSV_MAX_COLUMNS 256
#define CSV_MAX_NAME 253 /* a name-like cell (csv_text) */
#define CSV_MAX_PROBLEMS 20 /* messages printed per file before a count of the rest */

struct csv_field {
	const char *s; /* into the reader's scratch buffer: not NUL-terminated */
	size_t len;
};

struct csv {
	const char *name; /* what messages call the file */
	const char *p, *end;
	int line; /* of the record last read */
	int next_line;
	FILE *errout;
	int problems;
	char *scratch; /* the current record's unquoted fields, back to back */
	struct csv_field fields[CSV_MAX_COLUMNS];
	size_t n_fields;
};

/* A column the caller looks for in the header row; index is filled (-1: absent). */
struct csv_column {
	const char *name;
	int required;
	int index;
};

/* Reports a problem at line (counted in c->problems). */
__attribute__((format(printf, 3, 4))) void csv_problem(struct csv *c, int line, const char *fmt,
						       ...);

/* Starts reading data (len bytes; name is what messages call it): the reader set up and its
 * header row read into cols. 0; -ENOMEM; or -1 for a header that is wrong (reported). Call
 * csv_finish in every case. *width: fields per row. */
int csv_start(struct csv *c, const char *name, const char *data, size_t len, FILE *errout,
	      struct csv_column *cols, size_t n, size_t *width);
/* Reads up to the next row with the header's width (others are reported and skipped): 1, or 0
 * at the end or once `have` reached max rows of `what` (reported). */
int csv_row(struct csv *c, size_t width, size_t have, size_t max, const char *what);
/* Ends reading: prints the count of problems not shown, frees the scratch line. Returns the
 * number of problems found (0: the file was clean). */
int csv_finish(struct csv *c);

/* A name-like cell: printable ASCII, at most CSV_MAX_NAME bytes; empty only if allowed. A copy
 * the caller frees, or NULL (reported, or out of memory when nothing was reported). */
char *csv_text(struct csv *c, const struct csv_field *f, const char *column, int allow_empty);
/* A whole decimal number in 0..max ("12.0" is accepted: pandas writes floats so). 0 or -1
 * (reported). */
int csv_int(struct csv *c, const struct csv_field *f, const char *column, int64_t max,
	    int64_t *out);
/* A cell as it may appear in a message: at most 40 bytes, anything unprintable as '?'. buf
 * must hold at least 48 bytes. */
const char *csv_shown(const struct csv_field *f, char *buf, size_t size);
/* 1 when the field's text is exactly s. */
int csv_field_is(const struct csv_field *f, const char *s);

/* Reads a whole file (path) of at most max bytes. 0 with *data (NULL for an empty file) and
 * *len; -errno (-EFBIG past max). *data is the caller's to free in every case. */
int csv_read_file(const char *path, size_t max, char **data, size_t *len);

#endif
