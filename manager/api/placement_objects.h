/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Decoders from Kubernetes and Kueue objects (jansson values) to the placement module's specs
 * (core/placement.h), and the step from an engine assignment to placement requests. Shared by
 * the manager and `muster simulate`, so both read Nodes, Pods, ResourceFlavors and Topologies
 * the same way and place the same gang on the same nodes.
 *
 * What the manager needs, and where it is:
 *   Node informer             pobj_node_apply (decode + placement_set_node, or refuse)
 *                             placement_remove_node when the Node is deleted
 *   Pod informer              pobj_pod_decode       -> placement_bind_pod / _unbind_pod
 *   ResourceFlavor, Topology  pobj_catalog_set_* / pobj_catalog_remove_*  (keep it current)
 *   the engine's placer hook  pobj_place_workload   (plans and reserves every podSet)
 *   (or, one podSet at a time, pobj_request_build -> placement_plan / placement_place)
 * A pod decoded as terminal or unbound holds nothing: placement_unbind_pod it. A refused gang
 * is retried only after engine_capacity_changed: call it when capacity grows (a pod gone or
 * terminal, a node added or schedulable again) and when the catalog changes (a Topology or
 * flavor appearing may let a gang's request be built).
 *
 * Ownership, as in engine_objects.h: each decoder fills an owner struct holding the spec and
 * an arena with every string and array the spec points to; the owner keeps no pointer into
 * the JSON it was decoded from (except pobj_request, which holds its own reference), so the
 * caller may drop the JSON at once. Call the matching *_release exactly once, also after a
 * failed decode (releasing a zeroed or failed owner is a no-op, and so is a second release).
 * The placement module copies what it keeps, so an owner may be released right after
 * placement_set_node / placement_bind_pod.
 *
 * Errors: 0, -EINVAL with err naming the field and what is wrong, e.g.
 *   status.allocatable.nvidia.com/gpu: invalid quantity "8x"
 * or -ENOMEM ("out of memory"). err may be NULL.
 */
#ifndef MUSTER_PLACEMENT_OBJECTS_H
#define MUSTER_PLACEMENT_OBJECTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "api/engine_objects.h"
#include "api/objects.h"
#include "core/engine.h"
#include "core/placement.h"
#include "core/strmap.h"

#define LABEL_HOSTNAME "kubernetes.io/hostname"
#define ANNOTATION_REQUIRED_TOPOLOGY "kueue.x-k8s.io/podset-required-topology"
#define ANNOTATION_PREFERRED_TOPOLOGY "kueue.x-k8s.io/podset-preferred-topology"
#define ANNOTATION_UNCONSTRAINED_TOPOLOGY "kueue.x-k8s.io/podset-unconstrained-topology"
/* The Job controller's completion index: what Kueue's Job integration names as podIndexLabel. */
#define LABEL_JOB_COMPLETION_INDEX "batch.kubernetes.io/job-completion-index"


/* ------------------------------------------------------------------------------ Node (v1) */

/*
 * name = metadata.name; labels = metadata.labels plus kubernetes.io/hostname=<name> when that
 * label is missing (the kubelet always sets it; simulator inputs often leave it out, and a
 * Topology's hostname level needs it); taints = spec.taints (key and effect required);
 * schedulable = !spec.unschedulable and Ready, where a node is Ready unless it has a Ready
 * condition whose status is not "True" (no conditions at all counts as Ready);
 * allocatable = status.allocatable, or status.capacity when there is none (quantities in
 * milli-units, non-negative).
 */
struct pobj_node {
	struct plc_node_spec spec;
	struct eobj_arena arena;
};
int pobj_node_decode(json_t *node, struct pobj_node *out, char *err, size_t errlen);
void pobj_node_release(struct pobj_node *n);

/*
 * A Node added or changed, into the placement: decoded and set, or, when it can't be decoded
 * or modelled (more than PLC_MAX_GPUS GPUs), refused under its metadata.name with the reason,
 * so that it is out of the model and every "no node layout fits" names it. Returns 0 (in the
 * model), POBJ_NODE_REFUSED with err holding the reason (also placement_node_refusal(p, name):
 * what the manager's Event on the Node says), -EINVAL with err for an object without a
 * readable name (nothing changed), or -ENOMEM. POBJ_NODE_SAME: the placement holds this Node
 * already, or refuses it for the same reason (a heartbeat: nothing changed, nothing to say).
 */
#define POBJ_NODE_REFUSED 1
#define POBJ_NODE_SAME 2
int pobj_node_apply(struct placement *p, json_t *node, char *err, size_t errlen);

/* ------------------------------------------------------------------------------- Pod (v1) */

/*
 * key = "<namespace>/<name>" (default_namespace for an unset metadata.namespace; NULL makes it
 * required); node = spec.nodeName; requests = the effective pod requests of spec
 * (eobj_pod_requests: containers, limits standing in for missing requests, init
 * containers and sidecars, overhead); terminal = status.phase Succeeded or Failed (the caller
 * unbinds those: their requests are free again).
 * Owner: the controller ownerReference of kind Job, apiVersion batch/v1, gives workload
 * "<namespace>/" + workload_name_for_job(name, uid) (an ownerReference without uid stands for
 * uid "<namespace>.<name>", as eobj_workload_from_job assumes for a Job without one) and podset
 * "main", or the value of the pod's kueue.x-k8s.io/podset label when it has one. Other
 * controllers (or none): workload and podset NULL.
 * Returns 0 for a pod bound to a node, POBJ_POD_UNBOUND (spec.node NULL, the rest filled) for
 * one that isn't, or -errno.
 */
#define POBJ_POD_UNBOUND 1
struct pobj_pod {
	struct plc_pod_spec spec;
	int terminal;
	struct eobj_arena arena;
};
int pobj_pod_decode(json_t *pod, const char *default_namespace, struct pobj_pod *out, char *err,
		    size_t errlen);
void pobj_pod_release(struct pobj_pod *p);

/* ------------------------------------------------------------- Topology (kueue v1beta2) */

/* metadata.name; levels = spec.levels[].nodeLabel, outermost first: 1 to 16 label keys,
 * unique, kubernetes.io/hostname only as the last (the CRD's rules). */
struct pobj_topology {
	const char *name;
	size_t n_levels;
	const char *const *levels;
	struct eobj_arena arena;
};
int pobj_topology_decode(json_t *topology, struct pobj_topology *out, char *err, size_t errlen);
void pobj_topology_release(struct pobj_topology *t);

/* ---------------------------------------------------------------------------- catalog */

/*
 * The ResourceFlavors (with spec.topologyName) and Topologies placement requests are built
 * from, kept current by the caller from informer events (or the simulator's inputs). Objects
 * are decoded and copied in; nothing points into the JSON. A flavor may name a Topology that
 * doesn't exist (yet): requests using that flavor fail until it does.
 */
struct pobj_catalog {
	struct strmap flavors; /* name -> private record */
	struct strmap topologies; /* name -> struct pobj_topology * */
};
void pobj_catalog_init(struct pobj_catalog *c);
void pobj_catalog_release(struct pobj_catalog *c);
/* Adds or replaces a ResourceFlavor (eobj_flavor_decode's rules, plus spec.topologyName, a
 * non-empty string when set). On error the catalog is unchanged. */
int pobj_catalog_set_flavor(struct pobj_catalog *c, json_t *rf, char *err, size_t errlen);
void pobj_catalog_remove_flavor(struct pobj_catalog *c, const char *name);
/* Adds or replaces a Topology (pobj_topology_decode's rules). On error, unchanged. */
int pobj_catalog_set_topology(struct pobj_catalog *c, json_t *topology, char *err, size_t errlen);
void pobj_catalog_remove_topology(struct pobj_catalog *c, const char *name);
/* The flavor named, or NULL; *topology_name (if non-NULL) gets its spec.topologyName or NULL.
 * Pointers are the catalog's: valid until that flavor is replaced or removed. */
const struct quota_flavor *pobj_catalog_flavor(const struct pobj_catalog *c, const char *name,
					       const char **topology_name);
const struct pobj_topology *pobj_catalog_topology(const struct pobj_catalog *c, const char *name);

/* --------------------------------------------------------------------------- requests */

/*
 * One admitted podSet as a placement request:
 *   pod       podset_view_decode of the Workload's podSet (per-pod requests, nodeSelector,
 *             required node affinity, tolerations); count = the assignment's count.
 *   flavor    every flavor the assignment gave the podSet, merged as Kueue merges them into
 *             the pod template: the union of their nodeLabels (two flavors giving one label
 *             different values is an error: no node has both) and of their tolerations.
 *             Named after them, joined by "+". Their nodeTaints are left out: the nodes'
 *             own taints decide. A flavor missing from the catalog is an error.
 *   topology  the podSet's topologyRequest (required, preferred, unconstrained), or when it
 *             has none, its pod template's annotations kueue.x-k8s.io/podset-required-topology,
 *             -preferred-topology, -unconstrained-topology ("true"/"false"); at most one of
 *             the three. Levels are those of the Topology that the podSet's flavors name
 *             (spec.topologyName). Unconstrained, or no flavor naming a Topology: topology
 *             NULL. No request but a flavor with a Topology: its levels with neither required
 *             nor preferred (the gang is kept compact where it can be). Errors: a required or
 *             preferred level that isn't a level of that Topology, a level requested while no
 *             flavor names a Topology, a flavor naming a Topology that doesn't exist, two
 *             flavors naming different Topologies.
 * workload_key is copied; podset (the Workload's spec.podSets[i]) is referenced, not copied:
 * the owner holds a reference until released. Errors name the podSet's fields
 * ("topologyRequest.required: ...") and the objects involved.
 */
struct pobj_request {
	struct plc_request req;
	/* Private: what req points to. */
	struct podset_view view;
	struct quota_flavor flavor;
	struct plc_topology topology;
	json_t *podset;
	struct eobj_arena arena;
};
int pobj_request_build(const struct pobj_catalog *c, const char *workload_key, json_t *podset,
		       const struct eng_podset_assignment *pa, enum plc_policy policy,
		       struct pobj_request *out, char *err, size_t errlen);
void pobj_request_release(struct pobj_request *r);

/* A podSet's plan, copied out of the placement (whose own copy changes with the next call). */
struct pobj_podset_plan {
	const char *podset;
	int64_t count; /* pods planned: the assignment's count */
	size_t n_slots;
	const struct plc_slot *slots; /* in fill order; node names owned by the plan */
	const char *domain_level, *domain_value; /* the topology domain it was kept in, or NULL */
};
struct pobj_plan {
	size_t n_podsets;
	struct pobj_podset_plan podsets[18]; /* in the assignment's order */
	struct eobj_arena arena;
	/* No layout (pobj_place_workload returned 1 for a podSet the nodes can't take): the
	 * nodes that come closest (placement_closest), best first, as
	 * [{"podSet","node","pods","free":{resource:quantity},"short":{resource:quantity}}];
	 * NULL otherwise. Owned by the plan. */
	json_t *closest;
};
void pobj_plan_release(struct pobj_plan *plan);

/*
 * The engine's placer (eng_place_fn) made concrete: builds a request for each podSet of the
 * assignment (workload is the Workload object, key its "namespace/name"), and places each
 * with placement_place, so every podSet is planned and reserved with the earlier ones'
 * reservations already counted. Returns
 *   0   every podSet reserved (podSets with count 0 get an empty plan); out filled;
 *   1   no layout for some podSet, or a request that can't be built; msg says which and why,
 *       e.g. "couldn't place pod set main on nodes: <placement's reason>"; nothing stays
 *       reserved (placement_release(key));
 *  -errno  likewise nothing reserved, msg set.
 * out is released and refilled; release it in any case. The caller ends the reservations
 * with placement_release(p, key) when the workload is evicted or finishes.
 */
int pobj_place_workload(struct placement *p, const struct pobj_catalog *c, json_t *workload,
			const char *key, const struct eng_assignment *a, enum plc_policy policy,
			struct pobj_plan *out, char *msg, size_t msg_size);

#endif
