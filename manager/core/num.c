/* SPDX-License-Identifier: Apache-2.0 */
#include "core/num.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	int64_t v = !negative                      ? (int64_t)mag :
		    mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN :
						     -(int64_t)mag;
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

int num_parse_duration_ms(const char *s, int days, int64_t max_ms, int64_t *ms)
{
	static const struct {
		const char *name;
		int64_t ms;
	} units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { "d", 86400000 }
	};
	size_t n_units = sizeof(units) / sizeof(units[0]) - (days ? 0 : 1);
	uint64_t total = 0;
	if (!s || !*s || max_ms < 0)
		return -EINVAL;
	if (!strcmp(s, "0")) {
		*ms = 0;
		return 0;
	}
	int over = 0;
	while (*s) {
		uint64_t whole = 0, frac = 0, scale = 1;
		int had_whole = is_digit(*s);
		if (had_whole && digits(&s, UINT64_MAX, &whole) == -ERANGE)
			over = 1;
		int had_frac = 0;
		if (*s == '.') {
			s++;
			/* Digits past the 18th can't change a millisecond: read, not counted. */
			for (; is_digit(*s); s++, had_frac = 1)
				if (scale < 1000000000000000000ull) {
					frac = frac * 10 + (uint64_t)(*s - '0');
					scale *= 10;
				}
		}
		if (!had_whole && !had_frac)
			return -EINVAL;
		size_t u;
		for (u = 0; u < n_units; u++) {
			size_t len = strlen(units[u].name);
			/* "m" must not take the "m" of "ms". */
			if (!strncmp(s, units[u].name, len) &&
			    !(len == 1 && s[0] == 'm' && s[1] == 's'))
				break;
		}
		if (u == n_units)
			return -EINVAL;
		s += strlen(units[u].name);
		uint64_t unit = (uint64_t)units[u].ms;
		if (over || whole > ((uint64_t)max_ms - total) / unit) {
			over = 1;
			continue;
		}
		total += whole * unit;
		/* frac / scale of a unit, cut to whole ms; frac < scale <= 10^18 and unit
		 * <= 8.64e7, so the product is done in long double only for the rare long
		 * fraction. */
		uint64_t part =
			(uint64_t)((long double)frac * (long double)unit / (long double)scale);
		if (part > (uint64_t)max_ms - total)
			over = 1;
		else
			total += part;
	}
	if (over)
		return -ERANGE;
	*ms = (int64_t)total;
	return 0;
}
