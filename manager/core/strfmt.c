/* SPDX-License-Identifier: Apache-2.0 */
#include "core/strfmt.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* Copies what fits of piece (n bytes) at *len, counting all of it. */
static void put(char *dst, size_t size, size_t *len, const char *piece, size_t n)
{
	if (*len + 1 < size) {
		size_t room = size - 1 - *len;
		memcpy(dst + *len, piece, n < room ? n : room);
	}
	*len += n;
}

int strfmt_v(char *dst, size_t size, const char *fmt, va_list ap)
{
	va_list whole; /* for vsnprintf, from the first argument, should a directive need it */
	va_copy(whole, ap);
	size_t len = 0;
	const char *f = fmt;
	for (;;) {
		const char *pct = strchr(f, '%');
		size_t lit = pct ? (size_t)(pct - f) : strlen(f);
		put(dst, size, &len, f, lit);
		if (!pct)
			break;
		if (pct[1] == '%') {
			put(dst, size, &len, "%", 1);
			f = pct + 2;
		} else if (pct[1] == 's') {
			const char *s = va_arg(ap, const char *);
			if (!s)
				s = "(null)";
			put(dst, size, &len, s, strlen(s));
			f = pct + 2;
		} else if (pct[1] == 'z' && pct[2] == 'u') {
			char num[24];
			size_t v = va_arg(ap, size_t), k = sizeof(num);
			do
				num[--k] = (char)('0' + v % 10);
			while ((v /= 10) != 0);
			put(dst, size, &len, num + k, sizeof(num) - k);
			f = pct + 3;
		} else {
			/* Not ours: vsnprintf writes the whole text again, over what is here. */
			int n = vsnprintf(dst, size, fmt, whole);
			va_end(whole);
			return n;
		}
	}
	va_end(whole);
	if (size)
		dst[len < size ? len : size - 1] = '\0';
	return len > INT_MAX ? -1 : (int)len;
}
