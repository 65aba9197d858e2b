/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/kubeconfig.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/base64.h"
#include "util/yamljson.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define MAX_FILE (1u << 20)

static void errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Reads a small file whole. Returns a NUL-terminated string the caller frees, or NULL. */
static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *data = malloc(MAX_FILE + 1);
	size_t n = data ? fread(data, 1, MAX_FILE + 1, f) : 0;
	fclose(f);
	if (!data || n > MAX_FILE) {
		free(data);
		return NULL;
	}
	data[n] = '\0';
	return data;
}

static char *trim_dup(const char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
		n--;
	return strndup(s, n);
}

/* Finds the entry named name in a kubeconfig list such as clusters[] and returns its `key`. */
static json_t *named(json_t *root, const char *list, const char *name, const char *key)
{
	json_t *arr = json_object_get(root, list), *item;
	size_t i;
	json_array_foreach(arr, i, item)
	{
		const char *n = json_string_value(json_object_get(item, "name"));
		if (n && !strcmp(n, name))
			return json_object_get(item, key);
	}
	return NULL;
}

/* Loads a credential given inline as base64 (data_key) or as a file path (file_key). */
static int credential(json_t *obj, const char *data_key, const char *file_key, const char *dir,
		      char **out, char *err, size_t errlen)
{
	const char *data = json_string_value(json_object_get(obj, data_key));
	const char *file = json_string_value(json_object_get(obj, file_key));
	*out = NULL;
	if (data) {
		*out = base64_decode(data, NULL);
		if (!*out) {
			errf(err, errlen, "kubeconfig: %s is not valid base64", data_key);
			return -EINVAL;
		}
	} else if (file) {
		char path[4096];
		if (file[0] == '/')
			snprintf(path, sizeof(path), "%s", file);
		else
			snprintf(path, sizeof(path), "%s/%s", dir, file);
		*out = read_file(path);
		if (!*out) {
			errf(err, errlen, "kubeconfig: cannot read %s %s", file_key, path);
			return -ENOENT;
		}
	}
	return 0;
}

static int load_in_cluster(struct kube_config *cfg, char *err, size_t errlen)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	char server[512];

	if (strchr(host, ':')) /* IPv6 literal */
		snprintf(server, sizeof(server), "https://[%s]:%s", host, port ? port : "443");
	else
		snprintf(server, sizeof(server), "https://%s:%s", host, port ? port : "443");
	cfg->server = strdup(server);
	cfg->ca_pem = read_file(SA_DIR "/ca.crt");
	cfg->token_file = strdup(SA_DIR "/token");
	if (!cfg->server || !cfg->ca_pem || !cfg->token_file) {
		errf(err, errlen, "in-cluster: cannot read %s", SA_DIR);
		return -ENOENT;
	}
	/* Optional: only clients that default a namespace (kubectl's way) look at it. */
	char *ns = read_file(SA_DIR "/namespace");
	cfg->namespace_name = ns ? trim_dup(ns) : NULL;
	free(ns);
	return kube_config_refresh_token(cfg);
}

static int load_file(const char *path, const char *context, struct kube_config *cfg, char *err,
		     size_t errlen)
{
	struct yamljson_error yerr;
	json_t *docs = NULL;
	char dir[4096];
	int rc = yamljson_load_file(path, &docs, &yerr);
	if (rc != 0) {
		errf(err, errlen, "kubeconfig %s:%d: %s", path, yerr.line, yerr.text);
		return rc;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");

	json_t *root = json_array_get(docs, 0);
	const char *ctx_name = context ? context :
					 json_string_value(json_object_get(root, "current-context"));
	json_t *ctx = ctx_name ? named(root, "contexts", ctx_name, "context") : NULL;
	const char *cluster_name = json_string_value(json_object_get(ctx, "cluster"));
	const char *user_name = json_string_value(json_object_get(ctx, "user"));
	json_t *cluster = cluster_name ? named(root, "clusters", cluster_name, "cluster") : NULL;
	json_t *user = user_name ? named(root, "users", user_name, "user") : NULL;
	const char *server = json_string_value(json_object_get(cluster, "server"));

	const char *ns = json_string_value(json_object_get(ctx, "namespace"));

	rc = -EINVAL;
	if (context && !ctx) {
		errf(err, errlen, "kubeconfig %s: context \"%s\" not found", path, context);
		rc = -ENOENT;
		goto out;
	}
	if (!ctx || !cluster || !server) {
		errf(err, errlen, "kubeconfig %s: no usable current-context with a cluster server", path);
		goto out;
	}
	cfg->server = strdup(server);
	if (!cfg->server || (ns && *ns && !(cfg->namespace_name = strdup(ns)))) {
		rc = -ENOMEM;
		goto out;
	}
	size_t n = strlen(cfg->server);
	while (n && cfg->server[n - 1] == '/')
		cfg->server[--n] = '\0';
	cfg->insecure = json_is_true(json_object_get(cluster, "insecure-skip-tls-verify"));
	if ((rc = credential(cluster, "certificate-authority-data", "certificate-authority", dir,
			     &cfg->ca_pem, err, errlen)) != 0)
		goto out;
	if (user) {
		if ((rc = credential(user, "client-certificate-data", "client-certificate", dir,
				     &cfg->cert_pem, err, errlen)) != 0)
			goto out;
		if ((rc = credential(user, "client-key-data", "client-key", dir, &cfg->key_pem, err,
				     errlen)) != 0)
			goto out;
		const char *token = json_string_value(json_object_get(user, "token"));
		const char *token_file = json_string_value(json_object_get(user, "tokenFile"));
		if (token && !(cfg->token = strdup(token))) {
			rc = -ENOMEM;
			goto out;
		}
		if (token_file) {
			cfg->token_file = strdup(token_file);
			if (!cfg->token_file || (rc = kube_config_refresh_token(cfg)) != 0) {
				errf(err, errlen, "kubeconfig: cannot read tokenFile %s", token_file);
				rc = -ENOENT;
				goto out;
			}
		}
		if (json_object_get(user, "exec") || json_object_get(user, "auth-provider")) {
			errf(err, errlen, "kubeconfig %s: exec and auth-provider credentials are not supported",
			     path);
			rc = -ENOTSUP;
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(docs);
	return rc;
}

int kube_config_load(const char *path, struct kube_config *out, char *err, size_t errlen)
{
	return kube_config_load_context(path, NULL, out, err, errlen);
}

int kube_config_load_context(const char *path, const char *context, struct kube_config *out,
			     char *err, size_t errlen)
{
	char home_path[4096];
	int rc;

	memset(out, 0, sizeof(*out));
	errf(err, errlen, "out of memory");
	if (!path) {
		const char *env = getenv("KUBECONFIG");
		const char *home = getenv("HOME");
		if (env && *env) {
			/* A colon-separated list merges files in client-go; we take the first. */
			snprintf(home_path, sizeof(home_path), "%s", env);
			char *colon = strchr(home_path, ':');
			if (colon)
				*colon = '\0';
			path = home_path;
		} else if (getenv("KUBERNETES_SERVICE_HOST")) {
			if (context) {
				errf(err, errlen, "context \"%s\" not found: in-cluster, no kubeconfig",
				     context);
				return -ENOENT;
			}
			rc = load_in_cluster(out, err, errlen);
			goto done;
		} else if (home) {
			snprintf(home_path, sizeof(home_path), "%s/.kube/config", home);
			path = home_path;
		} else {
			errf(err, errlen, "no kubeconfig: set --kubeconfig or KUBECONFIG");
			return -ENOENT;
		}
	}
	rc = load_file(path, context, out, err, errlen);
done:
	if (rc != 0)
		kube_config_release(out);
	return rc;
}

int kube_config_refresh_token(struct kube_config *cfg)
{
	if (!cfg->token_file)
		return 0;
	char *raw = read_file(cfg->token_file);
	if (!raw)
		return -EIO;
	char *token = trim_dup(raw);
	free(raw);
	if (!token)
		return -ENOMEM;
	free(cfg->token);
	cfg->token = token;
	return 0;
}

void kube_config_release(struct kube_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->server);
	free(cfg->ca_pem);
	free(cfg->cert_pem);
	free(cfg->key_pem);
	free(cfg->token);
	free(cfg->token_file);
	free(cfg->namespace_name);
	memset(cfg, 0, sizeof(*cfg));
}
