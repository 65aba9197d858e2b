/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the apiserver is and who we are to it: a kubeconfig file (its current context) or the
 * in-cluster service account. Every credential is held in memory as PEM or text, so libcurl
 * gets blobs and no temporary files are written.
 */
#ifndef MUSTER_KUBECONFIG_H
#define MUSTER_KUBECONFIG_H

#include <stddef.h>

struct kube_config {
	char *server; /* "https://host:port", no trailing slash */
	char *ca_pem; /* CA bundle to verify the server, NULL = system CAs */
	char *cert_pem; /* client certificate, or NULL */
	char *key_pem; /* client key, or NULL */
	char *token; /* bearer token, or NULL */
	char *token_file; /* file the token is re-read from (in-cluster rotation), or NULL */
	int insecure; /* insecure-skip-tls-verify */
	char *namespace_name; /* the context's namespace (in-cluster: the service account's), or
				 NULL */
};

/*
 * Loads the configuration from path; when path is NULL, from $KUBECONFIG, else in-cluster
 * (KUBERNETES_SERVICE_HOST), else ~/.kube/config. Relative file references in a kubeconfig
 * resolve against its directory. Returns 0, or a negative errno with a message in err.
 * On success the caller owns *out and frees it with kube_config_release.
 */
int kube_config_load(const char *path, struct kube_config *out, char *err, size_t errlen);

/*
 * Runs a user's exec credential plugin (client.authentication.k8s.io ExecCredential) once, at
 * load, and takes its token or client certificate. Only for short-lived clients such as the
 * command line: the credential is not renewed when it expires, so a long-running manager
 * refuses exec users instead (they get -ENOTSUP).
 */
#define KUBE_CONFIG_EXEC 1u

/* The same with the context named context instead of the file's current-context (kubectl's
 * --context); context NULL is kube_config_load. A context needs a file: in-cluster, or when
 * the file has no such context, it is -ENOENT. flags: KUBE_CONFIG_EXEC or 0. */
int kube_config_load_context(const char *path, const char *context, unsigned flags,
			     struct kube_config *out, char *err, size_t errlen);

/* Re-reads token_file into token when set. Returns 0 or -errno (the old token stays). */
int kube_config_refresh_token(struct kube_config *cfg);

void kube_config_release(struct kube_config *cfg);

#endif
