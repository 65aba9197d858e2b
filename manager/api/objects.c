/* SPDX-License-Identifier: Apache-2.0 */
#include "api/objects.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/quantity.h"

json_t *obj_path(json_t *obj, const char *dotted)
{
	while (obj && *dotted) {
		const char *dot = strchr(dotted, '.');
		size_t n = dot ? (size_t)(dot - dotted) : strlen(dotted);
		obj = json_object_getn(obj, dotted, n); /* each part looked up in place, uncopied */
		dotted += n + (dot ? 1 : 0);
	}
	return obj;
}

const char *obj_str(json_t *obj, const char *dotted)
{
	return json_string_value(obj_path(obj, dotted));
}

const char *obj_pick(json_t *obj, const char *const *names, json_t **out)
{
	const char *unknown = NULL;
	for (size_t i = 0; names[i]; i++)
		out[i] = NULL;
	/* The iterator walked directly: json_object_foreach goes from key to iterator and back
	 * for every member, two more library calls each, and this runs for most objects read. */
	for (void *it = json_object_iter(obj); it; it = json_object_iter_next(obj, it)) {
		const char *key = json_object_iter_key(it);
		json_t *v = json_object_iter_value(it);
		size_t i;
		for (i = 0; names[i]; i++)
			if (names[i][0] == key[0] && !strcmp(names[i], key))
				break;
		if (names[i])
			out[i] = json_is_null(v) ? NULL : v;
		else if (!unknown)
			unknown = key;
	}
	return unknown;
}

const char *obj_name(json_t *obj)
{
	return obj_str(obj, "metadata.name");
}

const char *obj_namespace(json_t *obj)
{
	return obj_str(obj, "metadata.namespace");
}

const char *obj_uid(json_t *obj)
{
	return obj_str(obj, "metadata.uid");
}

const char *obj_label(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj_path(obj, "metadata.labels"), key));
}

const char *obj_annotation(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj_path(obj, "metadata.annotations"), key));
}

/* Whether the string field of ref is want (NULL: anything). */
static int ref_field_is(json_t *ref, const char *field, const char *want)
{
	const char *v = json_string_value(json_object_get(ref, field));
	return !want || (v && !strcmp(v, want));
}

json_t *obj_owner_ref(json_t *obj, int controller, const char *api_version, const char *kind,
		      const char *uid)
{
	size_t i;
	json_t *ref;
	json_array_foreach(obj_path(obj, "metadata.ownerReferences"), i, ref)
	{
		if (controller && !json_is_true(json_object_get(ref, "controller")))
			continue;
		if (ref_field_is(ref, "apiVersion", api_version) &&
		    ref_field_is(ref, "kind", kind) && ref_field_is(ref, "uid", uid))
			return ref;
		if (controller)
			return NULL; /* the one controller is not what was asked for */
	}
	return NULL;
}

json_t *condition_get(json_t *obj, const char *type)
{
	json_t *conds = obj_path(obj, "status.conditions"), *c;
	size_t i;
	json_array_foreach(conds, i, c)
	{
		const char *t = json_string_value(json_object_get(c, "type"));
		if (t && !strcmp(t, type))
			return c;
	}
	return NULL;
}

int condition_true(json_t *obj, const char *type)
{
	const char *s = json_string_value(json_object_get(condition_get(obj, type), "status"));
	return s && !strcmp(s, "True");
}

static int64_t (*clock_source)(void);

void time_set_clock(int64_t (*now_ms)(void))
{
	clock_source = now_ms;
}

void time_now_rfc3339(char *buf, size_t size)
{
	time_t now = (time_t)(time_now_ms() / 1000);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int64_t time_now_ms(void)
{
	if (clock_source)
		return clock_source();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Days from 1970-01-01 to a civil date (proleptic Gregorian), so no timezone state is used. */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* n decimal digits at *s into *out, advancing *s; -1 if one isn't a digit. */
static int take_digits(const char **s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*s)[i];
		if (c < '0' || c > '9')
			return -1;
		v = v * 10 + (c - '0');
	}
	*s += n;
	*out = v;
	return 0;
}

/*
 * The one RFC 3339 parser, with the grammar Go's time.Parse(time.RFC3339, ...) parses a
 * metav1.Time by (its parseRFC3339): "YYYY-MM-DDTHH:MM:SS", then an optional fraction ('.' and
 * at least one digit; beyond nine only truncate), then "Z" or "+HH:MM" / "-HH:MM" (hours up to
 * 23). 'T' and 'Z' uppercase; a day must exist in its month, seconds go up to 59. Go's slow
 * path would also take a ',' before the fraction, a one-digit hour and offsets up to 24:60;
 * the apiserver never writes those (it stores metav1.Time as "...Z"), and muster refuses them.
 */
int time_parse_rfc3339_ns(const char *s, int64_t *ns)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	int32_t frac = 0;

	if (!s || take_digits(&s, 4, &y) || *s++ != '-' || take_digits(&s, 2, &mo) || *s++ != '-' ||
	    take_digits(&s, 2, &d) || *s++ != 'T' || take_digits(&s, 2, &h) || *s++ != ':' ||
	    take_digits(&s, 2, &mi) || *s++ != ':' || take_digits(&s, 2, &sec))
		return -EINVAL;
	if (*s == '.') {
		int n = 0;
		s++;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		for (; *s >= '0' && *s <= '9'; s++, n++)
			if (n < 9)
				frac = frac * 10 + (*s - '0');
		for (; n < 9; n++)
			frac *= 10;
	}
	if (*s == 'Z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		sign = *s++ == '-' ? -1 : 1;
		if (take_digits(&s, 2, &oh) || *s++ != ':' || take_digits(&s, 2, &om) || oh > 23 ||
		    om > 59)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (*s || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || sec > 59)
		return -EINVAL;
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo == 2 && d == 29 && !leap)
		return -EINVAL;
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
		       sign * (oh * 3600 + om * 60);
	if (__builtin_mul_overflow(secs, (int64_t)1000000000, ns) ||
	    __builtin_add_overflow(*ns, (int64_t)frac, ns))
		return -EINVAL;
	return 0;
}

/* The same parser, so the controllers' times and the decoders' never disagree. */
int time_parse_rfc3339(const char *s, int64_t *ms)
{
	int64_t ns;
	int rc = time_parse_rfc3339_ns(s, &ns);
	if (rc == 0)
		*ms = ns / 1000000 - (ns % 1000000 < 0); /* floored: before 1970 too */
	return rc;
}

void time_format_rfc3339(int64_t ms, char *buf, size_t size)
{
	time_t secs = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&secs, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int str_eq(json_t *v, const char *s)
{
	const char *have = json_string_value(v);
	return have && s && !strcmp(have, s);
}

json_t *conditions_with(json_t *obj, const char *type, const char *status, const char *reason,
			const char *message, int *changed)
{
	json_t *old = obj_path(obj, "status.conditions");
	json_t *out = json_array(), *c;
	json_t *prev = condition_get(obj, type);
	json_int_t generation = json_integer_value(obj_path(obj, "metadata.generation"));
	char now[32];
	size_t i;

	*changed = 0;
	if (!out)
		return NULL;
	time_now_rfc3339(now, sizeof(now));
	json_t *cond;
	/* A new generation is a change too: observedGeneration must follow it. */
	if (prev && str_eq(json_object_get(prev, "status"), status) &&
	    str_eq(json_object_get(prev, "reason"), reason) &&
	    str_eq(json_object_get(prev, "message"), message) &&
	    json_integer_value(json_object_get(prev, "observedGeneration")) == generation) {
		cond = json_incref(prev);
	} else {
		const char *since =
			prev && str_eq(json_object_get(prev, "status"), status) ?
				json_string_value(json_object_get(prev, "lastTransitionTime")) :
				NULL;
		cond = json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "type", type, "status", status,
				 "reason", reason, "message", message, "lastTransitionTime",
				 since ? since : now, "observedGeneration", generation);
		if (!cond) {
			json_decref(out);
			return NULL;
		}
		*changed = 1;
	}
	/* Replace in place, as meta.SetStatusCondition does: the list keeps its order. */
	json_array_foreach(old, i, c) json_array_append(out, c == prev ? cond : c);
	if (!prev)
		json_array_append(out, cond);
	json_decref(cond);
	return out;
}

int quantity_from_json(json_t *v, int64_t *milli)
{
	char text[64];
	const char *s;
	struct quantity q;
	int rc;

	if (json_is_string(v)) {
		s = json_string_value(v);
	} else if (json_is_integer(v)) {
		/* Whole units: the parser's answer without printing the number for it. Beyond
		 * int64 milli-units the parser says -ERANGE as it does for the text. */
		int64_t whole;
		if (!__builtin_mul_overflow((int64_t)json_integer_value(v), INT64_C(1000),
					    &whole)) {
			*milli = whole;
			return 0;
		}
		snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(v));
		s = text;
	} else if (json_is_real(v)) {
		/* The shortest text that reads back as the same double is the number as written
		 * (0.1, not 0.10000000000000001, which would round up to 101m): Kubernetes parses
		 * the JSON number's own text. */
		double d = json_real_value(v);
		for (int digits = 1; digits <= 17; digits++) {
			snprintf(text, sizeof(text), "%.*g", digits, d);
			if (strtod(text, NULL) == d)
				break;
		}
		s = text;
	} else {
		return -EINVAL;
	}
	rc = quantity_parse(s, &q);
	if (rc == 0)
		*milli = q.milli;
	return rc;
}

void quantity_to_string(const char *resource, int64_t milli, char *buf, size_t size)
{
	quota_format_amount(resource, milli, buf, size);
}

void pod_requests_release(struct pod_requests *r)
{
	r->n = 0; /* the names are the template's */
}

const char *const pod_spec_fields[POD_SPEC_N + 1] = {
	[POD_SPEC_CONTAINERS] = "containers",
	[POD_SPEC_INIT] = "initContainers",
	[POD_SPEC_OVERHEAD] = "overhead",
	[POD_SPEC_SELECTOR] = "nodeSelector",
	[POD_SPEC_TOLERATIONS] = "tolerations",
	[POD_SPEC_AFFINITY] = "affinity",
	[POD_SPEC_PRIORITY] = "priority",
	[POD_SPEC_CLASS] = "priorityClassName",
	[POD_SPEC_N] = NULL,
};

static int64_t int_or(json_t *v, int64_t dflt)
{
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

int workload_priority_resolve(json_t *obj, json_t *podsets, json_t *wpcs, json_t *pcs,
			      struct job_priority *out, size_t *from, char *err, size_t errlen)
{
	const char *wpc = obj_label(obj, LABEL_PRIORITY_CLASS);
	const char *pc = NULL;
	json_t *tspec = NULL, *ps;
	size_t i;

	memset(out, 0, sizeof(*out));
	*from = 0;
	json_array_foreach(podsets, i, ps)
	{
		json_t *spec = obj_path(ps, "template.spec");
		const char *name = json_string_value(json_object_get(spec, "priorityClassName"));
		if (!tspec)
			tspec = spec;
		if (name && *name) {
			pc = name;
			tspec = spec;
			*from = i;
			break;
		}
	}
	if (wpc && *wpc) {
		json_t *cls = json_object_get(wpcs, wpc);
		if (!cls) {
			snprintf(err, errlen, "WorkloadPriorityClass %s doesn't exist", wpc);
			return -ENOENT;
		}
		out->value = (int32_t)json_integer_value(json_object_get(cls, "value"));
		out->class_group = KUEUE_GROUP;
		out->class_kind = "WorkloadPriorityClass";
		out->class_name = wpc;
		return 0;
	}
	if (pc) {
		json_t *cls = json_object_get(pcs, pc);
		if (!cls) {
			/* The apiserver refuses pods naming a missing PriorityClass, so this
			 * workload could never run: waiting is the honest answer. */
			snprintf(err, errlen, "PriorityClass %s doesn't exist", pc);
			return -ENOENT;
		}
		out->value = (int32_t)json_integer_value(json_object_get(cls, "value"));
		out->class_group = "scheduling.k8s.io";
		out->class_kind = "PriorityClass";
		out->class_name = pc;
		return 0;
	}
	out->value = (int32_t)json_integer_value(json_object_get(tspec, "priority"));
	return 0;
}

int workload_apply_priority(json_t *wl, const struct job_priority *p)
{
	json_t *spec = json_object_get(wl, "spec");
	if (!json_is_object(spec))
		return -EINVAL;
	if (json_object_set_new(spec, "priority", json_integer(p->value)) != 0)
		return -ENOMEM;
	if (!p->class_name) {
		json_object_del(spec, "priorityClassRef");
		return 0;
	}
	json_t *ref = json_pack("{s:s, s:s, s:s}", "group", p->class_group, "kind", p->class_kind,
				"name", p->class_name);
	return ref && json_object_set_new(spec, "priorityClassRef", ref) == 0 ? 0 : -ENOMEM;
}

void podset_view_release(struct podset_view *v)
{
	for (size_t k = 0; v->exprs && k < v->n_exprs; k++)
		free((void *)v->exprs[k].values);
	pod_requests_release(&v->requests);
	free(v->selector);
	free(v->terms);
	free(v->exprs);
	free(v->tolerations);
	podset_view_clear(v);
}

void podset_view_clear(struct podset_view *v)
{
	/* Field by field: the requests' lists are 1 KiB, and only their count needs zeroing. */
	v->name = NULL;
	v->requests.n = 0;
	memset(&v->ps, 0, sizeof(v->ps));
	v->selector = NULL;
	v->terms = NULL;
	v->exprs = NULL;
	v->n_exprs = 0;
	v->tolerations = NULL;
}

int podset_view_from_fields(json_t *name, json_t *count, json_t *const *f,
			    const struct pod_requests *requests, struct podset_view *v, char *err,
			    size_t errlen)
{
	json_t *selector = f[POD_SPEC_SELECTOR];
	json_t *terms = obj_path(f[POD_SPEC_AFFINITY],
				 "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
				 "nodeSelectorTerms");
	json_t *tolerations = f[POD_SPEC_TOLERATIONS];
	const char *key;
	json_t *val, *t;
	size_t i, n_exprs = 0;
	int rc;

	podset_view_clear(v);
	v->name = json_string_value(name);
	if (!v->name)
		v->name = "main";
	v->requests.n = requests->n; /* what is used of the lists, not all of them */
	memcpy(v->requests.names, requests->names, requests->n * sizeof(requests->names[0]));
	memcpy(v->requests.milli, requests->milli, requests->n * sizeof(requests->milli[0]));
	json_array_foreach(terms, i, t)
		n_exprs += json_array_size(json_object_get(t, "matchExpressions"));
	/* Most podSets have no node constraints: their arrays stay NULL (a calloc and a free
	 * each, for every podSet of 50,000 Workloads, were a sizeable part of decoding). */
	size_t n_selector = json_object_size(selector), n_terms = json_array_size(terms);
	size_t n_tolerations = json_array_size(tolerations);
	v->selector = n_selector ? calloc(n_selector, sizeof(*v->selector)) : NULL;
	v->terms = n_terms ? calloc(n_terms, sizeof(*v->terms)) : NULL;
	v->exprs = n_exprs ? calloc(n_exprs, sizeof(*v->exprs)) : NULL;
	v->n_exprs = v->exprs ? n_exprs : 0;
	v->tolerations = n_tolerations ? calloc(n_tolerations, sizeof(*v->tolerations)) : NULL;
	rc = -ENOMEM;
	if ((n_selector && !v->selector) || (n_terms && !v->terms) || (n_exprs && !v->exprs) ||
	    (n_tolerations && !v->tolerations))
		goto fail;
	/* Strings stay borrowed from the workload object, which outlives the view. */
	json_object_foreach(selector, key, val)
	{
		if (!json_is_string(val))
			continue;
		v->selector[v->ps.n_selector++] =
			(struct quota_kv){ (char *)key, (char *)json_string_value(val) };
	}
	size_t e = 0;
	json_array_foreach(terms, i, t)
	{
		json_t *ex, *exprs = json_object_get(t, "matchExpressions");
		size_t k;
		struct quota_affinity_term *term = &v->terms[v->ps.n_terms++];
		term->exprs = v->exprs ? &v->exprs[e] : NULL; /* NULL: no expression in any term */
		term->has_match_fields = json_array_size(json_object_get(t, "matchFields")) > 0;
		json_array_foreach(exprs, k, ex)
		{
			struct quota_match_expr *me = &v->exprs[e++];
			json_t *values = json_object_get(ex, "values");
			me->key = json_string_value(json_object_get(ex, "key"));
			me->op = json_string_value(json_object_get(ex, "operator"));
			if (!me->key || !me->op) {
				snprintf(err, errlen,
					 "node affinity expression without key or operator");
				rc = -EINVAL;
				goto fail;
			}
			me->n_values = 0;
			me->values = NULL;
			if (json_array_size(values) > 0) {
				/* jansson keeps array items contiguous only as json_t*; collect
				 * strings. */
				const char **vals = calloc(json_array_size(values), sizeof(char *));
				if (!vals)
					goto fail;
				for (size_t x = 0; x < json_array_size(values); x++) {
					const char *s =
						json_string_value(json_array_get(values, x));
					if (s)
						vals[me->n_values++] = s;
				}
				me->values = vals;
			}
			term->n_exprs++;
		}
	}
	json_array_foreach(tolerations, i, t)
	{
		const char *op = json_string_value(json_object_get(t, "operator"));
		v->tolerations[v->ps.n_tolerations++] = (struct quota_taint){
			(char *)json_string_value(json_object_get(t, "key")),
			(char *)json_string_value(json_object_get(t, "value")),
			(char *)json_string_value(json_object_get(t, "effect")),
			op && !strcmp(op, "Exists")
		};
	}
	v->ps.count = int_or(count, 1);
	v->ps.n_requests = v->requests.n;
	v->ps.resources = (const char *const *)v->requests.names;
	v->ps.per_pod = v->requests.milli;
	v->ps.node_selector = v->selector;
	v->ps.terms = v->terms;
	v->ps.tolerations = v->tolerations;
	return 0;
fail:
	podset_view_release(v);
	return rc;
}

/* The slim rules (util/json_slim.h): what muster reads of a container, a pod template and a
 * Workload, each field named once. Each field cut was checked unread by anything muster runs
 * (ctrl/, api/, sim/, webhooks/). */

/* A container: name, resources and restartPolicy (a sidecar's requests add up like a
 * container's). Images, commands, env and probes can be most of a pod. */
static const struct json_slim_rule container_members[] = {
	{ .key = "name", .op = JSON_SLIM_KEEP },
	{ .key = "resources", .op = JSON_SLIM_KEEP },
	{ .key = "restartPolicy", .op = JSON_SLIM_KEEP },
	{ 0 },
};
static const struct json_slim_rule container_rule = { .op = JSON_SLIM_OBJECT,
						      .members = container_members,
						      .others = JSON_SLIM_DROP };
const struct json_slim_rule obj_containers_rule = { .op = JSON_SLIM_EACH, .each = &container_rule };

/* Kueue's own keys of a map (labels, annotations): of a Workload's, muster reads only those
 * (queue name, priority class, topology requests); a map left empty goes. */
#define KUEUE_KEYS(name)                                                                          \
	{                                                                                         \
		.key = name, .op = JSON_SLIM_PREFIXED, .prefix = KUEUE_GROUP "/", .drop_empty = 1 \
	}

/* A pod template's spec: its containers slimmed, none of the pod-level fields nothing reads
 * (volumes alone are a sixth of a typical training Workload's kept text). */
static const struct json_slim_rule pod_spec_members[] = {
	{ .key = "containers", .op = JSON_SLIM_EACH, .each = &container_rule },
	{ .key = "initContainers", .op = JSON_SLIM_EACH, .each = &container_rule },
	{ .key = "volumes", .op = JSON_SLIM_DROP },
	{ .key = "serviceAccountName", .op = JSON_SLIM_DROP },
	{ .key = "serviceAccount", .op = JSON_SLIM_DROP },
	{ .key = "automountServiceAccountToken", .op = JSON_SLIM_DROP },
	{ .key = "securityContext", .op = JSON_SLIM_DROP },
	{ .key = "imagePullSecrets", .op = JSON_SLIM_DROP },
	{ .key = "hostAliases", .op = JSON_SLIM_DROP },
	{ .key = "dnsConfig", .op = JSON_SLIM_DROP },
	{ .key = "dnsPolicy", .op = JSON_SLIM_DROP },
	{ .key = "enableServiceLinks", .op = JSON_SLIM_DROP },
	{ .key = "terminationGracePeriodSeconds", .op = JSON_SLIM_DROP },
	{ 0 },
};
/* The pods are made from the owner's template, not this one: its labels are read by nothing,
 * its annotations only for Kueue's topology requests; metadata left empty goes. */
static const struct json_slim_rule template_meta_members[] = {
	{ .key = "labels", .op = JSON_SLIM_DROP },
	KUEUE_KEYS("annotations"),
	{ 0 },
};
static const struct json_slim_rule pod_template_members[] = {
	{ .key = "metadata",
	  .op = JSON_SLIM_OBJECT,
	  .members = template_meta_members,
	  .others = JSON_SLIM_KEEP,
	  .drop_empty = 1 },
	{ .key = "spec",
	  .op = JSON_SLIM_OBJECT,
	  .members = pod_spec_members,
	  .others = JSON_SLIM_KEEP },
	{ 0 },
};
const struct json_slim_rule obj_pod_template_rule = { .op = JSON_SLIM_OBJECT,
						      .members = pod_template_members,
						      .others = JSON_SLIM_KEEP };

/* A Workload: its pod templates slimmed; of its own labels and annotations only Kueue's; no
 * managedFields (never read, often an object's largest part). */
static const struct json_slim_rule podset_members[] = {
	{ .key = "template",
	  .op = JSON_SLIM_OBJECT,
	  .members = pod_template_members,
	  .others = JSON_SLIM_KEEP },
	{ 0 },
};
static const struct json_slim_rule podset_rule = { .op = JSON_SLIM_OBJECT,
						   .members = podset_members,
						   .others = JSON_SLIM_KEEP };
static const struct json_slim_rule workload_spec_members[] = {
	{ .key = "podSets", .op = JSON_SLIM_EACH, .each = &podset_rule },
	{ 0 },
};
static const struct json_slim_rule workload_meta_members[] = {
	KUEUE_KEYS("labels"),
	KUEUE_KEYS("annotations"),
	{ .key = "managedFields", .op = JSON_SLIM_DROP },
	{ 0 },
};
static const struct json_slim_rule workload_members[] = {
	{ .key = "metadata",
	  .op = JSON_SLIM_OBJECT,
	  .members = workload_meta_members,
	  .others = JSON_SLIM_KEEP },
	{ .key = "spec",
	  .op = JSON_SLIM_OBJECT,
	  .members = workload_spec_members,
	  .others = JSON_SLIM_KEEP },
	{ 0 },
};
const struct json_slim_rule obj_workload_rule = { .op = JSON_SLIM_OBJECT,
						  .members = workload_members,
						  .others = JSON_SLIM_KEEP };
#undef KUEUE_KEYS

size_t obj_slim_containers(json_t *list)
{
	return json_slim_tree(list, &obj_containers_rule);
}

size_t obj_slim_pod_template(json_t *tmpl)
{
	return json_slim_tree(tmpl, &obj_pod_template_rule);
}

static int list_entry_is(json_t *entry, const char *field, const char *value)
{
	json_t *s = field ? json_object_get(entry, field) : entry;
	return json_is_string(s) && !strcmp(json_string_value(s), value);
}

int obj_list_has(json_t *list, const char *field, const char *value)
{
	json_t *v;
	size_t i;
	json_array_foreach(list, i, v) if (list_entry_is(v, field, value)) return 1;
	return 0;
}

json_t *obj_list_without(json_t *list, const char *field, const char *value)
{
	json_t *rest = json_array(), *v;
	size_t i;
	if (!rest)
		return NULL;
	json_array_foreach(list, i, v)
	{
		if (!list_entry_is(v, field, value) && json_array_append(rest, v) != 0) {
			json_decref(rest);
			return NULL;
		}
	}
	return rest;
}

json_t *obj_merge_diff(json_t *from, json_t *to)
{
	json_t *patch = json_object();
	const char *k;
	json_t *v;
	if (!patch)
		return NULL;
	json_object_foreach(to, k, v)
	{
		json_t *was = json_object_get(from, k);
		if (was && json_equal(was, v))
			continue;
		json_t *sub = was && json_is_object(was) && json_is_object(v) ?
				      obj_merge_diff(was, v) :
				      json_deep_copy(v);
		if (!sub || json_object_set_new(patch, k, sub) != 0) {
			json_decref(patch);
			return NULL;
		}
	}
	json_object_foreach(from, k, v)
	{
		if (!json_object_get(to, k) && json_object_set_new(patch, k, json_null()) != 0) {
			json_decref(patch);
			return NULL;
		}
	}
	return patch;
}
