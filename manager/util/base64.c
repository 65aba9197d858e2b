/* SPDX-License-Identifier: Apache-2.0 */
#include "util/base64.h"

#include <limits.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

char *base64_encode(const void *data, size_t len)
{
	if (len > (size_t)INT_MAX / 4 * 3)
		return NULL;
	char *out = malloc(4 * ((len + 2) / 3) + 1);
	if (out)
		EVP_EncodeBlock((unsigned char *)out, data, (int)len);
	return out;
}

char *base64_decode(const char *text, size_t *out_len)
{
	size_t len = strlen(text);
	if (len % 4 != 0 || len > INT_MAX)
		return NULL;
	unsigned char *out = malloc(len / 4 * 3 + 1);
	if (!out)
		return NULL;
	int n = EVP_DecodeBlock(out, (const unsigned char *)text, (int)len);
	if (n < 0) {
		free(out);
		return NULL;
	}
	/* EVP_DecodeBlock counts padding as output bytes; drop them. */
	if (len >= 1 && text[len - 1] == '=')
		n--;
	if (len >= 2 && text[len - 2] == '=')
		n--;
	out[n] = '\0';
	if (out_len)
		*out_len = (size_t)n;
	return (char *)out;
}
