/* SPDX-License-Identifier: Apache-2.0 */
/*
 * YAML to JSON: reads YAML documents (kubeconfig, manifests, simulator input) into jansson
 * values, so the rest of muster handles one data model.
 *
 * Scalars are typed the way Kubernetes' YAML decoder (YAML 1.2 core schema over JSON) does:
 * plain `true`/`false`, `null`/`~`/empty, integers and floats become JSON booleans, null and
 * numbers; everything else, and every quoted scalar, is a string. YAML 1.1's yes/no/on/off stay
 * strings. Anchors and aliases are expanded with a cap on the expanded size (no billion laughs).
 */
#ifndef MUSTER_YAMLJSON_H
#define MUSTER_YAMLJSON_H

#include <jansson.h>
#include <stddef.h>

#define YAMLJSON_MAX_INPUT (16u << 20) /* bytes of YAML accepted */

struct yamljson_error {
	int line; /* 1-based line of the problem, 0 if unknown */
	char text[200];
};

/*
 * Parses every document in data[0..len) into a new JSON array (one element per non-empty
 * document) stored in *docs; the caller owns it (json_decref). Returns 0, or -EINVAL with err
 * filled in for malformed YAML, non-scalar mapping keys or oversized input; *docs is then NULL.
 */
int yamljson_load(const char *data, size_t len, json_t **docs, struct yamljson_error *err);

/* Reads a whole file and calls yamljson_load. -errno for I/O failures. */
int yamljson_load_file(const char *path, json_t **docs, struct yamljson_error *err);

/*
 * As yamljson_load, and also stores in *lines a new array (the caller frees it) holding, for
 * each element of *docs, the 1-based line where that document's content starts, so a caller
 * can say which object of a multi-document input is wrong. On failure *docs and *lines are NULL.
 */
int yamljson_load_lines(const char *data, size_t len, json_t **docs, int **lines,
			struct yamljson_error *err);

/*
 * Streaming, for inputs too large to hold as one JSON tree (the simulator's cluster exports,
 * which are trusted: no size cap here, the caller decides). Documents come one at a time and
 * the caller owns each; the alias caps apply per document, scaled by its own size. Input
 * rules as yamljson_load (no NUL byte, else -EINVAL from _new). data must outlive the reader.
 */
struct yamljson_reader;
int yamljson_reader_new(const char *data, size_t len, struct yamljson_reader **out,
			struct yamljson_error *err);
/* The next non-empty document in *doc, the 1-based line where its content starts in *line:
 * returns 1; 0 at the end of the input; -EINVAL (err filled) for malformed YAML or an alias
 * cap, after which the reader is done (next returns that code again). -ENOMEM. */
int yamljson_reader_next(struct yamljson_reader *r, json_t **doc, int *line,
			 struct yamljson_error *err);
/*
 * Sharing, for a caller that only reads its documents (streaming reader only; -ENOMEM): from
 * then on, a one-line flow collection (`{...}` or `[...]` as a block value) whose exact text
 * came twice before is one value shared by every document that has it, each holding a
 * reference, instead of a new tree each time: an export of many Workloads from few pod
 * templates parses each template about twice. A shared value must not be changed; one that
 * something else holds too (refcount above 1) may be shared. Its nodes come from malloc
 * even while the JSON arena is on, and live until the reader and every document holding
 * them are freed.
 */
int yamljson_reader_share(struct yamljson_reader *r);
/* The caller dropped the last document next returned without freeing it
 * (json_arena_discard): the references it held to shared values are given back. Freed the
 * usual way (json_decref), a document gives them back itself: then don't call this. */
void yamljson_reader_discarded(struct yamljson_reader *r);
/*
 * kubectl's List, streamed (streaming reader only; returns 0): from then on, a document that is
 * a `v1 List` written in block style, its items a "- " list (as `kubectl get -o yaml` writes
 * it), comes item by item: each item is a document of its own, and yamljson_reader_item says
 * which. Its items are cut at their "- " lines and parsed one at a time, once its members
 * before items (parsed alone) say apiVersion v1 and kind List or none yet; those after the
 * items are checked when they come (kind List, no key twice). A List written otherwise comes
 * whole. An item's error names it ("items[3]: ...") and ends the input, as any error does.
 */
int yamljson_reader_lists(struct yamljson_reader *r);
/* The last document next returned: its index among its List's items, or -1 if it is a
 * document of its own. */
long yamljson_reader_item(const struct yamljson_reader *r);
/* How many bytes from the start of the input the reader is done with: it won't read them
 * again (a caller that mapped the input may drop their pages). */
size_t yamljson_reader_offset(const struct yamljson_reader *r);
void yamljson_reader_free(struct yamljson_reader *r);

#endif
