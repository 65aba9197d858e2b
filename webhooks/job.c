/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/objects.h"
#include "webhooks/review.h"
#include "webhooks/webhooks.h"

/* A LocalQueue name is an object name: a DNS-1123 subdomain. */
static int valid_queue_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 253)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
		if (!alnum && c != '-' && c != '.')
			return 0;
		if ((i == 0 || i == n - 1) && !alnum)
			return 0;
	}
	return 1;
}

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

	if (queue && !valid_queue_name(queue)) {
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

static int check_quantity(json_t *v, const char *where, char *msg, size_t msglen)
{
	int64_t milli;
	if (!v)
		return 0;
	int rc = quantity_from_json(v, &milli);
	if (rc == 0 && milli < 0)
		rc = -EINVAL;
	if (rc == 0)
		return 0;
	char text[64] = "";
	if (json_is_string(v))
		snprintf(text, sizeof(text), "%.40s", json_string_value(v));
	else
		snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(v));
	snprintf(msg, msglen, "%s: Invalid value: \"%s\": %s", where, text,
		 rc == -ERANGE ? "out of range: muster accounts quotas exactly in int64 milli-units (at most about 9.2e15 units)" :
				 "must be a non-negative Kubernetes quantity");
	return -EINVAL;
}

static char *validate_cq(const struct admission_request *req)
{
	char msg[512];
	json_t *groups = obj_path(req->object, "spec.resourceGroups"), *g;
	json_t *seen_resources = json_object(), *seen_flavors = json_object();
	size_t gi;
	char *out = NULL;
	int ok = 1;

	if (!seen_resources || !seen_flavors)
		goto done;
	json_array_foreach(groups, gi, g)
	{
		json_t *r, *f;
		size_t i;
		json_array_foreach(json_object_get(g, "coveredResources"), i, r)
		{
			const char *name = json_string_value(r);
			if (name && json_object_get(seen_resources, name)) {
				snprintf(msg, sizeof(msg),
					 "spec.resourceGroups[%zu].coveredResources: Duplicate value: \"%s\": a resource can be covered by one resource group only",
					 gi, name);
				ok = 0;
				goto done;
			}
			if (name)
				json_object_set(seen_resources, name, json_true());
		}
		json_array_foreach(json_object_get(g, "flavors"), i, f)
		{
			const char *name = json_string_value(json_object_get(f, "name"));
			json_t *res;
			size_t k;
			if (name && json_object_get(seen_flavors, name)) {
				snprintf(msg, sizeof(msg),
					 "spec.resourceGroups[%zu].flavors[%zu].name: Duplicate value: \"%s\": a flavor can appear in one resource group only",
					 gi, i, name);
				ok = 0;
				goto done;
			}
			if (name)
				json_object_set(seen_flavors, name, json_true());
			json_array_foreach(json_object_get(f, "resources"), k, res)
			{
				static const char *const fields[] = { "nominalQuota", "borrowingLimit",
								      "lendingLimit" };
				for (size_t q = 0; q < 3; q++) {
					char where[160];
					snprintf(where, sizeof(where),
						 "spec.resourceGroups[%zu].flavors[%zu].resources[%zu].%s", gi,
						 i, k, fields[q]);
					if (check_quantity(json_object_get(res, fields[q]), where, msg,
							   sizeof(msg)) != 0) {
						ok = 0;
						goto done;
					}
				}
				/* A queue can't lend more than it owns. */
				int64_t nominal, lending;
				json_t *lend = json_object_get(res, "lendingLimit");
				if (lend && quantity_from_json(json_object_get(res, "nominalQuota"), &nominal) == 0 &&
				    quantity_from_json(lend, &lending) == 0 && lending > nominal) {
					snprintf(msg, sizeof(msg),
						 "spec.resourceGroups[%zu].flavors[%zu].resources[%zu].lendingLimit: Invalid value: must be less than or equal to nominalQuota",
						 gi, i, k);
					ok = 0;
					goto done;
				}
			}
		}
	}
done:
	json_decref(seen_resources);
	json_decref(seen_flavors);
	if (seen_resources && seen_flavors)
		out = ok ? review_response(req, 1, 0, NULL, NULL) : review_response(req, 0, 422, msg, NULL);
	return out;
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
