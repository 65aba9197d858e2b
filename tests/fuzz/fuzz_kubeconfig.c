/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kubeconfig loader on arbitrary files: its current context and, when the input's first
 * line names one ("#context NAME"), that context. A configuration or a clean error, never a
 * crash; exec plugins are not run (flags 0), so no input starts a process.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], context[64] = "", err[256];
	struct kube_config cfg;
	snprintf(path, sizeof(path), "/tmp/fuzz_kubeconfig.%d", (int)getpid());
	FILE *f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	if (size > 9 && !memcmp(data, "#context ", 9)) {
		size_t n = 0;
		while (n + 1 < sizeof(context) && 9 + n < size && data[9 + n] != '\n')
			n++;
		memcpy(context, data + 9, n);
		context[n] = '\0';
	}
	err[0] = '\0';
	int rc = kube_config_load_context(path, context[0] ? context : NULL, 0, &cfg, err,
					  sizeof(err));
	if (rc == 0) {
		if (!cfg.server || cfg.server[0] == '\0')
			abort(); /* a loaded configuration has somewhere to go */
		kube_config_release(&cfg);
	} else if (err[0] == '\0') {
		abort(); /* every refusal says why */
	}
	unlink(path);
	return 0;
}
