/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the YAML-to-JSON loader (util/yamljson.h) with arbitrary bytes: it must either return
 * an array of documents that jansson can serialize (so every string is valid UTF-8 and every
 * number representable), or -EINVAL/-ENOMEM with no documents and a NUL-terminated message.
 * Alias bombs must be refused by the caps, which the fuzzer's memory limit would otherwise catch.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/yamljson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *docs = (json_t *)1;
	struct yamljson_error err;
	memset(&err, 'x', sizeof(err));
	int rc = yamljson_load((const char *)data, size, &docs, &err);
	if (memchr(err.text, '\0', sizeof(err.text)) == NULL || err.line < 0)
		abort();
	if (rc != 0) {
		if ((rc != -EINVAL && rc != -ENOMEM) || docs != NULL)
			abort();
		return 0;
	}
	if (!json_is_array(docs))
		abort();
	size_t i;
	json_t *doc;
	json_array_foreach(docs, i, doc)
	{
		/* Empty documents are skipped, never returned as null. */
		if (json_is_null(doc))
			abort();
		char *text = json_dumps(doc, JSON_ENCODE_ANY | JSON_COMPACT);
		if (!text)
			abort();
		free(text);
	}
	json_decref(docs);
	return 0;
}
