/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes `muster replay-philly` (sim/philly.h): the trace reader and, for a trace it accepts,
 * a bounded replay with its forecasts. Every parse ends clean (status 0 with no message and at
 * least one job, or 2 with FILE:LINE messages and nothing parsed); every replay too (status 0:
 * the three FORECAST lines and nothing on stderr, or 2 with a message). Status 1, a crash, a
 * leak or a hang is a bug. The replay is bounded (at most 64 jobs, 4 samples).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/philly.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void replay(const struct philly_trace *t)
{
	char *out = NULL, *err = NULL;
	size_t out_len = 0, err_len = 0;
	FILE *fout = open_memstream(&out, &out_len);
	FILE *ferr = open_memstream(&err, &err_len);
	if (!fout || !ferr)
		abort();
	struct philly_options opt = { .max_jobs = 64,
				      .max_samples = 4,
				      .strict_fifo = (int)(t->n % 2) };
	int status = philly_replay(t, &opt, fout, ferr);
	fclose(fout);
	fclose(ferr);
	if (status == PHILLY_OK) {
		if (err_len != 0 || !strstr(out, "FORECAST runtime=median ") ||
		    !strstr(out, "FORECAST runtime=conditional ") ||
		    !strstr(out, "FORECAST runtime=perfect "))
			abort();
	} else if (status == PHILLY_INVALID) {
		if (err_len == 0)
			abort();
	} else {
		abort();
	}
	free(out);
	free(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *err = NULL;
	size_t err_len = 0;
	struct philly_trace t;
	FILE *ferr = open_memstream(&err, &err_len);
	if (!ferr)
		abort();
	int status = philly_parse("trace.csv", (const char *)data, size, &t, ferr);
	fclose(ferr);
	if (status == PHILLY_OK) {
		if (err_len != 0 || t.n == 0 || t.n_clusters == 0)
			abort();
		replay(&t);
	} else if (status == PHILLY_INVALID) {
		if (err_len == 0 || t.n != 0 || strncmp(err, "trace.csv", 9) != 0)
			abort();
	} else {
		abort();
	}
	philly_trace_free(&t);
	free(err);
	return 0;
}
