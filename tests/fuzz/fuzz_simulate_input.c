/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes `muster simulate` (sim/simulate.h) with arbitrary bytes as its one input file: the
 * whole path from the export reader (YAML or JSON documents, kubectl's v1 List in either:
 * util/export_reader.h; the corpus has a seed of each, and Lists cut short or with an item
 * that isn't an object) through the decoders and the engine to the output. Every input must end
 * in a clean result (status 0, every output line a JSON object, nothing on stderr) or a clean
 * error (status 2, no output, a message on stderr); never a crash, a leak, a livelock or
 * status 1, which only a failed allocation or an engine bug can cause. jansson allocates
 * from the JSON arena (util/json_arena.h) as under sim_main, and no block of it may outlive
 * the run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sim/simulate.h"
#include "util/json_arena.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_lines(const char *out, size_t len)
{
	const char *p = out, *end = out + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			abort(); /* every line ends in a newline */
		json_error_t jerr;
		json_t *v = json_loadb(p, (size_t)(nl - p), 0, &jerr);
		if (!json_is_object(v) || !json_is_string(json_object_get(v, "kind")))
			abort();
		json_decref(v);
		p = nl + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *out = NULL, *err = NULL;
	size_t out_len = 0, err_len = 0;
	FILE *fout = open_memstream(&out, &out_len);
	FILE *ferr = open_memstream(&err, &err_len);
	if (!fout || !ferr)
		abort();
	struct sim_input in = { .name = "fuzz.yaml", .data = (const char *)data, .len = size };
	/* As sim_main runs it: documents' trees in the JSON arena, which must be empty after
	 * each run (LeakSanitizer doesn't see its blocks). */
	static int arena;
	if (!arena++ && json_arena_install() != 0)
		abort();
	int status = sim_run(&in, 1, fout, ferr);
	if (json_arena_live() != 0)
		abort();
	fclose(fout);
	fclose(ferr);
	if (status == SIM_OK) {
		if (err_len != 0)
			abort();
		check_lines(out, out_len);
	} else if (status == SIM_INVALID) {
		if (out_len != 0 || err_len == 0 || strncmp(err, "fuzz.yaml", 9) != 0)
			abort();
	} else {
		abort();
	}
	free(out);
	free(err);
	return 0;
}
