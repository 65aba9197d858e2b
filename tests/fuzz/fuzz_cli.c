/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubectl muster's two parsers of outside input: the command line, and the servers' answers
 * as its renderers read them. The first byte picks which: 'a' splits the rest at newlines
 * into argv for cli_parse; otherwise the rest is JSON for the renderer the byte selects. Any
 * input ends in text or a clean error, never a crash.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_internal.h"

#define MAX_ARGS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void parse_args(const char *text, FILE *sink)
{
	char *copy = strdup(text), *argv[MAX_ARGS + 1] = { "kubectl-muster" }, *save = NULL;
	int argc = 1;
	struct cli_options opt;
	if (!copy)
		return;
	for (char *w = strtok_r(copy, "\n", &save); w && argc < MAX_ARGS;
	     w = strtok_r(NULL, "\n", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	int rc = cli_parse(argc, argv, &opt, sink);
	if (rc != 0 && rc != CLI_EXIT_USAGE)
		abort();
	if (rc == 0 && !opt.help && (opt.command < 0 || opt.command >= CLI_NCOMMANDS))
		abort();
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	char *text;
	if (!sink && !(sink = fopen("/dev/null", "w")))
		return 0;
	if (size < 1 || !(text = strndup((const char *)data + 1, size - 1)))
		return 0;
	if (data[0] == 'a') {
		parse_args(text, sink);
		free(text);
		return 0;
	}
	json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
	free(text);
	if (!v)
		return 0;
	switch (data[0] % 6) {
	case 0:
		cli_render_list(sink, sink, json_object_get(v, "cqs"), json_object_get(v, "lqs"),
				"ns");
		break;
	case 1:
		cli_render_pending(sink, sink, v, "ClusterQueue q", 0);
		break;
	case 2:
		cli_render_why(sink, sink, v);
		break;
	case 3:
		cli_render_eta(sink, sink, v, 0);
		break;
	case 4:
		cli_render_history(sink, sink, v, "ClusterQueue q", data[0] & 8);
		break;
	default:
		cli_render_usage(sink, sink, v);
		break;
	}
	json_decref(v);
	return 0;
}
