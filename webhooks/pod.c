/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kueue's pod integration webhooks. The configuration's objectSelector sends only Pods with
 * the queue-name label here, so unlabelled Pods never wait on muster.
 *
 * A queued Pod is created gated (kueue.x-k8s.io/admission): it can't be scheduled until its
 * group is admitted whole and the manager takes the gate off. It is labelled
 * kueue.x-k8s.io/managed and gets the kueue.x-k8s.io/managed finalizer, so a pod that ended
 * is still counted until its group finished. Pods made by an owner muster integrates (a Job, a
 * RayCluster) are that owner's: they pass untouched even when their template carries the label.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/integrations.h"
#include "api/objects.h"
#include "webhooks/review.h"
#include "webhooks/webhooks.h"

/* Appends value to the list at path (creating it when absent). */
static void add_to_list(json_t *patch, json_t *obj, const char *dotted, const char *path,
			json_t *value)
{
	char at[128];
	if (json_is_array(obj_path(obj, dotted))) {
		snprintf(at, sizeof(at), "%s/-", path);
		json_array_append_new(patch, json_pack("{s:s, s:s, s:o}", "op", "add", "path", at,
						       "value", value));
	} else {
		json_array_append_new(patch, json_pack("{s:s, s:s, s:[o]}", "op", "add", "path",
						       path, "value", value));
	}
}

char *webhook_mutate_pod(const struct admission_request *req)
{
	json_t *pod = req->object;
	const char *queue = pod ? obj_label(pod, LABEL_QUEUE_NAME) : NULL;
	json_t *patch = json_array();
	char *out;

	if (patch && queue && *queue && !strcmp(req->operation, "CREATE") &&
	    !integration_owned(pod)) {
		if (!obj_list_has(obj_path(pod, "spec.schedulingGates"), "name", GATE_ADMISSION))
			add_to_list(patch, pod, "spec.schedulingGates", "/spec/schedulingGates",
				    json_pack("{s:s}", "name", GATE_ADMISSION));
		if (!obj_list_has(obj_path(pod, "metadata.finalizers"), NULL, FINALIZER_MANAGED))
			add_to_list(patch, pod, "metadata.finalizers", "/metadata/finalizers",
				    json_string(FINALIZER_MANAGED));
		/* The label exists (the queue's), so the map does: add the member. */
		json_array_append_new(patch, json_pack("{s:s, s:s, s:s}", "op", "add", "path",
						       "/metadata/labels/kueue.x-k8s.io~1managed",
						       "value", "true"));
	}
	out = review_response(req, 1, 0, NULL, patch);
	json_decref(patch);
	return out;
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

char *webhook_validate_pod(const struct admission_request *req)
{
	char msg[512], wl[300];
	json_t *pod = req->object;
	const char *queue = pod ? obj_label(pod, LABEL_QUEUE_NAME) : NULL;
	int64_t total;

	if (!pod || integration_owned(pod))
		return review_response(req, 1, 0, NULL, NULL);
	if (webhook_check_queue_name(queue, msg, sizeof(msg)) != 0)
		return review_response(req, 0, 422, msg, NULL);
	/* The manager's own rule for the group (pod_group_of), so a Pod let in is one it can
	 * queue, and a mistake is refused at once instead of waiting forever. */
	if (queue && *queue && pod_group_of(pod, wl, sizeof(wl), &total, msg, sizeof(msg)) != 0)
		return review_response(req, 0, 422, msg, NULL);
	json_t *old = req->old_object;
	if (!strcmp(req->operation, "UPDATE") && old && obj_label(old, LABEL_QUEUE_NAME)) {
		static const char *const labels[] = { LABEL_QUEUE_NAME, LABEL_POD_GROUP };
		for (size_t i = 0; i < 2; i++) {
			if (strcmp(or_empty(obj_label(old, labels[i])),
				   or_empty(obj_label(pod, labels[i]))) &&
			    !(i == 0 && pod_gated(old))) {
				snprintf(msg, sizeof(msg),
					 "metadata.labels[%s]: Forbidden: field is immutable%s",
					 labels[i], i == 0 ? " once the pod is admitted" : "");
				return review_response(req, 0, 422, msg, NULL);
			}
		}
		if (strcmp(or_empty(obj_annotation(old, ANNOTATION_POD_GROUP_TOTAL)),
			   or_empty(obj_annotation(pod, ANNOTATION_POD_GROUP_TOTAL)))) {
			snprintf(msg, sizeof(msg),
				 "metadata.annotations[%s]: Forbidden: field is immutable",
				 ANNOTATION_POD_GROUP_TOTAL);
			return review_response(req, 0, 422, msg, NULL);
		}
	}
	return review_response(req, 1, 0, NULL, NULL);
}
