/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzzes `muster replay-openb` (sim/replay.h): the two CSV readers and the replay behind them.
 * An input holding a line "%%" (LF or CRLF) is a node file, then a pod file; any other input
 * is read as both a node file (replayed with a fixed pod list) and a pod file (replayed on
 * fixed nodes).
 * Every parse ends clean (status 0 with no message, or 2 with FILE:LINE messages and nothing
 * parsed) and every replay too (status 0: exactly 131 JSON lines, arrived_pct 0..130 in order,
 * allocation within 0..100 %, failures never decreasing, nothing on stderr; or status 2 with a
 * message and no output). Status 1, a crash, a leak or a hang is a bug. The top-up is bounded
 * (max_pods) so that one input can't take long.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sim/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char fixed_nodes[] = "sn,cpu_milli,memory_mib,gpu,model\n"
				  "a,32000,131072,2,T4\n"
				  "b,96000,786432,8,V100M32\n"
				  "c,64000,262144,4,P100\n";
static const char fixed_pods[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n"
				 "s,4000,8192,1,460,\n"
				 "w,12000,16384,1,1000,V100M32\n"
				 "m,32000,65536,4,1000,\n"
				 "c,2000,4096,0,0,\n";

static void check_lines(const char *out, size_t len)
{
	const char *p = out, *end = out + len;
	json_int_t failed = 0;
	int n = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			abort();
		json_error_t jerr;
		json_t *v = json_loadb(p, (size_t)(nl - p), 0, &jerr);
		json_t *arrived = json_object_get(v, "arrived_pct");
		json_t *alloc = json_object_get(v, "allocated_gpu_pct");
		json_t *free8 = json_object_get(v, "free_8gpu_nodes");
		json_t *fail = json_object_get(v, "failed_pods");
		if (!json_is_object(v) || json_object_size(v) != 4 || !json_is_integer(arrived) ||
		    json_integer_value(arrived) != n || !json_is_number(alloc) ||
		    json_number_value(alloc) < 0 || json_number_value(alloc) > 100 ||
		    !json_is_integer(free8) || json_integer_value(free8) < 0 ||
		    !json_is_integer(fail) || json_integer_value(fail) < failed)
			abort();
		failed = json_integer_value(fail);
		json_decref(v);
		n++;
		p = nl + 1;
	}
	if (n != 131)
		abort();
}

static void replay(const struct replay_nodes *nodes, const struct replay_pods *pods)
{
	char *out = NULL, *err = NULL;
	size_t out_len = 0, err_len = 0;
	FILE *fout = open_memstream(&out, &out_len);
	FILE *ferr = open_memstream(&err, &err_len);
	if (!fout || !ferr)
		abort();
	/* Seed and policy from the input's sizes: every policy gets exercised. */
	struct replay_options opt = { .seed = nodes->n + pods->n,
				      .policy = (enum plc_policy)(pods->n % 4),
				      .max_pods = 4000 };
	int status = replay_run(nodes, pods, &opt, fout, ferr);
	fclose(fout);
	fclose(ferr);
	if (status == REPLAY_OK) {
		if (err_len != 0)
			abort();
		check_lines(out, out_len);
	} else if (status == REPLAY_INVALID) {
		if (out_len != 0 || err_len == 0)
			abort();
	} else {
		abort();
	}
	free(out);
	free(err);
}

/* Parses text as nodes or pods; the status must be clean and agree with what was parsed. */
static int parse(int pods, const char *name, const char *text, size_t len, struct replay_nodes *n,
		 struct replay_pods *p)
{
	char *err = NULL;
	size_t err_len = 0;
	FILE *ferr = open_memstream(&err, &err_len);
	if (!ferr)
		abort();
	int status = pods ? replay_parse_pods(name, text, len, p, ferr) :
			    replay_parse_nodes(name, text, len, n, ferr);
	fclose(ferr);
	size_t count = pods ? p->n : n->n;
	if (status == REPLAY_OK) {
		if (err_len != 0 || count == 0)
			abort();
	} else if (status == REPLAY_INVALID) {
		if (err_len == 0 || count != 0 || strncmp(err, name, strlen(name)) != 0)
			abort();
	} else {
		abort();
	}
	free(err);
	return status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	const char *sep = NULL;
	size_t sep_len = 0;
	for (size_t i = 0; i + 3 <= size && !sep; i++) {
		if (i > 0 && text[i - 1] != '\n')
			continue;
		if (!memcmp(text + i, "%%\n", 3))
			sep_len = 3;
		else if (i + 4 <= size && !memcmp(text + i, "%%\r\n", 4))
			sep_len = 4;
		if (sep_len)
			sep = text + i;
	}
	struct replay_nodes nodes = { 0 }, fnodes = { 0 };
	struct replay_pods pods = { 0 }, fpods = { 0 };
	if (sep) {
		size_t nlen = (size_t)(sep - text);
		int a = parse(0, "nodes.csv", text, nlen, &nodes, NULL);
		int b = parse(1, "pods.csv", sep + sep_len, size - nlen - sep_len, NULL, &pods);
		if (a == REPLAY_OK && b == REPLAY_OK)
			replay(&nodes, &pods);
	} else {
		if (parse(0, "fixed.csv", fixed_nodes, sizeof(fixed_nodes) - 1, &fnodes, NULL) !=
			    REPLAY_OK ||
		    parse(1, "fixed.csv", fixed_pods, sizeof(fixed_pods) - 1, NULL, &fpods) !=
			    REPLAY_OK)
			abort();
		if (parse(0, "nodes.csv", text, size, &nodes, NULL) == REPLAY_OK)
			replay(&nodes, &fpods);
		if (parse(1, "pods.csv", text, size, NULL, &pods) == REPLAY_OK)
			replay(&fnodes, &pods);
	}
	replay_nodes_free(&nodes);
	replay_nodes_free(&fnodes);
	replay_pods_free(&pods);
	replay_pods_free(&fpods);
	return 0;
}
