/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cutting one member out of a JSON text before it is parsed. Every object the apiserver sends
 * carries metadata.managedFields, which muster never reads and which is often a third or more
 * of a Workload's bytes; the manager parses thousands of such texts a minute (watch events,
 * the answers to its writes). jansson has no way to skip a member while parsing, and no
 * well-kept C library streams JSON with a skip, so this small scanner does that one job by
 * hand: it walks the text's structure (strings with their escapes, nesting) without
 * validating values, finds the member at the given path and removes it in place, or says
 * where its value is (the manager keeps a watched object's text as it came, instead of
 * serializing the tree parsed from it again). util/export_reader.h also asks it where a value
 * ends, to find a List's items without parsing the List, and the informer (kube/watch.h) walks
 * a list page's items with it, to cut and parse them one at a time.
 *
 * The result of a well-formed text is well-formed and parses to the same tree without that
 * member (the fuzz target fuzz_json_cut checks this). A text that isn't well-formed enough to
 * walk is left as it is, and the parser that follows reports it.
 */
#ifndef MUSTER_JSON_CUT_H
#define MUSTER_JSON_CUT_H

#include <stddef.h>

/* Removes the member at path (object keys from the top-level object down, NULL-terminated,
 * at most 8 deep) from the len bytes at text, in place. Returns the new length, which is len
 * when there is nothing to remove or the text can't be walked. The bytes after the new
 * length up to len are unspecified; a NUL is written at the new length when it is below len. */
size_t json_cut_member(char *text, size_t len, const char *const *path);

/* Where the value of the member at path (as json_cut_member takes it) lies in the len bytes
 * at text: [*from, *to). 0; or -1 when there is no such member or the text can't be walked
 * to it. The span is what the text says, not validated: parse it before trusting it. */
int json_member_span(const char *text, size_t len, const char *const *path, size_t *from,
		     size_t *to);

/* The string value of the member at path (as json_member_span finds it) copied into buf (size
 * bytes, NUL-terminated). 0; or -1 when there is no such member, it isn't a string, it has an
 * escape or a control character (parse such a text instead), or it doesn't fit: a fast path
 * for the names and versions an object's metadata holds, never a validation. */
int json_member_string(const char *text, size_t len, const char *const *path, char *buf,
		       size_t size);

/* Where the value that starts at text (after any whitespace) ends in the len bytes: *end is
 * the offset just past it. 0; or -1 when it doesn't end within them (a truncated text, or
 * brackets that never close). Structure only, as json_cut_member walks it: the parser that
 * follows validates the value. */
int json_value_end(const char *text, size_t len, size_t *end);

/* The next element of the array whose '[' starts the len bytes at text (after any whitespace):
 * *pos is where the walk stands, 0 before the first element, and is moved past the element
 * found. 1 and the element's bytes in [*from, *to); 0 at the array's ']' (*pos just past it:
 * don't ask again); -1 when the text can't be walked (not an array, a missing or extra comma,
 * truncated). Structure only, as json_value_end: parse each element before trusting it. The
 * walk reads only the bytes from *pos on, so an element may be cut in place (json_cut_member
 * on [*from, *to)) before the next is asked for. */
int json_array_next(const char *text, size_t len, size_t *pos, size_t *from, size_t *to);

#endif
