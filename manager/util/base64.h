/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Standard base64 (RFC 4648 §4, with padding), as Kubernetes uses it for Secret data,
 * caBundle, kubeconfig *-data fields and admission patches. Both return a NUL-terminated string
 * the caller frees, or NULL: out of memory, or (decoding) input that is not base64.
 */
#ifndef MUSTER_BASE64_H
#define MUSTER_BASE64_H

#include <stddef.h>

char *base64_encode(const void *data, size_t len);
/* *out_len (if not NULL) receives the decoded length; the result may hold NUL bytes. */
char *base64_decode(const char *text, size_t *out_len);

#endif
