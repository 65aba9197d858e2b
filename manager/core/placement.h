/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Placement: where an admitted gang's pods should run, so that GPUs don't fragment. The
 * manager feeds it from Node and Pod informers and turns its plans into node-affinity hints
 * for the stock kube-scheduler; `muster simulate` and `muster replay-openb` feed it from
 * files. Both get the same answers because this is the only place they are made.
 *
 * Model (names are copied; the caller keeps ownership of everything it passes in):
 *   Node         allocatable, labels, taints, schedulable (not cordoned and Ready)
 *   Bound pod    its node, its requests, and the workload/podSet it belongs to (if any)
 *   Reservation  a plan kept for an admitted workload whose pods are not bound yet
 * Free capacity of a node = allocatable - requests of bound pods - reservations on it. A
 * reservation shrinks as the workload's pods bind (on the planned node, or else on the last
 * node of its plan), and ends with placement_release (finished, evicted or deleted).
 *
 * GPUs (the resource named by placement_set_gpu_resource, "nvidia.com/gpu" by default) are
 * tracked one by one, as the FGD paper (USENIX ATC '23) does: a pod asking for less than one
 * GPU (in milli-units, < 1000) shares one GPU with others; a pod asking for one or more takes
 * whole GPUs (an amount that isn't a whole number is rounded up). Every other resource is a
 * plain sum. A node may have any number of GPUs up to PLC_MAX_GPUS: the NVIDIA device plugin's
 * MIG "single" strategy shows each slice as one GPU (56 on an 8 x H100 node), and a
 * fragmentation state costs the number of distinct free amounts, not of GPUs (placement.c).
 *
 * Refused nodes. A node the model can't hold (more than PLC_MAX_GPUS GPUs, a malformed spec;
 * or one the caller couldn't decode, placement_refuse_node) is taken out of the model and
 * remembered with the reason until it is set again successfully or removed. Every "no node
 * layout fits" message names them ("...; node n7 not used: <reason>"), and
 * placement_node_refusal gives the reason for one (the manager's Event on the Node).
 *
 * Plans (placement_plan) choose, for one podSet of `count` identical pods, nodes that take all
 * of them at once, or say why none do. Only nodes the pods may run on are considered: the
 * flavor's nodeLabels, the pod's nodeSelector and required node affinity, and NoSchedule /
 * NoExecute taints tolerated by the flavor's and the pod's tolerations. Labels are matched
 * against the node's own: a key the node lacks fails In, Exists, Gt and Lt and passes NotIn
 * and DoesNotExist. matchFields can't be judged (struct quota_affinity_term only says they
 * exist), so a term is judged by its matchExpressions alone: a term with only matchFields
 * matches every node, and kube-scheduler keeps the final say.
 *   PLC_MUSTER    the default. Gangs go on the fewest nodes, filling the fullest ones first,
 *                 within one topology domain when they fit in one (the most specific level
 *                 that fits; a required level must fit). Between equally good choices, the
 *                 one that fragments the expected mix of future pods least wins (the FGD
 *                 measure over placement_set_mix's shapes). Pods asking for no GPU stay off
 *                 GPU nodes when other nodes fit. A single pod goes where the FGD measure
 *                 grows least, with a small pull towards fuller nodes (placement.c says
 *                 why), best fit breaking ties, within the most specific topology level its
 *                 node is labelled for.
 *   PLC_BEST_FIT  baseline, the FGD paper's BestFit: each pod on the feasible node with the
 *                 least 0.5 * cpu left / most cpu of a node + 0.5 * GPU left / most GPUs.
 *   PLC_SPREAD    baseline: kube-scheduler's LeastAllocated (cpu and memory): the emptiest.
 *   PLC_RANDOM    baseline: a uniformly random feasible node (seeded: placement_set_seed).
 * Baselines place pods one by one and ignore topology; they exist for comparison.
 *
 * Errors are negative errno values; placement_plan returns 1 for "no layout". Nothing here
 * does I/O. One thread at a time.
 */
#ifndef MUSTER_PLACEMENT_H
#define MUSTER_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "core/quota.h"

/* Not a hardware limit (servers have up to 16 GPUs, 7 MIG slices each under the "single"
 * strategy): a bound on what one node record and one pod's GPU record may cost, so that an
 * absurd allocatable is refused rather than allocated. */
#define PLC_MAX_GPUS 1024
/* Longest reason placement_set_node gives for a refusal, with its NUL. */
#define PLC_REFUSAL_MAX 256

struct placement;

struct plc_node_spec {
	const char *name;
	size_t n_labels;
	const struct quota_kv *labels;
	size_t n_taints;
	const struct quota_taint *taints;
	int schedulable; /* 0: spec.unschedulable or not Ready; it keeps its pods but gets none */
	size_t n_resources;
	const char *const *resources; /* allocatable */
	const int64_t *allocatable; /* milli-units, one per resource */
};

struct plc_pod_spec {
	const char *key; /* "namespace/name", unique */
	const char *node; /* bound to */
	size_t n_resources;
	const char *const *resources;
	const int64_t *requests; /* milli-units per resource (effective pod requests) */
	const char *workload; /* owning workload key, or NULL */
	const char *podset; /* its podSet within that workload, or NULL */
};

enum plc_policy { PLC_MUSTER, PLC_BEST_FIT, PLC_SPREAD, PLC_RANDOM };

/* Topology, from the flavor's Topology object and the podSet's Kueue annotations. */
struct plc_topology {
	size_t n_levels;
	const char *const *levels; /* node label keys, outermost first (zone, rack, hostname) */
	const char *required; /* podset-required-topology: a level the gang must fit within */
	const char *preferred; /* podset-preferred-topology: try this level, then wider ones */
};

struct plc_request {
	const char *workload; /* for messages and for placement_reserve */
	const char *podset;
	int64_t count; /* pods */
	const struct quota_podset *pod; /* per-pod requests and node constraints (count ignored) */
	const struct quota_flavor *flavor; /* NULL: no flavor constraints */
	const struct plc_topology *topology; /* NULL: none */
	enum plc_policy policy;
};

struct plc_slot {
	const char *node; /* the placement's copy: valid until the node is removed */
	int64_t count;
};

/* A plan: slots in the order the pods should fill them. The domain is set when the gang was
 * kept within one topology domain (level label key and its value), else both are NULL. */
struct plc_plan {
	size_t n_slots;
	struct plc_slot *slots;
	const char *domain_level;
	const char *domain_value;
};

/* A shape of pod expected in future (FGD's target workload), with its relative weight. */
struct plc_shape {
	int64_t cpu; /* milli-cpu */
	int64_t gpu; /* milli-GPU: < 1000 a share of one GPU, else whole GPUs */
	double weight;
};

int placement_new(struct placement **out);
void placement_free(struct placement *p);

/* The GPU resource's name (copied). Set before adding nodes. 0 or -errno. */
int placement_set_gpu_resource(struct placement *p, const char *name);
/* The expected mix of future pods (copied); an empty mix makes PLC_MUSTER break ties by best
 * fit alone. 0 or -errno. */
int placement_set_mix(struct placement *p, const struct plc_shape *shapes, size_t n);
void placement_set_seed(struct placement *p, uint64_t seed);

/* Adds or replaces a node (its bound pods and reservations stay), and forgets an earlier
 * refusal of it. A node with more than PLC_MAX_GPUS GPUs, a negative amount or a missing
 * name or key is refused: taken out as by placement_remove_node and remembered with the
 * reason (placement_node_refusal), -EINVAL. -EINVAL without a node name; -ENOMEM. */
int placement_set_node(struct placement *p, const struct plc_node_spec *node);
/* Removes a node, and forgets a refusal of it; the reservations' pods planned on it are
 * dropped. Its bound pods stop counting but are remembered, as pods on an unknown node, until
 * unbound (they count again if the node comes back). */
void placement_remove_node(struct placement *p, const char *name);
/* Takes a node out as placement_remove_node does, but remembers why (copied): for a Node the
 * caller couldn't decode, so that plans can say what they are missing. 0 or -errno. */
int placement_refuse_node(struct placement *p, const char *name, const char *reason);
/* Why the node is out of the model, or NULL when it isn't refused. Valid until the next call
 * that sets, refuses or removes that node. */
const char *placement_node_refusal(const struct placement *p, const char *name);
/* Whether the node is in the model exactly as spec says it (labels and taints in the same
 * order, schedulable, allocatable): setting it again would change nothing. A node's updates
 * are mostly heartbeats; the placement is where its fields are kept, so it is what they are
 * compared with. */
int placement_node_same(const struct placement *p, const struct plc_node_spec *spec);
/* The value of a node's label (the model's: kubernetes.io/hostname is its name when the Node
 * has none), borrowed until the node is next set or removed; NULL for no such label or no such
 * node in the model. */
const char *placement_node_label(const struct placement *p, const char *node, const char *key);

/* Adds or replaces a pod bound to a node (a pod on an unknown node is remembered and counts
 * once the node appears). A pod with a workload and podset takes the place of one of that
 * podSet's reserved pods, once (updates of the same pod don't take another): the one planned
 * on its node, else the one on the plan's last slot. */
int placement_bind_pod(struct placement *p, const struct plc_pod_spec *pod);
/* The pod is gone or terminal: its requests are free again. */
void placement_unbind_pod(struct placement *p, const char *key);

/* Plans a podSet. 0 with *out filled, 1 when no layout fits all `count` pods now (why, if
 * non-NULL, says what fits at most and where), or -errno. Planning reserves nothing.
 * Ownership: out->slots and out->domain_level/value belong to the placement and are valid
 * until the next placement_plan or placement_place call; each slot's node name is valid until
 * that node is removed. */
int placement_plan(struct placement *p, const struct plc_request *req, struct plc_plan *out,
		   char *why, size_t why_size);

/* Keeps a plan's capacity for workload/podset until its pods bind or placement_release.
 * Replaces an earlier reservation of the same podSet. Pods of the podSet already bound take
 * their places in it at once (so a plan for the whole podSet never holds them twice).
 * 0, -ENOENT when a slot names an unknown node (nothing reserved), or -errno. */
int placement_reserve(struct placement *p, const char *workload, const char *podset,
		      const struct quota_podset *pod, const struct plc_plan *plan);
/* Ends every reservation of a workload (its bound pods still count until unbound). */
void placement_release(struct placement *p, const char *workload);

/* Plans and reserves in one step: what the admission hook does. Same results as
 * placement_plan. */
int placement_place(struct placement *p, const struct plc_request *req, struct plc_plan *out,
		    char *why, size_t why_size);

/* --- observation (status, replay output, tests) ------------------------------------------ */

struct plc_node_usage {
	int schedulable;
	int gpus; /* GPUs on the node */
	int64_t gpu_free; /* milli-GPU free, after bound pods and reservations */
	int whole_free_gpus; /* GPUs with nothing on them */
	int64_t cpu_free, memory_free; /* milli-units, after bound pods and reservations */
};
int placement_node_usage(const struct placement *p, const char *node, struct plc_node_usage *out);
/* The free milli of each of the node's GPUs (up to max of them) after bound pods and
 * reservations; below 0 only if bound pods overcommit it. The number of GPUs, or -ENOENT. */
int placement_node_gpus(const struct placement *p, const char *node, int64_t *free_milli,
			size_t max);

struct plc_totals {
	size_t nodes;
	int64_t gpu_capacity; /* milli-GPU on schedulable nodes */
	int64_t gpu_allocated; /* of that, milli-GPU taken by bound pods and reservations */
	size_t free_whole_nodes; /* schedulable GPU nodes with every GPU free */
	size_t free_8gpu_nodes; /* schedulable nodes with >= 8 GPUs, every one free */
};
void placement_totals(const struct placement *p, struct plc_totals *out);

/* --- explanation (the visibility endpoint) -------------------------------------------------- */

/* At most this many nodes in placement_closest's answer. */
#define PLC_CLOSEST_MAX 5

/* A node that comes close to taking a request it can't take (see placement_closest). */
struct plc_closest {
	const char *node; /* the placement's copy: valid until the node is removed */
	int64_t pods; /* pods of the request it can take now (at most the count) */
	double share; /* of the next pod's requests, the share the node has free after those
		       * pods, for its scarcest resource: 0..1 (1 when pods == count) */
	size_t n; /* the request's resources with a positive amount, each once */
	const char *resources[QUOTA_MAX_RESOURCES]; /* req's names (the caller's strings) */
	int64_t free[QUOTA_MAX_RESOURCES]; /* milli-units free now; the GPU resource: the
					    * milli-GPU free over all its GPUs */
	int64_t short_by[QUOTA_MAX_RESOURCES]; /* what it lacks to take one pod more than
						* `pods` (0: enough, or pods == count). GPUs:
						* whole GPUs (x 1000) for pods asking for one
						* or more, else the milli one GPU lacks */
};

/* For a request no node layout fits: the nodes its pods may run on (same filters as
 * placement_plan) that come closest to taking it, best first: the most pods of it they can
 * take now, then the largest share of the next pod, then the most free milli-GPU, then by
 * name. Topology is not considered (a node's own capacity is what it lacks). Fills up to
 * min(max, PLC_CLOSEST_MAX) entries of out and returns how many, or -EINVAL for a request
 * placement_plan would refuse (or one naming more than QUOTA_MAX_RESOURCES resources),
 * -ENOMEM. Changes nothing. */
int placement_closest(const struct placement *p, const struct plc_request *req,
		      struct plc_closest *out, size_t max);

#endif
