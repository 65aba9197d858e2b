/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The registry and the text exposition format. No Prometheus client library for C is
 * packaged in Debian, so the format is written here by hand (see metrics.h).
 */
#include "obs/metrics.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strmap.h"

struct series {
	char **values; /* one per label of the family */
	double value; /* counter or gauge; histogram: the sum of observations */
	uint64_t count; /* histogram: observations */
	uint64_t *buckets; /* histogram: per bucket, not cumulative (the last is +Inf) */
};

struct metric_family {
	struct metrics *reg;
	enum metric_type type;
	char *name, *help;
	size_t n_labels;
	char *labels[METRICS_MAX_LABELS];
	size_t n_buckets;
	double *bounds;
	unsigned flags;
	struct strmap series; /* encoded label values -> struct series */
	struct metric_family *next;
};

struct metrics {
	struct metric_family *head, *tail;
	char role[32];
};

int metrics_new(struct metrics **out)
{
	struct metrics *reg = calloc(1, sizeof(*reg));
	if (!reg)
		return -ENOMEM;
	snprintf(reg->role, sizeof(reg->role), "standalone");
	*out = reg;
	return 0;
}

static void series_free(void *p)
{
	struct series *s = p;
	if (!s)
		return;
	free(s->buckets);
	free(s->values);
	free(s);
}

static void family_free(struct metric_family *f)
{
	strmap_release(&f->series, series_free);
	for (size_t i = 0; i < f->n_labels; i++)
		free(f->labels[i]);
	free(f->bounds);
	free(f->name);
	free(f->help);
	free(f);
}

void metrics_free(struct metrics *reg)
{
	if (!reg)
		return;
	for (struct metric_family *f = reg->head, *next; f; f = next) {
		next = f->next;
		family_free(f);
	}
	free(reg);
}

/* [a-zA-Z_:][a-zA-Z0-9_:]* for metric names; without ':' for label names. */
static int valid_name(const char *s, int colon)
{
	if (!s || !*s || (*s >= '0' && *s <= '9'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || (colon && *s == ':')))
			return 0;
	return 1;
}

struct metric_family *metrics_add_family(struct metrics *reg, enum metric_type type,
					 const char *name, const char *help,
					 const char *const *labels, const double *buckets,
					 size_t n_buckets, unsigned flags)
{
	size_t n = 0;
	if (!reg || !valid_name(name, 1) || !help)
		return NULL;
	if ((type == METRIC_HISTOGRAM) != (buckets != NULL) || n_buckets > METRICS_MAX_BUCKETS)
		return NULL;
	for (size_t i = 1; i < n_buckets; i++)
		if (!(buckets[i] > buckets[i - 1]))
			return NULL;
	for (struct metric_family *f = reg->head; f; f = f->next)
		if (!strcmp(f->name, name))
			return NULL;
	for (; labels && labels[n]; n++)
		if (n == METRICS_MAX_LABELS || !valid_name(labels[n], 0) ||
		    !strcmp(labels[n], "le") || !strcmp(labels[n], "replica_role"))
			return NULL;
	struct metric_family *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->reg = reg;
	f->type = type;
	f->flags = flags;
	strmap_init(&f->series);
	f->name = strdup(name);
	f->help = strdup(help);
	int ok = f->name && f->help;
	for (size_t i = 0; i < n; i++, f->n_labels++)
		ok = ok && (f->labels[i] = strdup(labels[i])) != NULL;
	if (ok && n_buckets) {
		ok = (f->bounds = malloc(n_buckets * sizeof(*f->bounds))) != NULL;
		if (ok)
			memcpy(f->bounds, buckets, n_buckets * sizeof(*f->bounds));
	}
	f->n_buckets = n_buckets;
	if (!ok) {
		family_free(f);
		return NULL;
	}
	if (reg->tail)
		reg->tail->next = f;
	else
		reg->head = f;
	reg->tail = f;
	return f;
}

/* The map key of a label set: each value as "<length>:<bytes>", so no value can run into the
 * next whatever bytes it holds. Returns a malloc'd key or NULL. */
static char *series_key(const struct metric_family *f, const char *const *values)
{
	size_t len = 1;
	for (size_t i = 0; i < f->n_labels; i++)
		len += strlen(values[i] ? values[i] : "") + 24;
	char *key = malloc(len), *p = key;
	if (!key)
		return NULL;
	*p = '\0';
	for (size_t i = 0; i < f->n_labels; i++) {
		const char *v = values[i] ? values[i] : "";
		p += snprintf(p, len - (size_t)(p - key), "%zu:%s", strlen(v), v);
	}
	return key;
}

/* The series for values, created at zero when absent and create is set. */
static struct series *series_get(struct metric_family *f, const char *const *values, int create,
				 int *rc)
{
	char *key = series_key(f, values);
	struct series *s = NULL;
	*rc = -ENOMEM;
	if (!key)
		return NULL;
	if ((s = strmap_get(&f->series, key)) != NULL || !create) {
		*rc = s ? 0 : -ENOENT;
		free(key);
		return s;
	}
	if (f->series.len >= METRICS_MAX_SERIES) {
		*rc = -ENOSPC;
		free(key);
		return NULL;
	}
	/* One block for the value pointers and the strings they point to. */
	size_t strings = 0;
	for (size_t i = 0; i < f->n_labels; i++)
		strings += strlen(values[i] ? values[i] : "") + 1;
	s = calloc(1, sizeof(*s));
	if (s)
		s->values = malloc(f->n_labels * sizeof(char *) + strings + 1);
	if (s && f->type == METRIC_HISTOGRAM)
		s->buckets = calloc(f->n_buckets + 1, sizeof(*s->buckets));
	if (!s || !s->values || (f->type == METRIC_HISTOGRAM && !s->buckets)) {
		series_free(s);
		free(key);
		return NULL;
	}
	char *p = (char *)(s->values + f->n_labels);
	for (size_t i = 0; i < f->n_labels; i++) {
		size_t n = strlen(values[i] ? values[i] : "") + 1;
		memcpy(p, values[i] ? values[i] : "", n);
		s->values[i] = p;
		p += n;
	}
	if (strmap_put(&f->series, key, s, NULL) != 0) {
		series_free(s);
		free(key);
		return NULL;
	}
	free(key);
	*rc = 0;
	return s;
}

int metrics_add(struct metric_family *f, const char *const *values, double v)
{
	int rc;
	if (f->type == METRIC_HISTOGRAM || (f->type == METRIC_COUNTER && !(v >= 0)))
		return -EINVAL;
	struct series *s = series_get(f, values, 1, &rc);
	if (s)
		s->value += v;
	return rc;
}

int metrics_set(struct metric_family *f, const char *const *values, double v)
{
	int rc;
	if (f->type != METRIC_GAUGE)
		return -EINVAL;
	struct series *s = series_get(f, values, 1, &rc);
	if (s)
		s->value = v;
	return rc;
}

int metrics_observe(struct metric_family *f, const char *const *values, double v)
{
	int rc;
	if (f->type != METRIC_HISTOGRAM || isnan(v))
		return -EINVAL;
	struct series *s = series_get(f, values, 1, &rc);
	if (!s)
		return rc;
	size_t b = 0;
	while (b < f->n_buckets && v > f->bounds[b])
		b++;
	s->buckets[b]++; /* b == n_buckets: only +Inf holds it */
	s->count++;
	s->value += v;
	return 0;
}

double metrics_value(const struct metric_family *f, const char *const *values)
{
	int rc;
	struct series *s = series_get((struct metric_family *)f, values, 0, &rc);
	if (!s)
		return -1;
	return f->type == METRIC_HISTOGRAM ? (double)s->count : s->value;
}

size_t metrics_series_count(const struct metric_family *f)
{
	return f->series.len;
}

void metrics_remove(struct metric_family *f, const char *const *values)
{
	char *key = series_key(f, values);
	if (key)
		series_free(strmap_remove(&f->series, key));
	free(key);
}

void metrics_remove_matching(struct metric_family *f, const char *label, const char *value)
{
	size_t l;
	for (l = 0; l < f->n_labels && strcmp(f->labels[l], label); l++)
		;
	if (l == f->n_labels)
		return;
	/* Removal shifts entries back into slots already passed (backward-shift deletion), so
	 * walk again from the start until a pass removes nothing. */
	for (int removed = 1; removed;) {
		removed = 0;
		for (size_t i = 0; i < f->series.cap; i++) {
			struct strmap_slot *slot = &f->series.slots[i];
			if (!slot->key ||
			    strcmp(((struct series *)slot->value)->values[l], value ? value : ""))
				continue;
			series_free(strmap_remove(&f->series, slot->key));
			removed = 1;
		}
	}
}

void metrics_reset(struct metric_family *f)
{
	strmap_release(&f->series, series_free);
	strmap_init(&f->series);
}

void metrics_set_replica_role(struct metrics *reg, const char *role)
{
	snprintf(reg->role, sizeof(reg->role), "%s", role ? role : "standalone");
}

const char *metrics_replica_role(const struct metrics *reg)
{
	return reg->role;
}

/* --- rendering ------------------------------------------------------------------------------ */

/* A sample value or bucket bound as Prometheus reads it: integers without a fraction, others
 * in the shortest form that reads back as the same double, +Inf, -Inf, NaN. */
static void format_number(double v, char *out, size_t size)
{
	if (isnan(v)) {
		snprintf(out, size, "NaN");
		return;
	}
	if (isinf(v)) {
		snprintf(out, size, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (v == floor(v) && fabs(v) < 1e15) {
		snprintf(out, size, "%.0f", v);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(out, size, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			return;
	}
}

/* Appends s with \\ and \n escaped, and \" too when quote is set (label values; HELP text
 * escapes only the first two). */
static int append_escaped(struct buf *out, const char *s, int quote)
{
	int rc = 0;
	const char *run = s;
	for (; *s && rc == 0; s++) {
		const char *esc = *s == '\\'         ? "\\\\" :
				  *s == '\n'         ? "\\n" :
				  quote && *s == '"' ? "\\\"" :
						       NULL;
		if (!esc)
			continue;
		if ((rc = buf_append(out, run, (size_t)(s - run))) == 0)
			rc = buf_append_str(out, esc);
		run = s + 1;
	}
	return rc ? rc : buf_append(out, run, (size_t)(s - run));
}

/* One sample line: name+suffix{labels[,replica_role][,le]} value. */
static int append_sample(struct buf *out, const struct metric_family *f, const struct series *s,
			 const char *suffix, const char *le, double v)
{
	char num[64];
	int rc = buf_append_str(out, f->name);
	int any = 0;
	if (rc == 0)
		rc = buf_append_str(out, suffix);
	for (size_t i = 0; i <= f->n_labels + 1 && rc == 0; i++) {
		const char *name, *value;
		if (i < f->n_labels) {
			name = f->labels[i];
			value = s->values[i];
		} else if (i == f->n_labels) {
			if (!(f->flags & METRIC_WITH_ROLE))
				continue;
			name = "replica_role";
			value = f->reg->role;
		} else {
			if (!le)
				continue;
			name = "le";
			value = le;
		}
		if ((rc = buf_append_str(out, any ? "," : "{")) == 0 &&
		    (rc = buf_append_str(out, name)) == 0 &&
		    (rc = buf_append_str(out, "=\"")) == 0 &&
		    (rc = append_escaped(out, value, 1)) == 0)
			rc = buf_append_str(out, "\"");
		any = 1;
	}
	if (rc == 0 && any)
		rc = buf_append_str(out, "}");
	format_number(v, num, sizeof(num));
	if (rc == 0 && (rc = buf_append_str(out, " ")) == 0 && (rc = buf_append_str(out, num)) == 0)
		rc = buf_append_str(out, "\n");
	return rc;
}

static size_t sort_labels; /* qsort has no argument: the label count of the family sorted */

static int cmp_series(const void *a, const void *b)
{
	const struct series *x = *(const struct series *const *)a,
			    *y = *(const struct series *const *)b;
	for (size_t i = 0; i < sort_labels; i++) {
		int c = strcmp(x->values[i], y->values[i]);
		if (c)
			return c;
	}
	return 0;
}

static int render_family(const struct metric_family *f, struct buf *out)
{
	static const char *const types[] = { "counter", "gauge", "histogram" };
	struct series **list = malloc(f->series.len * sizeof(*list));
	size_t n = 0;
	int rc = 0;
	if (!list)
		return -ENOMEM;
	for (size_t i = 0; i < f->series.cap; i++)
		if (f->series.slots[i].key)
			list[n++] = f->series.slots[i].value;
	sort_labels = f->n_labels;
	qsort(list, n, sizeof(*list), cmp_series);
	if ((rc = buf_append_str(out, "# HELP ")) == 0 &&
	    (rc = buf_append_str(out, f->name)) == 0 && (rc = buf_append_str(out, " ")) == 0 &&
	    (rc = append_escaped(out, f->help, 0)) == 0 &&
	    (rc = buf_append_str(out, "\n# TYPE ")) == 0 &&
	    (rc = buf_append_str(out, f->name)) == 0 && (rc = buf_append_str(out, " ")) == 0 &&
	    (rc = buf_append_str(out, types[f->type])) == 0)
		rc = buf_append_str(out, "\n");
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct series *s = list[i];
		if (f->type != METRIC_HISTOGRAM) {
			rc = append_sample(out, f, s, "", NULL, s->value);
			continue;
		}
		uint64_t cumulative = 0;
		char le[64];
		for (size_t b = 0; b < f->n_buckets && rc == 0; b++) {
			cumulative += s->buckets[b];
			format_number(f->bounds[b], le, sizeof(le));
			rc = append_sample(out, f, s, "_bucket", le, (double)cumulative);
		}
		if (rc == 0)
			rc = append_sample(out, f, s, "_bucket", "+Inf", (double)s->count);
		if (rc == 0)
			rc = append_sample(out, f, s, "_sum", NULL, s->value);
		if (rc == 0)
			rc = append_sample(out, f, s, "_count", NULL, (double)s->count);
	}
	free(list);
	return rc;
}

int metrics_render(const struct metrics *reg, struct buf *out)
{
	int rc = 0;
	for (const struct metric_family *f = reg->head; f && rc == 0; f = f->next)
		if (f->series.len > 0)
			rc = render_family(f, out);
	return rc;
}
