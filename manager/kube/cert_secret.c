/* SPDX-License-Identifier: Apache-2.0 */
#include "kube/cert_secret.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/base64.h"
#include "util/log.h"

/* Secret data key -> the struct certs field it fills. */
static const struct {
	const char *key;
	size_t offset;
} fields[] = {
	{ "ca.crt", offsetof(struct certs, ca_pem) },
	{ "tls.crt", offsetof(struct certs, cert_pem) },
	{ "tls.key", offsetof(struct certs, key_pem) },
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static char **field_of(struct certs *c, size_t i)
{
	return (char **)((char *)c + fields[i].offset);
}

json_t *cert_secret_build(const char *ns, const char *name, const struct certs *c)
{
	json_t *data = json_object();
	json_t *secret = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:s}", "apiVersion", "v1",
				   "kind", "Secret", "metadata", "name", name, "namespace", ns,
				   "labels", "app.kubernetes.io/name", "muster", "type",
				   "kubernetes.io/tls");
	for (size_t i = 0; data && secret && i < NFIELDS; i++) {
		const char *pem = *field_of((struct certs *)c, i);
		char *b64 = pem ? base64_encode(pem, strlen(pem)) : NULL;
		if (!b64 || json_object_set_new(data, fields[i].key, json_string(b64)) != 0) {
			free(b64);
			goto fail;
		}
		free(b64);
	}
	if (secret && data && json_object_set_new(secret, "data", data) == 0)
		return secret;
	data = NULL;
fail:
	json_decref(data);
	json_decref(secret);
	return NULL;
}

int cert_secret_parse(json_t *secret, struct certs *out)
{
	json_t *data = json_object_get(secret, "data");
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < NFIELDS; i++) {
		const char *b64 = json_string_value(json_object_get(data, fields[i].key));
		size_t len = 0;
		char *pem = b64 ? base64_decode(b64, &len) : NULL;
		/* PEM is text: a NUL inside would cut it short where OpenSSL reads it. */
		if (!pem || strlen(pem) != len || len == 0) {
			free(pem);
			certs_release(out);
			return b64 && !pem && strlen(b64) % 4 == 0 ? -ENOMEM : -EINVAL;
		}
		*field_of(out, i) = pem;
	}
	return 0;
}

/* --- the round trip ---------------------------------------------------------------------- */

struct sync {
	uv_loop_t *loop;
	struct kube_client *kube;
	const char *ns, *name;
	const char *const *dns_names;
	struct certs *out;
	struct certs made; /* generated, while its create or update is in flight */
	char path[600]; /* the Secret */
	uv_timer_t retry;
	int attempts;
	int done, rc;
	int retry_closed;
};

static void get_secret(struct sync *s);

static void finish(struct sync *s, int rc)
{
	s->rc = rc;
	s->done = 1;
}

static void on_retry(uv_timer_t *t)
{
	get_secret(t->data);
}

/* A transport error or a 5xx/429: start over from the GET a second later, a few times. */
static void retry_or_fail(struct sync *s, const char *what, const struct kube_response *resp)
{
	log_warn("webhook certificate Secret: request failed", LF_STR("step", what),
		 LF_INT("status", resp->status), LF_STR("error", resp->error_text),
		 LF_INT("attempt", s->attempts), LF_END);
	if (s->attempts >= CERT_SECRET_MAX_ATTEMPTS)
		finish(s, -EIO);
	else
		uv_timer_start(&s->retry, on_retry, 1000, 0);
}

static int transient(const struct kube_response *resp)
{
	return resp->error || resp->status == 429 || resp->status >= 500;
}

static void refused(struct sync *s, const char *what, const struct kube_response *resp)
{
	log_error("webhook certificate Secret: refused", LF_STR("step", what),
		  LF_STR("secret", s->path), LF_INT("status", resp->status),
		  LF_STR("body", resp->body), LF_END);
	finish(s, resp->status == 401 || resp->status == 403 ? -EACCES : -EIO);
}

static void on_written(void *arg, const struct kube_response *resp)
{
	struct sync *s = arg;
	if (resp->status == 200 || resp->status == 201) {
		*s->out = s->made;
		memset(&s->made, 0, sizeof(s->made));
		log_info(resp->status == 201 ? "webhook certificates generated, Secret created" :
					       "webhook certificates generated, Secret replaced",
			 LF_STR("namespace", s->ns), LF_STR("secret", s->name), LF_END);
		finish(s, 0);
		return;
	}
	certs_release(&s->made);
	if (resp->status == 409) {
		/* Another replica wrote first: theirs is the one every replica must use. */
		log_info("webhook certificate Secret written by another replica; reading it",
			 LF_STR("namespace", s->ns), LF_STR("secret", s->name), LF_END);
		get_secret(s);
	} else if (transient(resp)) {
		retry_or_fail(s, "write", resp);
	} else {
		refused(s, "write", resp);
	}
}

/* Generates a set and creates the Secret (rv NULL) or replaces the version rv. */
static void write_secret(struct sync *s, const char *rv)
{
	json_t *obj = NULL;
	char *body = NULL, coll[512];
	int rc = certs_generate(s->dns_names, NULL, &s->made);
	if (rc == 0 && !(obj = cert_secret_build(s->ns, s->name, &s->made)))
		rc = -ENOMEM;
	if (rc == 0 && rv)
		rc = json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion",
					 json_string(rv)) == 0 ?
			     0 :
			     -ENOMEM;
	if (rc == 0 && !(body = json_dumps(obj, JSON_COMPACT)))
		rc = -ENOMEM;
	json_decref(obj);
	snprintf(coll, sizeof(coll), "/api/v1/namespaces/%s/secrets", s->ns);
	if (rc == 0)
		rc = kube_request(s->kube, rv ? "PUT" : "POST", rv ? s->path : coll, NULL, body,
				  on_written, s, NULL);
	free(body);
	if (rc != 0) {
		certs_release(&s->made);
		log_error("webhook certificate Secret: cannot write", LF_INT("rc", rc), LF_END);
		finish(s, rc);
	}
}

static void on_got(void *arg, const struct kube_response *resp)
{
	struct sync *s = arg;
	if (resp->status == 404) {
		write_secret(s, NULL);
		return;
	}
	if (resp->status != 200) {
		if (transient(resp))
			retry_or_fail(s, "get", resp);
		else
			refused(s, "get", resp);
		return;
	}
	json_error_t jerr;
	json_t *secret = json_loadb(resp->body, resp->body_len, 0, &jerr);
	const char *rv = json_string_value(
		json_object_get(json_object_get(secret, "metadata"), "resourceVersion"));
	struct certs found;
	const char *why = "not a Secret with ca.crt, tls.crt and tls.key";
	int rc = secret ? cert_secret_parse(secret, &found) : -EINVAL;
	if (rc == -ENOMEM) {
		json_decref(secret);
		finish(s, rc);
		return;
	}
	if (rc == 0 && !(why = certs_check(&found, s->dns_names, NULL))) {
		*s->out = found;
		log_info("webhook certificates loaded from Secret", LF_STR("namespace", s->ns),
			 LF_STR("secret", s->name), LF_END);
		finish(s, 0);
	} else {
		if (rc == 0)
			certs_release(&found);
		log_info("webhook certificate Secret unusable, replacing it",
			 LF_STR("namespace", s->ns), LF_STR("secret", s->name),
			 LF_STR("reason", why), LF_END);
		if (rv)
			write_secret(s, rv);
		else
			finish(s, -EIO);
	}
	json_decref(secret);
}

static void get_secret(struct sync *s)
{
	int rc;
	s->attempts++;
	if ((rc = kube_request(s->kube, "GET", s->path, NULL, NULL, on_got, s, NULL)) != 0) {
		log_error("webhook certificate Secret: cannot send", LF_INT("rc", rc), LF_END);
		finish(s, rc);
	}
}

static void on_retry_closed(uv_handle_t *h)
{
	((struct sync *)h->data)->retry_closed = 1;
}

int cert_secret_sync(uv_loop_t *loop, struct kube_client *kube, const char *ns, const char *name,
		     const char *const *dns_names, struct certs *out)
{
	struct sync s = { .loop = loop,
			  .kube = kube,
			  .ns = ns,
			  .name = name,
			  .dns_names = dns_names,
			  .out = out };
	char ens[256] = "", ename[256] = "";
	memset(out, 0, sizeof(*out));
	if (kube_escape(ens, sizeof(ens), ns) != 0 || kube_escape(ename, sizeof(ename), name) != 0)
		return -EINVAL;
	snprintf(s.path, sizeof(s.path), "/api/v1/namespaces/%s/secrets/%s", ens, ename);
	uv_timer_init(loop, &s.retry);
	s.retry.data = &s;
	get_secret(&s);
	/* Nothing else runs yet: turn the loop until this round trip is settled. */
	while (!s.done) {
		if (uv_run(loop, UV_RUN_ONCE) == 0 && !s.done) {
			finish(&s,
			       -EIO); /* nothing left to wait for: cannot happen, but never spin */
			break;
		}
	}
	uv_close((uv_handle_t *)&s.retry, on_retry_closed);
	while (!s.retry_closed)
		uv_run(loop, UV_RUN_NOWAIT);
	return s.rc;
}
