/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes resource quantities ("500m", "1.5Gi", "1e3"), parsed and printed the way
 * k8s.io/apimachinery/pkg/api/resource does, but held as an exact count of thousandths of a
 * unit in an int64. Quota maths (sums of requests, comparisons against nominal quotas) is then
 * plain checked integer arithmetic: no floating point, no big numbers, no allocation.
 *
 * Syntax (what quantity_parse accepts):
 *
 *	quantity ::= [sign] number suffix
 *	sign     ::= "+" | "-"
 *	number   ::= digits | digits "." | digits "." digits | "." digits
 *	suffix   ::= "" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E"     (decimal SI)
 *	           | "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei"                      (binary SI)
 *	           | ("e" | "E") [sign] digits                                   (decimal exponent)
 *
 * "E" alone is exa (10^18); "E" followed by digits is an exponent ("1E3" is 1000). The exponent
 * must fit in an int64, as Kubernetes requires. Nothing else is accepted: no whitespace, no
 * other unit letters ("1KB", "1K", "1mi"), no hexadecimal, no embedded NUL bytes.
 *
 * Range: milli holds values in [QUANTITY_MILLI_MIN, QUANTITY_MILLI_MAX], i.e. about +-9.2e15
 * whole units (8 PiB of memory, 9.2 quadrillion CPUs). Anything larger is -ERANGE, never a
 * clamped or wrapped number. The range is symmetric (INT64_MIN is excluded) so that negating a
 * valid value is always valid. Kubernetes itself keeps arbitrary precision; staying in int64
 * milli-units is a deliberate trade so that quota maths is exact and cheap, and is far above
 * any real cluster's capacity.
 *
 * Rounding: a value that is not a whole number of milli-units is rounded away from zero to the
 * next one ("0.1m" -> 1m, "1e-9" -> 1m, "-0.1m" -> -1m), as Kubernetes does for MilliValue: a
 * non-zero request never becomes zero. Formatting therefore never prints below "m": Kubernetes
 * would print "1.2345" as "1234500u", we print "1235m".
 *
 * Canonical form (what quantity_format prints) is Kubernetes' Quantity.String() for the same
 * value and format:
 *   - zero prints "0";
 *   - decimal SI: the largest SI suffix that keeps an integer mantissa (1000 -> "1k",
 *     1.5 -> "1500m", 0.5 -> "500m");
 *   - decimal exponent: the same mantissa, written with "e<N>", N a multiple of 3
 *     (1000 -> "1e3", 0.015 -> "15e-3", 1.5e3 -> "1500");
 *   - binary SI: the largest binary suffix that keeps an integer (1024Mi -> "1Gi", 1536Mi stays
 *     "1536Mi", 1025 -> "1025"), but values with magnitude below 1024 and values with a
 *     fractional part print as decimal SI ("0.5Ki" -> "512", "1.5" -> "1500m").
 * Formatting a parsed value and parsing the result gives back the same milli value, though not
 * always the same format: binary SI prints 2000 as "2000", which reads back as decimal SI.
 *
 * Errors: functions return 0 (or a length) on success and a negative errno on failure:
 *   -EINVAL  malformed input or argument,
 *   -ERANGE  value or result outside [QUANTITY_MILLI_MIN, QUANTITY_MILLI_MAX],
 *   -ENOSPC  output buffer too small.
 * Output arguments are left untouched on failure unless stated otherwise.
 *
 * Ownership: nothing here allocates or keeps pointers; callers own every buffer. Pointer
 * arguments must be valid (parsing and formatting also answer NULL with -EINVAL). All functions
 * are reentrant and independent of the C locale.
 */
#ifndef MUSTER_QUANTITY_H
#define MUSTER_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

#define QUANTITY_MILLI_MAX INT64_MAX
#define QUANTITY_MILLI_MIN (-INT64_MAX)

/* Bytes that always suffice for quantity_format's output, terminating NUL included. */
#define QUANTITY_FORMAT_SIZE 32

/*
 * The suffix family a quantity was written in; formatting prints in the same family. The zero
 * value is decimal SI, as for a Kubernetes quantity parsed from "0".
 */
enum quantity_format {
	QUANTITY_DECIMAL_SI = 0, /* 12M = 12 * 10^6, 500m */
	QUANTITY_BINARY_SI, /* 12Mi = 12 * 2^20 */
	QUANTITY_DECIMAL_EXPONENT, /* 12e6 */
};

struct quantity {
	int64_t milli; /* value in thousandths of a unit, within the range above */
	enum quantity_format format;
};

/*
 * Parses the NUL-terminated string s into *out. The format is the suffix's family, except that a
 * binary-SI value strictly between -1 and 1 becomes decimal SI, as in Kubernetes.
 * Returns 0, -EINVAL for malformed input, or -ERANGE when the value does not fit.
 */
int quantity_parse(const char *s, struct quantity *out);

/* As quantity_parse, for the len bytes at s, which need not be NUL-terminated. A NUL byte among
 * them is malformed input. */
int quantity_parse_n(const char *s, size_t len, struct quantity *out);

/*
 * Writes q's canonical form and a NUL to buf (size bytes; QUANTITY_FORMAT_SIZE is always
 * enough). Returns the length written, excluding the NUL; -ENOSPC if it does not fit (buf then
 * holds "" when size > 0); -EINVAL for an unknown format; -ERANGE when milli is out of range.
 */
int quantity_format(const struct quantity *q, char *buf, size_t size);

/* As quantity_format, for a bare milli value, such as a sum, printed in the given family. */
int quantity_format_milli(int64_t milli, enum quantity_format format, char *buf, size_t size);

/*
 * Checked arithmetic on milli values: *sum = a + b, *difference = a - b. Returns 0, or -ERANGE
 * (result untouched) when an operand or the result is outside the valid range.
 */
int quantity_milli_add(int64_t a, int64_t b, int64_t *sum);
int quantity_milli_sub(int64_t a, int64_t b, int64_t *difference);

/* Returns -1, 0 or 1 as a is less than, equal to or greater than b. */
int quantity_milli_cmp(int64_t a, int64_t b);

/*
 * *acc += *q and *acc -= *q, keeping acc's format, except that a zero acc takes q's format
 * (Kubernetes' Quantity.Add and Sub do the same, so summing "1Gi" values prints "2Gi").
 * Returns 0, or -ERANGE with *acc untouched.
 */
int quantity_add(struct quantity *acc, const struct quantity *q);
int quantity_sub(struct quantity *acc, const struct quantity *q);

/* Compares values only; the format plays no part ("1Ki" equals "1024"). Returns -1, 0 or 1. */
int quantity_cmp(const struct quantity *a, const struct quantity *b);

/*
 * Whole units, rounded away from zero: Kubernetes' Quantity.Value(). Kueue accounts every
 * resource but CPU in these units (CPU in milli-units), so quota decisions that must agree with
 * Kueue's round each request up this way before summing. Never overflows.
 */
int64_t quantity_milli_to_units(int64_t milli);

#endif
