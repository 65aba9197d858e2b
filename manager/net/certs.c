/* SPDX-License-Identifier: Apache-2.0 */
/* Webhook CA and serving certificate with OpenSSL 3's X509 APIs; see certs.h. */
#include "net/certs.h"

#include "util/log.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

/* A PEM file larger than this is not ours. */
#define PEM_FILE_MAX (1 << 20)
#define SECONDS_PER_DAY 86400

static void log_openssl_error(const char *msg)
{
	char detail[256] = "unknown";
	unsigned long e = ERR_peek_last_error();
	if (e)
		ERR_error_string_n(e, detail, sizeof(detail));
	log_error(msg, LF_STR("error", detail), LF_END);
	ERR_clear_error();
}

/* ---- names ---- */

static bool is_ldh(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-';
}

/* Letters, digits and hyphens in non-empty dot-separated labels, optionally after "*.". */
static bool dns_name_ok(const char *s)
{
	if (strlen(s) > 253)
		return false;
	if (s[0] == '*' && s[1] == '.')
		s += 2;
	size_t label = 0;
	for (; *s; s++) {
		if (*s == '.') {
			if (label == 0)
				return false;
			label = 0;
		} else if (is_ldh(*s) && label < 63) {
			label++;
		} else {
			return false;
		}
	}
	return label > 0;
}

/* Parses a numeric address into 4 or 16 octets; returns the length or -EINVAL. */
static int ip_octets(const char *s, unsigned char out[16])
{
	if (inet_pton(AF_INET, s, out) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, out) == 1)
		return 16;
	return -EINVAL;
}

static int validate_names(const char *const *dns_names, const char *const *ip_addrs)
{
	unsigned char octets[16];
	size_t count = 0;
	for (size_t i = 0; dns_names && dns_names[i]; i++, count++) {
		if (!dns_name_ok(dns_names[i]))
			return -EINVAL;
	}
	for (size_t i = 0; ip_addrs && ip_addrs[i]; i++, count++) {
		if (ip_octets(ip_addrs[i], octets) < 0)
			return -EINVAL;
	}
	return count > 0 ? 0 : -EINVAL;
}

/* ---- generation ---- */

/* Adds an extension written in openssl.cnf syntax, with issuer for the key identifiers. */
static int add_ext(X509 *subject, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, subject, NULL, NULL, 0);
	X509_EXTENSION *ext = X509V3_EXT_nconf_nid(NULL, &ctx, nid, value);
	if (!ext)
		return -EIO;
	int ok = X509_add_ext(subject, ext, -1);
	X509_EXTENSION_free(ext);
	return ok == 1 ? 0 : -EIO;
}

/*
 * The SAN extension, built from GENERAL_NAMEs rather than an "DNS:a,IP:b" config string so no
 * name can smuggle in another entry.
 */
static int add_subject_alt_names(X509 *x, const char *const *dns_names, const char *const *ip_addrs)
{
	int rc = -EIO;
	GENERAL_NAMES *names = sk_GENERAL_NAME_new_null();
	if (!names)
		return -EIO;
	for (size_t i = 0; dns_names && dns_names[i]; i++) {
		GENERAL_NAME *g = GENERAL_NAME_new();
		ASN1_IA5STRING *s = ASN1_IA5STRING_new();
		if (!g || !s || ASN1_STRING_set(s, dns_names[i], -1) != 1) {
			GENERAL_NAME_free(g);
			ASN1_IA5STRING_free(s);
			goto out;
		}
		GENERAL_NAME_set0_value(g, GEN_DNS, s);
		if (!sk_GENERAL_NAME_push(names, g)) {
			GENERAL_NAME_free(g);
			goto out;
		}
	}
	for (size_t i = 0; ip_addrs && ip_addrs[i]; i++) {
		unsigned char octets[16];
		int len = ip_octets(ip_addrs[i], octets);
		if (len < 0) {
			rc = len;
			goto out;
		}
		GENERAL_NAME *g = GENERAL_NAME_new();
		ASN1_OCTET_STRING *s = ASN1_OCTET_STRING_new();
		if (!g || !s || ASN1_OCTET_STRING_set(s, octets, len) != 1) {
			GENERAL_NAME_free(g);
			ASN1_OCTET_STRING_free(s);
			goto out;
		}
		GENERAL_NAME_set0_value(g, GEN_IPADD, s);
		if (!sk_GENERAL_NAME_push(names, g)) {
			GENERAL_NAME_free(g);
			goto out;
		}
	}
	if (X509_add1_ext_i2d(x, NID_subject_alt_name, names, 0, X509V3_ADD_DEFAULT) == 1)
		rc = 0;
out:
	GENERAL_NAMES_free(names);
	return rc;
}

/* A random positive 127-bit serial: unique without bookkeeping, within RFC 5280's 20 octets. */
static int set_random_serial(X509 *x)
{
	int rc = -EIO;
	BIGNUM *bn = BN_new();
	ASN1_INTEGER *serial = NULL;
	if (bn && BN_rand(bn, 127, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) == 1)
		serial = BN_to_ASN1_INTEGER(bn, NULL);
	if (serial && X509_set_serialNumber(x, serial) == 1)
		rc = 0;
	ASN1_INTEGER_free(serial);
	BN_free(bn);
	return rc;
}

/*
 * Makes a certificate for key, signed by issuer_key. A NULL issuer makes it self-signed (the
 * CA); otherwise it is a serving certificate with the given SANs.
 */
static int make_cert(const char *common_name, EVP_PKEY *key, X509 *issuer, EVP_PKEY *issuer_key,
		     const char *const *dns_names, const char *const *ip_addrs, X509 **out)
{
	int rc = -EIO;
	bool is_ca = issuer == NULL;
	X509 *x = X509_new();

	*out = NULL;
	if (!x)
		return -EIO;
	X509_NAME *subject = X509_get_subject_name(x);
	if (X509_set_version(x, X509_VERSION_3) != 1 || set_random_serial(x) < 0 ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
	    !X509_time_adj_ex(X509_getm_notAfter(x), CERTS_VALIDITY_DAYS, 0, NULL) ||
	    X509_set_pubkey(x, key) != 1 ||
	    X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
				       (const unsigned char *)common_name, -1, -1, 0) != 1 ||
	    X509_set_issuer_name(x, is_ca ? subject : X509_get_subject_name(issuer)) != 1)
		goto out;

	X509 *signer = is_ca ? x : issuer;
	if (is_ca) {
		if (add_ext(x, signer, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") < 0 ||
		    add_ext(x, signer, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
		    add_ext(x, signer, NID_subject_key_identifier, "hash") < 0)
			goto out;
	} else {
		/* digitalSignature is the key usage an ECDSA key needs for TLS. */
		if (add_ext(x, signer, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
		    add_ext(x, signer, NID_key_usage, "critical,digitalSignature") < 0 ||
		    add_ext(x, signer, NID_ext_key_usage, "serverAuth") < 0 ||
		    add_ext(x, signer, NID_subject_key_identifier, "hash") < 0 ||
		    add_ext(x, signer, NID_authority_key_identifier, "keyid:always") < 0)
			goto out;
		rc = add_subject_alt_names(x, dns_names, ip_addrs);
		if (rc < 0)
			goto out;
		rc = -EIO;
	}
	if (X509_sign(x, issuer_key, EVP_sha256()) <= 0)
		goto out;
	*out = x;
	x = NULL;
	rc = 0;
out:
	X509_free(x);
	return rc;
}

/* Copies a memory BIO's contents into a NUL-terminated malloc'd string. */
static char *bio_to_string(BIO *bio)
{
	char *data = NULL;
	long n = BIO_get_mem_data(bio, &data);
	if (n < 0 || !data)
		return NULL;
	char *s = malloc((size_t)n + 1);
	if (!s)
		return NULL;
	memcpy(s, data, (size_t)n);
	s[n] = '\0';
	return s;
}

static char *cert_to_pem(X509 *x)
{
	char *s = NULL;
	BIO *bio = BIO_new(BIO_s_mem());
	if (bio && PEM_write_bio_X509(bio, x) == 1)
		s = bio_to_string(bio);
	BIO_free(bio);
	return s;
}

static char *key_to_pem(EVP_PKEY *key)
{
	char *s = NULL;
	/* A secure-memory BIO wipes its buffer when freed. */
	BIO *bio = BIO_new(BIO_s_secmem());
	if (bio && PEM_write_bio_PrivateKey(bio, key, NULL, NULL, 0, NULL, NULL) == 1)
		s = bio_to_string(bio);
	BIO_free(bio);
	return s;
}

int certs_generate(const char *const *dns_names, const char *const *ip_addrs, struct certs *out)
{
	int rc;
	X509 *ca = NULL, *leaf = NULL;
	EVP_PKEY *ca_key = NULL, *leaf_key = NULL;

	memset(out, 0, sizeof(*out));
	rc = validate_names(dns_names, ip_addrs);
	if (rc < 0)
		return rc;
	ERR_clear_error();
	rc = -EIO;
	ca_key = EVP_EC_gen("P-256");
	leaf_key = EVP_EC_gen("P-256");
	if (!ca_key || !leaf_key)
		goto out;
	rc = make_cert("muster-webhook-ca", ca_key, NULL, ca_key, NULL, NULL, &ca);
	if (rc < 0)
		goto out;
	rc = make_cert("muster-webhook", leaf_key, ca, ca_key, dns_names, ip_addrs, &leaf);
	if (rc < 0)
		goto out;
	out->ca_pem = cert_to_pem(ca);
	out->cert_pem = cert_to_pem(leaf);
	out->key_pem = key_to_pem(leaf_key);
	rc = out->ca_pem && out->cert_pem && out->key_pem ? 0 : -EIO;
out:
	if (rc < 0) {
		if (rc == -EIO)
			log_openssl_error("cannot generate webhook certificates");
		certs_release(out);
	}
	X509_free(ca);
	X509_free(leaf);
	EVP_PKEY_free(ca_key);
	EVP_PKEY_free(leaf_key);
	return rc;
}

void certs_release(struct certs *c)
{
	if (!c)
		return;
	if (c->key_pem)
		OPENSSL_cleanse(c->key_pem, strlen(c->key_pem));
	free(c->ca_pem);
	free(c->cert_pem);
	free(c->key_pem);
	c->ca_pem = c->cert_pem = c->key_pem = NULL;
}

/* ---- checking what is on disk ---- */

static int no_password(char *buf, int size, int rwflag, void *u)
{
	return -1;
}

static bool has_dns_san(const GENERAL_NAMES *names, const char *want)
{
	for (int i = 0; i < sk_GENERAL_NAME_num(names); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
		if (g->type != GEN_DNS)
			continue;
		const ASN1_IA5STRING *s = g->d.dNSName;
		size_t n = (size_t)ASN1_STRING_length(s);
		const char *name = (const char *)ASN1_STRING_get0_data(s);
		if (n == strlen(want) && strncasecmp(name, want, n) == 0)
			return true;
	}
	return false;
}

static bool has_ip_san(const GENERAL_NAMES *names, const char *want)
{
	unsigned char octets[16];
	int len = ip_octets(want, octets);
	for (int i = 0; len > 0 && i < sk_GENERAL_NAME_num(names); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
		if (g->type != GEN_IPADD)
			continue;
		const ASN1_OCTET_STRING *s = g->d.iPAddress;
		if (ASN1_STRING_length(s) == len &&
		    memcmp(ASN1_STRING_get0_data(s), octets, (size_t)len) == 0)
			return true;
	}
	return false;
}

/* Verifies leaf against ca for serverAuth as of time at. Returns NULL or why not. */
static const char *verify_at(X509 *ca, X509 *leaf, STACK_OF(X509) * chain, time_t at)
{
	const char *why = "cannot set up verification";
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	if (!store || !ctx || X509_STORE_add_cert(store, ca) != 1 ||
	    X509_STORE_CTX_init(ctx, store, leaf, chain) != 1 ||
	    X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER) != 1)
		goto out;
	X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx), at);
	if (X509_verify_cert(ctx) == 1)
		why = NULL;
	else
		why = X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx));
out:
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	return why;
}

const char *certs_check(const struct certs *c, const char *const *dns_names,
			const char *const *ip_addrs)
{
	const char *why = NULL;
	X509 *ca = NULL, *leaf = NULL;
	EVP_PKEY *key = NULL;
	STACK_OF(X509) *chain = sk_X509_new_null();
	GENERAL_NAMES *sans = NULL;
	BIO *bio;

	if (!c->ca_pem || !c->cert_pem || !c->key_pem) {
		sk_X509_free(chain);
		return "incomplete: ca.crt, tls.crt and tls.key are all needed";
	}
	if (!chain)
		return "out of memory";
	if ((bio = BIO_new_mem_buf(c->ca_pem, -1))) {
		ca = PEM_read_bio_X509(bio, NULL, no_password, NULL);
		BIO_free(bio);
	}
	if ((bio = BIO_new_mem_buf(c->cert_pem, -1))) {
		leaf = PEM_read_bio_X509(bio, NULL, no_password, NULL);
		X509 *extra;
		while (leaf && (extra = PEM_read_bio_X509(bio, NULL, no_password, NULL))) {
			if (!sk_X509_push(chain, extra)) {
				X509_free(extra);
				break;
			}
		}
		BIO_free(bio);
	}
	if ((bio = BIO_new_mem_buf(c->key_pem, -1))) {
		key = PEM_read_bio_PrivateKey(bio, NULL, no_password, NULL);
		BIO_free(bio);
	}

	time_t now = time(NULL);
	if (!ca || !leaf || !key) {
		why = "unreadable PEM";
	} else if (X509_check_private_key(leaf, key) != 1) {
		why = "tls.key does not match tls.crt";
	} else if ((why = verify_at(ca, leaf, chain, now))) {
		/* why says it: expired, not signed by ca.crt, not for serverAuth, … */
	} else if (verify_at(ca, leaf, chain,
			     now + (time_t)CERTS_RENEW_BEFORE_DAYS * SECONDS_PER_DAY)) {
		/* Valid now, so only time can have made the difference. */
		why = "a certificate expires within the renewal window";
	} else if (!(sans = X509_get_ext_d2i(leaf, NID_subject_alt_name, NULL, NULL))) {
		why = "no subjectAltName";
	} else {
		for (size_t i = 0; !why && dns_names && dns_names[i]; i++) {
			if (!has_dns_san(sans, dns_names[i]))
				why = "a DNS name is missing from the subjectAltNames";
		}
		for (size_t i = 0; !why && ip_addrs && ip_addrs[i]; i++) {
			if (!has_ip_san(sans, ip_addrs[i]))
				why = "an IP address is missing from the subjectAltNames";
		}
	}
	GENERAL_NAMES_free(sans);
	sk_X509_pop_free(chain, X509_free);
	X509_free(ca);
	X509_free(leaf);
	EVP_PKEY_free(key);
	ERR_clear_error();
	return why;
}

/* ---- files ---- */

static int join_path(char *out, size_t size, const char *dir, const char *prefix, const char *name,
		     const char *suffix)
{
	int n = snprintf(out, size, "%s/%s%s%s", dir, prefix, name, suffix);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Reads dir/name into a NUL-terminated malloc'd string. -ENOENT if it is absent. */
static int read_pem_file(const char *dir, const char *name, char **out)
{
	char path[PATH_MAX];
	struct stat st;
	int rc = join_path(path, sizeof(path), dir, "", name, "");

	*out = NULL;
	if (rc < 0)
		return rc;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > PEM_FILE_MAX) {
		rc = -EINVAL;
		goto out;
	}
	size_t size = (size_t)st.st_size, got = 0;
	char *data = malloc(size + 1);
	if (!data) {
		rc = -ENOMEM;
		goto out;
	}
	while (got < size) {
		ssize_t n = read(fd, data + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : -EIO;
			OPENSSL_cleanse(data, got);
			free(data);
			goto out;
		}
		got += (size_t)n;
	}
	data[got] = '\0';
	*out = data;
	rc = 0;
out:
	close(fd);
	return rc;
}

/* Replaces dir/name with data: write a temporary file, fsync, rename over. */
static int write_file_atomic(const char *dir, const char *name, const char *data, mode_t mode)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	int rc = join_path(tmp, sizeof(tmp), dir, ".", name, ".XXXXXX");
	if (rc == 0)
		rc = join_path(path, sizeof(path), dir, "", name, "");
	if (rc < 0)
		return rc;

	/* mkstemp creates the file 0600, so the key is never readable by others, even briefly. */
	int fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	size_t len = strlen(data), done = 0;
	if (fchmod(fd, mode) != 0) {
		rc = -errno;
		goto fail;
	}
	while (done < len) {
		ssize_t n = write(fd, data + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto fail;
		}
		done += (size_t)n;
	}
	if (fsync(fd) != 0) {
		rc = -errno;
		goto fail;
	}
	if (close(fd) != 0) {
		fd = -1;
		rc = -errno;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		rc = -errno;
		goto fail;
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return rc;
}

/* Makes the renames durable. */
static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = 0;
	/* Some file systems cannot fsync a directory; the files themselves are synced. */
	if (fsync(fd) != 0 && errno != EINVAL)
		rc = -errno;
	close(fd);
	return rc;
}

static int ensure_dir(const char *dir)
{
	struct stat st;
	if (mkdir(dir, 0700) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (stat(dir, &st) != 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int certs_load_or_create(const char *dir, const char *const *dns_names, const char *const *ip_addrs,
			 struct certs *out)
{
	struct certs found = { NULL, NULL, NULL };
	int rc;

	memset(out, 0, sizeof(*out));
	if (!dir || !*dir)
		return -EINVAL;
	rc = validate_names(dns_names, ip_addrs);
	if (rc < 0)
		return rc;

	rc = read_pem_file(dir, "ca.crt", &found.ca_pem);
	if (rc == 0)
		rc = read_pem_file(dir, "tls.crt", &found.cert_pem);
	if (rc == 0)
		rc = read_pem_file(dir, "tls.key", &found.key_pem);
	if (rc == 0) {
		const char *why = certs_check(&found, dns_names, ip_addrs);
		if (!why) {
			log_info("webhook certificates loaded", LF_STR("dir", dir), LF_END);
			*out = found;
			return 0;
		}
		log_info("webhook certificates unusable, generating new ones", LF_STR("dir", dir),
			 LF_STR("reason", why), LF_END);
	} else if (rc != -ENOENT) {
		log_warn("cannot read webhook certificates, generating new ones",
			 LF_STR("dir", dir), LF_STR("error", strerror(-rc)), LF_END);
	}
	certs_release(&found);

	rc = certs_generate(dns_names, ip_addrs, &found);
	if (rc < 0)
		return rc;
	/* Key first: until ca.crt is replaced, the old set fails its checks and nothing uses it. */
	rc = ensure_dir(dir);
	if (rc == 0)
		rc = write_file_atomic(dir, "tls.key", found.key_pem, 0600);
	if (rc == 0)
		rc = write_file_atomic(dir, "tls.crt", found.cert_pem, 0644);
	if (rc == 0)
		rc = write_file_atomic(dir, "ca.crt", found.ca_pem, 0644);
	if (rc == 0)
		rc = fsync_dir(dir);
	if (rc < 0) {
		log_error("cannot write webhook certificates", LF_STR("dir", dir),
			  LF_STR("error", strerror(-rc)), LF_END);
		certs_release(&found);
		return rc;
	}
	log_info("webhook certificates generated", LF_STR("dir", dir), LF_END);
	*out = found;
	return 0;
}
