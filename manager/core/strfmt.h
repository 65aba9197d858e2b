/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vsnprintf for the formats hot paths use: messages and field paths made per workload
 * ("insufficient unused quota for %s in flavor %s, %s more needed", "%s.spec.containers").
 * %s, %zu and %% are done here, with no locale or stdio machinery; a format with any other
 * directive goes to vsnprintf whole. Either way the bytes and the return value are
 * vsnprintf's: the length the whole text has, of which at most size - 1 bytes are written,
 * NUL-terminated when size > 0. A NULL %s prints "(null)", as glibc does.
 */
#ifndef MUSTER_STRFMT_H
#define MUSTER_STRFMT_H

#include <stdarg.h>
#include <stddef.h>

int strfmt_v(char *dst, size_t size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

#endif
