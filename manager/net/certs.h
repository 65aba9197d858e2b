/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Webhook certificates: a private CA and a serving certificate it signs, made with OpenSSL 3.
 * kube-apiserver calls the webhook as a Go client, which checks subjectAltNames only (the
 * common name is ignored), so every name and address the apiserver dials must be a SAN; the CA
 * certificate goes into the webhook configuration's caBundle.
 *
 * Keys are EC P-256 and both certificates are valid for CERTS_VALIDITY_DAYS from an hour ago
 * (clock skew). The CA key is not kept: renewing the serving certificate means a new CA, and
 * so a new caBundle.
 *
 * No shared state, so any thread may call these; they block (key generation, file I/O), so
 * call them before the event loop starts or from a uv_queue_work job, not on the loop.
 */
#ifndef MUSTER_CERTS_H
#define MUSTER_CERTS_H

#define CERTS_VALIDITY_DAYS 3650
/* certs_load_or_create replaces certificates that expire sooner than this. */
#define CERTS_RENEW_BEFORE_DAYS 30

/* PEM texts, NUL-terminated, all owned by the struct; free them with certs_release. */
struct certs {
	char *ca_pem; /* the CA certificate, for caBundle and for clients */
	char *cert_pem; /* the serving certificate (as loaded: may be followed by a chain) */
	char *key_pem; /* its private key, PKCS#8 */
};

/*
 * Creates a new CA and a serving certificate signed by it for the given subjectAltNames, with
 * extendedKeyUsage serverAuth. dns_names and ip_addrs are NULL-terminated arrays (either may be
 * NULL); at least one name in all is required. DNS names are letters, digits, '-' and '.', with
 * an optional leading "*." ; addresses are numeric IPv4 or IPv6. Returns 0 and fills *out
 * (release it with certs_release), -EINVAL for a bad or missing name, or -EIO when OpenSSL
 * fails (in practice, out of memory); on error *out is left empty.
 */
int certs_generate(const char *const *dns_names, const char *const *ip_addrs, struct certs *out);

/*
 * Loads dir/ca.crt, dir/tls.crt and dir/tls.key if all three are present, the key matches,
 * the serving certificate chains to ca.crt for serverAuth, both stay valid for at least
 * CERTS_RENEW_BEFORE_DAYS, and every requested name and address is among its SANs. Otherwise
 * it generates new ones (certs_generate) and writes them, each atomically (temporary file,
 * fsync, rename), tls.key with mode 0600; dir is created (0700) if missing. A crash between
 * the three renames leaves a set that fails the checks above and is replaced next time.
 * Returns 0 and fills *out, or a negative errno (from certs_generate, or the file system when
 * writing fails, e.g. -EROFS); on error *out is left empty.
 */
int certs_load_or_create(const char *dir, const char *const *dns_names, const char *const *ip_addrs,
			 struct certs *out);

/* Whether a set (loaded from files or a Secret) can serve these names: the key matches, the
 * serving certificate chains to ca_pem for serverAuth, both stay valid for at least
 * CERTS_RENEW_BEFORE_DAYS, and every name and address is among its SANs. NULL if usable, else
 * a reason for the log. */
const char *certs_check(const struct certs *c, const char *const *dns_names,
			const char *const *ip_addrs);

/* Frees the PEM texts (wiping the key first) and empties *c. NULL is a no-op. */
void certs_release(struct certs *c);

#endif
