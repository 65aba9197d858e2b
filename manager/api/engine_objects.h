/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Decoders from Kubernetes and Kueue API objects (jansson values) to the admission engine's
 * specs (core/engine.h), shared by `muster simulate` and the manager so both read an object
 * the same way.
 *
 * Each decoder fills an owner struct: the engine spec plus an arena holding every string and
 * array the spec points to. The owner is self-contained (it keeps no pointer into the JSON it
 * was decoded from, except eobj_workload, which holds its own reference), so the caller may
 * drop the JSON at once; it must call the matching *_release exactly once, also after a failed
 * decode (release of a zeroed or failed owner is a no-op). The engine copies what it keeps, so
 * an owner may be released as soon as it has been handed to the engine.
 *
 * Errors: every decoder returns 0, -EINVAL with err naming the field and what is wrong, e.g.
 *   spec.resourceGroups[0].flavors[1].resources[0].nominalQuota: invalid quantity "12x"
 * or -ENOMEM. Checks are those of the CRD schema and of Kueue's webhooks that decide how the
 * object behaves (types, enums, quantities, required fields, cross-field rules). What only acts
 * with a feature of the manager's configuration (fairSharing weights, admissionScope: fair
 * sharing) is decoded whether that feature is on or not; the engine uses it only when it is.
 */
#ifndef MUSTER_ENGINE_OBJECTS_H
#define MUSTER_ENGINE_OBJECTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "api/integrations.h"
#include "api/objects.h"
#include "core/engine.h"

#define ANNOTATION_JOB_MIN_PARALLELISM "kueue.x-k8s.io/job-min-parallelism"
#define LABEL_METADATA_NAME "kubernetes.io/metadata.name"

/* Everything one decoded object owns, as a list of blocks freed at once. Zeroed (memset, = {0})
 * is empty. An arena with shared set carves from that one instead, which must outlive it and
 * frees the blocks: for many records that live and go together (the simulator's Workloads),
 * where a block of each one's own was most of their memory. */
struct eobj_block;
struct eobj_template_memo;
struct eobj_arena {
	struct eobj_block *blocks; /* the first is the one being carved */
	size_t used, cap; /* of the first block */
	struct eobj_arena *shared; /* non-NULL: allocate from it; own nothing */
	/* A shared arena's, optional: the pod templates decoded into it (see below). */
	struct eobj_template_memo *memo;
};

/*
 * Pod templates decoded before, for Workloads decoded into one shared arena from documents
 * whose identical templates are one shared value (yamljson_reader_share): a Workload whose
 * template is the same json_t as an earlier one's gets the same pod (requests and node
 * constraints, in the arena) without decoding the template again; a template is a pure
 * function of its value, and shared values are never changed. The memo holds a reference
 * to each template it knows, so none is freed, and its address reused, while it is known;
 * it takes none from the JSON arena (util/json_arena.h), whose documents may be dropped
 * unfreed. Slots are picked by address; a template takes its slot from the one before.
 * Zeroed is empty; the arena's release empties it.
 */
#define EOBJ_TEMPLATE_MEMO 2048 /* a power of two */
struct eobj_template_memo {
	struct {
		json_t *template; /* NULL: free */
		struct quota_podset pod; /* count aside: a podSet's own */
	} slot[EOBJ_TEMPLATE_MEMO];
};

/* For this module's decoders and the others built the same way (placement_objects.c): n
 * zeroed elements of size bytes, aligned as an element of that size needs (its largest
 * power-of-two divisor, at most max_align_t: size 1 is packed), or a copy of s, owned by the
 * arena (or its shared one); NULL when out of memory. Releasing frees them all (with shared
 * set: nothing) and leaves the arena empty. */
void *eobj_arena_alloc(struct eobj_arena *a, size_t n, size_t size);
char *eobj_arena_strdup(struct eobj_arena *a, const char *s);
void eobj_arena_release(struct eobj_arena *a);
/* Drops what a template memo knows (the arena's release does it too). */
void eobj_template_memo_clear(struct eobj_template_memo *m);
/* Decoder errors: the message in err (if any); -EINVAL and -ENOMEM ("out of memory"). */
__attribute__((format(printf, 3, 4))) int eobj_bad(char *err, size_t errlen, const char *fmt, ...);
int eobj_nomem(char *err, size_t errlen);
/* Formats a field path for a message, cut to fit: paths hold user-chosen keys, and a function
 * of its own keeps -Wformat-truncation quiet about it. */
__attribute__((format(printf, 3, 4))) void eobj_pathf(char *dst, size_t size, const char *fmt, ...);

/* Field readers shared by the decoders: each names the field's path in err and returns 0,
 * -EINVAL or -ENOMEM. eobj_field is json_object_get that tolerates a non-object;
 * eobj_type_name says what a value is ("an object", "a list", ...). */
const char *eobj_type_name(json_t *v);
/* A value as a message quotes it, into buf: a string cut to 64 bytes, a number as written,
 * a boolean as true or false, a collection as {...} or [...]. Returns buf. */
const char *eobj_show(json_t *v, char *buf, size_t size);
json_t *eobj_field(json_t *obj, const char *key);
int eobj_want_object(json_t *v, const char *path, char *err, size_t errlen);
int eobj_want_array(json_t *v, const char *path, char *err, size_t errlen);
int eobj_get_string(json_t *obj, const char *key, const char *prefix, const char **out, char *err,
		    size_t errlen);
int eobj_check_keys(json_t *obj, const char *path, const char *const *allowed, char *err,
		    size_t errlen);
int eobj_get_quantity(json_t *v, const char *path, int64_t *out, char *err, size_t errlen);
/* An integer in [lo, hi]; *has says whether it was there. */
int eobj_get_int(json_t *obj, const char *key, const char *prefix, int64_t lo, int64_t hi, int *has,
		 int64_t *out, char *err, size_t errlen);
/* The decoders' shared pieces, for engine_objects.c and placement_objects.c alike, each into
 * the arena and reporting at path:
 * eobj_meta_name: metadata.name, required, an RFC 1123 subdomain (a DNS label with label set,
 *   as a Namespace's is), which Kubernetes demands of every kind muster reads; *out borrows
 *   obj's string.
 * eobj_decode_string_map: a map of strings to strings (labels, nodeLabels, matchLabels), with
 *   room for extra more entries after the *n decoded (a Node's hostname label).
 * eobj_decode_taints: a list of corev1.Taint (a Node's spec.taints, a ResourceFlavor's
 *   nodeTaints): key, and effect one of NoSchedule, PreferNoSchedule, NoExecute, required;
 *   value "" when absent. With strict, a key Taint doesn't have is an error (a ResourceFlavor
 *   someone wrote); without, it is ignored (a Node the kubelet wrote, whose schema may grow). */
int eobj_meta_name(json_t *obj, int label, const char **out, char *err, size_t errlen);
int eobj_decode_string_map(struct eobj_arena *a, json_t *m, const char *path, size_t extra,
			   size_t *n, struct quota_kv **out, char *err, size_t errlen);
int eobj_decode_taints(struct eobj_arena *a, json_t *arr, const char *path, int strict, size_t *n,
		       struct quota_taint **out, char *err, size_t errlen);
/* A LabelSelector (matchLabels, matchExpressions with In, NotIn, Exists, DoesNotExist), checked
 * and decoded as a ClusterQueue's namespaceSelector is, into the arena; *out is NULL when sel
 * is. Evaluate it with labels_selector_matches (core/labels.h). */
int eobj_selector_decode(struct eobj_arena *a, json_t *sel, const char *path,
			 const struct label_selector **out, char *err, size_t errlen);
/* What a pod template contributes to quota and placement (containers, resources, node
 * constraints, priority), checked so a mistake is reported at its own path. */
int eobj_check_template(json_t *tpl, const char *path, char *err, size_t errlen);
/* The one place a pod's quantities are checked and summed (struct pod_requests, api/objects.h):
 * the containers, init containers and overhead of spec, whose path is path ("spec" for a Pod),
 * each quantity checked at its own path as it is added. The names are spec's keys. 0, or an
 * error with out empty: -EINVAL, or -ERANGE when the sum overflows int64 milli-units. */
int eobj_pod_requests(json_t *spec, const char *path, struct pod_requests *out, char *err,
		      size_t errlen);
/* A Workload's podSet as placement and the engine see it (struct podset_view, api/objects.h),
 * its template's quantities checked and summed by eobj_pod_requests' rules. */
int podset_view_decode(json_t *podset, struct podset_view *out, char *err, size_t errlen);

/* The one place muster checks Kubernetes names, with apimachinery's rules (validation.go), so
 * that the webhooks, the decoders and placement agree. A label (IsDNS1123Label: namespaces):
 * [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters. A subdomain (IsDNS1123Subdomain:
 * object names, queue names, label-key prefixes): such parts joined by single dots, at most
 * 253 characters in all and no cap per part. s need not be NUL-terminated. */
int eobj_is_dns_label(const char *s, size_t len);
int eobj_is_dns_subdomain(const char *s, size_t len);

/* ResourceFlavor: metadata.name, spec.nodeLabels, spec.nodeTaints, spec.tolerations. */
struct eobj_flavor {
	struct quota_flavor spec;
	struct eobj_arena arena;
};
int eobj_flavor_decode(json_t *rf, struct eobj_flavor *out, char *err, size_t errlen);
void eobj_flavor_release(struct eobj_flavor *f);

/* ClusterQueue. Defaults are the CRD's (BestEffortFIFO, preemption Never, whenCanBorrow
 * MayStopSearch, whenCanPreempt TryNextFlavor, stopPolicy None); an absent namespaceSelector
 * stays NULL (no namespace). spec.fairSharing.weight (a quantity >= 0, read at milli
 * precision: "0.0001" is 0.001) and spec.admissionScope.admissionMode go to the spec's
 * has_fair_weight/fair_weight and usage_based_afs. */
struct eobj_cq {
	struct eng_cq_spec spec;
	/* NULL, or the first field set that changes admission but the engine does not implement
	 * (admissionChecksStrategy, concurrentAdmissionPolicy), for the caller to refuse or to
	 * report; the spec is decoded regardless. Static storage. */
	const char *unsupported;
	struct eobj_arena arena;
};
int eobj_cq_decode(json_t *cq, struct eobj_cq *out, char *err, size_t errlen);
void eobj_cq_release(struct eobj_cq *c);

/* Cohort: metadata.name, spec.parentName, spec.resourceGroups, spec.fairSharing.weight (as a
 * ClusterQueue's). */
struct eobj_cohort {
	struct eng_cohort_spec spec;
	struct eobj_arena arena;
};
int eobj_cohort_decode(json_t *cohort, struct eobj_cohort *out, char *err, size_t errlen);
void eobj_cohort_release(struct eobj_cohort *c);

/* LocalQueue: metadata.namespace (default_namespace when unset), metadata.name,
 * spec.clusterQueue (required), spec.stopPolicy, spec.fairSharing.weight (as a
 * ClusterQueue's; for engine_set_lq_fair_weight). */
struct eobj_local_queue {
	const char *namespace_name;
	const char *name;
	const char *cluster_queue;
	enum eng_stop_policy stop;
	int has_fair_weight; /* spec.fairSharing.weight is set; else the default, 1 */
	double fair_weight;
	struct eobj_arena arena;
};
int eobj_local_queue_decode(json_t *lq, const char *default_namespace, struct eobj_local_queue *out,
			    char *err, size_t errlen);
void eobj_local_queue_release(struct eobj_local_queue *q);

/* A LocalQueue's status.fairSharing.admissionFairSharingStatus, where Kueue keeps a
 * LocalQueue's decayed usage across restarts: what engine_afs_seed takes. */
struct eobj_afs_status {
	int present; /* the status has it; else the rest is empty */
	size_t n;
	struct eng_afs_resource consumed[QUOTA_MAX_RESOURCES]; /* consumedResources, in units */
	int64_t last_update; /* lastUpdate, ns since the epoch */
	struct eobj_arena arena; /* the resource names */
};
/* Decodes it from a LocalQueue object (absent: present 0 and 0 returned). consumedResources
 * are quantities >= 0 (at milli precision), at most QUOTA_MAX_RESOURCES; lastUpdate is RFC
 * 3339 (time_parse_rfc3339_ns). Release the result also after a failure. */
int eobj_local_queue_afs_decode(json_t *lq, struct eobj_afs_status *out, char *err, size_t errlen);
void eobj_afs_status_release(struct eobj_afs_status *s);

/* v1 Namespace: its labels plus kubernetes.io/metadata.name=<name>, which the apiserver always
 * sets (so selectors on it work as in a cluster). */
struct eobj_namespace {
	const char *name;
	size_t n_labels;
	struct quota_kv *labels;
	struct eobj_arena arena;
};
int eobj_namespace_decode(json_t *ns, struct eobj_namespace *out, char *err, size_t errlen);
/* A namespace that exists with no labels but the automatic one. */
int eobj_namespace_default(const char *name, struct eobj_namespace *out);
void eobj_namespace_release(struct eobj_namespace *n);

/* kueue.x-k8s.io WorkloadPriorityClass or scheduling.k8s.io PriorityClass: metadata.name and
 * value (int32, required). name is borrowed from obj. */
int eobj_priority_class_decode(json_t *obj, const char **name, int32_t *value, char *err,
			       size_t errlen);

/* Workload, pending or admitted. */
struct eobj_workload {
	struct eng_workload_spec
		spec; /* key "namespace/name"; queue "" when spec.queueName is unset */
	const char *name;
	/* metadata.creationTimestamp was set (spec.queue_time is 0 otherwise) */
	int has_queue_time;
	int admitted; /* status.admission with QuotaReserved=True */
	struct eng_assignment *admission; /* in the arena; NULL unless admitted */
	int finished; /* the Finished condition is True: it holds no quota and never will */
	int inactive; /* spec.active is false: Kueue neither admits nor keeps it admitted */
	int has_max_execution; /* spec.maximumExecutionTimeSeconds is set */
	int64_t max_execution_seconds; /* its value, 1..INT32_MAX */
	/* Private: the decoded object (the spec borrows none of it: its podSets' requests and
	 * node constraints are copied into the arena as they are decoded). */
	json_t *obj;
	struct eobj_arena arena;
};

/*
 * Decodes a Workload. default_namespace stands in for an unset metadata.namespace. wpcs and
 * pcs map names to WorkloadPriorityClass and PriorityClass objects (informer stores, or the
 * simulator's inputs; either may be NULL).
 * Priority: spec.priority when set (Kueue's webhook has already resolved the class into it);
 * otherwise the class priorityClassRef names (a missing class is an error); otherwise 0. Each
 * podSet's per-pod requests are the template's effective requests (eobj_pod_requests), its node
 * constraints those of podset_view_decode.
 * status.admission is read only with QuotaReserved=True, and then must be present and name
 * only podSets of the spec; a podSet's usage is its resourceUsage, or count * per-pod request
 * for a resource it lists in flavors only.
 * Returns 0; -EINVAL with err naming the field, or -ERANGE when a pod's requests overflow; or
 * -ENOMEM. A valid Workload is decoded once, with no message made; an invalid one is decoded
 * again for its message.
 */
int eobj_workload_decode(json_t *wl, const char *default_namespace, json_t *wpcs, json_t *pcs,
			 struct eobj_workload *out, char *err, size_t errlen);
/* The same, with out's arena carving from shared (see struct eobj_arena): the record's memory
 * is shared's, and eobj_workload_release of it frees none. */
int eobj_workload_decode_shared(struct eobj_arena *shared, json_t *wl,
				const char *default_namespace, json_t *wpcs, json_t *pcs,
				struct eobj_workload *out, char *err, size_t errlen);

/*
 * An object of an integrated kind (api/integrations.h) as the Workload the manager creates for
 * it: integration_workload_new, with the priority workload_priority_resolve finds
 * (kueue.x-k8s.io/priority-class label, else the first PodSet template's priorityClassName,
 * else its spec.priority; a class that doesn't exist is an error) written by
 * workload_apply_priority; queue time the object's creationTimestamp. An object without
 * metadata.uid gets "<namespace>.<name>" so the Workload's name is still deterministic. Errors
 * name the object's own fields (spec.template..., metadata.labels[...]). An object without the
 * queue-name label is an error: muster ignores it.
 */
int eobj_workload_for(const struct integration *in, json_t *obj, const char *default_namespace,
		      json_t *wpcs, json_t *pcs, struct eobj_workload *out, char *err,
		      size_t errlen);
/* eobj_workload_for is defined in api/integrations.c, beside integration_workload_new, and
 * decodes with this, passing that function down: this file lies below the integration seam,
 * whose files use its helpers, and calls nothing of it. */
typedef json_t *(*eobj_workload_new_fn)(const struct integration *in, json_t *obj, char *err,
					size_t errlen);
int eobj_workload_decode_owner(const struct integration *in, json_t *obj,
			       const char *default_namespace, json_t *wpcs, json_t *pcs,
			       eobj_workload_new_fn workload_new, struct eobj_workload *out,
			       char *err, size_t errlen);
void eobj_workload_release(struct eobj_workload *w);
/* Drops a decoded Workload's object (obj becomes NULL): what the spec points to is in its
 * arena already. For a caller that keeps many decoded Workloads but not their JSON (the
 * simulator). Returns 0 (it once copied, and could fail with -ENOMEM; callers still check). */
int eobj_workload_detach(struct eobj_workload *w);

#endif
