/* SPDX-License-Identifier: Apache-2.0 */
/* The configuration parser on arbitrary bytes: a result or a clean error, never a crash, and
 * an accepted configuration always has sane values. */
#include <stdint.h>
#include <stdlib.h>

#include "api/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct muster_config c;
	char err[256];
	config_defaults(&c);
	if (config_parse((const char *)data, size, &c, err, sizeof(err)) == 0) {
		if (c.pods_ready_timeout_ms <= 0 || c.recovery_timeout_ms < 0 ||
		    c.backoff_base_s < 1 || c.backoff_max_s < 1 || c.backoff_limit_count < 0)
			abort();
		if (c.fair_sharing.enabled &&
		    (c.fair_sharing.n_strategies < 1 || c.fair_sharing.n_strategies > 2))
			abort();
		const struct eng_admission_fair_sharing *a = &c.admission_fair_sharing;
		if (a->enabled && (a->usage_half_life < 0 || a->usage_sampling_interval <= 0 ||
				   (a->n_weights > 0) != (a->weights != NULL)))
			abort();
		for (size_t i = 0; i < a->n_weights; i++)
			if (!a->weights[i].resource[0] || !(a->weights[i].weight >= 0))
				abort();
		config_release(&c);
	} else if (err[0] == '\0') {
		abort(); /* every refusal says why */
	}
	return 0;
}
