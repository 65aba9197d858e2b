/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes util/json_slim.h with the Workload rule (api/objects.h), the one the manager applies
 * to every Workload's text. The first input byte picks the rule (Workload, pod template, or
 * none); the rest is the text. The walk must never read or write outside its buffers; a text
 * it accepts must parse; and when jansson reads the input (duplicate keys refused: the one
 * thing the walk doesn't check), the slimmed text must parse to the tree json_slim_tree leaves
 * of it, and no text jansson refuses may be accepted.
 */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/objects.h"
#include "util/json_slim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const struct json_slim_rule *rules[] = { &obj_workload_rule, &obj_pod_template_rule, NULL };
	const struct json_slim_rule *rule = rules[data[0] % 3];
	size_t len = size - 1, out_len = 0, err_at = 0;
	/* Exact-size copies, so a read past either end is caught under ASan. */
	char *in = malloc(len ? len : 1), *out = malloc(len + 1);
	if (!in || !out)
		abort();
	memcpy(in, data + 1, len);
	int rc = json_slim_text(in, len, rule, out, &out_len, &err_at);
	json_t *plain = json_loadb(in, len, 0, NULL);
	json_t *strict = json_loadb(in, len, JSON_REJECT_DUPLICATES, NULL);
	if (rc == 0) {
		if (out_len > len || out[out_len] != '\0')
			abort();
		json_t *got = json_loadb(out, out_len, 0, NULL);
		if (!got || !json_is_object(got) || !plain)
			abort(); /* accepted what jansson refuses, or wrote what it can't read */
		if (strict) {
			json_slim_tree(strict, rule);
			if (!json_equal(got, strict))
				abort();
		}
		json_decref(got);
	} else if (rc != -EINVAL || err_at > len) {
		abort();
	}
	json_decref(plain);
	json_decref(strict);
	free(in);
	free(out);
	return 0;
}
