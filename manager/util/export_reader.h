/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reads a cluster export, object by object, in every format users export: YAML or JSON
 * documents (separated by `---` lines; JSON documents may also simply follow each other), and
 * kubectl's `v1 List` (`kubectl get -o yaml|json`) in either, whose items come one at a time
 * as objects of their own. The one reader of exports: `muster simulate` reads its inputs
 * through it, and anything else that reads exports should too.
 *
 * One path per format, chosen once per input by its first byte that isn't whitespace (or a
 * leading `---` line): `{` or `[` is JSON, parsed by jansson one document (or one List item)
 * at a time; anything else is YAML, read by util/yamljson.h's streaming reader. Neither holds
 * a List whole when it is written the way kubectl writes it (or with its kind first): a JSON
 * List's members before items are parsed from a copy (util/json_cut.h finds where they end),
 * then its items one by one, then the members after them; a block YAML List is cut at its
 * items' "- " lines (yamljson_reader_lists). A List written otherwise (flow YAML, say) is read
 * whole and handed out item by item: the same objects. Nothing is read ahead: a List cut
 * short hands out the items before the cut, then fails.
 *
 * Memory: the reader allocates in proportion to the largest object (or to a List's members
 * other than items), never to its input, which it only reads: a caller may map a file of any
 * size and drop the pages before export_reader_offset.
 *
 * Errors name where: *pos has the 1-based line, and item (0-based) for a List's items; the
 * error text says which document or List item and what is wrong (a truncated List, an item
 * that isn't an object, a JSON syntax error). An error ends the input: the objects before it
 * were handed out, and next returns the error again.
 */
#ifndef MUSTER_EXPORT_READER_H
#define MUSTER_EXPORT_READER_H

#include <jansson.h>
#include <stddef.h>

#include "util/yamljson.h"

struct export_reader;

/* Where an object came from. */
struct export_pos {
	int line; /* 1-based line where it starts, 0 if unknown */
	long item; /* its index in a List's items, -1 when it is a document of its own */
};

/* A reader over data[0..len), which must outlive it. Values may be shared between objects
 * (yamljson_reader_share): the caller only reads them. 0, -EINVAL (err filled: a NUL byte in
 * YAML input), -ENOMEM. */
int export_reader_new(const char *data, size_t len, struct export_reader **out,
		      struct yamljson_error *err);

/* The next object in *obj, the caller's reference: 1; 0 at the end of the input; -EINVAL with
 * err filled (its line: where the problem is) for malformed input, after which the reader is
 * done; -ENOMEM. Whether a YAML or JSON input: export_reader_is_json. */
int export_reader_next(struct export_reader *r, json_t **obj, struct export_pos *pos,
		       struct yamljson_error *err);

/* 1 when the input is read as JSON, 0 as YAML. */
int export_reader_is_json(const struct export_reader *r);

/* The caller dropped the last object without freeing it (json_arena_discard): what the
 * reader must know, as yamljson_reader_discarded says. */
void export_reader_discarded(struct export_reader *r);

/* How many bytes from the start of the input the reader is done with. */
size_t export_reader_offset(const struct export_reader *r);

void export_reader_free(struct export_reader *r);

#endif
