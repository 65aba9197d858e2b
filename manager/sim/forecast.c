/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/forecast.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/engine.h"
#include "core/grow.h"
#include "core/quota.h"
#include "core/strmap.h"
#include "sim/event_heap.h"
#include "sim/sim_internal.h"

#define NS_PER_MS INT64_C(1000000)
#define MS_PER_DAY (INT64_C(24) * 3600 * 1000)
#define MAX_COHORT_DEPTH 64 /* deeper (or a cycle) counts as its own tree */
#define MAX_RUNTIME_MS (INT64_C(100) * 365 * MS_PER_DAY) /* a century: longer is a mistake */
#define NO_SLOT SIZE_MAX

/* A cohort tree (or a ClusterQueue without cohort): what its workloads compete for. */
struct tree {
	size_t admitted; /* admissions of the run so far */
	size_t sources[FORECAST_N_SOURCES]; /* of the running workloads it has seen */
	size_t unknown_running; /* at the end of the run: running with no expected end */
	const char *first_unknown; /* the smallest such key */
	int known_end_left; /* at the end of the run: a running workload with a known end */
};

/* The forecast's view of one workload of s.wls. */
struct fwl {
	size_t tree;
	size_t slot; /* its estimate in fc.items, NO_SLOT when it is no target */
	int running;
	unsigned gen;
	enum forecast_source src;
	int admitted_in_run; /* a target the run admitted */
	size_t preempted_for; /* victims evicted so that it fits */
};

/* What the ends of the current step released, per workload and resource. */
struct freed {
	size_t wl;
	size_t tree;
	char *resource;
	int64_t amount;
};

struct fc {
	struct sim s;
	char *errtext; /* the simulation's problems (open_memstream) */
	size_t errlen;
	FILE *errout;
	const struct forecast_options *opt;
	int64_t now, cur, horizon; /* ms */
	size_t max_steps;
	int initial; /* the cycle at now, before any end */
	struct fwl *w;
	struct tree *trees;
	size_t n_trees;
	struct strmap tree_index; /* root name -> index + 1 */
	struct strmap deadlines; /* workload key -> const struct forecast_deadline * */
	struct strmap runtimes; /* ClusterQueue -> const struct forecast_runtime * */
	struct strmap lq_cq; /* "namespace/name" -> ClusterQueue name (the LocalQueue's) */
	struct strmap cohort_parent; /* cohort -> parent name, or "" for a root */
	struct strmap cq_cohort; /* ClusterQueue -> cohort name, or "" */
	/* Expected ends (id: index into s.wls); stale once the workload stops running or runs
	 * again (gen). */
	struct event_heap ends;
	struct freed *freed;
	size_t n_freed, cap_freed;
	struct forecast_estimate *items;
	size_t n_items;
	size_t targets_left;
	size_t running_at_now;
	size_t steps;
	enum forecast_stop stop;
	int failed; /* -errno from inside the decision hook */
};

const char *forecast_source_name(enum forecast_source s)
{
	switch (s) {
	case FORECAST_ACTIVE_DEADLINE:
		return "activeDeadlineSeconds";
	case FORECAST_MAX_EXECUTION:
		return "maximumExecutionTimeSeconds";
	case FORECAST_HISTORY:
		return "history";
	default:
		return "none";
	}
}

/* ------------------------------------------------------------------------------- texts */

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

/* "~14:20" on now's (UTC) day, else "~2026-11-28 14:20". */
static void format_time(const struct fc *fc, int64_t ms, char *buf, size_t size)
{
	time_t t = (time_t)(ms / 1000), n = (time_t)(fc->now / 1000);
	struct tm at, today;
	if (!gmtime_r(&t, &at) || !gmtime_r(&n, &today)) {
		snprintf(buf, size, "~?");
		return;
	}
	if (at.tm_year == today.tm_year && at.tm_yday == today.tm_yday)
		snprintf(buf, size, "~%02d:%02d", at.tm_hour, at.tm_min);
	else
		snprintf(buf, size, "~%04d-%02d-%02d %02d:%02d", at.tm_year + 1900, at.tm_mon + 1,
			 at.tm_mday, at.tm_hour, at.tm_min);
}

/* "30 days", "5 hours", "90 minutes": the horizon as people give it. */
static void format_span(int64_t ms, char *buf, size_t size)
{
	if (ms % MS_PER_DAY == 0)
		snprintf(buf, size, "%lld day%s", (long long)(ms / MS_PER_DAY),
			 plural((size_t)(ms / MS_PER_DAY)));
	else if (ms % 3600000 == 0)
		snprintf(buf, size, "%lld hour%s", (long long)(ms / 3600000),
			 plural((size_t)(ms / 3600000)));
	else
		snprintf(buf, size, "%lld minute%s", (long long)(ms / 60000),
			 plural((size_t)(ms / 60000)));
}

/* The resource of a target that the ends of this step released most to the point: the first
 * it requests that was freed in its tree, an extended resource (nvidia.com/gpu) before cpu and
 * memory since those are the scarce ones. *amount is what was freed of it; *ends how many
 * workloads of its tree ended. NULL when none of its resources was freed. */
static const char *freed_resource(const struct fc *fc, size_t wl, int64_t *amount, size_t *ends)
{
	const struct eng_workload_spec *spec = &fc->s.wls[wl].w.spec;
	size_t tree = fc->w[wl].tree;
	const char *best = NULL;
	*amount = 0;
	*ends = 0;
	for (size_t i = 0; i < fc->n_freed; i++)
		if (fc->freed[i].tree == tree && (i == 0 || fc->freed[i - 1].wl != fc->freed[i].wl))
			++*ends;
	for (int extended = 1; extended >= 0 && !best; extended--) {
		for (size_t p = 0; p < spec->n_podsets && !best; p++) {
			const struct quota_podset *pod = &spec->podsets[p].pod;
			for (size_t k = 0; k < pod->n_requests && !best; k++) {
				const char *res = pod->resources[k];
				int64_t sum = 0;
				if (pod->per_pod[k] <= 0 || (extended && !strchr(res, '/')))
					continue;
				for (size_t i = 0; i < fc->n_freed; i++)
					if (fc->freed[i].tree == tree &&
					    !strcmp(fc->freed[i].resource, res))
						sum += fc->freed[i].amount;
				if (sum > 0) {
					best = res;
					*amount = sum;
				}
			}
		}
	}
	return best;
}

/* The basis of a target admitted now (the run's clock). */
static void admitted_basis(const struct fc *fc, size_t wl, size_t ahead, char *buf, size_t size)
{
	const struct fwl *w = &fc->w[wl];
	char when[64], preempt[96] = "";
	size_t n;
	format_time(fc, fc->cur, when, sizeof(when));
	int len = snprintf(buf, size, "%zu workload%s ahead", ahead, plural(ahead));
	if (len < 0 || (size_t)len >= size)
		return;
	if (w->preempted_for)
		snprintf(preempt, sizeof(preempt), " once %zu workload%s %s preempted",
			 w->preempted_for, plural(w->preempted_for),
			 w->preempted_for == 1 ? "is" : "are");
	if (fc->initial) {
		snprintf(buf + len, size - (size_t)len, "; it fits now%s", preempt);
		return;
	}
	int64_t amount;
	const char *res = freed_resource(fc, wl, &amount, &n);
	if (!res) {
		snprintf(buf + len, size - (size_t)len, "; it fits at %s%s", when, preempt);
		return;
	}
	char qty[64];
	quota_format_amount(res, amount, qty, sizeof(qty));
	snprintf(buf + len, size - (size_t)len, "; the earliest end%s free%s %s %s at %s%s",
		 n > 1 ? "s" : "", n > 1 ? "" : "s", qty, res, when, preempt);
}

/* The basis of a target the run did not admit. */
static void waiting_basis(const struct fc *fc, size_t wl, char *buf, size_t size)
{
	const struct wl_rec *r = &fc->s.wls[wl];
	const struct tree *t = &fc->trees[fc->w[wl].tree];
	const char *message = r->message && *r->message ? r->message : "waiting for admission";
	char span[64];
	if (t->known_end_left && fc->stop == FORECAST_STOP_STEPS) {
		snprintf(buf, size, "no estimate: the forecast stopped after %zu ends (its bound)",
			 fc->steps);
	} else if (t->known_end_left) {
		format_span(fc->horizon, span, sizeof(span));
		snprintf(buf, size, "no estimate within %s: it is still waiting then", span);
	} else if (t->unknown_running == 1) {
		snprintf(buf, size,
			 "no basis: it waits for %s, running with no expected end (no "
			 "maximumExecutionTimeSeconds, activeDeadlineSeconds or runtime history)",
			 t->first_unknown);
	} else if (t->unknown_running > 1) {
		snprintf(buf, size,
			 "no basis: it waits for %zu running workloads with no expected end (%s "
			 "and "
			 "%zu more; no maximumExecutionTimeSeconds, activeDeadlineSeconds or "
			 "runtime "
			 "history)",
			 t->unknown_running, t->first_unknown, t->unknown_running - 1);
	} else if (r->reason && !strcmp(r->reason, "Inadmissible")) {
		snprintf(buf, size, "no basis: it can't be admitted: %s", message);
	} else {
		snprintf(buf, size, "no basis: it does not fit even with nothing else running: %s",
			 message);
	}
}

/* --------------------------------------------------------------------------- the ends */

/* The earliest entry still current (stale ones are dropped), or NULL. */
static int current(const struct fc *fc, const struct event *e)
{
	return fc->w[e->id].running && fc->w[e->id].gen == e->gen;
}

static const struct event *next_end(struct fc *fc)
{
	while (fc->ends.n > 0) {
		if (current(fc, &fc->ends.v[0]))
			return &fc->ends.v[0];
		event_heap_pop(&fc->ends);
	}
	return NULL;
}

/* ------------------------------------------------------------------------ the workloads */

static int64_t median_sorted(const int64_t *v, size_t n)
{
	return n % 2 ? v[n / 2] : v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2;
}

/* A history runtime for a workload that has run for elapsed ms: the median of the sample's
 * runtimes above elapsed; past them all, what it has run plus the sample's median; without a
 * sample, the typical one. */
static int64_t history_runtime(const struct forecast_runtime *rt, int64_t elapsed)
{
	if (rt->n_sample == 0)
		return rt->ms;
	size_t lo = 0, hi = rt->n_sample; /* the first runtime above elapsed */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rt->sample[mid] <= elapsed)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Past every recorded runtime nothing says how long it will go on: a typical runtime
	 * more. (Expecting it to run as long again was tried: on the Philly trace it doubled the
	 * error where a few very long jobs block a queue, and gained nothing elsewhere.) */
	if (lo == rt->n_sample)
		return elapsed + median_sorted(rt->sample, rt->n_sample);
	return median_sorted(rt->sample + lo, rt->n_sample - lo);
}

/* It starts running at start (ms) in cluster_queue: its expected end, from the first source
 * that has one (see forecast.h). */
static int start_running(struct fc *fc, size_t wl, int64_t start, const char *cluster_queue)
{
	const struct eobj_workload *w = &fc->s.wls[wl].w;
	struct fwl *f = &fc->w[wl];
	int64_t runtime = -1;
	f->src = FORECAST_NO_RUNTIME;
	if (w->has_max_execution) {
		runtime = w->max_execution_seconds * 1000;
		f->src = FORECAST_MAX_EXECUTION;
	}
	const struct forecast_deadline *dl = strmap_get(&fc->deadlines, w->spec.key);
	if (dl && (runtime < 0 || dl->seconds * 1000 < runtime)) {
		runtime = dl->seconds * 1000;
		f->src = FORECAST_ACTIVE_DEADLINE;
	}
	const struct forecast_runtime *rt =
		cluster_queue ? strmap_get(&fc->runtimes, cluster_queue) : NULL;
	if (runtime < 0 && rt) {
		runtime = history_runtime(rt, start < fc->cur ? fc->cur - start : 0);
		f->src = FORECAST_HISTORY;
	}
	f->running = 1;
	f->gen++;
	fc->trees[f->tree].sources[f->src]++;
	if (runtime < 0)
		return 0;
	int64_t end = start + runtime; /* both bounded: no overflow */
	return event_heap_push(&fc->ends, (struct event){ .t = end < fc->cur ? fc->cur : end,
							  .id = wl,
							  .gen = f->gen });
}

static size_t wl_index(struct fc *fc, const char *key)
{
	struct wl_rec *r = key ? sim_find_workload(&fc->s, key) : NULL;
	return r ? (size_t)(r - fc->s.wls) : NO_SLOT;
}

/* Every decision of a cycle (sim_settle's hook), at the run's clock. */
static void on_decision(void *arg, const struct eng_decision *d)
{
	struct fc *fc = arg;
	size_t wl = wl_index(fc, d->workload);
	if (wl == NO_SLOT || fc->failed)
		return;
	struct fwl *f = &fc->w[wl];
	struct tree *t = &fc->trees[f->tree];
	switch (d->kind) {
	case ENG_ADMIT:
		if (f->slot != NO_SLOT && !f->admitted_in_run) {
			struct forecast_estimate *e = &fc->items[f->slot];
			f->admitted_in_run = 1;
			e->has_admission = 1;
			e->admission_ms = fc->cur;
			e->ahead = t->admitted;
			memcpy(e->sources, t->sources, sizeof(e->sources));
			admitted_basis(fc, wl, t->admitted, e->basis, sizeof(e->basis));
			fc->targets_left--;
		}
		t->admitted++;
		fc->failed = start_running(fc, wl, fc->cur, d->assignment->cluster_queue);
		break;
	case ENG_PREEMPT: {
		/* Evicted at once (sim_settle): its end no longer comes; it waits again. */
		f->running = 0;
		size_t p = wl_index(fc, d->preemptor);
		if (p != NO_SLOT)
			fc->w[p].preempted_for++;
		break;
	}
	case ENG_PENDING:
		break;
	}
}

/* The step's ends: what each releases is noted for the basis, then it goes. */
static int end_workloads(struct fc *fc, int64_t t)
{
	for (size_t i = 0; i < fc->n_freed; i++)
		free(fc->freed[i].resource);
	fc->n_freed = 0;
	const struct event *e;
	while ((e = next_end(fc)) && e->t == t) {
		size_t wl = e->id;
		struct wl_rec *r = &fc->s.wls[wl];
		event_heap_pop(&fc->ends);
		const struct eng_assignment *a = engine_admission(fc->s.engine, r->w.spec.key);
		for (size_t p = 0; a && p < a->n_podsets; p++) {
			for (size_t k = 0; k < a->podsets[p].n; k++) {
				if (GROW(fc->freed, fc->cap_freed, fc->n_freed + 1) != 0)
					return -ENOMEM;
				char *res = strdup(a->podsets[p].resources[k]);
				if (!res)
					return -ENOMEM;
				fc->freed[fc->n_freed++] =
					(struct freed){ .wl = wl,
							.tree = fc->w[wl].tree,
							.resource = res,
							.amount = a->podsets[p].usage[k] };
			}
		}
		fc->w[wl].running = 0;
		sim_end_workload(&fc->s, r);
	}
	return 0;
}

/* ---------------------------------------------------------------------------- the trees */

/* The tree of a ClusterQueue: its top cohort, or itself without one. */
static int tree_of(struct fc *fc, const char *cluster_queue, size_t *out)
{
	char root[1024]; /* names are bounded well below */
	const char *cohort = strmap_get(&fc->cq_cohort, cluster_queue);
	if (!cohort || !*cohort) {
		snprintf(root, sizeof(root), "cq\n%s", cluster_queue);
	} else {
		for (int depth = 0; depth < MAX_COHORT_DEPTH; depth++) {
			const char *parent = strmap_get(&fc->cohort_parent, cohort);
			if (!parent || !*parent)
				break;
			cohort = parent;
		}
		snprintf(root, sizeof(root), "cohort\n%s", cohort);
	}
	uintptr_t at = (uintptr_t)strmap_get(&fc->tree_index, root);
	if (at) {
		*out = at - 1;
		return 0;
	}
	/* At most one tree per workload: fc->trees was sized so. */
	*out = fc->n_trees++;
	memset(&fc->trees[*out], 0, sizeof(fc->trees[*out]));
	return strmap_put(&fc->tree_index, root, (void *)(uintptr_t)fc->n_trees, NULL);
}

/* Maps for the run: options, queues, cohorts; every workload's tree and state at now. */
static int prepare(struct fc *fc, const char *only)
{
	struct sim *s = &fc->s;
	char key[600];
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < fc->opt->n_deadlines; i++) {
		const struct forecast_deadline *d = &fc->opt->deadlines[i];
		if (!d->workload || d->seconds < 0 || d->seconds * 1000 > MAX_RUNTIME_MS)
			return -EINVAL;
		rc = strmap_put(&fc->deadlines, d->workload, (void *)d, NULL);
	}
	for (size_t i = 0; rc == 0 && i < fc->opt->n_runtimes; i++) {
		const struct forecast_runtime *r = &fc->opt->runtimes[i];
		if (!r->cluster_queue || r->ms < 0 || r->ms > MAX_RUNTIME_MS ||
		    (r->n_sample && !r->sample))
			return -EINVAL;
		for (size_t k = 0; k < r->n_sample; k++)
			if (r->sample[k] < 0 || r->sample[k] > MAX_RUNTIME_MS ||
			    (k > 0 && r->sample[k] < r->sample[k - 1]))
				return -EINVAL;
		rc = strmap_put(&fc->runtimes, r->cluster_queue, (void *)r, NULL);
	}
	for (size_t i = 0; rc == 0 && i < s->n_lqs; i++) {
		snprintf(key, sizeof(key), "%s/%s", s->lqs[i].namespace_name, s->lqs[i].name);
		rc = strmap_put(&fc->lq_cq, key, (void *)s->lqs[i].cluster_queue, NULL);
	}
	for (size_t i = 0; rc == 0 && i < s->n_cohorts; i++) {
		const struct eng_cohort_spec *c = &s->cohorts[i].spec;
		rc = strmap_put(&fc->cohort_parent, c->name, (void *)(c->parent ? c->parent : ""),
				NULL);
	}
	for (size_t i = 0; rc == 0 && i < s->n_cqs; i++) {
		const struct eng_cq_spec *c = &s->cqs[i].c.spec;
		rc = strmap_put(&fc->cq_cohort, c->name, (void *)(c->cohort ? c->cohort : ""),
				NULL);
	}
	if (rc != 0)
		return rc;

	size_t n = s->n_wls;
	fc->w = calloc(n ? n : 1, sizeof(*fc->w));
	fc->trees = calloc(n ? n : 1, sizeof(*fc->trees));
	fc->items = calloc(n ? n : 1, sizeof(*fc->items));
	if (!fc->w || !fc->trees || !fc->items)
		return -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct wl_rec *r = &s->wls[i];
		const struct eng_assignment *a =
			r->fixed_reason ? NULL : engine_admission(s->engine, r->w.spec.key);
		const char *cq = a ? a->cluster_queue : NULL;
		fc->w[i].slot = NO_SLOT;
		if (!cq) {
			snprintf(key, sizeof(key), "%s/%s", r->w.spec.namespace_name,
				 r->w.spec.queue);
			cq = strmap_get(&fc->lq_cq, key);
		}
		if (!cq) /* no LocalQueue: a tree of its own, shared with nobody */
			snprintf(key, sizeof(key), "\n%s", r->w.spec.key);
		if ((rc = tree_of(fc, cq ? cq : key, &fc->w[i].tree)) != 0)
			break;
		if (a) {
			int64_t start = a->quota_reserved_time ?
						a->quota_reserved_time / NS_PER_MS :
						fc->now;
			rc = start_running(fc, i, start, cq);
			fc->running_at_now++;
		} else if (!r->fixed_reason && (!only || !strcmp(only, r->w.spec.key))) {
			struct forecast_estimate *e = &fc->items[fc->n_items];
			if (!(e->workload = strdup(r->w.spec.key)))
				return -ENOMEM;
			e->state = FORECAST_PENDING;
			fc->w[i].slot = fc->n_items++;
			fc->targets_left++;
		}
	}
	return rc;
}

/* After the run: per tree, what is still running; then the basis of every target left. */
static void finish(struct fc *fc)
{
	for (size_t i = 0; i < fc->s.n_wls; i++) {
		const struct fwl *f = &fc->w[i];
		struct tree *t = &fc->trees[f->tree];
		const char *key = fc->s.wls[i].w.spec.key;
		if (!f->running || f->src != FORECAST_NO_RUNTIME)
			continue;
		if (!t->first_unknown || strcmp(key, t->first_unknown) < 0)
			t->first_unknown = key;
		t->unknown_running++;
	}
	for (size_t i = 0; i < fc->ends.n; i++)
		if (current(fc, &fc->ends.v[i]))
			fc->trees[fc->w[fc->ends.v[i].id].tree].known_end_left = 1;
	for (size_t i = 0; i < fc->s.n_wls; i++) {
		const struct fwl *f = &fc->w[i];
		if (f->slot == NO_SLOT || f->admitted_in_run)
			continue;
		struct forecast_estimate *e = &fc->items[f->slot];
		memcpy(e->sources, fc->trees[f->tree].sources, sizeof(e->sources));
		e->ahead = fc->trees[f->tree].admitted;
		waiting_basis(fc, i, e->basis, sizeof(e->basis));
	}
}

/* The run itself (see forecast.h). */
static int run(struct fc *fc)
{
	int rc;
	fc->s.observe = on_decision;
	fc->s.observe_arg = fc;
	fc->cur = fc->now;
	fc->initial = 1;
	rc = sim_settle(&fc->s);
	fc->initial = 0;
	for (;;) {
		if (rc == 0 && fc->failed)
			rc = fc->failed;
		if (rc != 0)
			return rc;
		const struct event *e = next_end(fc);
		if (fc->targets_left == 0) {
			fc->stop = FORECAST_STOP_DONE;
			break;
		}
		if (!e) {
			fc->stop = FORECAST_STOP_NO_ENDS;
			break;
		}
		if (e->t - fc->now > fc->horizon) {
			fc->stop = FORECAST_STOP_HORIZON;
			break;
		}
		if (fc->steps == fc->max_steps) {
			fc->stop = FORECAST_STOP_STEPS;
			break;
		}
		fc->cur = e->t;
		fc->steps++;
		if ((rc = end_workloads(fc, e->t)) == 0)
			rc = sim_settle(&fc->s);
	}
	finish(fc);
	return 0;
}

/* ------------------------------------------------------------------------------- calls */

static int cmp_estimate(const void *a, const void *b)
{
	return strcmp(((const struct forecast_estimate *)a)->workload,
		      ((const struct forecast_estimate *)b)->workload);
}

/* The simulation's messages (or a failure's) into err, lines joined by "; ". */
static void copy_messages(struct fc *fc, int rc, char *err, size_t errlen)
{
	if (!err || errlen == 0)
		return;
	if (fc->errout) {
		fclose(fc->errout);
		fc->errout = NULL;
	}
	if (fc->errtext && fc->errlen > 0) {
		size_t o = 0;
		for (size_t i = 0; i < fc->errlen && o + 1 < errlen; i++) {
			if (fc->errtext[i] != '\n') {
				err[o++] = fc->errtext[i];
			} else if (i + 1 < fc->errlen) {
				for (const char *sep = "; "; *sep && o + 1 < errlen; sep++)
					err[o++] = *sep;
			}
		}
		err[o] = '\0';
	} else {
		snprintf(err, errlen, "%s", rc == -EINVAL ? "invalid options" : strerror(-rc));
	}
}

static void fc_release(struct fc *fc)
{
	sim_release(&fc->s);
	if (fc->errout)
		fclose(fc->errout);
	free(fc->errtext);
	for (size_t i = 0; i < fc->n_freed; i++)
		free(fc->freed[i].resource);
	free(fc->freed);
	event_heap_release(&fc->ends);
	free(fc->w);
	free(fc->trees);
	for (size_t i = 0; fc->items && i < fc->n_items; i++)
		forecast_estimate_release(&fc->items[i]);
	free(fc->items);
	strmap_release(&fc->tree_index, NULL);
	strmap_release(&fc->deadlines, NULL);
	strmap_release(&fc->runtimes, NULL);
	strmap_release(&fc->lq_cq, NULL);
	strmap_release(&fc->cohort_parent, NULL);
	strmap_release(&fc->cq_cohort, NULL);
}

/* Loads, prepares and runs; only: the one target (NULL: every pending workload). */
static int fc_start(struct fc *fc, const struct forecast_input *in,
		    const struct forecast_options *opt, const char *only)
{
	memset(fc, 0, sizeof(*fc));
	strmap_init(&fc->tree_index);
	strmap_init(&fc->deadlines);
	strmap_init(&fc->runtimes);
	strmap_init(&fc->lq_cq);
	strmap_init(&fc->cohort_parent);
	strmap_init(&fc->cq_cohort);
	fc->opt = opt;
	fc->now = fc->cur = opt->now_ms;
	fc->horizon = opt->horizon_ms > 0 ? opt->horizon_ms : FORECAST_HORIZON_MS;
	fc->max_steps = opt->max_steps ? opt->max_steps : FORECAST_MAX_STEPS;
	int rc = sim_init(&fc->s, NULL, NULL);
	if (rc != 0)
		return rc;
	if (!(fc->errout = open_memstream(&fc->errtext, &fc->errlen)))
		return -ENOMEM;
	fc->s.errout = fc->errout;
	if (in->objects)
		rc = sim_load_objects(&fc->s, in->objects);
	else
		rc = sim_load_texts(&fc->s, in->texts, in->n_texts);
	if (rc == 0 && (!fc->s.invalid || opt->skip_invalid))
		rc = sim_build_engine(&fc->s);
	if (rc == 0 && fc->s.failed)
		rc = fc->s.failed;
	if (rc == 0 && fc->s.invalid && !opt->skip_invalid) {
		sim_print_problems(&fc->s);
		return -EINVAL;
	}
	if (rc == 0)
		rc = prepare(fc, only);
	return rc == 0 ? run(fc) : rc;
}

int forecast_pending(const struct forecast_input *in, const struct forecast_options *opt,
		     struct forecast_result *out, char *err, size_t errlen)
{
	struct fc fc;
	memset(out, 0, sizeof(*out));
	int rc = fc_start(&fc, in, opt, NULL);
	if (rc == 0) {
		qsort(fc.items, fc.n_items, sizeof(*fc.items), cmp_estimate);
		out->items = fc.items;
		out->n = fc.n_items;
		out->steps = fc.steps;
		out->stop = fc.stop;
		out->skipped = fc.s.invalid;
		out->running = fc.running_at_now;
		fc.items = NULL;
		fc.n_items = 0;
	} else {
		copy_messages(&fc, rc, err, errlen);
	}
	fc_release(&fc);
	return rc;
}

int forecast_workload(const struct forecast_input *in, const struct forecast_options *opt,
		      const char *key, struct forecast_estimate *out, char *err, size_t errlen)
{
	struct fc fc;
	memset(out, 0, sizeof(*out));
	int rc = fc_start(&fc, in, opt, key);
	struct wl_rec *r = rc == 0 ? sim_find_workload(&fc.s, key) : NULL;
	if (rc == 0 && !r) {
		rc = -ENOENT;
		if (err && errlen)
			snprintf(err, errlen, "no Workload %s among the inputs", key);
	} else if (rc == 0 && fc.n_items == 1) {
		*out = fc.items[0];
		fc.items[0].workload = NULL;
	} else if (rc == 0) {
		/* Not pending at now: admitted, or never given to the engine. */
		const struct eng_assignment *a =
			r->fixed_reason ? NULL : engine_admission(fc.s.engine, r->w.spec.key);
		if (!(out->workload = strdup(key))) {
			rc = -ENOMEM;
		} else if (r->fixed_reason) {
			out->state = FORECAST_NOT_QUEUED;
			snprintf(out->basis, sizeof(out->basis), "no basis: %s", r->fixed_message);
		} else {
			out->state = FORECAST_ADMITTED;
			out->has_admission = a && a->quota_reserved_time != 0;
			out->admission_ms =
				out->has_admission ? a->quota_reserved_time / NS_PER_MS : 0;
			snprintf(out->basis, sizeof(out->basis), "admitted");
			if (out->has_admission) {
				char when[64];
				fc.cur = out->admission_ms;
				format_time(&fc, out->admission_ms, when, sizeof(when));
				snprintf(out->basis, sizeof(out->basis), "admitted at %s", when);
			}
		}
	} else {
		copy_messages(&fc, rc, err, errlen);
	}
	fc_release(&fc);
	return rc;
}

void forecast_estimate_release(struct forecast_estimate *e)
{
	if (!e)
		return;
	free(e->workload);
	e->workload = NULL;
}

void forecast_result_release(struct forecast_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		forecast_estimate_release(&r->items[i]);
	free(r->items);
	memset(r, 0, sizeof(*r));
}
