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

/*
 * A duration as Go's time.ParseDuration reads one, in milliseconds: "0", or a sequence of
 * decimal numbers, each with an optional fraction and a unit ("90s", "1h30m", "1.5h",
 * "250ms"). Units: ms, s, m, h, and d (24 h) when days is 1 (people's flags and queries; a
 * configuration file takes Go's units only). No sign: a duration here is never negative.
 * Fractions below a millisecond are cut. 0 with *ms set, -EINVAL (not a duration), or -ERANGE
 * (more than max_ms).
 */
int num_parse_duration_ms(const char *s, int days, int64_t max_ms, int64_t *ms);

#endif
