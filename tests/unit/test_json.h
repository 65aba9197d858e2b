/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON literals for tests, written with single quotes so they stay readable in C strings:
 * J("{'a':%d}", 1). Include after cmocka.h. The object is a new reference; bad JSON fails the
 * test.
 */
#ifndef MUSTER_TEST_JSON_H
#define MUSTER_TEST_JSON_H

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>

__attribute__((format(printf, 1, 2))) static inline json_t *J(const char *fmt, ...)
{
	char buf[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (char *p = buf; *p; p++)
		if (*p == '\'')
			*p = '"';
	json_error_t err;
	json_t *v = json_loads(buf, 0, &err);
	if (!v)
		fail_msg("bad JSON in test: %s: %s", err.text, buf);
	return v;
}

#endif
