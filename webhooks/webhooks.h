/* SPDX-License-Identifier: Apache-2.0 */
/*
 * muster's admission webhooks, as pure functions from an AdmissionReview body to a response
 * body, so they are testable and fuzzable without a server:
 *
 *   /mutate-batch-v1-job        a Job naming a LocalQueue is created suspended
 *   /validate-batch-v1-job      queue-name format; the queue can't change while a Job runs
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

/*
 * Handles one webhook call. Returns the HTTP status (200 with a review response for every
 * well-formed review, allowed or not; 400 for a body that is not a review; 404 for an unknown
 * path) and stores a new malloc'd body in *out (NULL on out of memory).
 */
int webhook_handle(const char *path, const char *body, size_t len, char **out);

#endif
