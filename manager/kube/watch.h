/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Informers: a list+watch cache of one resource type. The informer lists (in pages), then
 * watches from the list's resourceVersion; on a 410 it lists again and reports the difference
 * as events, so the cache and its consumers never miss a change. Errors back off exponentially
 * (0.8 s doubling to 2 s, plus up to as much again in jitter), as client-go's reflector
 * does but capped lower, so a watch resumes within seconds of the apiserver's return.
 *
 * The store maps "namespace/name" (or "name" for cluster-scoped kinds) to the latest object.
 * Objects in the store are never modified in place: an update replaces the whole object.
 * Watched and listed objects arrive without metadata.managedFields, cut from their text before
 * it is parsed (util/json_cut.h): nothing here reads it, and it is often an object's largest
 * part.
 *
 * A list never holds the loop for long: each page's items are cut, parsed one at a time and
 * applied to the store as they come (reported as ADDED or MODIFIED; one the store has at the
 * same resourceVersion is skipped), for at most list_slice_ns a loop turn, the rest in the
 * turns after. When the last page is in, what the store holds and the list didn't is DELETED,
 * then on_synced runs (the first list only) and the watch starts. Until then the store holds a
 * mix of the old state and the list's: each object is one the apiserver had. A list that fails
 * midway keeps what its pages applied and starts again after a backoff; the next one reports
 * the difference from there.
 */
#ifndef MUSTER_WATCH_H
#define MUSTER_WATCH_H

#include <jansson.h>
#include <stdint.h>
#include <uv.h>

#include "kube/client.h"
#include "kube/framer.h"

struct informer;

/*
 * A change to the store. For WATCH_ADDED old is NULL; for WATCH_DELETED obj is the last known
 * object. Both are borrowed and valid only during the call. key is the store key.
 */
typedef void (*informer_event_fn)(void *arg, struct informer *inf, enum watch_event_type type,
				  const char *key, json_t *old, json_t *obj);

struct informer_options {
	const char *name; /* for logs, e.g. "jobs" */
	const char *path; /* collection path, e.g. "/apis/batch/v1/jobs" */
	const char *label_selector; /* optional */
	informer_event_fn on_event;
	void *arg;
	void (*on_synced)(void *arg, struct informer *inf); /* optional: after the first list */
	/* Optional: what the store keeps of each object (e.g. a slim copy of a Pod with only what
	 * placement needs), as a new reference; NULL keeps the object whole. Applied to listed
	 * and watched objects alike; the result must keep metadata.resourceVersion, which relists
	 * compare, or be that resourceVersion alone as a JSON string, or a JSON integer when it is
	 * a number (a stub, for a consumer that keeps the object elsewhere: its events carry the
	 * stub). text (len bytes, not NUL-terminated) is obj as the apiserver sent it, in a watch
	 * event or as a list's item, with metadata.managedFields cut out, for a transform that
	 * would otherwise serialize obj again; NULL unless wants_text. */
	json_t *(*transform)(void *arg, json_t *obj, const char *text, size_t len);
	/* Optional, with transform: what the store keeps of an object read from its text alone,
	 * never parsed here (a watch event's object or a list's item, len bytes, managedFields
	 * cut), stored under key: a stub, as transform returns one. The informer reads the
	 * event's type and the object's name, namespace and resourceVersion from the text; when
	 * it can't (an escape in one of them) or this returns NULL (the text is not an object
	 * it can read), it parses the object and calls transform instead, which reports what is
	 * wrong. rv is the resourceVersion it read. For the many and the large (Workloads),
	 * whose text is slimmed and kept, and parsed only when a reconciler reads it. */
	json_t *(*transform_text)(void *arg, const char *key, const char *rv, const char *text,
				  size_t len);
	/* A kind whose CRD may not be installed (RayJob): a list answered 404 counts as synced and
	 * empty, and is tried again every 15 s, so a missing CRD blocks nothing. */
	int optional;
	/* The transform uses the object's text: find it in a watch event, and pass a listed
	 * object's (else it gets NULL, and no event is scanned for it). */
	int wants_text;
	/* How long one loop turn may apply a list page's items for; 0 is the default, 10 ms
	 * (tests set 1 ns: one item a turn). */
	uint64_t list_slice_ns;
};

/* Starts listing. Strings in opt are copied. 0 or -errno. */
int informer_start(uv_loop_t *loop, struct kube_client *client, const struct informer_options *opt,
		   struct informer **out);

/* Stops watching and frees the informer (its store with it). */
void informer_stop(struct informer *inf);

/* True once the first list has been fully delivered. */
int informer_synced(const struct informer *inf);

/* The object stored under key ("ns/name" or "name"), borrowed; NULL if absent. */
json_t *informer_get(const struct informer *inf, const char *key);

/* The whole store: a JSON object from key to object, borrowed; iterate, do not modify. */
json_t *informer_store(const struct informer *inf);

/* Writes the store key of obj ("ns/name" or "name") into buf. 0 or -ENOSPC/-EINVAL. */
int informer_key(json_t *obj, char *buf, size_t size);

#endif
