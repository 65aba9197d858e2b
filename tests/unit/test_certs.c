/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for net/certs: what certs_generate makes is checked with OpenSSL the way a TLS client
 * would (chain, purpose, SANs), and certs_load_or_create is run against a temporary directory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "net/certs.h"

static const char *const dns[] = { "muster-webhook.muster-system.svc",
				   "muster-webhook.muster-system.svc.cluster.local", NULL };
static const char *const ips[] = { "127.0.0.1", "::1", NULL };

static X509 *parse_cert(const char *pem)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	assert_non_null(bio);
	X509 *x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
	BIO_free(bio);
	assert_non_null(x);
	return x;
}

static EVP_PKEY *parse_key(const char *pem)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	assert_non_null(bio);
	EVP_PKEY *k = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
	BIO_free(bio);
	assert_non_null(k);
	return k;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *s = calloc(1, 65536);
	assert_non_null(s);
	size_t n = fread(s, 1, 65535, f);
	fclose(f);
	s[n] = '\0';
	return s;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void path_in(char *out, size_t size, const char *dir, const char *name)
{
	snprintf(out, size, "%s/%s", dir, name);
}

static void remove_dir(const char *dir)
{
	static const char *const names[] = { "ca.crt", "tls.crt", "tls.key", NULL };
	char p[512];
	for (size_t i = 0; names[i]; i++) {
		path_in(p, sizeof(p), dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

static void test_generate_makes_a_verifiable_serving_cert(void **state)
{
	struct certs c;
	assert_int_equal(certs_generate(dns, ips, &c), 0);
	assert_non_null(strstr(c.ca_pem, "BEGIN CERTIFICATE"));
	assert_non_null(strstr(c.key_pem, "BEGIN PRIVATE KEY"));

	X509 *ca = parse_cert(c.ca_pem);
	X509 *leaf = parse_cert(c.cert_pem);
	EVP_PKEY *key = parse_key(c.key_pem);
	assert_int_equal(X509_check_private_key(leaf, key), 1);
	assert_true(X509_check_ca(ca) >= 1);
	assert_int_equal(X509_check_ca(leaf), 0);

	/* What a Go client checks: the chain, serverAuth, and the SAN it dialled. */
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	assert_int_equal(X509_STORE_add_cert(store, ca), 1);
	assert_int_equal(X509_STORE_CTX_init(ctx, store, leaf, NULL), 1);
	assert_int_equal(X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER), 1);
	assert_int_equal(X509_verify_cert(ctx), 1);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);

	for (size_t i = 0; dns[i]; i++)
		assert_int_equal(X509_check_host(leaf, dns[i], 0,
						 X509_CHECK_FLAG_NEVER_CHECK_SUBJECT, NULL),
				 1);
	assert_int_equal(X509_check_ip_asc(leaf, "127.0.0.1", 0), 1);
	assert_int_equal(X509_check_ip_asc(leaf, "::1", 0), 1);
	assert_int_equal(X509_check_ip_asc(leaf, "127.0.0.2", 0), 0);
	assert_int_equal(X509_check_host(leaf, "muster-webhook", 0,
					 X509_CHECK_FLAG_NEVER_CHECK_SUBJECT, NULL),
			 0);
	/* A client certificate it is not. */
	assert_int_equal(X509_check_purpose(leaf, X509_PURPOSE_SSL_CLIENT, 0), 0);

	/* About ten years, starting slightly in the past. */
	time_t now = time(NULL);
	time_t nine_years = now + (time_t)9 * 365 * 86400;
	assert_true(X509_cmp_time(X509_get0_notBefore(leaf), &now) < 0);
	assert_true(X509_cmp_time(X509_get0_notAfter(leaf), &nine_years) > 0);
	assert_true(X509_cmp_time(X509_get0_notAfter(ca), &nine_years) > 0);

	/* Two generations never share a serial number or a CA. */
	struct certs again;
	assert_int_equal(certs_generate(dns, NULL, &again), 0);
	X509 *leaf2 = parse_cert(again.cert_pem);
	assert_int_not_equal(ASN1_INTEGER_cmp(X509_get0_serialNumber(leaf),
					      X509_get0_serialNumber(leaf2)),
			     0);
	assert_string_not_equal(c.ca_pem, again.ca_pem);
	assert_int_equal(X509_check_ip_asc(leaf2, "127.0.0.1", 0), 0);

	X509_free(leaf2);
	X509_free(ca);
	X509_free(leaf);
	EVP_PKEY_free(key);
	certs_release(&again);
	certs_release(&c);
	assert_null(c.key_pem);
	certs_release(&c); /* twice is harmless */
	certs_release(NULL);
}

static void test_generate_rejects_bad_names(void **state)
{
	struct certs c;
	static const char *const none[] = { NULL };
	static const char *const spaced[] = { "bad name", NULL };
	static const char *const injected[] = { "a.svc,DNS:evil.example", NULL };
	static const char *const empty_label[] = { "a..svc", NULL };
	static const char *const trailing_dot[] = { "a.svc.", NULL };
	static const char *const bad_ip[] = { "1.2.3", NULL };
	static const char *const host_as_ip[] = { "localhost", NULL };
	static const char *const wildcard[] = { "*.muster-system.svc", NULL };

	assert_int_equal(certs_generate(NULL, NULL, &c), -EINVAL);
	assert_null(c.ca_pem);
	assert_int_equal(certs_generate(none, none, &c), -EINVAL);
	assert_int_equal(certs_generate(spaced, NULL, &c), -EINVAL);
	assert_int_equal(certs_generate(injected, NULL, &c), -EINVAL);
	assert_int_equal(certs_generate(empty_label, NULL, &c), -EINVAL);
	assert_int_equal(certs_generate(trailing_dot, NULL, &c), -EINVAL);
	assert_int_equal(certs_generate(NULL, bad_ip, &c), -EINVAL);
	assert_int_equal(certs_generate(dns, host_as_ip, &c), -EINVAL);
	assert_int_equal(certs_generate(wildcard, NULL, &c), 0);
	certs_release(&c);
}

static void test_load_or_create_reuses_what_it_wrote(void **state)
{
	char base[] = "/tmp/muster-certs-XXXXXX";
	char dir[256], p[512];
	struct stat st;
	struct certs first, second;

	assert_non_null(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/pki", base); /* created on demand */
	assert_int_equal(certs_load_or_create(dir, dns, ips, &first), 0);

	path_in(p, sizeof(p), dir, "tls.key");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	char *on_disk = read_text(p);
	assert_string_equal(on_disk, first.key_pem);
	free(on_disk);
	path_in(p, sizeof(p), dir, "ca.crt");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);

	assert_int_equal(certs_load_or_create(dir, dns, ips, &second), 0);
	assert_string_equal(first.ca_pem, second.ca_pem);
	assert_string_equal(first.cert_pem, second.cert_pem);
	assert_string_equal(first.key_pem, second.key_pem);
	certs_release(&second);

	/* Asking for fewer names than the certificate has is fine too. */
	static const char *const fewer[] = { "127.0.0.1", NULL };
	assert_int_equal(certs_load_or_create(dir, NULL, fewer, &second), 0);
	assert_string_equal(first.ca_pem, second.ca_pem);
	certs_release(&second);

	/* A name it lacks means a new CA. */
	static const char *const more[] = { "127.0.0.1", "10.0.0.1", NULL };
	assert_int_equal(certs_load_or_create(dir, dns, more, &second), 0);
	assert_string_not_equal(first.ca_pem, second.ca_pem);
	path_in(p, sizeof(p), dir, "ca.crt");
	on_disk = read_text(p);
	assert_string_equal(on_disk, second.ca_pem);
	free(on_disk);

	certs_release(&first);
	certs_release(&second);
	remove_dir(dir);
	rmdir(base);
}

static void test_load_or_create_replaces_damaged_sets(void **state)
{
	char dir[] = "/tmp/muster-certs-XXXXXX";
	char p[512];
	struct certs first, second, other;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(certs_load_or_create(dir, dns, ips, &first), 0);

	/* Garbage key. */
	path_in(p, sizeof(p), dir, "tls.key");
	write_text(p, "not a key\n");
	assert_int_equal(certs_load_or_create(dir, dns, ips, &second), 0);
	assert_string_not_equal(first.ca_pem, second.ca_pem);
	certs_release(&first);

	/* A key from another set. */
	assert_int_equal(certs_generate(dns, ips, &other), 0);
	write_text(p, other.key_pem);
	assert_int_equal(certs_load_or_create(dir, dns, ips, &first), 0);
	assert_string_not_equal(first.key_pem, other.key_pem);
	certs_release(&second);

	/* A CA that did not sign the serving certificate. */
	path_in(p, sizeof(p), dir, "ca.crt");
	write_text(p, other.ca_pem);
	assert_int_equal(certs_load_or_create(dir, dns, ips, &second), 0);
	assert_string_not_equal(second.ca_pem, other.ca_pem);
	assert_string_not_equal(second.ca_pem, first.ca_pem);
	certs_release(&first);

	/* One file missing. */
	unlink(p);
	assert_int_equal(certs_load_or_create(dir, dns, ips, &first), 0);
	assert_string_not_equal(first.ca_pem, second.ca_pem);

	certs_release(&first);
	certs_release(&second);
	certs_release(&other);
	remove_dir(dir);
}

/* A self-signed serving certificate (its own CA) for 127.0.0.1, valid for days more days. */
static void write_self_signed(const char *dir, int days)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	assert_non_null(key);
	assert_non_null(x);
	assert_int_equal(X509_set_version(x, X509_VERSION_3), 1);
	assert_int_equal(ASN1_INTEGER_set(X509_get_serialNumber(x), 7), 1);
	assert_non_null(X509_gmtime_adj(X509_getm_notBefore(x), -3600));
	assert_non_null(X509_time_adj_ex(X509_getm_notAfter(x), days, 0, NULL));
	assert_int_equal(X509_set_pubkey(x, key), 1);
	X509_NAME *name = X509_get_subject_name(x);
	assert_int_equal(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
						    (const unsigned char *)"test", -1, -1, 0),
			 1);
	assert_int_equal(X509_set_issuer_name(x, name), 1);
	X509V3_CTX ctx;
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, x, x, NULL, NULL, 0);
	X509_EXTENSION *san =
		X509V3_EXT_nconf_nid(NULL, &ctx, NID_subject_alt_name, "IP:127.0.0.1");
	assert_non_null(san);
	assert_int_equal(X509_add_ext(x, san, -1), 1);
	X509_EXTENSION_free(san);
	assert_true(X509_sign(x, key, EVP_sha256()) > 0);

	char p[512];
	path_in(p, sizeof(p), dir, "ca.crt");
	FILE *f = fopen(p, "wb");
	assert_int_equal(PEM_write_X509(f, x), 1);
	fclose(f);
	path_in(p, sizeof(p), dir, "tls.crt");
	f = fopen(p, "wb");
	assert_int_equal(PEM_write_X509(f, x), 1);
	fclose(f);
	path_in(p, sizeof(p), dir, "tls.key");
	f = fopen(p, "wb");
	assert_int_equal(PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL), 1);
	fclose(f);
	X509_free(x);
	EVP_PKEY_free(key);
}

static void test_load_or_create_renews_before_expiry(void **state)
{
	char dir[] = "/tmp/muster-certs-XXXXXX";
	char p[512];
	static const char *const local[] = { "127.0.0.1", NULL };
	struct certs c;

	assert_non_null(mkdtemp(dir));
	path_in(p, sizeof(p), dir, "ca.crt");

	/* 100 days left: kept. */
	write_self_signed(dir, 100);
	char *before = read_text(p);
	assert_int_equal(certs_load_or_create(dir, NULL, local, &c), 0);
	assert_string_equal(c.ca_pem, before);
	certs_release(&c);
	free(before);

	/* 10 days left: replaced. */
	write_self_signed(dir, 10);
	before = read_text(p);
	assert_int_equal(certs_load_or_create(dir, NULL, local, &c), 0);
	assert_string_not_equal(c.ca_pem, before);
	certs_release(&c);
	free(before);
	remove_dir(dir);
}

static void test_load_or_create_reports_unwritable_dir(void **state)
{
	struct certs c;
	assert_int_equal(certs_load_or_create("/dev/null/pki", dns, ips, &c), -ENOTDIR);
	assert_null(c.ca_pem);
	assert_null(c.key_pem);
	assert_int_equal(certs_load_or_create("", dns, ips, &c), -EINVAL);
	assert_int_equal(certs_load_or_create("/tmp", NULL, NULL, &c), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generate_makes_a_verifiable_serving_cert),
		cmocka_unit_test(test_generate_rejects_bad_names),
		cmocka_unit_test(test_load_or_create_reuses_what_it_wrote),
		cmocka_unit_test(test_load_or_create_replaces_damaged_sets),
		cmocka_unit_test(test_load_or_create_renews_before_expiry),
		cmocka_unit_test(test_load_or_create_reports_unwritable_dir),
	};
	return cmocka_run_group_tests_name("certs", tests, NULL, NULL);
}
