/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A Prometheus metrics registry: counters, gauges and histograms with label sets, rendered in
 * the text exposition format 0.0.4. Pure: no I/O, no loop; the manager serves what
 * metrics_render writes (ctrl/observe.c), and unit tests read it back.
 *
 * Written by hand because no Prometheus client library for C is packaged in Debian (the
 * project takes its dependencies from Debian only), and the text format is small: HELP and TYPE
 * lines, one line per series, label values escaped (\\, \" and \n), histograms as cumulative
 * _bucket{le=...} lines ending with +Inf, then _sum and _count.
 *
 * Order is stable: families in the order they were added, series sorted by their label values.
 * Bounded: label values come from cluster objects (ClusterQueue names and the like), so the
 * owner removes a queue's series when the queue goes (metrics_remove_matching), and no family
 * holds more than METRICS_MAX_SERIES series (further ones are refused with -ENOSPC).
 *
 * Kueue puts a replica_role label (leader, follower or standalone) on its series; families
 * added with METRIC_WITH_ROLE get it too, with the value metrics_set_replica_role last set
 * ("standalone" until then), read from this one place at render time.
 *
 * Threads: none. A registry is used by one thread (the loop's).
 */
#ifndef MUSTER_METRICS_H
#define MUSTER_METRICS_H

#include <stddef.h>

#include "util/buf.h"

enum metric_type { METRIC_COUNTER, METRIC_GAUGE, METRIC_HISTOGRAM };

#define METRICS_MAX_LABELS 6 /* per family, replica_role not counted */
#define METRICS_MAX_BUCKETS 32 /* per histogram, +Inf not counted */
#define METRICS_MAX_SERIES 20000 /* per family */
#define METRIC_WITH_ROLE 1u /* flag: the family's series carry replica_role */

struct metrics;
struct metric_family;

/* A new, empty registry, role "standalone". 0 or -ENOMEM. */
int metrics_new(struct metrics **out);
/* Frees the registry and its families. NULL is a no-op. */
void metrics_free(struct metrics *reg);

/*
 * Adds a family. name and label names must be valid Prometheus names (labels are a
 * NULL-terminated list, NULL for none; "le" and "replica_role" are reserved); help is any text.
 * All are copied. buckets (histograms only; NULL otherwise) are the upper bounds, strictly
 * increasing, without +Inf. Returns the family, owned by the registry, or NULL for invalid
 * arguments, a duplicate name, or out of memory.
 */
struct metric_family *metrics_add_family(struct metrics *reg, enum metric_type type,
					 const char *name, const char *help,
					 const char *const *labels, const double *buckets,
					 size_t n_buckets, unsigned flags);

/*
 * Updates the series with these label values (one per label of the family, in its order; NULL
 * reads as ""), creating it at 0 first. Values are copied. metrics_add is for counters (v >= 0)
 * and gauges; metrics_set for gauges; metrics_observe for histograms. 0, -EINVAL (wrong type
 * or a negative counter increment), -ENOSPC (the family is full) or
 * -ENOMEM. */
int metrics_add(struct metric_family *f, const char *const *values, double v);
int metrics_set(struct metric_family *f, const char *const *values, double v);
int metrics_observe(struct metric_family *f, const char *const *values, double v);

/* The value of a counter or gauge series, or the observation count of a histogram series;
 * -1 when the series does not exist. For tests and logs. */
double metrics_value(const struct metric_family *f, const char *const *values);
/* Number of series in the family. */
size_t metrics_series_count(const struct metric_family *f);

/* Removes one series (absent: nothing happens). */
void metrics_remove(struct metric_family *f, const char *const *values);
/* Removes every series whose label `label` has this value (e.g. cluster_queue="a"). */
void metrics_remove_matching(struct metric_family *f, const char *label, const char *value);
/* Removes every series: gauges that mirror state are rebuilt this way before each render. */
void metrics_reset(struct metric_family *f);

/* Sets the replica_role value (copied; "leader", "follower" or "standalone"). */
void metrics_set_replica_role(struct metrics *reg, const char *role);
/* The current replica_role value, borrowed until the next metrics_set_replica_role. */
const char *metrics_replica_role(const struct metrics *reg);

/* Appends the exposition of every family that has series to out. 0, or -ENOMEM / -E2BIG (out
 * is then left partly written). */
int metrics_render(const struct metrics *reg, struct buf *out);

/* Content-Type of what metrics_render writes. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
