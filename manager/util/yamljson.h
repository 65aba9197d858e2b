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
/* How many bytes from the start of the input the reader is done with: it won't read them
 * again (a caller that mapped the input may drop their pages). */
size_t yamljson_reader_offset(const struct yamljson_reader *r);
void yamljson_reader_free(struct yamljson_reader *r);

#endif
