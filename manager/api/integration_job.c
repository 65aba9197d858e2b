/* SPDX-License-Identifier: Apache-2.0 */
/*
 * batch/v1 Job on the integration seam: one PodSet "main" of min(parallelism, completions)
 * pods, minCount from kueue.x-k8s.io/job-min-parallelism; held by spec.suspend; partial
 * admission lowers spec.parallelism, and a gang's explicit minCount with it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine_objects.h"
#include "api/integrations.h"
#include "api/objects.h"
#include "core/num.h"

/* Kueue takes the annotation as an integer below the pod count (its job webhook). */
static int min_count(const char *s, int64_t count, int64_t *out, char *err, size_t errlen)
{
	int64_t v;
	if (count < 2 || num_parse_i64(s, 1, count - 1, &v) != 0)
		return eobj_bad(err, errlen,
				"metadata.annotations[\"" ANNOTATION_JOB_MIN_PARALLELISM
				"\"]: invalid value "
				"\"%.32s\": must be an integer from 1 to %lld (below the Job's pod "
				"count %lld)",
				s, (long long)count - 1, (long long)count);
	*out = v;
	return 0;
}

static json_t *job_podsets(json_t *job, char *err, size_t errlen)
{
	json_t *spec = eobj_field(job, "spec");
	int64_t parallelism = 1, completions = 1, min = 0;
	int has_par, has_comp;
	const char *min_text = obj_annotation(job, ANNOTATION_JOB_MIN_PARALLELISM);

	if (!spec) {
		eobj_bad(err, errlen, "spec: required");
		return NULL;
	}
	if (eobj_want_object(spec, "spec", err, errlen) != 0 ||
	    eobj_get_int(spec, "parallelism", "spec", 0, INT32_MAX, &has_par, &parallelism, err,
			 errlen) != 0 ||
	    eobj_get_int(spec, "completions", "spec", 0, INT32_MAX, &has_comp, &completions, err,
			 errlen) != 0)
		return NULL;
	/* parallelism defaults to 1 and completions to parallelism. */
	if (!has_par)
		parallelism = 1;
	if (!has_comp)
		completions = parallelism;
	int64_t count = parallelism < completions ? parallelism : completions;
	if (min_text && min_count(min_text, count, &min, err, errlen) != 0)
		return NULL;
	json_t *ps = integration_podset("main", count, eobj_field(spec, "template"),
					"spec.template", "batch.kubernetes.io/job-completion-index",
					err, errlen);
	/* The Job controller's own labels would tie the Workload to this Job's pods. */
	static const char *const controller_labels[] = { "controller-uid",
							 "batch.kubernetes.io/controller-uid",
							 "job-name",
							 "batch.kubernetes.io/job-name" };
	json_t *labels = obj_path(ps, "template.metadata.labels");
	for (size_t i = 0; i < sizeof(controller_labels) / sizeof(controller_labels[0]); i++)
		json_object_del(labels, controller_labels[i]);
	if (ps && min_text && json_object_set_new(ps, "minCount", json_integer(min)) != 0) {
		json_decref(ps);
		ps = NULL;
		eobj_nomem(err, errlen);
	}
	json_t *list = ps ? json_pack("[o]", ps) : NULL;
	if (ps && !list)
		eobj_nomem(err, errlen);
	return list;
}

static void job_template_path(json_t *job, size_t i, char *buf, size_t size)
{
	(void)job, (void)i;
	snprintf(buf, size, "spec.template");
}

static json_t *job_template_at(json_t *job, size_t i)
{
	return i == 0 ? obj_path(job, "spec.template") : NULL;
}

/* Gang scheduling (spec.scheduling.schedulingPolicy.gang, Kubernetes 1.37): the gang is the
 * pods that run. An unset minCount follows parallelism by itself (the Job controller takes
 * parallelism). An explicit one above the admitted count could never be met, and the Job API
 * refuses it above parallelism: it is lowered with the count, and the user's value kept in
 * ANNOTATION_GANG_MIN_COUNT until the count is restored, when it comes back. */
static int job_follow_gang(json_t *job, int64_t count)
{
	json_t *gang = obj_path(job, "spec.scheduling.schedulingPolicy.gang");
	json_t *min = json_object_get(gang, "minCount");
	json_t *meta = json_object_get(job, "metadata");
	json_t *annotations = json_object_get(meta, "annotations");
	const char *kept =
		json_string_value(json_object_get(annotations, ANNOTATION_GANG_MIN_COUNT));
	int rc = 0;
	if (kept) {
		/* Restored: the user's minCount again, as far as the count allows. */
		int64_t was;
		if (num_parse_i64(kept, 1, INT64_MAX, &was) != 0)
			was = 0; /* unreadable: as if none was kept */
		if (json_is_object(gang) && was > 0)
			rc = json_object_set_new(gang, "minCount",
						 json_integer(was < count ? was : count));
		json_object_del(annotations, ANNOTATION_GANG_MIN_COUNT);
		if (rc == 0 && was > count && json_is_object(gang)) {
			char text[32];
			snprintf(text, sizeof(text), "%lld", (long long)was);
			rc = json_object_set_new(annotations, ANNOTATION_GANG_MIN_COUNT,
						 json_string(text));
		}
		return rc ? -ENOMEM : 0;
	}
	if (!json_is_integer(min) || json_integer_value(min) <= count)
		return 0;
	char text[32];
	snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(min));
	if (!json_is_object(annotations)) {
		annotations = json_object();
		if (!annotations || !json_is_object(meta) ||
		    json_object_set_new(meta, "annotations", annotations))
			return -ENOMEM;
	}
	return json_object_set_new(annotations, ANNOTATION_GANG_MIN_COUNT, json_string(text)) ==
				       0 &&
			       json_object_set_new(gang, "minCount", json_integer(count)) == 0 ?
		       0 :
		       -ENOMEM;
}

static int job_set_count(json_t *job, size_t i, int64_t count)
{
	json_t *spec = json_object_get(job, "spec");
	if (i != 0 || !json_is_object(spec))
		return -ENOTSUP;
	if (json_object_set_new(spec, "parallelism", json_integer(count)) != 0)
		return -ENOMEM;
	return job_follow_gang(job, count);
}

static int job_held(json_t *job)
{
	return json_is_true(obj_path(job, "spec.suspend"));
}

static int job_set_held(json_t *job, int held)
{
	json_t *spec = json_object_get(job, "spec");
	return json_is_object(spec) &&
			       json_object_set_new(spec, "suspend", json_boolean(held)) == 0 ?
		       0 :
		       -ENOMEM;
}

static int job_finished(json_t *job, struct integration_result *out)
{
	if (condition_true(job, "Complete")) {
		*out = (struct integration_result){ "Succeeded", "Job finished successfully" };
		return 1;
	}
	if (condition_true(job, "Failed")) {
		*out = (struct integration_result){ "Failed", "Job failed" };
		return 1;
	}
	return 0;
}

static int job_pods_ready(json_t *job, int64_t want)
{
	return json_integer_value(obj_path(job, "status.ready")) +
		       json_integer_value(obj_path(job, "status.succeeded")) >=
	       want;
}

static int64_t job_active_pods(json_t *job)
{
	return json_integer_value(obj_path(job, "status.active"));
}

static const char *job_started_at(json_t *job)
{
	return obj_str(job, "status.startTime");
}

/* Kueue clears status.startTime on stop: the Job controller then lets the template change
 * (it must not change once a Job started) and counts the resumed Job's time afresh. */
static int job_before_restore(json_t *job, json_t **patch, const char **subresource)
{
	if (!obj_path(job, "status.startTime"))
		return 0;
	*patch = json_pack("{s:{s:n}}", "status", "startTime");
	*subresource = "/status";
	return *patch ? 1 : 0;
}

const struct integration integration_job = {
	.framework = "batch/job",
	.api_version = "batch/v1",
	.kind = "Job",
	.group = "batch",
	.plural = "jobs",
	.podsets = job_podsets,
	.template_path = job_template_path,
	.template_at = job_template_at,
	.set_count = job_set_count,
	.held = job_held,
	.set_held = job_set_held,
	.holds_by_suspend = 1,
	.gang_by_scheduling = 1,
	.finished = job_finished,
	.pods_ready = job_pods_ready,
	.active_pods = job_active_pods,
	.started_at = job_started_at,
	.before_restore = job_before_restore,
};
