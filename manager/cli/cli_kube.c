/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client's two connections: the apiserver, with the user's kubeconfig, and muster's
 * endpoint, either a URL of its own (no credentials: the kubeconfig's are for the apiserver)
 * or the apiserver again, which an APIService makes route the visibility groups to muster.
 * Both are the project's kube client, each request run to its end (kube_request_sync).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/integrations.h"
#include "api/objects.h"
#include "cli/cli_internal.h"

#define MAX_CA_FILE ((size_t)1 << 20)
/* What kube-apiserver answers for a path no API group serves: here, the visibility groups
 * without muster's APIService. */
#define NO_SUCH_RESOURCE "the server could not find the requested resource"

int cli_failf(struct cli *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->error, sizeof(c->error), fmt, ap);
	va_end(ap);
	return cli_fail(c);
}

int cli_fail(struct cli *c)
{
	char *clean = cli_sanitize(c->error);
	fprintf(c->err, "error: %s\n", clean ? clean : "out of memory");
	free(clean);
	return CLI_EXIT_FAILED;
}

int cli_query_append(char *path, size_t size, const char *key, const char *value)
{
	size_t len = strlen(path);
	int n = snprintf(path + len, size - len, "%c%s=", strchr(path, '?') ? '&' : '?', key);
	if (n < 0 || (size_t)n >= size - len)
		return -ENOSPC;
	return kube_escape(path, size, value);
}

int cli_namespaced_path(char *path, size_t size, const char *base, const char *ns,
			const char *resource, const char *name)
{
	int n = snprintf(path, size, "%s/namespaces/", base);
	if (n < 0 || (size_t)n >= size || kube_escape(path, size, ns) != 0)
		return -ENOSPC;
	size_t len = strlen(path);
	n = snprintf(path + len, size - len, "/%s%s", resource, name ? "/" : "");
	if (n < 0 || (size_t)n >= size - len)
		return -ENOSPC;
	return name ? kube_escape(path, size, name) : 0;
}

/* Loads the kubeconfig once; later calls give the first result. 0 or -errno (c->error set). */
static int load_kubeconfig(struct cli *c)
{
	if (c->kubeconfig_state == 0) {
		/* One run is short: an exec plugin's credential outlives it. */
		int rc = kube_config_load_context(c->opt.kubeconfig, c->opt.context,
						  KUBE_CONFIG_EXEC, &c->kubeconfig,
						  c->kubeconfig_error, sizeof(c->kubeconfig_error));
		c->kubeconfig_state = rc == 0 ? 1 : rc;
		if (rc == 0 && c->opt.insecure)
			c->kubeconfig.insecure = 1;
	}
	if (c->kubeconfig_state < 0) {
		snprintf(c->error, sizeof(c->error), "%s", c->kubeconfig_error);
		return c->kubeconfig_state;
	}
	return 0;
}

int cli_namespace(struct cli *c, const char **out)
{
	if (c->opt.namespace_name) {
		*out = c->opt.namespace_name;
		return 0;
	}
	int rc = load_kubeconfig(c);
	/* Without any kubeconfig, as kubectl does, "default"; a file or context asked for by name
	 * must load. */
	if (rc != 0 && (c->opt.kubeconfig || c->opt.context))
		return rc;
	*out = rc == 0 && c->kubeconfig.namespace_name ? c->kubeconfig.namespace_name : "default";
	return 0;
}

static int apiserver_client(struct cli *c, struct kube_client **out)
{
	int rc;
	if (!c->apiserver) {
		if ((rc = load_kubeconfig(c)) != 0)
			return rc;
		if ((rc = kube_client_new(c->loop, &c->kubeconfig, &c->apiserver)) != 0) {
			snprintf(c->error, sizeof(c->error), "cannot make a client: %s",
				 strerror(-rc));
			return rc;
		}
	}
	*out = c->apiserver;
	return 0;
}

/* Reads the CA bundle for the endpoint. A new string, or NULL with c->error set. */
static char *read_ca(struct cli *c, const char *path)
{
	FILE *f = fopen(path, "rb");
	char *pem = f ? malloc(MAX_CA_FILE + 1) : NULL;
	size_t n = pem ? fread(pem, 1, MAX_CA_FILE + 1, f) : 0;
	int bad = !f || !pem || ferror(f) || n == 0 || n > MAX_CA_FILE;
	if (f)
		fclose(f);
	if (bad) {
		snprintf(c->error, sizeof(c->error), "cannot read the endpoint CA %s: %s", path,
			 !f              ? strerror(errno) :
			 n > MAX_CA_FILE ? "larger than 1 MiB" :
			 !pem            ? "out of memory" :
					   "empty or unreadable");
		free(pem);
		return NULL;
	}
	pem[n] = '\0';
	return pem;
}

static int muster_client(struct cli *c, struct kube_client **out)
{
	if (!c->opt.endpoint)
		return apiserver_client(c, out);
	if (!c->endpoint) {
		struct kube_config cfg = { .insecure = c->opt.insecure };
		int rc = -ENOMEM;
		if (c->opt.endpoint_ca && !(cfg.ca_pem = read_ca(c, c->opt.endpoint_ca)))
			return -EINVAL;
		/* The client appends paths to the server as it is: no trailing slash. */
		size_t n = strlen(c->opt.endpoint);
		while (n && c->opt.endpoint[n - 1] == '/')
			n--;
		if ((cfg.server = strndup(c->opt.endpoint, n)) != NULL)
			rc = kube_client_new(c->loop, &cfg, &c->endpoint);
		kube_config_release(&cfg);
		if (rc != 0) {
			snprintf(c->error, sizeof(c->error), "cannot make a client: %s",
				 strerror(-rc));
			return rc;
		}
	}
	*out = c->endpoint;
	return 0;
}

/* Turns an HTTP error into c->error and a return code. The message is the Status object's
 * (what kubectl shows), else the start of the body, else the status code. */
static int http_error(struct cli *c, const struct kube_reply *r, const char *who, int via_apiserver)
{
	json_t *status = json_loadb(r->body, r->body_len, 0, NULL);
	const char *message = json_string_value(json_object_get(status, "message"));
	char text[256];
	if (!message && r->body_len) {
		snprintf(text, sizeof(text), "%s", r->body);
		text[strcspn(text, "\r\n")] = '\0';
		message = text;
	}
	if (message && *message)
		snprintf(c->error, sizeof(c->error), "%s", message);
	else
		snprintf(c->error, sizeof(c->error), "%s answered HTTP %ld", who, r->status);
	/* The apiserver knows no visibility group, or cannot reach muster behind it. */
	if (via_apiserver && ((r->status == 404 && message && !strcmp(message, NO_SUCH_RESOURCE)) ||
			      r->status == 503)) {
		size_t n = strlen(c->error);
		snprintf(c->error + n, sizeof(c->error) - n,
			 " (muster's visibility API through the apiserver: is its APIService "
			 "installed "
			 "and available? --endpoint or MUSTER_ENDPOINT reach muster directly)");
	}
	json_decref(status);
	return r->status == 404 ? -ENOENT : r->status == 401 || r->status == 403 ? -EACCES : -EIO;
}

int cli_get(struct cli *c, enum cli_target target, const char *path, json_t **out)
{
	struct kube_client *k;
	struct kube_reply r;
	int direct = target == CLI_MUSTER && c->opt.endpoint;
	const char *who = direct ? "muster's endpoint" : "the apiserver";
	int rc = target == CLI_MUSTER ? muster_client(c, &k) : apiserver_client(c, &k);
	*out = NULL;
	if (rc != 0)
		return rc;
	if ((rc = kube_request_sync(k, "GET", path, NULL, &r)) != 0) {
		snprintf(c->error, sizeof(c->error), "cannot ask %s: %s", who, strerror(-rc));
		return rc;
	}
	if (r.error) {
		snprintf(c->error, sizeof(c->error), "cannot reach %s at %s: %s", who,
			 direct ? c->opt.endpoint : c->kubeconfig.server, r.error_text);
		rc = -EIO;
	} else if (r.status < 200 || r.status > 299) {
		rc = http_error(c, &r, who, target == CLI_MUSTER && !direct);
	} else if (!(*out = json_loadb(r.body, r.body_len, 0, NULL))) {
		snprintf(c->error, sizeof(c->error),
			 "%s answered %s with something other than JSON", who, path);
		rc = -EPROTO;
	}
	kube_reply_release(&r);
	return rc;
}

/* The Workload of a list that the Job of uid owns (its integrated owner, as Kueue finds it):
 * not being deleted first, then the newest (a Job whose Workload was replaced may briefly have
 * two). Borrowed, or NULL. */
static json_t *owned_workload(json_t *list, const char *uid)
{
	json_t *best = NULL, *wl;
	int64_t best_ms = INT64_MIN;
	size_t i;
	json_array_foreach(json_object_get(list, "items"), i, wl)
	{
		const char *owner =
			json_string_value(json_object_get(integration_owner_ref(wl, NULL), "uid"));
		if (!owner || strcmp(owner, uid) != 0 || !obj_name(wl))
			continue;
		int64_t ms = INT64_MIN + 1;
		time_parse_rfc3339(obj_str(wl, "metadata.creationTimestamp"), &ms);
		int deleting = obj_path(wl, "metadata.deletionTimestamp") != NULL;
		int best_deleting = best && obj_path(best, "metadata.deletionTimestamp") != NULL;
		if (!best || (best_deleting && !deleting) ||
		    (best_deleting == deleting && ms > best_ms)) {
			best = wl;
			best_ms = ms;
		}
	}
	return best;
}

/* The Workload of Job ns/job, found by its uid among the namespace's Workloads. */
static int job_workload(struct cli *c, const char *ns, const char *job, int bare, char *out,
			size_t size)
{
	char path[CLI_MAX_PATH], selector[192] = "", uid[128];
	json_t *obj = NULL, *list = NULL;
	int rc;
	if (cli_namespaced_path(path, sizeof(path), "/apis/batch/v1", ns, "jobs", job) != 0)
		return cli_failf(c, "name too long: %s", job);
	rc = cli_get(c, CLI_APISERVER, path, &obj);
	if (rc == -ENOENT && bare)
		return cli_failf(c, "no Workload or Job named \"%s\" in namespace \"%s\"", job, ns);
	if (rc != 0)
		return cli_fail(c);
	snprintf(uid, sizeof(uid), "%s", obj_uid(obj) ? obj_uid(obj) : "");
	json_decref(obj);
	if (!uid[0])
		return cli_failf(c, "job %s/%s has no uid", ns, job);
	/* The Workloads Kueue and muster make for a Job carry its uid as a label: ask for those
	 * first, then, for one made without the label, look through them all. Either way the
	 * ownerReference decides. */
	snprintf(selector, sizeof(selector), "%s=%s", LABEL_JOB_UID, uid);
	for (int pass = 0; pass < 2; pass++) {
		rc = cli_namespaced_path(path, sizeof(path), CLI_API_KUEUE, ns, "workloads", NULL);
		if (rc == 0 && pass == 0)
			rc = cli_query_append(path, sizeof(path), "labelSelector", selector);
		if (rc != 0)
			return cli_failf(c, "namespace name too long: %s", ns);
		if ((rc = cli_get(c, CLI_APISERVER, path, &list)) != 0)
			return cli_fail(c);
		json_t *wl = owned_workload(list, uid);
		if (wl) {
			snprintf(out, size, "%s", obj_name(wl));
			json_decref(list);
			return 0;
		}
		json_decref(list);
	}
	return cli_failf(c,
			 "job %s/%s has no Workload (yet: muster makes one when it sees the Job)",
			 ns, job);
}

int cli_resolve_workload(struct cli *c, const char *ns, enum cli_kind kind, const char *name,
			 char *out, size_t size)
{
	char path[CLI_MAX_PATH];
	json_t *wl = NULL;
	int rc;
	if (kind == CLI_KIND_JOB)
		return job_workload(c, ns, name, 0, out, size);
	if (kind == CLI_KIND_WORKLOAD) {
		snprintf(out, size, "%s", name);
		return 0;
	}
	/* A bare name: a Workload of that name, else a Job's. */
	if (cli_namespaced_path(path, sizeof(path), CLI_API_KUEUE, ns, "workloads", name) != 0)
		return cli_failf(c, "name too long: %s", name);
	rc = cli_get(c, CLI_APISERVER, path, &wl);
	json_decref(wl);
	if (rc == 0) {
		snprintf(out, size, "%s", name);
		return 0;
	}
	if (rc != -ENOENT)
		return cli_fail(c);
	return job_workload(c, ns, name, 1, out, size);
}

void cli_release(struct cli *c)
{
	kube_client_free(c->apiserver);
	kube_client_free(c->endpoint);
	c->apiserver = c->endpoint = NULL;
	kube_config_release(&c->kubeconfig);
	c->kubeconfig_state = 0;
}
