/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the admission webhooks (webhooks/webhooks.h) with arbitrary request bodies on all
 * three paths. Whatever the body, the answer must be 200 or 400 with a body (the apiserver
 * treats a missing answer as a webhook failure), and a 200 must be a well-formed
 * AdmissionReview response echoing the request uid, whose patch, if any, decodes to a JSON
 * Patch array.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "webhooks/webhooks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_patch(const char *b64)
{
	size_t n = strlen(b64);
	if (n % 4 != 0)
		abort();
	unsigned char *raw = malloc(n / 4 * 3 + 1);
	if (!raw)
		abort();
	int len = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)n);
	if (len < 0)
		abort();
	while (len > 0 && raw[len - 1] == '\0') /* padding decodes as NULs */
		len--;
	json_t *patch = json_loadb((const char *)raw, (size_t)len, 0, NULL);
	if (!json_is_array(patch) || json_array_size(patch) == 0)
		abort();
	json_decref(patch);
	free(raw);
}

static void check_response(const char *body, size_t size, int status, const char *out)
{
	if (!out)
		abort();
	json_t *v = json_loads(out, 0, NULL);
	if (!json_is_object(v))
		abort();
	if (status == 400) {
		if (!json_string_value(json_object_get(v, "error")))
			abort();
		json_decref(v);
		return;
	}
	if (status != 200)
		abort();
	json_t *req = json_loadb(body, size, JSON_REJECT_DUPLICATES, NULL);
	const char *uid =
		json_string_value(json_object_get(json_object_get(req, "request"), "uid"));
	json_t *resp = json_object_get(v, "response");
	const char *got = json_string_value(json_object_get(resp, "uid"));
	if (!uid || !got || strcmp(uid, got) != 0)
		abort();
	const char *kind = json_string_value(json_object_get(v, "kind"));
	if (!kind || strcmp(kind, "AdmissionReview") != 0)
		abort();
	if (!json_is_boolean(json_object_get(resp, "allowed")))
		abort();
	/* A denial always says why. */
	if (json_is_false(json_object_get(resp, "allowed")) &&
	    !json_string_value(json_object_get(json_object_get(resp, "status"), "message")))
		abort();
	const char *patch = json_string_value(json_object_get(resp, "patch"));
	if (patch)
		check_patch(patch);
	json_decref(req);
	json_decref(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const paths[] = {
		WEBHOOK_PATH_MUTATE_JOB,         WEBHOOK_PATH_VALIDATE_JOB,
		WEBHOOK_PATH_VALIDATE_CQ,        WEBHOOK_PATH_MUTATE_POD,
		WEBHOOK_PATH_VALIDATE_POD,       "/mutate-ray-io-v1-rayjob",
		"/validate-ray-io-v1-rayjob",    "/mutate-ray-io-v1-raycluster",
		"/validate-ray-io-v1-raycluster"
	};
	const char *body = (const char *)data;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char *out = NULL;
		int status = webhook_handle(paths[i], body, size, NULL, &out);
		check_response(body, size, status, out);
		free(out);
	}
	char *out = NULL;
	if (webhook_handle("/mutate-unknown", body, size, NULL, &out) != 404 || !out)
		abort();
	free(out);
	return 0;
}
