/* SPDX-License-Identifier: Apache-2.0 */
/*
 * admission.k8s.io/v1 AdmissionReview: decoding requests from kube-apiserver and encoding
 * responses (allowed, denied with a message, or allowed with a base64 JSON Patch).
 */
#ifndef MUSTER_REVIEW_H
#define MUSTER_REVIEW_H

#include <jansson.h>
#include <stddef.h>

struct admission_request {
	json_t *root; /* the whole review (owned; release with review_request_release) */
	const char *uid; /* request.uid, borrowed from root */
	const char *api_version; /* the review's apiVersion, echoed back */
	const char *operation; /* CREATE, UPDATE, DELETE, CONNECT */
	const char *group; /* request.kind.group ("" for core) */
	const char *kind; /* request.kind.kind */
	const char *namespace_name; /* request.namespace, or "" */
	json_t *object; /* request.object, borrowed; NULL for DELETE */
	json_t *old_object; /* request.oldObject, borrowed; NULL unless UPDATE/DELETE */
};

/* Parses a review body. 0, or -EINVAL with err set (the body is not a usable review). */
int review_decode(const char *body, size_t len, struct admission_request *req, char *err,
		  size_t errlen);
void review_request_release(struct admission_request *req);

/*
 * Encodes a response into a new malloc'd NUL-terminated body. patch (borrowed, may be NULL)
 * is a JSON Patch array; message is shown to the user when a request is denied (code 403 by
 * default for denials). Returns NULL on out of memory.
 */
char *review_response(const struct admission_request *req, int allowed, int code,
		      const char *message, json_t *patch);

/* Escapes a JSON Pointer token ("~" -> "~0", "/" -> "~1") into buf. 0 or -ENOSPC. */
int json_pointer_escape(const char *token, char *buf, size_t size);

#endif
