/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/framer.h"

#include <errno.h>
#include <string.h>

void framer_init(struct framer *f, size_t max_line)
{
	buf_init(&f->pending, max_line);
}

void framer_release(struct framer *f)
{
	buf_release(&f->pending);
}

int framer_feed(struct framer *f, const char *data, size_t len, framer_line_fn fn, void *arg)
{
	while (len > 0) {
		const char *nl = memchr(data, '\n', len);
		size_t take = nl ? (size_t)(nl - data) : len;
		int rc = buf_append(&f->pending, data, take);
		if (rc != 0)
			return rc;
		if (!nl)
			return 0;
		data += take + 1;
		len -= take + 1;
		if (f->pending.len > 0) {
			rc = fn(arg, f->pending.data, f->pending.len);
			buf_consume(&f->pending, f->pending.len);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

int watch_event_parse(const char *line, size_t len, struct watch_event *ev)
{
	static const struct {
		const char *name;
		enum watch_event_type type;
	} types[] = {
		{ "ADDED", WATCH_ADDED },     { "MODIFIED", WATCH_MODIFIED },
		{ "DELETED", WATCH_DELETED }, { "BOOKMARK", WATCH_BOOKMARK },
		{ "ERROR", WATCH_ERROR },
	};
	json_error_t jerr;
	json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	int rc = -EPROTO;

	memset(ev, 0, sizeof(*ev));
	if (!json_is_object(root))
		goto out;
	const char *type = json_string_value(json_object_get(root, "type"));
	json_t *obj = json_object_get(root, "object");
	if (!type || !json_is_object(obj))
		goto out;
	size_t i;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(type, types[i].name))
			break;
	if (i == sizeof(types) / sizeof(types[0]))
		goto out;
	ev->type = types[i].type;
	ev->object = json_incref(obj);
	if (ev->type == WATCH_ERROR) {
		json_int_t code = json_integer_value(json_object_get(obj, "code"));
		ev->error_code = code > 0 && code < 1000 ? (int)code : 500;
	}
	ev->resource_version = json_string_value(
		json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
	rc = 0;
out:
	json_decref(root);
	return rc;
}
