/* SPDX-License-Identifier: Apache-2.0 */
#include "webhooks/review.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/base64.h"

int review_decode(const char *body, size_t len, struct admission_request *req, char *err,
		  size_t errlen)
{
	json_error_t jerr;
	memset(req, 0, sizeof(*req));
	req->root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!req->root) {
		snprintf(err, errlen, "malformed JSON at line %d: %s", jerr.line, jerr.text);
		return -EINVAL;
	}
	json_t *r = json_object_get(req->root, "request");
	json_t *kind = json_object_get(r, "kind");
	req->api_version = json_string_value(json_object_get(req->root, "apiVersion"));
	req->uid = json_string_value(json_object_get(r, "uid"));
	req->operation = json_string_value(json_object_get(r, "operation"));
	req->group = json_string_value(json_object_get(kind, "group"));
	req->kind = json_string_value(json_object_get(kind, "kind"));
	req->namespace_name = json_string_value(json_object_get(r, "namespace"));
	req->object = json_object_get(r, "object");
	req->old_object = json_object_get(r, "oldObject");
	if (!json_is_object(r) || !req->uid || !req->operation || !req->kind) {
		snprintf(err, errlen,
			 "not an AdmissionReview request (missing uid, operation or kind)");
		review_request_release(req);
		return -EINVAL;
	}
	if (!req->api_version)
		req->api_version = "admission.k8s.io/v1";
	if (!req->group)
		req->group = "";
	if (!req->namespace_name)
		req->namespace_name = "";
	if (!json_is_object(req->object))
		req->object = NULL;
	if (!json_is_object(req->old_object))
		req->old_object = NULL;
	return 0;
}

void review_request_release(struct admission_request *req)
{
	json_decref(req->root);
	memset(req, 0, sizeof(*req));
}

/* Messages quote user input cut to a length ("%.253s"), which can split a UTF-8 character, and
 * jansson refuses invalid UTF-8: the denial would lose its message and code. Such a message
 * keeps its ASCII and gets '?' for every other byte. */
static json_t *message_string(const char *message)
{
	json_t *v = json_string(message);
	if (v)
		return v;
	char *copy = strdup(message);
	if (!copy)
		return NULL;
	for (char *p = copy; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	v = json_string(copy);
	free(copy);
	return v;
}

char *review_response(const struct admission_request *req, int allowed, int code,
		      const char *message, json_t *patch)
{
	json_t *resp = json_pack("{s:s, s:b}", "uid", req->uid, "allowed", allowed);
	char *out = NULL;
	if (!resp)
		return NULL;
	if (!allowed || message) {
		json_t *status = json_pack("{s:i, s:o}", "code",
					   code ? code : (allowed ? 200 : 403), "message",
					   message_string(message ? message : ""));
		json_object_set_new(resp, "status", status);
	}
	if (patch && json_array_size(patch) > 0) {
		char *raw = json_dumps(patch, JSON_COMPACT);
		char *b64 = raw ? base64_encode(raw, strlen(raw)) : NULL;
		if (!b64) {
			free(raw);
			json_decref(resp);
			return NULL;
		}
		json_object_set_new(resp, "patchType", json_string("JSONPatch"));
		json_object_set_new(resp, "patch", json_string(b64));
		free(b64);
		free(raw);
	}
	json_t *review = json_pack("{s:s, s:s, s:o}", "apiVersion", req->api_version, "kind",
				   "AdmissionReview", "response", resp);
	if (review)
		out = json_dumps(review, JSON_COMPACT);
	json_decref(review);
	return out;
}

int json_pointer_escape(const char *token, char *buf, size_t size)
{
	size_t n = 0;
	for (; *token; token++) {
		const char *rep = *token == '~' ? "~0" : *token == '/' ? "~1" : NULL;
		size_t k = rep ? 2 : 1;
		if (n + k >= size)
			return -ENOSPC;
		if (rep) {
			buf[n++] = rep[0];
			buf[n++] = rep[1];
		} else {
			buf[n++] = *token;
		}
	}
	buf[n] = '\0';
	return 0;
}
