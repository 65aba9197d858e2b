/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What running inside a cluster needs from the manager: the webhook CA and key pair shared by
 * the replicas through a Secret (kube/cert_secret.h), against the fake apiserver, and the
 * service-account token read again from its file as it rotates (kube/client.h).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "fake_apiserver.h"
#include "kube/cert_secret.h"
#include "kube/client.h"
#include "net/certs.h"

#define SECRET_PATH "/api/v1/namespaces/muster-system/secrets/muster-webhook-server-cert"
#define SECRETS "/api/v1/namespaces/muster-system/secrets"

static const char *const dns[] = { "muster-webhook-service.muster-system.svc",
				   "muster-webhook-service.muster-system.svc.cluster.local", NULL };

struct t {
	uv_loop_t loop;
	struct fake_api *api;
	struct kube_client *kube;
	char token_file[64];
	char last_auth[256]; /* the Authorization header of the last request (responder mode) */
	int requests;
};

static void close_all(struct t *t)
{
	kube_client_free(t->kube);
	fake_api_stop(t->api);
	for (int i = 0; i < 200 && uv_run(&t->loop, UV_RUN_NOWAIT); i++)
		usleep(1000);
	assert_int_equal(uv_loop_close(&t->loop), 0);
}

static void start(struct t *t, fake_api_responder responder, const char *token_file)
{
	memset(t, 0, sizeof(*t));
	assert_int_equal(uv_loop_init(&t->loop), 0);
	assert_int_equal(fake_api_start(&t->loop, responder, t, &t->api), 0);
	struct kube_config cfg = { .server = (char *)fake_api_url(t->api),
				   .token_file = (char *)token_file };
	if (token_file)
		assert_int_equal(kube_config_refresh_token(&cfg), 0);
	assert_int_equal(kube_client_new(&t->loop, &cfg, &t->kube), 0);
	free(token_file ? cfg.token : NULL);
}

/* Stores a Secret of a freshly generated set for names (as another replica would have), which
 * is returned in *theirs. */
static void seed_secret(struct t *t, const char *const *names, struct certs *theirs)
{
	assert_int_equal(certs_generate(names, NULL, theirs), 0);
	fake_api_put(t->api, SECRET_PATH,
		     cert_secret_build("muster-system", "muster-webhook-server-cert", theirs));
}

static int sync_secret(struct t *t, struct certs *got)
{
	return cert_secret_sync(&t->loop, t->kube, "muster-system", "muster-webhook-server-cert",
				dns, got);
}

/* --- the Secret, pure -------------------------------------------------------------------- */

static void test_secret_round_trip(void **state)
{
	struct certs made, back;
	(void)state;
	assert_int_equal(certs_generate(dns, NULL, &made), 0);
	json_t *secret = cert_secret_build("muster-system", "s", &made);
	assert_non_null(secret);
	assert_string_equal(json_string_value(json_object_get(secret, "type")),
			    "kubernetes.io/tls");
	assert_non_null(json_object_get(json_object_get(secret, "data"), "ca.crt"));
	assert_int_equal(cert_secret_parse(secret, &back), 0);
	assert_string_equal(back.ca_pem, made.ca_pem);
	assert_string_equal(back.cert_pem, made.cert_pem);
	assert_string_equal(back.key_pem, made.key_pem);
	assert_null(certs_check(&back, dns, NULL));
	/* A certificate for other names is not usable here. */
	const char *const other[] = { "elsewhere.muster-system.svc", NULL };
	assert_non_null(certs_check(&back, other, NULL));
	certs_release(&back);
	/* A field missing or not base64: refused, nothing half-filled. */
	json_object_del(json_object_get(secret, "data"), "tls.key");
	assert_int_equal(cert_secret_parse(secret, &back), -EINVAL);
	assert_null(back.ca_pem);
	json_object_set_new(json_object_get(secret, "data"), "tls.key", json_string("not base64!"));
	assert_int_equal(cert_secret_parse(secret, &back), -EINVAL);
	json_decref(secret);
	certs_release(&made);
}

/* --- the Secret round trip against the fake apiserver -------------------------------------- */

static void test_absent_secret_is_created(void **state)
{
	struct t t;
	struct certs got;
	(void)state;
	start(&t, NULL, NULL);
	assert_int_equal(sync_secret(&t, &got), 0);
	json_t *stored = fake_api_get(t.api, SECRET_PATH);
	assert_non_null(stored);
	struct certs kept;
	assert_int_equal(cert_secret_parse(stored, &kept), 0);
	assert_string_equal(kept.ca_pem, got.ca_pem);
	assert_string_equal(kept.key_pem, got.key_pem);
	assert_null(certs_check(&got, dns, NULL));
	assert_int_equal(fake_api_count(t.api, "POST", SECRETS, 201), 1);
	certs_release(&kept);
	certs_release(&got);
	close_all(&t);
}

static void test_present_secret_is_used_as_is(void **state)
{
	struct t t;
	struct certs theirs, got;
	(void)state;
	start(&t, NULL, NULL);
	seed_secret(&t, dns, &theirs);
	assert_int_equal(sync_secret(&t, &got), 0);
	assert_string_equal(got.ca_pem, theirs.ca_pem);
	assert_string_equal(got.key_pem, theirs.key_pem);
	assert_int_equal(fake_api_count(t.api, "POST", NULL, 0), 0);
	assert_int_equal(fake_api_count(t.api, "PUT", NULL, 0), 0);
	certs_release(&theirs);
	certs_release(&got);
	close_all(&t);
}

/* Two replicas start together: both see no Secret, the other creates it first, so our create
 * gets 409 and we must read and use theirs, not ours. */
static void test_lost_create_race_uses_the_winners(void **state)
{
	struct t t;
	struct certs theirs, got;
	(void)state;
	start(&t, NULL, NULL);
	seed_secret(&t, dns, &theirs);
	fake_api_fail(t.api, "GET", SECRET_PATH, 404, 1); /* our first look came before theirs */
	assert_int_equal(sync_secret(&t, &got), 0);
	assert_int_equal(fake_api_count(t.api, "POST", SECRETS, 409), 1);
	assert_int_equal(fake_api_count(t.api, "GET", SECRET_PATH, 200), 1);
	assert_string_equal(got.ca_pem, theirs.ca_pem);
	assert_string_equal(got.key_pem, theirs.key_pem);
	certs_release(&theirs);
	certs_release(&got);
	close_all(&t);
}

/* A Secret for other names (say, a renamed Service) is replaced by an update guarded by its
 * resourceVersion; transient errors are retried. */
static void test_unusable_secret_is_replaced(void **state)
{
	struct t t;
	struct certs old, got;
	const char *const other[] = { "old-name.muster-system.svc", NULL };
	(void)state;
	start(&t, NULL, NULL);
	seed_secret(&t, other, &old);
	fake_api_fail(t.api, "GET", SECRET_PATH, 503, 1);
	assert_int_equal(sync_secret(&t, &got), 0);
	assert_int_equal(fake_api_count(t.api, "PUT", SECRET_PATH, 200), 1);
	assert_string_not_equal(got.ca_pem, old.ca_pem);
	struct certs kept;
	assert_int_equal(cert_secret_parse(fake_api_get(t.api, SECRET_PATH), &kept), 0);
	assert_string_equal(kept.ca_pem, got.ca_pem);
	assert_null(certs_check(&got, dns, NULL));
	certs_release(&kept);
	certs_release(&old);
	certs_release(&got);
	close_all(&t);
}

static void test_forbidden_is_an_error(void **state)
{
	struct t t;
	struct certs got;
	(void)state;
	start(&t, NULL, NULL);
	fake_api_fail(t.api, "GET", SECRET_PATH, 403, 1);
	assert_int_equal(sync_secret(&t, &got), -EACCES);
	assert_null(got.ca_pem);
	close_all(&t);
}

/* --- the rotating token -------------------------------------------------------------------- */

static void record_auth(void *arg, const struct httpd_request *req, struct httpd_response *resp)
{
	struct t *t = arg;
	const char *auth = httpd_request_header(req, "Authorization");
	snprintf(t->last_auth, sizeof(t->last_auth), "%s", auth ? auth : "");
	t->requests++;
	resp->status = 200;
	resp->body = strdup("{}");
	resp->body_len = 2;
}

static void on_done(void *arg, const struct kube_response *resp)
{
	(void)resp;
	(*(int *)arg)++;
}

static void get_once(struct t *t)
{
	int done = 0;
	assert_int_equal(kube_request(t->kube, "GET", "/version", NULL, NULL, on_done, &done, NULL),
			 0);
	while (!done)
		uv_run(&t->loop, UV_RUN_ONCE);
}

static void write_token(const char *path, const char *token)
{
	char tmp[80];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", token);
	fclose(f);
	assert_int_equal(rename(tmp, path), 0);
}

static void test_token_file_is_read_again(void **state)
{
	struct t t;
	char path[] = "/tmp/muster-token-XXXXXX";
	(void)state;
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_token(path, "first");
	start(&t, record_auth, path);
	get_once(&t);
	assert_string_equal(t.last_auth, "Bearer first");
	/* Rotated, but within the period: the token read last is still sent. */
	write_token(path, "second");
	get_once(&t);
	assert_string_equal(t.last_auth, "Bearer first");
	/* Once the period has passed, the next request carries the new token. */
	kube_client_set_token_period(t.kube, 20);
	usleep(30 * 1000);
	uv_update_time(&t.loop);
	get_once(&t);
	assert_string_equal(t.last_auth, "Bearer second");
	/* A file that vanished keeps the last good token. */
	unlink(path);
	usleep(30 * 1000);
	uv_update_time(&t.loop);
	get_once(&t);
	assert_string_equal(t.last_auth, "Bearer second");
	close_all(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_secret_round_trip),
		cmocka_unit_test(test_absent_secret_is_created),
		cmocka_unit_test(test_present_secret_is_used_as_is),
		cmocka_unit_test(test_lost_create_race_uses_the_winners),
		cmocka_unit_test(test_unusable_secret_is_replaced),
		cmocka_unit_test(test_forbidden_is_an_error),
		cmocka_unit_test(test_token_file_is_read_again),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
