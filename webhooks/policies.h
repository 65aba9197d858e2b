/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The hold without a webhook: the admission policies (admissionregistration.k8s.io/v1, GA in
 * Kubernetes 1.36) that the apiserver runs itself, in CEL, so a queued object is held at
 * create even while muster is down, with no network hop and nothing to time out (a fail-closed
 * webhook blocks every such create while its server is away, kueue#5244).
 *
 * Pure: from what the manager manages to the objects it applies (ctrl/hold.c installs them).
 *
 *   MutatingAdmissionPolicy muster-hold-<plural>  one per integrated owner kind (jobs, rayjobs,
 *       rayclusters): a queued object is created with spec.suspend: true, as the mutating
 *       webhook does (webhooks.h).
 *   MutatingAdmissionPolicy muster-gang-jobs      with gang scheduling: a queued Job that sets
 *       no spec.scheduling is created with schedulingPolicy.gang (minCount left to the Job
 *       controller, which takes parallelism, so it follows partial admission by itself).
 *   MutatingAdmissionPolicy muster-hold-pods      with the pod integration: a queued Pod is
 *       created gated (kueue.x-k8s.io/admission), labelled managed, with the finalizer.
 *   ValidatingAdmissionPolicy muster-queue-name   the queue name is an RFC 1123 subdomain (the
 *       decoders' rule, eobj_is_dns_subdomain, as CEL's format.dns1123Subdomain), for owners
 *       and pods.
 *   ValidatingAdmissionPolicy muster-queue-frozen an owner's queue can't change while it runs
 *       (is not suspended). These two are the checks that need no state; the rest (a kind's
 *       own rules for its Workload, pod groups) stay the validating webhook's, fail open.
 * Each has a binding of the same name. "Queued" is the webhooks' rule: the queue-name label is
 * set and not empty, and no integrated owner controls the object (its owner is held instead).
 * With manageJobsWithoutQueueName, an owner without the label is held too, in the managed
 * namespaces (the binding's namespaceSelector); giving it the queue "default" needs to know
 * whether that LocalQueue exists, which CEL can't, so that stays the webhook's.
 */
#ifndef MUSTER_POLICIES_H
#define MUSTER_POLICIES_H

#include <jansson.h>
#include <stddef.h>

struct integration;

struct policy_inputs {
	const struct integration *const *owners; /* the enabled owner kinds, held by spec.suspend */
	size_t n_owners;
	int pods; /* the pod integration is enabled */
	int gang; /* queued Jobs are created with gang scheduling */
	int manage_without_queue_name;
	json_t *managed_namespaces; /* LabelSelector for manage_without_queue_name (borrowed) */
	/* NULL, or a value of POLICY_PROBE_LABEL: an object with that label is held as a queued
	 * one is, so the manager can see (with a dry-run create) that these very policies are in
	 * force before its webhooks fail open. */
	const char *probe_token;
};

#define POLICY_PROBE_LABEL "muster.kueue.x-k8s.io/hold-probe"

/* Every policy and binding for in, in apply order (each policy before its binding): a new
 * array of whole objects (apiVersion, kind, metadata.name, spec), or NULL on out of memory.
 * in NULL (the hold is the webhook's): an empty array. */
json_t *policies_build(const struct policy_inputs *in);

/* The objects policies_build can make for some configuration but does not for in (NULL:
 * all of them), as [{kind, name}]: what the manager deletes, so that no policy of an earlier
 * configuration goes on holding or refusing. A new array, or NULL on out of memory. */
json_t *policies_unused(const struct policy_inputs *in);

/* What the apiserver serves, as the manager found out at start (ctrl/hold.c). */
struct policy_served {
	/* admissionregistration.k8s.io/v1 mutatingadmissionpolicies */
	int mutating_admission_policy;
	int podgroups; /* scheduling.k8s.io/v1beta1 podgroups and workloads */
	int job_scheduling; /* a Job created with spec.scheduling keeps it (dry run) */
};

/* admissionHold.mode and gangScheduling.mode (api/config.h's enums, as ints to keep this
 * header free of the config) against what is served: *policy (hold by policies, else by
 * webhooks) and *gang (queued Jobs get gang scheduling; only where jobs is 1: batch/job is
 * integrated). 0, or -ENOTSUP with err saying which demand the server can't meet. */
int policies_decide(int hold_mode, int gang_mode, int jobs, const struct policy_served *s,
		    int *policy, int *gang, char *err, size_t errlen);

/* The resource (plural) of a policy object's kind: "mutatingadmissionpolicies", ... */
const char *policies_resource(const char *kind);

#endif
