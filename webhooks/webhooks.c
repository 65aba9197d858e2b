/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The webhooks' dispatch, the owners' webhooks (every integrated kind the same way) and the
 * ClusterQueue's; pods have theirs in pod.c.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine_objects.h"
#include "api/integrations.h"
#include "api/objects.h"
#include "webhooks/review.h"
#include "webhooks/webhooks.h"

/* The integrated kind a path serves: its paths are /mutate-<group>-<version>-<kind> and
 * /validate-..., as Kueue names them. */
static const struct integration *owner_of_path(const char *path, int *mutate)
{
	size_t n;
	const struct integration *const *all = integration_all(&n);
	for (size_t i = 0; i < n; i++) {
		char want[160];
		for (int m = 0; m < 2; m++) {
			webhook_owner_path(all[i], m, want, sizeof(want));
			if (!strcmp(path, want)) {
				*mutate = m;
				return all[i];
			}
		}
	}
	return NULL;
}

void webhook_owner_path(const struct integration *in, int mutate, char *buf, size_t size)
{
	char gv[64];
	size_t k = 0;
	/* "batch/v1" -> "batch-v1", "ray.io/v1" -> "ray-io-v1" */
	for (const char *c = in->api_version; *c && k < sizeof(gv) - 1; c++)
		gv[k++] = *c == '/' || *c == '.' ? '-' : *c;
	gv[k] = '\0';
	snprintf(buf, size, "/%s-%s-%s", mutate ? "mutate" : "validate", gv, in->kind);
	for (char *c = buf; *c; c++)
		*c = (char)tolower((unsigned char)*c);
}

/* A queued object is created held (spec.suspend: true for every kind muster integrates). With
 * manageJobsWithoutQueueName, one without the label is held too in a managed namespace, and
 * given the queue "default" when the namespace has that LocalQueue. */
static char *mutate_owner(const struct admission_request *req, const struct integration *in,
			  const struct webhook_context *ctx)
{
	json_t *obj = req->object;
	const char *queue = obj ? obj_label(obj, LABEL_QUEUE_NAME) : NULL;
	const char *ns = req->namespace_name;
	json_t *patch = json_array();
	char *out;
	/* An object an integrated owner made (a RayJob's RayCluster, which KubeRay gives the
	 * RayJob's labels) is its owner's to hold, never queued on its own. */
	int ours = queue && *queue && !integration_owned(obj);

	if (patch && obj && !(queue && *queue) && ctx && ctx->manage_without_queue_name && ns &&
	    *ns && !integration_owned(obj) && ctx->namespace_managed(ctx->arg, ns) &&
	    !strcmp(req->operation, "CREATE")) {
		ours = 1;
		if (ctx->has_local_queue(ctx->arg, ns, "default"))
			json_array_append_new(
				patch,
				json_is_object(obj_path(obj, "metadata.labels")) ?
					json_pack("{s:s, s:s, s:s}", "op", "add", "path",
						  "/metadata/labels/kueue.x-k8s.io~1queue-name",
						  "value", "default") :
					json_pack("{s:s, s:s, s:{s:s}}", "op", "add", "path",
						  "/metadata/labels", "value", LABEL_QUEUE_NAME,
						  "default"));
	}
	/* Only objects muster queues are held; everything else passes untouched. */
	if (patch && ours && strcmp(req->operation, "CREATE") == 0 && !in->held(obj)) {
		/* JSON Patch "add" on an object member replaces it when present. */
		json_array_append_new(patch, json_pack("{s:s, s:s, s:b}", "op", "add", "path",
						       "/spec/suspend", "value", 1));
	}
	/* The field can be set only at create; the user's own setting is theirs to keep. */
	if (patch && ours && ctx && ctx->gang && in->gang_by_scheduling &&
	    !strcmp(req->operation, "CREATE") && json_is_object(json_object_get(obj, "spec")) &&
	    !obj_path(obj, "spec.scheduling"))
		json_array_append_new(patch, json_pack("{s:s, s:s, s:{s:{s:{}}}}", "op", "add",
						       "path", "/spec/scheduling", "value",
						       "schedulingPolicy", "gang"));
	out = review_response(req, 1, 0, NULL, patch);
	json_decref(patch);
	return out;
}

/* The queue name as an object name: the decoders' rule, so an object this lets through is one
 * the manager can queue. 0, or a denial message in msg. */
int webhook_check_queue_name(const char *queue, char *msg, size_t size)
{
	if (queue && !eobj_is_dns_subdomain(queue, strlen(queue))) {
		snprintf(msg, size,
			 "metadata.labels[%s]: Invalid value: \"%.253s\": must be a valid "
			 "LocalQueue name (a lowercase RFC 1123 subdomain)",
			 LABEL_QUEUE_NAME, queue);
		return -EINVAL;
	}
	return 0;
}

static char *validate_owner(const struct admission_request *req, const struct integration *in)
{
	char msg[512];
	json_t *obj = req->object;
	const char *queue = obj ? obj_label(obj, LABEL_QUEUE_NAME) : NULL;

	if (webhook_check_queue_name(queue, msg, sizeof(msg)) != 0)
		return review_response(req, 0, 422, msg, NULL);
	/* What the Workload would be built from, checked as the manager will build it: a
	 * RayJob that could never be queued is refused now, not held forever. */
	if (queue && *queue && !strcmp(req->operation, "CREATE") && !integration_owned(obj)) {
		json_t *podsets = in->podsets(obj, msg, sizeof(msg));
		json_decref(podsets);
		if (!podsets)
			return review_response(req, 0, 422, msg, NULL);
	}
	if (!strcmp(req->operation, "UPDATE") && req->old_object) {
		const char *old_queue = obj_label(req->old_object, LABEL_QUEUE_NAME);
		int changed = (old_queue == NULL) != (queue == NULL) ||
			      (old_queue && queue && strcmp(old_queue, queue) != 0);
		if (changed && old_queue && !in->held(req->old_object)) {
			snprintf(msg, sizeof(msg),
				 "metadata.labels[%s]: Forbidden: the queue of a running %s cannot "
				 "change; suspend it first",
				 LABEL_QUEUE_NAME, in->kind);
			return review_response(req, 0, 422, msg, NULL);
		}
	}
	return review_response(req, 1, 0, NULL, NULL);
}

/* The decoder's rules (eobj_cq_decode), so the webhook admits exactly the specs the engine
 * runs: the CRD's rules (repeated there for simulator inputs) and those a schema can't
 * express, each resource and flavor in one group only, quantities within muster's exact
 * int64 milli-units, lendingLimit <= nominalQuota. */
static char *validate_cq(const struct admission_request *req)
{
	struct eobj_cq cq;
	char msg[512];

	/* A DELETE carries no object, and nothing to check. */
	if (!req->object)
		return review_response(req, 1, 0, NULL, NULL);
	int rc = eobj_cq_decode(req->object, &cq, msg, sizeof(msg));
	eobj_cq_release(&cq);
	if (rc == -ENOMEM)
		return NULL;
	return rc ? review_response(req, 0, 422, msg, NULL) :
		    review_response(req, 1, 0, NULL, NULL);
}

int webhook_handle(const char *path, const char *body, size_t len,
		   const struct webhook_context *ctx, char **out)
{
	struct admission_request req;
	char err[256];
	char *(*handler)(const struct admission_request *) = NULL;

	const struct integration *in = NULL;
	int mutate = 0;

	*out = NULL;
	if (!strcmp(path, WEBHOOK_PATH_VALIDATE_CQ))
		handler = validate_cq;
	else if (!strcmp(path, WEBHOOK_PATH_MUTATE_POD))
		handler = webhook_mutate_pod;
	else if (!strcmp(path, WEBHOOK_PATH_VALIDATE_POD))
		handler = webhook_validate_pod;
	else
		in = owner_of_path(path, &mutate);
	if (!handler && !in) {
		*out = strdup("{\"error\":\"unknown webhook path\"}");
		return 404;
	}
	if (review_decode(body, len, &req, err, sizeof(err)) != 0) {
		json_t *e = json_pack("{s:s}", "error", err);
		*out = e ? json_dumps(e, JSON_COMPACT) : NULL;
		json_decref(e);
		return 400;
	}
	*out = handler ? handler(&req) :
	       mutate  ? mutate_owner(&req, in, ctx) :
			 validate_owner(&req, in);
	review_request_release(&req);
	return 200;
}
