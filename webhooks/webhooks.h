/* SPDX-License-Identifier: Apache-2.0 */
/*
 * muster's admission webhooks, as pure functions from an AdmissionReview body to a response
 * body, so they are testable and fuzzable without a server:
 *
 *   /mutate-<group>-<version>-<kind>, e.g. /mutate-batch-v1-job, /mutate-ray-io-v1-rayjob
 *                               an object of an integrated kind (api/integrations.h) naming a
 *                               LocalQueue is created held (spec.suspend)
 *   /validate-<group>-<version>-<kind>
 *                               queue-name format; on create, the kind's own rules for building
 *                               its Workload; the queue can't change while the object runs
 *   /mutate--v1-pod             a queued Pod (not one an integrated owner made) is created
 *                               gated (kueue.x-k8s.io/admission), labelled managed, with the
 *                               managed finalizer, as Kueue's pod integration does
 *   /validate--v1-pod           queue-name format; a pod group's name and total count
 *   /validate-kueue-x-k8s-io-v1beta2-clusterqueue
 *                               the ClusterQueue decoder's rules (eobj_cq_decode): besides the
 *                               CRD's, quantities within muster's exact range, each resource
 *                               and flavor in one group only
 */
#ifndef MUSTER_WEBHOOKS_H
#define MUSTER_WEBHOOKS_H

#include <stddef.h>

#define WEBHOOK_PATH_MUTATE_JOB "/mutate-batch-v1-job"
#define WEBHOOK_PATH_VALIDATE_JOB "/validate-batch-v1-job"
#define WEBHOOK_PATH_VALIDATE_CQ "/validate-kueue-x-k8s-io-v1beta2-clusterqueue"
#define WEBHOOK_PATH_MUTATE_POD "/mutate--v1-pod"
#define WEBHOOK_PATH_VALIDATE_POD "/validate--v1-pod"

struct integration;
struct admission_request;
/* The path of an integrated kind's mutating (mutate 1) or validating webhook. */
void webhook_owner_path(const struct integration *in, int mutate, char *buf, size_t size);
/* pod.c's handlers (webhook_handle dispatches to them). */
char *webhook_mutate_pod(const struct admission_request *req);
char *webhook_validate_pod(const struct admission_request *req);
/* The queue-name label's rule: 0, or -EINVAL with the denial message in msg. */
int webhook_check_queue_name(const char *queue, char *msg, size_t size);

/* What the owner webhooks need to know of the cluster and the configuration (NULL: an object
 * without the queue label is never touched). */
struct webhook_context {
	/* manageJobsWithoutQueueName: an owner without the label is created held too, in a
	 * namespace muster manages (namespace_managed), with the queue "default" when the
	 * namespace has a LocalQueue of that name (Kueue's LocalQueue defaulting). */
	int manage_without_queue_name;
	int (*namespace_managed)(void *arg, const char *ns);
	int (*has_local_queue)(void *arg, const char *ns, const char *name);
	void *arg;
	/* Gang scheduling (ctrl/hold.c decides): a queued kind with Job's spec.scheduling that
	 * sets none is created with schedulingPolicy.gang, as the muster-gang-jobs policy does
	 * (webhooks/policies.h) where policies hold. */
	int gang;
};

/*
 * Handles one webhook call. Returns the HTTP status (200 with a review response for every
 * well-formed review, allowed or not; 400 for a body that is not a review; 404 for an unknown
 * path) and stores a new malloc'd body in *out (NULL on out of memory).
 */
int webhook_handle(const char *path, const char *body, size_t len,
		   const struct webhook_context *ctx, char **out);

#endif
