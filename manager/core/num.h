/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Strict decimal numbers from text that a person or another program wrote: command-line
 * flags, query parameters, annotations. The whole string is the number, or it is not one:
 *
 *	integer  ::= [sign] digits                 (num_parse_i64)
 *	unsigned ::= digits                        (num_parse_u64)
 *	real     ::= [sign] mantissa [exponent]    (num_parse_double)
 *	mantissa ::= digits | digits "." | digits "." digits | "." digits
 *	exponent ::= ("e" | "E") [sign] digits
 *	sign     ::= "+" | "-"
 *
 * as Go's strconv reads them (kubectl and Kubernetes' own parsers), so a value means the same
 * here as there. Nothing else: no whitespace, no empty string, no hexadecimal or octal, no
 * "inf" or "nan", no locale. A value outside [min, max] is -ERANGE, and so is one too large
 * for the type: overflow is an error, never a clamped or wrapped number.
 *
 * Each returns 0 and sets *out, or returns -EINVAL (not a number of that shape) or -ERANGE
 * (a number outside [min, max]) and leaves *out alone. s may be NULL: -EINVAL.
 */
#ifndef MUSTER_NUM_H
#define MUSTER_NUM_H

#include <stdint.h>

int num_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);
int num_parse_u64(const char *s, uint64_t max, uint64_t *out);
/* min and max are inclusive; a finite result that rounds to 0 from a tiny value is 0. */
int num_parse_double(const char *s, double min, double max, double *out);

#endif
