/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes quantities as exact int64 milli-units. See quantity.h for the contract.
 *
 * Parsing never builds a big number. The mantissa digits stay in the input string and are
 * scaled by walking them: the digits left of the target unit's point form an integer of at most
 * 19 digits (more cannot fit an int64), and the digits right of it are multiplied by the binary
 * suffix's power of two from the last digit to the first, which yields both the carry into the
 * integer part and whether anything non-zero remains to round up. Every step is exact.
 */
#include "core/quantity.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Decimal digits of INT64_MAX, the largest magnitude. */
#define MAX_MAGNITUDE_DIGITS 19

/*
 * Exponents are clamped to this magnitude and inputs limited to MAX_INPUT_LEN bytes, so the
 * decimal point arithmetic below fits an int64 with room to spare. Clamping does not change any
 * result: with |exponent| >= 2^61 and at most 2^60 digits, the value is far outside the range
 * either way (-ERANGE) or far below a milli-unit (rounds up to 1m).
 */
#define EXPONENT_CLAMP (INT64_C(1) << 61)
#define MAX_INPUT_LEN (UINT64_C(1) << 60)

struct suffix {
	const char *text;
	int exp10; /* the suffix multiplies by 10^exp10 ... */
	int exp2; /* ... and by 2^exp2 */
	enum quantity_format format;
};

/* In order of length (parse_suffix relies on it). */
static const struct suffix suffixes[] = {
	{ "", 0, 0, QUANTITY_DECIMAL_SI },   { "n", -9, 0, QUANTITY_DECIMAL_SI },
	{ "u", -6, 0, QUANTITY_DECIMAL_SI }, { "m", -3, 0, QUANTITY_DECIMAL_SI },
	{ "k", 3, 0, QUANTITY_DECIMAL_SI },  { "M", 6, 0, QUANTITY_DECIMAL_SI },
	{ "G", 9, 0, QUANTITY_DECIMAL_SI },  { "T", 12, 0, QUANTITY_DECIMAL_SI },
	{ "P", 15, 0, QUANTITY_DECIMAL_SI }, { "E", 18, 0, QUANTITY_DECIMAL_SI },
	{ "Ki", 0, 10, QUANTITY_BINARY_SI }, { "Mi", 0, 20, QUANTITY_BINARY_SI },
	{ "Gi", 0, 30, QUANTITY_BINARY_SI }, { "Ti", 0, 40, QUANTITY_BINARY_SI },
	{ "Pi", 0, 50, QUANTITY_BINARY_SI }, { "Ei", 0, 60, QUANTITY_BINARY_SI },
};

/* Suffixes printed for powers of 1024, index = power. */
static const char *const binary_suffix_text[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };

/* The mantissa as written: integer digits, then fraction digits; the point is implied. */
struct mantissa {
	const char *int_digits;
	size_t int_len;
	const char *frac_digits;
	size_t frac_len;
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static unsigned digit_at(const struct mantissa *m, size_t i)
{
	char c = i < m->int_len ? m->int_digits[i] : m->frac_digits[i - m->int_len];
	return (unsigned)(c - '0');
}

/*
 * Computes |mantissa| * 2^exp2 * 10^exp10, rounded away from zero to an integer, into
 * *magnitude. exp10 already includes the target unit (3 for milli-units, 9 for nano-units) and
 * the shift for the fraction digits. Returns 0, or -ERANGE above INT64_MAX.
 */
static int scale_mantissa(const struct mantissa *m, int64_t exp10, unsigned exp2,
			  uint64_t *magnitude)
{
	size_t len = m->int_len + m->frac_len;
	size_t first = 0;
	while (first < len && digit_at(m, first) == 0)
		first++;
	if (first == len) {
		*magnitude = 0;
		return 0;
	}
	size_t last = len - 1;
	while (digit_at(m, last) == 0)
		last--;

	/*
	 * The significant digits first..last, with no leading or trailing zero, times 10^exp10
	 * (trailing zeros folded in). point is how many of them lie left of the unit's decimal
	 * point; it may exceed their count (implied zeros follow) or be negative (implied zeros
	 * precede).
	 */
	int64_t significant = (int64_t)(last - first + 1);
	exp10 += (int64_t)(len - 1 - last);
	int64_t point = significant + exp10;

	/* An integer part of 20 or more digits, the first non-zero, is at least 10^19. */
	if (point > MAX_MAGNITUDE_DIGITS)
		return -ERANGE;
	/* Ei is the largest binary suffix, so this is below 10^-19 * 2^60 < 0.12: just round up. */
	if (point <= -MAX_MAGNITUDE_DIGITS) {
		*magnitude = 1;
		return 0;
	}

	uint64_t whole = 0;
	for (int64_t i = 0; i < point; i++)
		whole = whole * 10 + (i < significant ? digit_at(m, first + (size_t)i) : 0);
	if (whole > ((uint64_t)INT64_MAX >> exp2))
		return -ERANGE;
	whole <<= exp2;

	/*
	 * Multiply the fraction 0.d1 d2 ... by 2^exp2 the schoolbook way, last digit first. Each
	 * step's product is below 10 * 2^60 < 2^64; the final carry is the integer part of the
	 * product and any non-zero digit left behind means the product was not whole.
	 */
	uint64_t factor = UINT64_C(1) << exp2;
	uint64_t carry = 0;
	bool inexact = false;
	int64_t frac_first = point > 0 ? point : 0;
	for (int64_t i = significant - 1; i >= frac_first; i--) {
		uint64_t t = digit_at(m, first + (size_t)i) * factor + carry;
		inexact |= t % 10 != 0;
		carry = t / 10;
	}
	for (int64_t i = point; i < 0; i++) {
		inexact |= carry % 10 != 0;
		carry /= 10;
	}

	uint64_t total = whole + carry + (inexact ? 1 : 0);
	if (total > (uint64_t)INT64_MAX)
		return -ERANGE;
	*magnitude = total;
	return 0;
}

/*
 * Most quantities are whole numbers with a suffix that scales them up ("4", "500m", "8Gi"):
 * their milli-units are the exact product, taken here when it fits an int64, as
 * scale_mantissa would compute it. Returns 1 with *magnitude, or 0 to leave the number to
 * scale_mantissa (a fraction, a suffix below milli, too many digits, or a product that may
 * not fit, whose error it reports).
 */
static int whole_quantity(const struct mantissa *m, int64_t exp10, unsigned exp2,
			  uint64_t *magnitude)
{
	static const uint64_t pow10[] = {
		UINT64_C(1),
		UINT64_C(10),
		UINT64_C(100),
		UINT64_C(1000),
		UINT64_C(10000),
		UINT64_C(100000),
		UINT64_C(1000000),
		UINT64_C(10000000),
		UINT64_C(100000000),
		UINT64_C(1000000000),
		UINT64_C(10000000000),
		UINT64_C(100000000000),
		UINT64_C(1000000000000),
		UINT64_C(10000000000000),
		UINT64_C(100000000000000),
		UINT64_C(1000000000000000),
		UINT64_C(10000000000000000),
		UINT64_C(100000000000000000),
		UINT64_C(1000000000000000000),
	};
	int64_t scale = exp10 + 3; /* to milli-units */
	if (m->frac_len != 0 || m->int_len > 18 || scale < 0 ||
	    scale >= (int64_t)(sizeof(pow10) / sizeof(pow10[0])))
		return 0;
	uint64_t v = 0; /* below 10^18: no overflow */
	for (size_t i = 0; i < m->int_len; i++)
		v = v * 10 + (unsigned)(m->int_digits[i] - '0');
	if (__builtin_mul_overflow(v, pow10[scale], &v) || v > ((uint64_t)INT64_MAX >> exp2))
		return 0;
	*magnitude = v << exp2;
	return 1;
}

/*
 * Parses "e" or "E", an optional sign and digits, the whole of s[0..len). Like Kubernetes the
 * exponent must fit an int64; it is then clamped to +-EXPONENT_CLAMP. Returns 0 or -EINVAL.
 */
static int parse_exponent(const char *s, size_t len, int64_t *exponent)
{
	size_t pos = 1;
	bool negative = false;
	if (pos < len && (s[pos] == '+' || s[pos] == '-')) {
		negative = s[pos] == '-';
		pos++;
	}
	if (pos == len)
		return -EINVAL;
	uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	uint64_t value = 0;
	for (; pos < len; pos++) {
		if (!is_digit(s[pos]))
			return -EINVAL;
		unsigned d = (unsigned)(s[pos] - '0');
		if (value > (limit - d) / 10)
			return -EINVAL;
		value = value * 10 + d;
	}
	int64_t clamped = value > (uint64_t)EXPONENT_CLAMP ? EXPONENT_CLAMP : (int64_t)value;
	*exponent = negative ? -clamped : clamped;
	return 0;
}

/* Finds the suffix s[0..len): its powers of ten and two, and its format. */
static int parse_suffix(const char *s, size_t len, int64_t *exp10, unsigned *exp2,
			enum quantity_format *format)
{
	/* Only suffixes of its length can match: "" first, then the one-letter decimal ones, then
	 * the binary ones (the table's order). */
	_Static_assert(sizeof(suffixes) / sizeof(suffixes[0]) == 16, "1 + 9 + 6 suffixes");
	size_t from = len == 0 ? 0 : len == 1 ? 1 : 10;
	size_t to = len == 0 ? 1 : len == 1 ? 10 : len == 2 ? 16 : 0;
	for (size_t i = from; i < to; i++) {
		const struct suffix *sfx = &suffixes[i];
		if (memcmp(sfx->text, s, len) == 0) {
			*exp10 = sfx->exp10;
			*exp2 = (unsigned)sfx->exp2;
			*format = sfx->format;
			return 0;
		}
	}
	/* "E" alone matched exa above; "e"/"E" with more after it is an exponent. */
	if (len > 1 && (s[0] == 'e' || s[0] == 'E')) {
		int err = parse_exponent(s, len, exp10);
		if (err)
			return err;
		*exp2 = 0;
		*format = QUANTITY_DECIMAL_EXPONENT;
		return 0;
	}
	return -EINVAL;
}

int quantity_parse_n(const char *s, size_t len, struct quantity *out)
{
	if (!s || !out || (uint64_t)len > MAX_INPUT_LEN)
		return -EINVAL;

	size_t pos = 0;
	bool negative = false;
	if (pos < len && (s[pos] == '+' || s[pos] == '-')) {
		negative = s[pos] == '-';
		pos++;
	}

	struct mantissa m = { .int_digits = s + pos };
	while (pos < len && is_digit(s[pos]))
		pos++;
	m.int_len = (size_t)(s + pos - m.int_digits);
	m.frac_digits = s + pos;
	if (pos < len && s[pos] == '.') {
		pos++;
		m.frac_digits = s + pos;
		while (pos < len && is_digit(s[pos]))
			pos++;
		m.frac_len = (size_t)(s + pos - m.frac_digits);
	}
	/*
	 * Kubernetes' scanner lets "", "-", "." and bare suffixes such as "k" through as zero,
	 * but its own grammar and the CRD validation pattern require a digit; so do we.
	 */
	if (m.int_len + m.frac_len == 0)
		return -EINVAL;

	int64_t exp10;
	unsigned exp2;
	enum quantity_format format;
	int err = parse_suffix(s + pos, len - pos, &exp10, &exp2, &format);
	if (err)
		return err;

	/* Both terms are bounded (see EXPONENT_CLAMP), so neither sum can overflow. */
	uint64_t magnitude;
	if (!whole_quantity(&m, exp10, exp2, &magnitude) &&
	    (err = scale_mantissa(&m, exp10 - (int64_t)m.frac_len + 3, exp2, &magnitude)) != 0)
		return err;

	/*
	 * Kubernetes turns a binary-SI value strictly between -1 and 1 into decimal SI, judged
	 * after rounding to nano-units, so 0.9999999999 counts as 1. Only such a value can have a
	 * milli magnitude in 1..1000, and it then fits nano-units easily.
	 */
	if (format == QUANTITY_BINARY_SI && magnitude > 0 && magnitude <= 1000) {
		uint64_t nano;
		if (scale_mantissa(&m, exp10 - (int64_t)m.frac_len + 9, exp2, &nano) == 0 &&
		    nano < UINT64_C(1000000000))
			format = QUANTITY_DECIMAL_SI;
	}

	out->milli = negative ? -(int64_t)magnitude : (int64_t)magnitude;
	out->format = format;
	return 0;
}

int quantity_parse(const char *s, struct quantity *out)
{
	if (!s)
		return -EINVAL;
	return quantity_parse_n(s, strlen(s), out);
}

/* Appends the decimal digits of v at p; returns the number written. */
static size_t put_uint(char *p, uint64_t v)
{
	char rev[20];
	size_t n = 0;
	do {
		rev[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		p[i] = rev[n - 1 - i];
	return n;
}

static size_t put_str(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return n;
}

/*
 * Binary SI needs a whole number of at least 1024 units; it prints that number with as many
 * factors of 1024 moved into the suffix as divide it. Returns the length, or 0 when the value
 * must be printed in decimal SI instead.
 */
static size_t put_binary_si(char *p, uint64_t magnitude)
{
	if (magnitude < UINT64_C(1024000) || magnitude % 1000 != 0)
		return 0;
	uint64_t units = magnitude / 1000;
	size_t power = 0;
	size_t largest = sizeof(binary_suffix_text) / sizeof(binary_suffix_text[0]) - 1;
	while (units % 1024 == 0 && power < largest) {
		units /= 1024;
		power++;
	}
	size_t n = put_uint(p, units);
	return n + put_str(p + n, binary_suffix_text[power]);
}

/*
 * Decimal forms: every factor of ten moves into the exponent, then the exponent is lowered to
 * a multiple of three. Lowering only puts back zeros just removed, so the mantissa never
 * exceeds the magnitude. A milli magnitude has an exponent in -3..15 (INT64_MAX < 10^19).
 */
static size_t put_decimal(char *p, uint64_t magnitude, enum quantity_format format)
{
	uint64_t mantissa = magnitude;
	int exponent = -3;
	if (format != QUANTITY_DECIMAL_EXPONENT) {
		/* The same result by thousands, as the SI suffixes step: amounts are formatted for
		 * the message of nearly every pending workload. */
		static const char si_suffix[] = { 'm', 0, 'k', 'M', 'G', 'T', 'P' };
		while (mantissa % 1000 == 0) {
			mantissa /= 1000;
			exponent += 3;
		}
		size_t n = put_uint(p, mantissa);
		char suffix = si_suffix[(exponent + 3) / 3];
		if (suffix)
			p[n++] = suffix;
		return n;
	}
	while (mantissa % 10 == 0) {
		mantissa /= 10;
		exponent++;
	}
	while (exponent % 3 != 0) {
		mantissa *= 10;
		exponent--;
	}
	size_t n = put_uint(p, mantissa);
	if (exponent == 0)
		return n;
	p[n++] = 'e';
	if (exponent < 0) {
		p[n++] = '-';
		exponent = -exponent;
	}
	return n + put_uint(p + n, (uint64_t)exponent);
}

int quantity_format_milli(int64_t milli, enum quantity_format format, char *buf, size_t size)
{
	if (!buf && size > 0)
		return -EINVAL;
	if (format != QUANTITY_DECIMAL_SI && format != QUANTITY_BINARY_SI &&
	    format != QUANTITY_DECIMAL_EXPONENT)
		return -EINVAL;
	if (milli < QUANTITY_MILLI_MIN)
		return -ERANGE;

	char text[QUANTITY_FORMAT_SIZE];
	size_t len = 0;
	if (milli == 0) {
		text[len++] = '0';
	} else {
		uint64_t magnitude = milli < 0 ? (uint64_t)-milli : (uint64_t)milli;
		if (milli < 0)
			text[len++] = '-';
		size_t n = 0;
		if (format == QUANTITY_BINARY_SI)
			n = put_binary_si(text + len, magnitude);
		if (n == 0)
			n = put_decimal(text + len, magnitude, format);
		len += n;
	}

	if (len + 1 > size) {
		if (size > 0)
			buf[0] = '\0';
		return -ENOSPC;
	}
	memcpy(buf, text, len);
	buf[len] = '\0';
	return (int)len;
}

int quantity_format(const struct quantity *q, char *buf, size_t size)
{
	if (!q)
		return -EINVAL;
	return quantity_format_milli(q->milli, q->format, buf, size);
}

static bool in_range(int64_t milli)
{
	return milli >= QUANTITY_MILLI_MIN;
}

int quantity_milli_add(int64_t a, int64_t b, int64_t *sum)
{
	if (!in_range(a) || !in_range(b))
		return -ERANGE;
	/* The bounds are symmetric, so each check's right side is itself in range. */
	if ((b > 0 && a > QUANTITY_MILLI_MAX - b) || (b < 0 && a < QUANTITY_MILLI_MIN - b))
		return -ERANGE;
	*sum = a + b;
	return 0;
}

int quantity_milli_sub(int64_t a, int64_t b, int64_t *difference)
{
	if (!in_range(b))
		return -ERANGE;
	return quantity_milli_add(a, -b, difference);
}

int quantity_milli_cmp(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

int quantity_add(struct quantity *acc, const struct quantity *q)
{
	int64_t sum;
	int err = quantity_milli_add(acc->milli, q->milli, &sum);
	if (err)
		return err;
	if (acc->milli == 0)
		acc->format = q->format;
	acc->milli = sum;
	return 0;
}

int quantity_sub(struct quantity *acc, const struct quantity *q)
{
	int64_t difference;
	int err = quantity_milli_sub(acc->milli, q->milli, &difference);
	if (err)
		return err;
	if (acc->milli == 0)
		acc->format = q->format;
	acc->milli = difference;
	return 0;
}

int quantity_cmp(const struct quantity *a, const struct quantity *b)
{
	return quantity_milli_cmp(a->milli, b->milli);
}

int64_t quantity_milli_to_units(int64_t milli)
{
	/* C division truncates toward zero; a remainder then means one more unit away from it. */
	int64_t units = milli / 1000;
	if (milli % 1000 > 0)
		units++;
	else if (milli % 1000 < 0)
		units--;
	return units;
}
