/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/engine_objects.h"
#include "api/objects.h"
#include "webhooks/review.h"
#include "webhooks/webhooks.h"

static char *mutate_job(const struct admission_request *req)
{
	json_t *job = req->object;
	const char *queue = job ? obj_label(job, LABEL_QUEUE_NAME) : NULL;
	json_t *patch = json_array();
	char *out;

	/* Only Jobs naming a LocalQueue are ours; everything else passes untouched. */
	if (patch && queue && *queue && strcmp(req->operation, "CREATE") == 0 &&
	    !json_is_true(obj_path(job, "spec.suspend"))) {
		/* JSON Patch "add" on an object member replaces it when present. */
		json_array_append_new(patch, json_pack("{s:s, s:s, s:b}", "op", "add", "path",
						       "/spec/suspend", "value", 1));
	}
	out = review_response(req, 1, 0, NULL, patch);
	json_decref(patch);
	return out;
}

static char *validate_job(const struct admission_request *req)
{
	char msg[512];
	json_t *job = req->object;
	const char *queue = job ? obj_label(job, LABEL_QUEUE_NAME) : NULL;

	/* A LocalQueue name is an object name: the decoders' rule, so a Job this lets through
	 * is one the manager can queue. */
	if (queue && !eobj_is_dns_subdomain(queue, strlen(queue))) {
		snprintf(msg, sizeof(msg),
			 "metadata.labels[%s]: Invalid value: \"%.253s\": must be a valid LocalQueue name (a lowercase RFC 1123 subdomain)",
			 LABEL_QUEUE_NAME, queue);
		return review_response(req, 0, 422, msg, NULL);
	}
	if (!strcmp(req->operation, "UPDATE") && req->old_object) {
		const char *old_queue = obj_label(req->old_object, LABEL_QUEUE_NAME);
		int changed = (old_queue == NULL) != (queue == NULL) ||
			      (old_queue && queue && strcmp(old_queue, queue) != 0);
		int running = !json_is_true(obj_path(req->old_object, "spec.suspend"));
		if (changed && old_queue && running) {
			snprintf(msg, sizeof(msg),
				 "metadata.labels[%s]: Forbidden: the queue of a running Job cannot change; suspend it first",
				 LABEL_QUEUE_NAME);
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
	return rc ? review_response(req, 0, 422, msg, NULL) : review_response(req, 1, 0, NULL, NULL);
}

int webhook_handle(const char *path, const char *body, size_t len, char **out)
{
	struct admission_request req;
	char err[256];
	char *(*handler)(const struct admission_request *) = NULL;

	*out = NULL;
	if (!strcmp(path, WEBHOOK_PATH_MUTATE_JOB))
		handler = mutate_job;
	else if (!strcmp(path, WEBHOOK_PATH_VALIDATE_JOB))
		handler = validate_job;
	else if (!strcmp(path, WEBHOOK_PATH_VALIDATE_CQ))
		handler = validate_cq;
	if (!handler) {
		*out = strdup("{\"error\":\"unknown webhook path\"}");
		return 404;
	}
	if (review_decode(body, len, &req, err, sizeof(err)) != 0) {
		json_t *e = json_pack("{s:s}", "error", err);
		*out = e ? json_dumps(e, JSON_COMPACT) : NULL;
		json_decref(e);
		return 400;
	}
	*out = handler(&req);
	review_request_release(&req);
	return 200;
}
