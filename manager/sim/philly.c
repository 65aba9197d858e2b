/* SPDX-License-Identifier: Apache-2.0 */
#include "sim/philly.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/engine_objects.h"
#include "api/objects.h"
#include "core/engine.h"
#include "core/grow.h"
#include "core/num.h"
#include "core/strmap.h"
#include "sim/csv.h"
#include "sim/event_heap.h"
#include "sim/forecast.h"
#include "util/flags.h"

#define NAMESPACE "philly"
#define FLAVOR "default"
#define GPU "nvidia.com/gpu"
#define GPUS_PER_NODE 8
#define DEFAULT_FRACTION 0.3
#define DEFAULT_MAX_SAMPLES 200
#define NS_PER_MS INT64_C(1000000)
#define KEY_MAX 32 /* "philly/j" and a size_t */

/* ---------------------------------------------------------------------------- reading */

void philly_trace_free(struct philly_trace *t)
{
	for (size_t i = 0; i < t->n_clusters; i++)
		free(t->clusters[i]);
	free(t->clusters);
	free(t->jobs);
	memset(t, 0, sizeof(*t));
}

void philly_shape(int gpus, int *pods, int *per_pod)
{
	*pods = (gpus + GPUS_PER_NODE - 1) / GPUS_PER_NODE;
	*per_pod = gpus < GPUS_PER_NODE ? gpus : GPUS_PER_NODE;
}

/* "YYYY-MM-DD HH:MM:SS" (the trace's) or RFC 3339, read by the decoders' own parser. */
static int cell_time(struct csv *c, const struct csv_field *f, int64_t *ms)
{
	char text[64], shown[64];
	int64_t ns;
	if (f->len == 0) {
		csv_problem(c, c->line, "timestamp is empty");
		return -1;
	}
	if (f->len < sizeof(text) - 1) {
		memcpy(text, f->s, f->len);
		text[f->len] = '\0';
		if (f->len == 19 && text[10] == ' ') {
			text[10] = 'T';
			text[19] = 'Z';
			text[20] = '\0';
		}
		if (time_parse_rfc3339_ns(text, &ns) == 0 && ns >= 0 &&
		    ns / NS_PER_MS < PHILLY_MAX_TIME_MS) {
			*ms = ns / NS_PER_MS;
			return 0;
		}
	}
	csv_problem(c, c->line,
		    "timestamp \"%s\" is not a time: use YYYY-MM-DD HH:MM:SS (UTC) or RFC 3339, "
		    "from 1970 to 2199",
		    csv_shown(f, shown, sizeof(shown)));
	return -1;
}

/* Seconds as a decimal number >= 0 ("66.0", "1896.25"), to the millisecond. */
static int cell_seconds(struct csv *c, const struct csv_field *f, int64_t *ms)
{
	char shown[64];
	int64_t whole = 0, frac = 0;
	size_t i = 0, digits = 0, fdigits = 0;
	int range = 0;
	for (; i < f->len && f->s[i] >= '0' && f->s[i] <= '9'; i++, digits++) {
		whole = whole * 10 + (f->s[i] - '0');
		if (whole > PHILLY_MAX_DURATION_S) {
			range = 1;
			whole = PHILLY_MAX_DURATION_S + 1;
		}
	}
	if (i < f->len && f->s[i] == '.') {
		for (i++; i < f->len && f->s[i] >= '0' && f->s[i] <= '9'; i++, fdigits++)
			if (fdigits < 4)
				frac = frac * 10 + (f->s[i] - '0');
		for (size_t k = fdigits; k < 4; k++)
			frac *= 10;
	}
	if (f->len == 0 || i != f->len || (digits == 0 && fdigits == 0)) {
		csv_problem(c, c->line, "duration \"%s\" is not a number of seconds (e.g. 66.0)",
			    csv_shown(f, shown, sizeof(shown)));
		return -1;
	}
	if (range || (whole == PHILLY_MAX_DURATION_S && frac > 0)) {
		csv_problem(c, c->line, "duration %s is out of range (0..%" PRId64 " seconds)",
			    csv_shown(f, shown, sizeof(shown)), PHILLY_MAX_DURATION_S);
		return -1;
	}
	*ms = whole * 1000 + (frac + 5) / 10; /* frac is in 1/10 ms: rounded */
	return 0;
}

enum { PH_TIME, PH_DURATION, PH_GPUS, PH_CLUSTER, PH_COUNT };

int philly_parse(const char *name, const char *data, size_t len, struct philly_trace *out,
		 FILE *errout)
{
	struct csv_column cols[PH_COUNT] = {
		[PH_TIME] = { "timestamp", 1, -1 },
		[PH_DURATION] = { "duration", 1, -1 },
		[PH_GPUS] = { "num_gpus", 1, -1 },
		[PH_CLUSTER] = { "cluster", 1, -1 },
	};
	struct csv *c = malloc(sizeof(*c));
	struct strmap names; /* cluster -> index + 1 */
	size_t cap = 0, cap_clusters = 0, width;
	int oom = 0;
	memset(out, 0, sizeof(*out));
	strmap_init(&names);
	if (!c)
		return PHILLY_FAILED;
	int rc = csv_start(c, name, data, len, errout, cols, PH_COUNT, &width);
	oom = rc == -ENOMEM;
	while (rc == 0 && !oom && csv_row(c, width, out->n, PHILLY_MAX_JOBS, "jobs")) {
		struct philly_job job = { .line = c->line };
		int64_t gpus = 0;
		int before = c->problems;
		char shown[64];
		cell_time(c, &c->fields[cols[PH_TIME].index], &job.submit_ms);
		cell_seconds(c, &c->fields[cols[PH_DURATION].index], &job.duration_ms);
		if (csv_int(c, &c->fields[cols[PH_GPUS].index], "num_gpus", PHILLY_MAX_GPUS,
			    &gpus) == 0 &&
		    gpus == 0)
			csv_problem(c, c->line, "num_gpus is 0: a job asks for at least one GPU");
		job.gpus = (int)gpus;
		const struct csv_field *cf = &c->fields[cols[PH_CLUSTER].index];
		if (cf->len > PHILLY_MAX_CLUSTER || !eobj_is_dns_label(cf->s, cf->len))
			csv_problem(c, c->line,
				    "cluster \"%s\" is not a DNS label (lower-case letters, digits "
				    "and "
				    "'-', at most %d): it names a ClusterQueue",
				    csv_shown(cf, shown, sizeof(shown)), PHILLY_MAX_CLUSTER);
		if (c->problems != before)
			continue;
		char cluster[PHILLY_MAX_CLUSTER + 1];
		memcpy(cluster, cf->s, cf->len);
		cluster[cf->len] = '\0';
		uintptr_t at = (uintptr_t)strmap_get(&names, cluster);
		if (!at) {
			if (out->n_clusters == PHILLY_MAX_CLUSTERS) {
				csv_problem(c, c->line, "more than %d clusters",
					    PHILLY_MAX_CLUSTERS);
				continue;
			}
			if (GROW(out->clusters, cap_clusters, out->n_clusters + 1) != 0) {
				oom = 1;
				break;
			}
			if (!(out->clusters[out->n_clusters] = strdup(cluster))) {
				oom = 1;
				break;
			}
			at = ++out->n_clusters;
			if (strmap_put(&names, cluster, (void *)at, NULL) != 0) {
				oom = 1;
				break;
			}
		}
		job.cluster = at - 1;
		if (GROW(out->jobs, cap, out->n + 1) != 0) {
			oom = 1;
			break;
		}
		out->jobs[out->n++] = job;
	}
	strmap_release(&names, NULL);
	int status = csv_finish(c) ? PHILLY_INVALID : PHILLY_OK;
	if (!oom && status == PHILLY_OK && out->n == 0) {
		fprintf(errout, "%s: no jobs\n", name);
		status = PHILLY_INVALID;
	}
	free(c);
	if (oom)
		status = PHILLY_FAILED;
	if (status != PHILLY_OK)
		philly_trace_free(out);
	return status;
}

/* ----------------------------------------------------------------------------- replay */

/* A job of the replay, in submission order. */
struct rjob {
	const struct philly_job *job;
	size_t queue; /* index into replay.queues */
	int pods, per_pod;
	int64_t queue_ns; /* creationTimestamp: submission, ties in file order */
	int64_t admitted_ms; /* ground truth; -1 until admitted */
	json_t *obj; /* its Workload while in the engine (pending, then admitted); else NULL */
};

struct queue {
	const char *name; /* the cluster's */
	int64_t quota; /* GPUs */
	int64_t peak; /* demand */
	size_t jobs;
	int64_t *finished; /* durations (ms) of its jobs finished so far */
	size_t n_finished, cap_finished;
};

/* One forecast answer, to compare once the truth is known. */
struct guess {
	size_t job;
	int64_t at_ms; /* the sample's moment */
	int64_t estimate_ms; /* -1: no basis */
};

struct variant {
	const char *name;
	struct guess *v;
	size_t n, cap;
	size_t sources[FORECAST_N_SOURCES];
};

struct replay {
	const struct philly_trace *trace;
	const struct philly_options *opt;
	FILE *out, *errout;
	struct rjob *jobs;
	size_t n_jobs;
	struct queue *queues;
	size_t n_queues;
	struct engine *engine;
	json_t *flavors, *cqs, *lqs; /* the objects, for the engine and the forecast alike */
	struct event_heap ends; /* true ends; id: the job */
	size_t *admitted_now; /* jobs the running cycle admitted */
	size_t n_admitted_now;
	size_t live_from; /* jobs before it have all ended */
	struct variant variants[3]; /* median, conditional, perfect (philly.h) */
	size_t samples, max_pending, forecast_steps;
	double forecast_cpu_s;
	int failed;
};

static int cmp_job_time(const void *a, const void *b)
{
	const struct philly_job *x = *(const struct philly_job *const *)a;
	const struct philly_job *y = *(const struct philly_job *const *)b;
	if (x->submit_ms != y->submit_ms)
		return x->submit_ms < y->submit_ms ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int64_t total_gpus(const struct rjob *j)
{
	return (int64_t)j->pods * j->per_pod;
}

/* A change of demand: at 2t + 1 a job starts, at 2t one ends (ends first at the same t). */
struct demand_step {
	int64_t at;
	int64_t delta; /* GPUs */
};

static int cmp_step(const void *a, const void *b)
{
	return cmp_i64(&((const struct demand_step *)a)->at, &((const struct demand_step *)b)->at);
}

/* The most GPUs a queue's jobs hold at once if each starts at submission. */
static int peak_demand(struct replay *r, size_t q, int64_t *peak)
{
	struct demand_step *ev = malloc((2 * r->queues[q].jobs + 1) * sizeof(*ev));
	size_t n = 0;
	if (!ev)
		return -ENOMEM;
	for (size_t i = 0; i < r->n_jobs; i++) {
		const struct philly_job *job = r->jobs[i].job;
		if (r->jobs[i].queue != q)
			continue;
		ev[n++] = (struct demand_step){ 2 * job->submit_ms + 1, total_gpus(&r->jobs[i]) };
		ev[n++] = (struct demand_step){ 2 * (job->submit_ms + job->duration_ms),
						-total_gpus(&r->jobs[i]) };
	}
	qsort(ev, n, sizeof(*ev), cmp_step);
	int64_t cur = 0;
	*peak = 0;
	for (size_t i = 0; i < n; i++) {
		cur += ev[i].delta;
		if (cur > *peak)
			*peak = cur;
	}
	free(ev);
	return 0;
}

static json_t *flavor_object(void)
{
	return json_pack("{s:{s:s}}", "metadata", "name", FLAVOR);
}

static json_t *cq_object(const struct replay *r, const struct queue *q)
{
	char quota[32];
	snprintf(quota, sizeof(quota), "%" PRId64, q->quota);
	return json_pack("{s:{s:s},s:{s:{},s:s,s:[{s:[s],s:[{s:s,s:[{s:s,s:s}]}]}]}}", "metadata",
			 "name", q->name, "spec", "namespaceSelector", "queueingStrategy",
			 r->opt->strict_fifo ? "StrictFIFO" : "BestEffortFIFO", "resourceGroups",
			 "coveredResources", GPU, "flavors", "name", FLAVOR, "resources", "name",
			 GPU, "nominalQuota", quota);
}

static json_t *lq_object(const struct queue *q)
{
	return json_pack("{s:{s:s,s:s},s:{s:s}}", "metadata", "name", q->name, "namespace",
			 NAMESPACE, "spec", "clusterQueue", q->name);
}

static void job_name(size_t i, char *buf, size_t size)
{
	snprintf(buf, size, "j%zu", i);
}

/* RFC 3339 with nanoseconds, for the creationTimestamp that orders the queue. */
static void format_ns(int64_t ns, char *buf, size_t size)
{
	time_t s = (time_t)(ns / 1000000000);
	struct tm tm;
	if (!gmtime_r(&s, &tm)) {
		snprintf(buf, size, "1970-01-01T00:00:00Z");
		return;
	}
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%09dZ", tm.tm_year + 1900, tm.tm_mon + 1,
		 tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ns % 1000000000));
}

static json_t *job_object(const struct replay *r, size_t i)
{
	const struct rjob *j = &r->jobs[i];
	char name[32], created[64], gpus[32];
	job_name(i, name, sizeof(name));
	format_ns(j->queue_ns, created, sizeof(created));
	snprintf(gpus, sizeof(gpus), "%d", j->per_pod);
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:s,s:[{s:s,s:i,s:{s:{s:[{s:s,s:{s:{s:s}}}]}}"
			 "}]}}",
			 "apiVersion", KUEUE_API_VERSION, "kind", "Workload", "metadata", "name",
			 name, "namespace", NAMESPACE, "creationTimestamp", created, "spec",
			 "queueName", r->queues[j->queue].name, "podSets", "name", "main", "count",
			 j->pods, "template", "spec", "containers", "name", "c", "resources",
			 "requests", GPU, gpus);
}

/* What a manager's cache shows of an admitted Workload: status.admission and QuotaReserved. */
static int set_admitted_status(const struct replay *r, size_t i, int64_t at_ms)
{
	const struct rjob *j = &r->jobs[i];
	char when[64], usage[32];
	time_format_rfc3339(at_ms, when, sizeof(when));
	snprintf(usage, sizeof(usage), "%" PRId64, total_gpus(j));
	json_t *status =
		json_pack("{s:[{s:s,s:s,s:s,s:s,s:s}],s:{s:s,s:[{s:s,s:i,s:{s:s},s:{s:s}}]}}",
			  "conditions", "type", "QuotaReserved", "status", "True", "reason",
			  "QuotaReserved", "message", "admitted", "lastTransitionTime", when,
			  "admission", "clusterQueue", r->queues[j->queue].name,
			  "podSetAssignments", "name", "main", "count", j->pods, "flavors", GPU,
			  FLAVOR, "resourceUsage", GPU, usage);
	if (!status || json_object_set_new(j->obj, "status", status) != 0)
		return -ENOMEM;
	return 0;
}

/* The engine's model: one flavor, a ClusterQueue and a LocalQueue per cluster, all decoded by
 * the manager's decoders from the objects the forecast is given too. */
static int build_model(struct replay *r)
{
	char err[512];
	struct eobj_flavor f = { 0 };
	struct eobj_namespace ns = { 0 };
	json_t *fo = flavor_object();
	int rc = fo && json_array_append_new(r->flavors, fo) == 0 ? 0 : -ENOMEM;
	if (rc == 0 && (rc = eobj_flavor_decode(fo, &f, err, sizeof(err))) == 0)
		rc = engine_set_flavor(r->engine, &f.spec);
	eobj_flavor_release(&f);
	if (rc == 0 && (rc = eobj_namespace_default(NAMESPACE, &ns)) == 0)
		rc = engine_set_namespace(r->engine, ns.name, ns.n_labels, ns.labels);
	eobj_namespace_release(&ns);
	for (size_t q = 0; rc == 0 && q < r->n_queues; q++) {
		struct eobj_cq cq = { 0 };
		struct eobj_local_queue lq = { 0 };
		json_t *co = cq_object(r, &r->queues[q]), *lo = lq_object(&r->queues[q]);
		if (!co || !lo || json_array_append_new(r->cqs, co) != 0 ||
		    json_array_append_new(r->lqs, lo) != 0)
			rc = -ENOMEM;
		if (rc == 0 && (rc = eobj_cq_decode(co, &cq, err, sizeof(err))) == 0)
			rc = engine_set_cq(r->engine, &cq.spec);
		if (rc == 0 &&
		    (rc = eobj_local_queue_decode(lo, NAMESPACE, &lq, err, sizeof(err))) == 0)
			rc = engine_set_local_queue(r->engine, lq.namespace_name, lq.name,
						    lq.cluster_queue, lq.stop);
		eobj_cq_release(&cq);
		eobj_local_queue_release(&lq);
	}
	if (rc != 0 && rc != -ENOMEM)
		fprintf(r->errout, "muster replay-philly: the model: %s\n", err);
	return rc;
}

/* The jobs of the chosen clusters in submission order, their queues and quotas. */
static int select_jobs(struct replay *r)
{
	const struct philly_trace *t = r->trace;
	const struct philly_options *opt = r->opt;
	size_t *queue_of =
		malloc((t->n_clusters + 1) * sizeof(*queue_of)); /* cluster -> queue + 1 */
	const struct philly_job **order = malloc((t->n + 1) * sizeof(*order));
	size_t *count = calloc(t->n_clusters + 1, sizeof(*count));
	int rc = 0;
	if (!queue_of || !order || !count) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t c = 0; c < t->n_clusters; c++)
		queue_of[c] = 0;
	for (size_t i = 0; i < t->n; i++)
		count[t->jobs[i].cluster]++;
	r->queues = calloc(t->n_clusters + 1, sizeof(*r->queues));
	if (!r->queues) {
		rc = -ENOMEM;
		goto out;
	}
	if (opt->n_clusters == 0) {
		size_t best = 0;
		for (size_t c = 1; c < t->n_clusters; c++)
			if (count[c] > count[best])
				best = c;
		queue_of[best] = ++r->n_queues;
		r->queues[0].name = t->clusters[best];
	}
	for (size_t k = 0; k < opt->n_clusters; k++) {
		size_t c = 0;
		while (c < t->n_clusters && strcmp(t->clusters[c], opt->clusters[k]) != 0)
			c++;
		if (c == t->n_clusters) {
			fprintf(r->errout, "muster replay-philly: no cluster %s in the trace\n",
				opt->clusters[k]);
			rc = -EINVAL;
			goto out;
		}
		if (!queue_of[c]) {
			r->queues[r->n_queues].name = t->clusters[c];
			queue_of[c] = ++r->n_queues;
		}
	}
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		if (queue_of[t->jobs[i].cluster])
			order[n++] = &t->jobs[i];
	qsort(order, n, sizeof(*order), cmp_job_time);
	if (opt->max_jobs && n > opt->max_jobs)
		n = opt->max_jobs;
	r->jobs = calloc(n + 1, sizeof(*r->jobs));
	if (!r->jobs) {
		rc = -ENOMEM;
		goto out;
	}
	int64_t rank = 0;
	for (size_t i = 0; i < n; i++) {
		struct rjob *j = &r->jobs[i];
		j->job = order[i];
		j->queue = queue_of[order[i]->cluster] - 1;
		j->admitted_ms = -1;
		philly_shape(order[i]->gpus, &j->pods, &j->per_pod);
		/* Jobs of the same millisecond keep file order (at most a million of them). */
		rank = i > 0 && order[i - 1]->submit_ms == order[i]->submit_ms ? rank + 1 : 0;
		j->queue_ns =
			order[i]->submit_ms * NS_PER_MS + (rank < NS_PER_MS ? rank : NS_PER_MS - 1);
		r->queues[j->queue].jobs++;
	}
	r->n_jobs = n;
	for (size_t q = 0; rc == 0 && q < r->n_queues; q++) {
		struct queue *qu = &r->queues[q];
		int64_t largest = 0;
		if ((rc = peak_demand(r, q, &qu->peak)) != 0)
			break;
		for (size_t i = 0; i < n; i++)
			if (r->jobs[i].queue == q && total_gpus(&r->jobs[i]) > largest)
				largest = total_gpus(&r->jobs[i]);
		double fraction = opt->quota_fraction > 0 ? opt->quota_fraction : DEFAULT_FRACTION;
		qu->quota = opt->quota ? opt->quota : (int64_t)ceil(fraction * (double)qu->peak);
		if (qu->quota < largest)
			qu->quota = largest;
	}
out:
	free(queue_of);
	free(order);
	free(count);
	return rc;
}

/* ------------------------------------------------------------------------ ground truth */

static size_t job_of_key(const char *key)
{
	const char *p = key ? strchr(key, '/') : NULL;
	uint64_t job;
	if (!p || p[1] != 'j' || num_parse_u64(p + 2, SIZE_MAX - 1, &job) != 0)
		return SIZE_MAX;
	return (size_t)job;
}

static void on_truth(void *arg, const struct eng_decision *d)
{
	struct replay *r = arg;
	size_t j = job_of_key(d->workload);
	if (d->kind != ENG_ADMIT || j >= r->n_jobs)
		return;
	r->admitted_now[r->n_admitted_now++] = j;
}

static int add_job(struct replay *r, size_t i)
{
	char err[512];
	struct eobj_workload w;
	struct rjob *j = &r->jobs[i];
	if (!(j->obj = job_object(r, i)))
		return -ENOMEM;
	int rc = eobj_workload_decode(j->obj, NAMESPACE, NULL, NULL, &w, err, sizeof(err));
	if (rc == 0)
		rc = engine_add_workload(r->engine, &w.spec);
	else if (rc != -ENOMEM)
		fprintf(r->errout, "muster replay-philly: job on line %d: %s\n", j->job->line, err);
	eobj_workload_release(&w);
	return rc;
}

static int end_job(struct replay *r, size_t i)
{
	struct rjob *j = &r->jobs[i];
	struct queue *q = &r->queues[j->queue];
	char key[64], name[32];
	job_name(i, name, sizeof(name));
	snprintf(key, sizeof(key), NAMESPACE "/%s", name);
	engine_remove_workload(r->engine, key);
	json_decref(j->obj);
	j->obj = NULL;
	if (GROW(q->finished, q->cap_finished, q->n_finished + 1) != 0)
		return -ENOMEM;
	q->finished[q->n_finished++] = j->job->duration_ms;
	return 0;
}

/* Cycles to a fixed point at t; what is admitted starts its true run. */
static int settle(struct replay *r, int64_t t)
{
	for (;;) {
		r->n_admitted_now = 0;
		int decided = engine_cycle(r->engine, on_truth, r), rc;
		if (decided < 0)
			return decided;
		for (size_t k = 0; k < r->n_admitted_now; k++) {
			size_t i = r->admitted_now[k];
			r->jobs[i].admitted_ms = t;
			if ((rc = set_admitted_status(r, i, t)) != 0 ||
			    (rc = event_heap_push(&r->ends,
						  (struct event){ .t = t +
								       r->jobs[i].job->duration_ms,
								  .id = i })) != 0)
				return rc;
		}
		if (decided == 0)
			return 0;
	}
}

/* ---------------------------------------------------------------------------- samples */

static int64_t median_i64(int64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_i64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int record(struct variant *v, const struct forecast_result *res, int64_t now)
{
	for (size_t i = 0; i < res->n; i++) {
		const struct forecast_estimate *e = &res->items[i];
		if (GROW(v->v, v->cap, v->n + 1) != 0)
			return -ENOMEM;
		v->v[v->n++] =
			(struct guess){ .job = job_of_key(e->workload),
					.at_ms = now,
					.estimate_ms = e->has_admission ? e->admission_ms : -1 };
		for (int s = 0; s < FORECAST_N_SOURCES; s++)
			v->sources[s] += e->sources[s];
	}
	return 0;
}

/* The forecast at now, once per variant (see philly.h), from the objects a manager would
 * hold. */
static int sample(struct replay *r, size_t arrived, int64_t now)
{
	json_t *wls = json_array();
	struct forecast_runtime *medians = calloc(r->n_queues + 1, sizeof(*medians));
	struct forecast_runtime *samples = calloc(r->n_queues + 1, sizeof(*samples));
	int64_t **sorted = calloc(r->n_queues + 1, sizeof(*sorted));
	struct forecast_deadline *dls = calloc(arrived - r->live_from + 1, sizeof(*dls));
	char *keys = calloc(arrived - r->live_from + 1, KEY_MAX);
	size_t n_rts = 0, n_dls = 0, pending = 0;
	int rc = 0;
	char err[1024];
	if (!wls || !medians || !samples || !sorted || !dls || !keys) {
		rc = -ENOMEM;
		goto out;
	}
	while (r->live_from < arrived && !r->jobs[r->live_from].obj)
		r->live_from++;
	for (size_t i = r->live_from; i < arrived; i++) {
		struct rjob *j = &r->jobs[i];
		if (!j->obj)
			continue;
		if (json_array_append(wls, j->obj) != 0) {
			rc = -ENOMEM;
			goto out;
		}
		pending += j->admitted_ms < 0;
		char *key = keys + KEY_MAX * n_dls;
		snprintf(key, KEY_MAX, NAMESPACE "/j%zu", i);
		/* Whole seconds, rounded up: the trace's durations are whole already. */
		dls[n_dls++] =
			(struct forecast_deadline){ key, (j->job->duration_ms + 999) / 1000 };
	}
	if (pending > r->max_pending)
		r->max_pending = pending;
	/* What the ledger knows: the runtimes of the jobs finished so far. */
	for (size_t q = 0; q < r->n_queues; q++) {
		struct queue *qu = &r->queues[q];
		if (qu->n_finished == 0)
			continue;
		if (!(sorted[n_rts] = malloc(qu->n_finished * sizeof(**sorted)))) {
			rc = -ENOMEM;
			goto out;
		}
		memcpy(sorted[n_rts], qu->finished, qu->n_finished * sizeof(**sorted));
		medians[n_rts] = (struct forecast_runtime){
			.cluster_queue = qu->name, .ms = median_i64(sorted[n_rts], qu->n_finished)
		};
		samples[n_rts] = (struct forecast_runtime){ .cluster_queue = qu->name,
							    .sample = sorted[n_rts],
							    .n_sample = qu->n_finished };
		n_rts++;
	}
	struct sim_objects objs = { .flavors = r->flavors,
				    .cluster_queues = r->cqs,
				    .local_queues = r->lqs,
				    .workloads = wls };
	struct forecast_input in = { .objects = &objs };
	for (int variant = 0; rc == 0 && variant < 3; variant++) {
		struct forecast_options o = { .now_ms = now };
		struct forecast_result res;
		if (variant < 2) {
			o.runtimes = variant == 0 ? medians : samples;
			o.n_runtimes = n_rts;
		} else {
			o.deadlines = dls;
			o.n_deadlines = n_dls;
		}
		clock_t start = clock();
		rc = forecast_pending(&in, &o, &res, err, sizeof(err));
		r->forecast_cpu_s += (double)(clock() - start) / CLOCKS_PER_SEC;
		if (rc != 0) {
			fprintf(r->errout, "muster replay-philly: forecast: %s\n", err);
			break;
		}
		r->forecast_steps += res.steps;
		rc = record(&r->variants[variant], &res, now);
		forecast_result_release(&res);
	}
	r->samples++;
out:
	json_decref(wls);
	for (size_t q = 0; q < n_rts; q++)
		free(sorted[q]);
	free(sorted);
	free(medians);
	free(samples);
	free(dls);
	free(keys);
	return rc;
}

/* The discrete-event run, sampling as it goes. */
static int ground_truth(struct replay *r)
{
	size_t max_samples = r->opt->max_samples ? r->opt->max_samples : DEFAULT_MAX_SAMPLES;
	size_t every = r->opt->sample_every;
	if (!every)
		every = r->n_jobs / max_samples > 0 ? r->n_jobs / max_samples : 1;
	size_t next = 0; /* the next arrival */
	r->admitted_now = malloc((r->n_jobs + 1) * sizeof(*r->admitted_now));
	if (!r->admitted_now)
		return -ENOMEM;
	while (next < r->n_jobs || r->ends.n > 0) {
		int64_t t = next < r->n_jobs ? r->jobs[next].job->submit_ms : INT64_MAX;
		if (r->ends.n > 0 && r->ends.v[0].t < t)
			t = r->ends.v[0].t;
		int rc = 0, due = 0;
		while (rc == 0 && r->ends.n > 0 && r->ends.v[0].t == t) {
			size_t i = r->ends.v[0].id;
			event_heap_pop(&r->ends);
			rc = end_job(r, i);
		}
		while (rc == 0 && next < r->n_jobs && r->jobs[next].job->submit_ms == t) {
			rc = add_job(r, next++);
			due |= next % every == 0 && r->samples < max_samples;
		}
		if (rc == 0)
			rc = settle(r, t);
		if (rc == 0 && due)
			rc = sample(r, next, t);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* ---------------------------------------------------------------------------- figures */

static double quantile(const double *v, size_t n, double q)
{
	if (n == 0)
		return NAN;
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)pos;
	double frac = pos - (double)lo;
	return lo + 1 < n ? v[lo] + frac * (v[lo + 1] - v[lo]) : v[lo];
}

static void put_figure(FILE *out, const char *name, double v)
{
	if (isnan(v))
		fprintf(out, " %s=-", name);
	else
		fprintf(out, " %s=%.2f", name, v);
}

static int report(struct replay *r, const struct variant *v)
{
	double *abs_err = malloc((v->n + 1) * sizeof(double));
	double *signed_err = malloc((v->n + 1) * sizeof(double));
	double *rel = malloc((v->n + 1) * sizeof(double));
	size_t n = 0, n_rel = 0, no_basis = 0, unresolved = 0, close = 0;
	double sum = 0;
	if (!abs_err || !signed_err || !rel) {
		free(abs_err);
		free(signed_err);
		free(rel);
		return -ENOMEM;
	}
	for (size_t i = 0; i < v->n; i++) {
		const struct guess *g = &v->v[i];
		int64_t truth = g->job < r->n_jobs ? r->jobs[g->job].admitted_ms : -1;
		if (g->estimate_ms < 0) {
			no_basis++;
			continue;
		}
		if (truth < 0) {
			unresolved++;
			continue;
		}
		double e = (double)(g->estimate_ms - truth) / 60000.0;
		signed_err[n] = e;
		abs_err[n++] = fabs(e);
		sum += fabs(e);
		close += fabs(e) <= 1.0;
		if (truth > g->at_ms)
			rel[n_rel++] = fabs(e) / ((double)(truth - g->at_ms) / 60000.0);
	}
	qsort(abs_err, n, sizeof(double), cmp_double);
	qsort(signed_err, n, sizeof(double), cmp_double);
	qsort(rel, n_rel, sizeof(double), cmp_double);
	fprintf(r->out, "FORECAST runtime=%s estimates=%zu no_basis=%zu compared=%zu", v->name,
		v->n, no_basis, n);
	put_figure(r->out, "within_1min_pct", n ? 100.0 * (double)close / (double)n : NAN);
	put_figure(r->out, "abs_mean_min", n ? sum / (double)n : NAN);
	put_figure(r->out, "abs_median_min", quantile(abs_err, n, 0.5));
	put_figure(r->out, "abs_p90_min", quantile(abs_err, n, 0.9));
	put_figure(r->out, "signed_median_min", quantile(signed_err, n, 0.5));
	put_figure(r->out, "rel_median", quantile(rel, n_rel, 0.5));
	put_figure(r->out, "rel_p90", quantile(rel, n_rel, 0.9));
	fprintf(r->out, "\n");
	double per = v->n ? 1.0 / (double)v->n : 0;
	fprintf(r->out,
		"replay-philly: runtime=%s: %zu estimates of workloads never admitted in the "
		"replay; "
		"runtime sources per estimate (mean): activeDeadlineSeconds %.1f, "
		"maximumExecutionTimeSeconds %.1f, history %.1f, none %.1f\n",
		v->name, unresolved, (double)v->sources[FORECAST_ACTIVE_DEADLINE] * per,
		(double)v->sources[FORECAST_MAX_EXECUTION] * per,
		(double)v->sources[FORECAST_HISTORY] * per,
		(double)v->sources[FORECAST_NO_RUNTIME] * per);
	free(abs_err);
	free(signed_err);
	free(rel);
	return 0;
}

static int print_setup(struct replay *r)
{
	double *wait = malloc((r->n_jobs + 1) * sizeof(double));
	size_t n = 0, waited = 0;
	if (!wait)
		return -ENOMEM;
	for (size_t q = 0; q < r->n_queues; q++) {
		const struct queue *qu = &r->queues[q];
		fprintf(r->out,
			"replay-philly: cluster %s: %zu jobs, peak demand %" PRId64
			" GPUs, quota %" PRId64 " GPUs, %s\n",
			qu->name, qu->jobs, qu->peak, qu->quota,
			r->opt->strict_fifo ? "StrictFIFO" : "BestEffortFIFO");
	}
	for (size_t i = 0; i < r->n_jobs; i++) {
		if (r->jobs[i].admitted_ms < 0)
			continue;
		wait[n] = (double)(r->jobs[i].admitted_ms - r->jobs[i].job->submit_ms) / 60000.0;
		waited += wait[n++] > 0;
	}
	qsort(wait, n, sizeof(double), cmp_double);
	fprintf(r->out,
		"replay-philly: shape: ceil(g/8) pods x min(8,g) nvidia.com/gpu; ground truth: %zu "
		"jobs, "
		"%zu admitted, %zu waited; wait median %.2f min, p90 %.2f min, max %.2f min\n",
		r->n_jobs, n, waited, quantile(wait, n, 0.5), quantile(wait, n, 0.9),
		n ? wait[n - 1] : 0.0);
	fprintf(r->out,
		"replay-philly: %zu samples, at most %zu pending at one; forecast: %zu ends "
		"simulated, %.2f s of CPU\n",
		r->samples, r->max_pending, r->forecast_steps, r->forecast_cpu_s);
	free(wait);
	return 0;
}

int philly_replay(const struct philly_trace *t, const struct philly_options *opt, FILE *out,
		  FILE *errout)
{
	struct replay r = { .trace = t, .opt = opt, .out = out, .errout = errout };
	r.variants[0].name = "median";
	r.variants[1].name = "conditional";
	r.variants[2].name = "perfect";
	r.flavors = json_array();
	r.cqs = json_array();
	r.lqs = json_array();
	int rc = r.flavors && r.cqs && r.lqs ? engine_new(&r.engine) : -ENOMEM;
	if (rc == 0)
		rc = select_jobs(&r);
	if (rc == 0 && r.n_jobs == 0) {
		fprintf(errout, "muster replay-philly: no jobs to replay\n");
		rc = -EINVAL;
	}
	if (rc == 0)
		rc = build_model(&r);
	if (rc == 0)
		rc = ground_truth(&r);
	if (rc == 0)
		rc = print_setup(&r);
	for (int v = 0; rc == 0 && v < 3; v++)
		rc = report(&r, &r.variants[v]);
	for (size_t i = 0; i < r.n_jobs; i++)
		json_decref(r.jobs[i].obj);
	for (size_t q = 0; q < r.n_queues; q++)
		free(r.queues[q].finished);
	free(r.queues);
	free(r.jobs);
	event_heap_release(&r.ends);
	free(r.admitted_now);
	for (int v = 0; v < 3; v++)
		free(r.variants[v].v);
	json_decref(r.flavors);
	json_decref(r.cqs);
	json_decref(r.lqs);
	engine_free(r.engine);
	if (rc == -EINVAL)
		return PHILLY_INVALID;
	if (rc != 0) {
		fprintf(errout, "muster replay-philly: %s\n", strerror(-rc));
		return PHILLY_FAILED;
	}
	return PHILLY_OK;
}

/* ------------------------------------------------------------------------------- main */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: muster replay-philly --trace FILE [--cluster NAME]... [--quota N |\n"
		"                            --quota-fraction F] [--queueing best-effort|strict]\n"
		"                            [--jobs N] [--sample-every N] [--max-samples N]\n"
		"\n"
		"Replays the Philly job trace (CSV: timestamp,duration,num_gpus,cluster) through "
		"the\n"
		"admission engine, one ClusterQueue per virtual cluster (default: the one with "
		"the\n"
		"most jobs; quota F of its peak demand, default 0.3), and at sampled arrivals asks "
		"the\n"
		"forecast when every pending workload will be admitted: with the median runtime of "
		"the\n"
		"jobs finished so far, with those runtimes as a sample (the median of those longer "
		"than\n"
		"a job has run), and with the true runtimes. Prints how far the estimates were "
		"from\n"
		"the replay's admission times. Exit status: 0 done, 2 invalid input (FILE:LINE: "
		"on\n"
		"stderr), 1 failure.\n");
}

struct clusters {
	const char *names[16];
	size_t n;
};

static int cluster_flag(void *dest, const char *value)
{
	struct clusters *c = dest;
	if (c->n == sizeof(c->names) / sizeof(c->names[0]))
		return -E2BIG;
	c->names[c->n++] = value;
	return 0;
}

int philly_main(int argc, char **argv)
{
	static const char *const queueing[] = { "best-effort", "strict", NULL };
	struct philly_options opt = { 0 };
	struct clusters clusters = { .n = 0 };
	const char *path = NULL;
	int64_t max_jobs = 0, sample_every = 0, max_samples = 0;
	int help = 0;
	uint64_t seen;
	const struct flag flags[] = {
		{ "trace", 0, FLAG_STRING, &path, .help = NULL },
		{ "cluster", 0, FLAG_CALL, &clusters, .call = cluster_flag },
		{ "quota", 0, FLAG_INT, &opt.quota, .min = 1, .max = 1000000000 },
		{ "quota-fraction", 0, FLAG_DOUBLE, &opt.quota_fraction, .dmin = DBL_TRUE_MIN,
		  .dmax = 100, .expect = "a number above 0, at most 100" },
		{ "queueing", 0, FLAG_CHOICE, &opt.strict_fifo, .choices = queueing },
		{ "jobs", 0, FLAG_INT, &max_jobs, .min = 0, .max = PHILLY_MAX_JOBS },
		{ "sample-every", 0, FLAG_INT, &sample_every, .min = 0, .max = PHILLY_MAX_JOBS },
		{ "max-samples", 0, FLAG_INT, &max_samples, .min = 0, .max = PHILLY_MAX_JOBS },
		{ "help", 0, FLAG_BOOL, &help, .help = NULL },
	};
	const struct flag_parser parser = { .flags = flags,
					    .nflags = sizeof(flags) / sizeof(flags[0]),
					    .prefix = "muster replay-philly: ",
					    .err = stderr };
	int parsed = flags_parse_command(&parser, argc, argv, &help, usage, &seen);
	if (parsed != 0)
		return parsed > 0 ? PHILLY_OK : PHILLY_INVALID;
	opt.clusters = clusters.n ? clusters.names : NULL;
	opt.n_clusters = clusters.n;
	opt.max_jobs = (size_t)max_jobs;
	opt.sample_every = (size_t)sample_every;
	opt.max_samples = (size_t)max_samples;
	if (!path) {
		fprintf(stderr, "muster replay-philly: --trace is required\n");
		usage(stderr);
		return PHILLY_INVALID;
	}
	char *data = NULL;
	size_t len = 0;
	struct philly_trace trace = { 0 };
	int rc = csv_read_file(path, PHILLY_MAX_FILE, &data, &len);
	int status = PHILLY_OK;
	if (rc == -EFBIG) {
		fprintf(stderr, "%s: larger than %u bytes\n", path, PHILLY_MAX_FILE);
		status = PHILLY_INVALID;
	} else if (rc != 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(-rc));
		status = rc == -ENOMEM ? PHILLY_FAILED : PHILLY_INVALID;
	}
	if (status == PHILLY_OK)
		status = philly_parse(path, data ? data : "", len, &trace, stderr);
	free(data);
	if (status == PHILLY_OK) {
		status = philly_replay(&trace, &opt, stdout, stderr);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			fprintf(stderr, "muster replay-philly: cannot write the output\n");
			status = PHILLY_FAILED;
		}
	}
	philly_trace_free(&trace);
	return status;
}
