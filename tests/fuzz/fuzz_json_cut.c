/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes util/json_cut.h. The first input byte picks a path (a watch event's or an object's
 * metadata.managedFields, or a one-key path); the rest is the text. The cut must never read or
 * write outside the text, and when jansson reads the text, it must read the result too, as the
 * same tree without the member (or, for a key spelled with escapes, the same tree unchanged).
 * json_member_span, asked first, must stay inside the text, and on a text jansson reads, give
 * bytes that parse to the member's value in the tree. json_array_next, walking the text as an
 * array and cutting each element's metadata.managedFields in place as the informer does a list
 * page's items, must stay inside the text and move forward; on a text jansson reads as an
 * array, find exactly its elements, each cut to the element without that member.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_cut.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const event_path[] = { "object", "metadata", "managedFields", NULL };
static const char *const object_path[] = { "metadata", "managedFields", NULL };
static const char *const top_path[] = { "a", NULL };

/* A copy of tree with the member at path deleted (if the path leads there). */
static json_t *without(json_t *tree, const char *const *path)
{
	json_t *copy = json_deep_copy(tree), *at = copy;
	for (size_t i = 0; path[i + 1] && json_is_object(at); i++)
		at = json_object_get(at, path[i]);
	if (json_is_object(at)) {
		size_t last = 0;
		while (path[last + 1])
			last++;
		json_object_del(at, path[last]);
	}
	return copy;
}

/* Walks text (len bytes, a copy it may change) as json_array_next does for a list page,
 * cutting each element as it goes; checks the walk against tree when jansson read the text. */
static void walk_array(char *text, size_t len, json_t *tree)
{
	size_t pos = 0, from, to, i = 0;
	int rc;
	while ((rc = json_array_next(text, len, &pos, &from, &to)) == 1) {
		if (from >= to || to > len || pos != to)
			abort();
		size_t cut = json_cut_member(text + from, to - from, object_path);
		if (cut > to - from)
			abort();
		if (json_is_array(tree)) {
			json_t *element = json_array_get(tree, i);
			json_t *got = json_loadb(text + from, cut,
						 JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
			json_t *expected = element ? without(element, object_path) : NULL;
			if (!got || !expected ||
			    (!json_equal(got, expected) && !json_equal(got, element)))
				abort();
			json_decref(got);
			json_decref(expected);
		}
		i++;
	}
	if (rc == 0 && (pos > len || text[pos - 1] != ']'))
		abort();
	if (json_is_array(tree) && (rc != 0 || i != json_array_size(tree)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const char *const *paths[] = { event_path, object_path, top_path };
	const char *const *path = paths[data[0] % 3];
	size_t len = size - 1;
	char *text = malloc(len + 1);
	if (!text)
		return 0;
	memcpy(text, data + 1, len);
	text[len] = '\0';

	json_t *before = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	char *copy = malloc(len + 1);
	if (copy) {
		memcpy(copy, text, len + 1);
		walk_array(copy, len, before);
		free(copy);
	}
	size_t from, to;
	if (json_member_span(text, len, path, &from, &to) == 0) {
		if (from >= to || to > len)
			abort();
		if (before) {
			json_t *value = json_loadb(text + from, to - from,
						   JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
			json_t *at = before;
			for (size_t i = 0; path[i]; i++)
				at = json_object_get(at, path[i]);
			if (!value || !json_equal(value, at))
				abort();
			json_decref(value);
		}
	}
	size_t cut = json_cut_member(text, len, path);
	if (cut > len)
		abort();
	if (before) {
		json_t *after = json_loadb(text, cut, JSON_REJECT_DUPLICATES, NULL);
		json_t *expected = without(before, path);
		if (!after || (!json_equal(after, expected) && !json_equal(after, before)))
			abort();
		/* Cut only when something was removed. */
		if (cut < len && json_equal(after, before))
			abort();
		json_decref(after);
		json_decref(expected);
		json_decref(before);
	}
	free(text);
	return 0;
}
