/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes the YAML-to-JSON loader (util/yamljson.h) with arbitrary bytes: it must either return
 * an array of documents that jansson can serialize (so every string is valid UTF-8 and every
 * number representable), or -EINVAL/-ENOMEM with no documents and a NUL-terminated message.
 * Alias bombs must be refused by the caps, which the fuzzer's memory limit would otherwise catch.
 * Differential: the streaming reader, which parses the plain subset by hand and the rest with
 * libyaml, must yield the same documents at the same lines, or the same error at the same line
 * (alias caps aside: the reader's are per document). Bytes that aren't UTF-8 or printable are
 * found by libyaml's decoder as far ahead as it has read, which depends on where it started:
 * when either side meets one, the other must only fail too. The reader runs twice, the second
 * time sharing repeated flow collections (yamljson_reader_share), which must change nothing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/yamljson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An error of libyaml's decoder, which reads ahead of its parser. */
static int decoding(const struct yamljson_error *err)
{
	return strstr(err->text, "UTF-8") || strstr(err->text, "Unicode") ||
	       strstr(err->text, "control characters");
}

static int same_text(const json_t *a, const json_t *b)
{
	char *ta = json_dumps(a, JSON_ENCODE_ANY | JSON_COMPACT);
	char *tb = json_dumps(b, JSON_ENCODE_ANY | JSON_COMPACT);
	int same = ta && tb && strcmp(ta, tb) == 0;
	free(ta);
	free(tb);
	return same;
}

static void same_as_reader(const char *data, size_t size, int share, int rc, json_t *docs,
			   const int *lines, const struct yamljson_error *err)
{
	struct yamljson_reader *r;
	struct yamljson_error rerr;
	json_t *doc;
	int line, rrc;
	size_t n = 0;
	if (rc != 0 && strstr(err->text, "alias"))
		return;
	rrc = yamljson_reader_new(data, size, &r, &rerr);
	if (rrc == 0 && share && yamljson_reader_share(r) != 0) {
		yamljson_reader_free(r);
		return;
	}
	if (rrc == -ENOMEM)
		return;
	while (rrc == 0 && (rrc = yamljson_reader_next(r, &doc, &line, &rerr)) == 1) {
		/* Documents before an error are returned: they must be the loader's up to there,
		 * to the text (json_equal would let keys come in another order). */
		if (rc == 0 && (n >= json_array_size(docs) ||
				!same_text(doc, json_array_get(docs, n)) || line != lines[n]))
			abort();
		json_decref(doc);
		n++;
		rrc = 0;
	}
	yamljson_reader_free(r);
	if (rrc == -ENOMEM)
		return;
	/* Either side's alias cap may come first: the reader's budget is per document. */
	if (rrc == -EINVAL && strstr(rerr.text, "alias"))
		return;
	if (rc != 0 && (decoding(err) || decoding(&rerr))) {
		if (rrc != -EINVAL)
			abort();
		return;
	}
	if (rc == 0 ?
		    (rrc != 0 || n != json_array_size(docs)) :
		    (rrc != -EINVAL || rerr.line != err->line || strcmp(rerr.text, err->text) != 0))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *docs = (json_t *)1;
	struct yamljson_error err;
	memset(&err, 'x', sizeof(err));
	int *lines = NULL;
	int rc = yamljson_load_lines((const char *)data, size, &docs, &lines, &err);
	if (memchr(err.text, '\0', sizeof(err.text)) == NULL || err.line < 0)
		abort();
	for (int share = 0; share < 2 && rc != -ENOMEM; share++)
		same_as_reader((const char *)data, size, share, rc, docs, lines, &err);
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
	free(lines);
	return 0;
}
