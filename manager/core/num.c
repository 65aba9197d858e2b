/* SPDX-License-Identifier: Apache-2.0 */
#include "core/num.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * The digits at *s as a magnitude, *s moved past them: 0, -EINVAL when there are none, or
 * -ERANGE when they exceed limit (all of them are still read, so that "99...9x" is not a
 * number rather than a number too large).
 */
static int digits(const char **s, uint64_t limit, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;
	int over = 0;
	for (; is_digit(*p); p++) {
		unsigned d = (unsigned)(*p - '0');
		if (over || d > limit || v > (limit - d) / 10)
			over = 1;
		else
			v = v * 10 + d;
	}
	if (p == *s)
		return -EINVAL;
	*s = p;
	*out = v;
	return over ? -ERANGE : 0;
}

int num_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v;
	if (!s)
		return -EINVAL;
	int rc = digits(&s, max, &v);
	if (rc == -EINVAL || *s != '\0')
		return -EINVAL;
	if (rc != 0)
		return rc;
	*out = v;
	return 0;
}

int num_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	int negative = 0;
	uint64_t mag;
	if (!s)
		return -EINVAL;
	if (*s == '+' || *s == '-')
		negative = *s++ == '-';
	/* -INT64_MIN does not fit an int64, so the magnitude's limit is one more when negative. */
	int rc = digits(&s, negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &mag);
	if (rc == -EINVAL || *s != '\0')
		return -EINVAL;
	if (rc != 0)
		return rc;
	int64_t v = !negative ? (int64_t)mag
		    : mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int num_parse_double(const char *s, double min, double max, double *out)
{
	const char *p = s;
	if (!s)
		return -EINVAL;
	/* The grammar first: strtod would also take spaces, hexadecimal, "inf" and "nan". */
	if (*p == '+' || *p == '-')
		p++;
	const char *mantissa = p;
	while (is_digit(*p))
		p++;
	int whole = p > mantissa;
	if (*p == '.') {
		const char *fraction = ++p;
		while (is_digit(*p))
			p++;
		if (!whole && p == fraction)
			return -EINVAL;
	} else if (!whole) {
		return -EINVAL;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!is_digit(*p))
			return -EINVAL;
		while (is_digit(*p))
			p++;
	}
	if (*p != '\0')
		return -EINVAL;
	char *end;
	double v = strtod(s, &end);
	if (end != p) /* a locale whose decimal point is not "." */
		return -EINVAL;
	if (isinf(v) || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}
