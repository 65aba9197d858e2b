/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The webhook CA and serving key pair kept in a Secret, so that every replica of the manager
 * serves with the same certificate and the caBundle in the webhook configurations holds for
 * all of them (internalCertManagement.webhookSecretName). The Secret is of type
 * kubernetes.io/tls with data ca.crt, tls.crt and tls.key (base64, as Secrets are).
 *
 * At start each replica gets the Secret; if it is absent it generates a set (net/certs.h) and
 * creates it; if another replica created it first (409) it gets it again and uses theirs. A
 * Secret whose set is unusable (expiring within CERTS_RENEW_BEFORE_DAYS, wrong names, broken)
 * is replaced with an update guarded by its resourceVersion, so of two replicas replacing it
 * at once one wins and the other reads the winner's. Needs get, create and update on secrets in
 * that namespace (config/rbac/role.yaml).
 */
#ifndef MUSTER_CERT_SECRET_H
#define MUSTER_CERT_SECRET_H

#include <jansson.h>
#include <uv.h>

#include "kube/client.h"
#include "net/certs.h"

/* Transport errors and 5xx/429 answers are retried this often, a second apart. */
#define CERT_SECRET_MAX_ATTEMPTS 10

/* The Secret for c (copied), as a new object; NULL when out of memory. */
json_t *cert_secret_build(const char *ns, const char *name, const struct certs *c);

/* The set a Secret holds, into *out (release it with certs_release): 0, -EINVAL when a field is
 * missing or not base64 (out left empty), or -ENOMEM. Does not judge the certificates: see
 * certs_check. */
int cert_secret_parse(json_t *secret, struct certs *out);

/*
 * Gets or creates the Secret ns/name holding a set valid for dns_names (NULL-terminated), as
 * described above, running loop until it is settled: call it before the loop serves anything.
 * Returns 0 with *out filled, or a negative errno (-EACCES for 401/403, -EIO for other refusals
 * or when the attempts run out), with the reason logged.
 */
int cert_secret_sync(uv_loop_t *loop, struct kube_client *kube, const char *ns, const char *name,
		     const char *const *dns_names, struct certs *out);

#endif
