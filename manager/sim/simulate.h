/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `muster simulate FILE...`: the admission engine with no cluster. It reads Kueue objects,
 * Namespaces and Jobs from YAML or JSON files, runs admission to a fixed point (preemption
 * victims are evicted at once, nothing finishes) and prints what became of every Workload and
 * ClusterQueue as JSON lines. The engine is the one the manager uses (core/engine.h) and the
 * objects are decoded by the manager's decoders (api/engine_objects.h), so a simulation
 * answers what the manager would do with the same objects.
 *
 * Input: any number of documents per file, of these kinds:
 *   kueue.x-k8s.io/v1beta2  ResourceFlavor, ClusterQueue, Cohort, LocalQueue,
 *                           WorkloadPriorityClass, Topology, Workload
 *   scheduling.k8s.io/v1    PriorityClass (for Jobs' priorityClassName)
 *   v1                      Namespace, Node, Pod, and List (its items are read as documents)
 *   batch/v1                Job (converted to its Workload as the manager converts it)
 *   config.kueue.x-k8s.io/v1beta2  Configuration, at most one: the manager's configuration
 *                           file, read by the manager's parser (api/config.h). Only its
 *                           fairSharing and admissionFairSharing act here; its other fields are
 *                           checked as the manager checks them and otherwise ignored.
 * A namespaced object without metadata.namespace is in "default", as with kubectl. A namespace
 * used but not given exists with only its kubernetes.io/metadata.name label. A Workload without
 * creationTimestamp is created after every one that has one, in input order.
 *
 * Fair sharing (a Configuration with fairSharing) orders admission and preemption in a cohort
 * by share, with ClusterQueues' and Cohorts' spec.fairSharing.weight (core/engine.h). Admission
 * fair sharing (with admissionFairSharing) orders the workloads of a ClusterQueue with
 * admissionScope UsageBasedAdmissionFairSharing by their LocalQueue's usage, with LocalQueues'
 * spec.fairSharing.weight and status.fairSharing.admissionFairSharingStatus (the usage as of
 * its lastUpdate, as a manager restarting from it). The simulation has no clock of its own:
 * its "now" is the latest time the input states (Workloads' and Jobs' creationTimestamp and
 * conditions' lastTransitionTime, LocalQueues' lastUpdate). Before the first cycle usage is
 * sampled once at that now, so a LocalQueue's consumed usage decays over now - lastUpdate
 * toward what its admitted Workloads hold; no further sampling happens during the run (it
 * takes no time), though each admission adds its entry penalty at once.
 *
 * Nodes turn on placement (core/placement.h, decoded by api/placement_objects.h): the
 * engine's placer plans and reserves nodes for every gang the quota admits (policy
 * PLC_MUSTER), and a gang without a node layout stays pending. Pods bound to a given Node
 * (spec.nodeName) and not Succeeded/Failed take their requests from it; unbound Pods are
 * ignored; a Pod bound to a Node not given is invalid input. Topology objects and
 * ResourceFlavors' spec.topologyName give topology requests their levels. Preemption evicts
 * at once: the victim's reservation ends and its Job's Pods go. Admitted Workloads given as
 * input hold nodes only through their bound Pods. Without Nodes, Pods, Topologies and
 * topologyName change nothing.
 *
 * Output, one compact JSON object per line: every Workload sorted by namespace/name, then
 * every ClusterQueue sorted by name, then with fair sharing every Cohort sorted by name, then
 * with admission fair sharing every LocalQueue sorted by namespace/name (see sim_run for the
 * fields). Without a Configuration turning them on, the output is what it always was.
 *
 * Exit status: SIM_OK; SIM_INVALID for invalid input, with "FILE:LINE: what" lines on errout
 * (every problem found, not only the first); SIM_FAILED when the run itself fails.
 */
#ifndef MUSTER_SIMULATE_H
#define MUSTER_SIMULATE_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#define SIM_OK 0
#define SIM_FAILED 1
#define SIM_INVALID 2

/* One input file's bytes; name is what messages call it. */
struct sim_input {
	const char *name;
	const char *data;
	size_t len;
	/* data is a private read-only mapping of a file (sim_main's): pages the reader is done
	 * with are dropped as it goes (they come back from the file if read again), so a large
	 * export doesn't stay resident. */
	int mapped;
};

/*
 * The same kinds already parsed, as a manager's informer stores hold them (the forecast,
 * sim/forecast.h, takes them so): each NULL, a JSON array of objects, or a JSON object whose
 * values are the objects (a store, key -> object). Borrowed. apiVersion and kind may be absent:
 * the slot says what an object is. Integrated kinds (Jobs) are not read: their Workloads are
 * among the workloads; for the same reason unbound Pods make no Workloads, and Pods count only
 * when bound to a given Node.
 */
struct sim_objects {
	json_t *flavors, *cohorts, *cluster_queues, *local_queues, *namespaces;
	json_t *workload_priority_classes, *priority_classes, *topologies;
	json_t *workloads, *nodes, *pods;
	/* The manager's configuration, for its fairSharing and admissionFairSharing (NULL: both
	 * off). Borrowed: it must outlive the run and not change during it. */
	const struct eng_fair_sharing *fair_sharing;
	const struct eng_admission_fair_sharing *admission_fair_sharing;
};

/*
 * Simulates the inputs and writes the result to out, problems to errout. Returns an exit
 * status. Output lines:
 *   {"kind":"Workload","namespace":N,"name":N,"admitted":B,"clusterQueue":S|null,
 *    "podSets":[{"name":S,"count":N,"flavors":{resource:flavor,...}[,"placement":[...]]}],
 *    "preempted":B,"reason":S,"message":S}
 *   {"kind":"ClusterQueue","name":S,"pendingWorkloads":N,"admittedWorkloads":N,
 *    "flavorsUsage":[{"name":flavor,"resources":[{"name":S,"total":Q,"borrowed":Q}]}]
 *    [,"weightedShare":N]}
 *   {"kind":"Cohort","name":S,"weightedShare":N}
 *   {"kind":"LocalQueue","namespace":S,"name":S,"consumedResources":{resource:Q,...},
 *    "usage":X}
 * An admitted Workload lists its admitted counts and flavors (resources sorted by name, as
 * Kubernetes prints a map), clusterQueue, reason "Admitted" (no admission checks, so quota
 * reservation is admission) and "Admitted by ClusterQueue X". A pending one lists its
 * requested counts, empty flavors, clusterQueue null and the reason of its QuotaReserved
 * condition, one of the engine's ENG_WHY_* reasons (core/engine.h: Kueue v0.20's tokens,
 * "WaitingForQuota", "Misconfigured", ...), with the engine's message; while a
 * workload it evicted waits: "Preempted" (Kueue's message, "Preempted to accommodate ns/name
 * due to ...", then what it waits for) or the Evicted reason of a HoldAndDrain stop
 * ("ClusterQueueStopped", "LocalQueueStopped"). Not given to the engine: "Deactivated"
 * (spec.active false), "Finished" (holds no quota), "Misconfigured" without spec.queueName,
 * "WaitingForPods" for a pod group short of pods.
 * "preempted" is true for a Workload preempted during the run, even if admitted again since.
 * "placement" (only with Nodes, only for podSets the run admitted) is the plan, in the order
 * the pods fill it: [{"node":S,"count":N},...]; a podSet of 0 pods has [].
 * ClusterQueue usage lists every flavor and resource of the spec, in spec order, total and
 * borrowed in canonical quantities (quota_format_amount).
 * weightedShare (only with fair sharing) is Kueue's status.fairSharing.weightedShare after the
 * run (engine_cq_share, engine_cohort_share): the dominant resource share in per mille over the
 * weight, rounded up; 9223372036854775807 for a weight-0 node that borrows. Cohort lines (only
 * with fair sharing) cover every cohort given or named by a ClusterQueue or as a parent.
 * LocalQueue lines (only with admission fair sharing) are Kueue's
 * status.fairSharing.admissionFairSharingStatus after the run: consumedResources sorted by
 * resource, as decimal quantities rounded to the nearest milli-unit ("1500m"); usage the
 * weighted, decayed usage that orders its workloads (engine_afs_status), as a JSON real in
 * the fewest decimals that read back exactly ("10.0", "2.109101281859661"; %g form only
 * when very small or large), or null when infinite (weight 0).
 */
int sim_run(const struct sim_input *inputs, size_t n, FILE *out, FILE *errout);

/* `muster simulate [--help] FILE...`: reads the files ("-" is stdin) and calls sim_run. */
int sim_main(int argc, char **argv);

#endif
