/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes util/export_reader with arbitrary bytes, against a reference that reads the input
 * whole: for JSON, jansson on each top-level value; for YAML, yamljson_load; v1 Lists then
 * expanded into their items. The reader streams (its JSON fast path, Lists item by item, a
 * YAML List cut at its "- " lines), the reference doesn't: whenever the reader succeeds, its
 * objects must be the reference's, and when the reference fails, so must the reader. (The
 * reader may fail where the reference doesn't: a List whose kind, after its items, turns out
 * not to be List, or an alias to an anchor in another item.) Never a crash or a leak.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/export_reader.h"
#include "util/yamljson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Appends doc, or a v1 List's items, to out (taking doc). -1 for what the reader refuses: a
 * List whose items aren't a list or hold a non-object. */
static int expand(json_t *out, json_t *doc)
{
	const char *api = json_string_value(json_object_get(doc, "apiVersion"));
	const char *kind = json_string_value(json_object_get(doc, "kind"));
	int rc = 0;
	if (!api || !kind || strcmp(api, "v1") != 0 || strcmp(kind, "List") != 0) {
		json_array_append(out, doc);
		json_decref(doc);
		return 0;
	}
	json_t *items = json_object_get(doc, "items"), *item;
	size_t i;
	if (items && !json_is_array(items) && !json_is_null(items))
		rc = -1;
	json_array_foreach(items, i, item)
	{
		if (!json_is_object(item))
			rc = -1;
		json_array_append(out, item);
	}
	json_decref(doc);
	return rc;
}

static int reference_json(const char *p, size_t len, json_t *out)
{
	const char *end = p + len;
	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' ||
				   (*p == '-' && end - p >= 3 && !memcmp(p, "---", 3) &&
				    (p == end - len || p[-1] == '\n'))))
			p += *p == '-' ? 3 : 1;
		if (p == end)
			return 0;
		json_error_t jerr;
		json_t *v = json_loadb(p, (size_t)(end - p),
				       JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK, &jerr);
		if (!v)
			return -1;
		p += jerr.position;
		if (expand(out, v) != 0)
			return -1;
	}
}

static int reference_yaml(const char *p, size_t len, json_t *out)
{
	json_t *docs, *doc;
	struct yamljson_error err;
	size_t i;
	if (yamljson_load(p, len, &docs, &err) != 0)
		return -1;
	int rc = 0;
	json_array_foreach(docs, i, doc)
	{
		if (rc == 0 && expand(out, json_incref(doc)) != 0)
			rc = -1;
	}
	json_decref(docs);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct export_reader *r;
	struct yamljson_error err;
	struct export_pos pos;
	json_t *got = json_array(), *want = json_array(), *obj;
	int rc = export_reader_new(text, size, &r, &err), json = 0;
	if (rc == 0) {
		json = export_reader_is_json(r);
		while ((rc = export_reader_next(r, &obj, &pos, &err)) == 1)
			json_array_append_new(got, obj);
		export_reader_free(r);
	}
	if (rc == -ENOMEM)
		abort();
	int want_rc = json ? reference_json(text, size, want) : reference_yaml(text, size, want);
	if (rc == 0 && want_rc != 0)
		abort();
	if (rc == 0 && !json_equal(got, want))
		abort();
	json_decref(got);
	json_decref(want);
	return 0;
}
