/* SPDX-License-Identifier: Apache-2.0 */
/* Tables and the small text helpers of cli_internal.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/objects.h"
#include "cli/cli_internal.h"
#include "core/grow.h"
#include "util/buf.h"

#define COLUMN_GAP "   "
#define NONE "<none>"

char *cli_sanitize(const char *s)
{
	size_t n = strlen(s);
	char *out = malloc(n + 1), *o = out;
	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f) {
			*o++ = ' ';
		} else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			*o++ = ' '; /* U+0080..U+009F: C1 controls, CSI among them */
			p++;
		} else {
			*o++ = (char)*p;
		}
	}
	*o = '\0';
	return out;
}

/* Terminal columns of UTF-8 text: its characters (continuation bytes take none). Wide
 * characters count one; names and quantities are ASCII anyway. */
static size_t display_width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

void cli_table_init(struct cli_table *t, size_t ncols)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
}

void cli_table_row(struct cli_table *t, const char *const *cells)
{
	if (t->failed)
		return;
	/* cap counts rows, each of ncols cells. */
	if (grow_size(&t->cells, &t->cap, t->nrows + 1, t->ncols * sizeof(*t->cells)) != 0) {
		t->failed = -ENOMEM;
		return;
	}
	char **row = t->cells + t->nrows * t->ncols;
	for (size_t i = 0; i < t->ncols; i++) {
		row[i] = cli_sanitize(cells[i] ? cells[i] : NONE);
		if (!row[i]) {
			while (i--)
				free(row[i]);
			t->failed = -ENOMEM;
			return;
		}
	}
	t->nrows++;
}

int cli_table_print(const struct cli_table *t, FILE *out, const char *indent)
{
	size_t *width = calloc(t->ncols ? t->ncols : 1, sizeof(*width));
	struct buf line;
	int rc = t->failed;
	if (!width)
		return -ENOMEM;
	buf_init(&line, (size_t)1 << 30);
	for (size_t r = 0; r < t->nrows; r++)
		for (size_t i = 0; i < t->ncols; i++) {
			size_t w = display_width(t->cells[r * t->ncols + i]);
			if (w > width[i])
				width[i] = w;
		}
	for (size_t r = 0; rc == 0 && r < t->nrows; r++) {
		line.len = 0;
		rc = buf_append_str(&line, indent);
		for (size_t i = 0; rc == 0 && i < t->ncols; i++) {
			const char *cell = t->cells[r * t->ncols + i];
			rc = buf_append_str(&line, cell);
			if (i + 1 == t->ncols)
				break;
			for (size_t pad = display_width(cell); rc == 0 && pad < width[i]; pad++)
				rc = buf_append(&line, " ", 1);
			if (rc == 0)
				rc = buf_append_str(&line, COLUMN_GAP);
		}
		/* Empty last cells would leave padding behind: kubectl's lines end in text. */
		while (rc == 0 && line.len && line.data[line.len - 1] == ' ')
			line.len--;
		if (rc == 0)
			fprintf(out, "%.*s\n", (int)line.len, line.data);
	}
	buf_release(&line);
	free(width);
	return rc;
}

void cli_table_release(struct cli_table *t)
{
	for (size_t i = 0; t->cells && i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

void cli_human_duration(int64_t ms, char *buf, size_t size)
{
	int64_t seconds = ms / 1000;
	if (seconds < -1) {
		snprintf(buf, size, "<invalid>");
		return;
	}
	if (seconds < 0)
		seconds = 0;
	int64_t minutes = seconds / 60, hours = seconds / 3600, days = hours / 24;
	if (seconds < 60 * 2)
		snprintf(buf, size, "%llds", (long long)seconds);
	else if (minutes < 10 && seconds % 60)
		snprintf(buf, size, "%lldm%llds", (long long)minutes, (long long)(seconds % 60));
	else if (minutes < 60 * 3)
		snprintf(buf, size, "%lldm", (long long)minutes);
	else if (hours < 8 && minutes % 60)
		snprintf(buf, size, "%lldh%lldm", (long long)hours, (long long)(minutes % 60));
	else if (hours < 48)
		snprintf(buf, size, "%lldh", (long long)hours);
	else if (hours < 24 * 8 && hours % 24)
		snprintf(buf, size, "%lldd%lldh", (long long)days, (long long)(hours % 24));
	else if (hours < 24 * 365 * 2)
		snprintf(buf, size, "%lldd", (long long)days);
	else if (hours < 24 * 365 * 8 && days % 365)
		snprintf(buf, size, "%lldy%lldd", (long long)(days / 365), (long long)(days % 365));
	else
		snprintf(buf, size, "%lldy", (long long)(days / 365));
}

void cli_age(const char *rfc3339, int64_t now_ms, char *buf, size_t size)
{
	int64_t at;
	if (!rfc3339 || time_parse_rfc3339(rfc3339, &at) != 0)
		snprintf(buf, size, "<unknown>");
	else
		cli_human_duration(now_ms - at, buf, size);
}
