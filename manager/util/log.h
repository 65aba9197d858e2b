/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Structured logging: one JSON object per line on stderr, written with a single write(2) so
 * lines from concurrent processes never interleave. The format follows Kubernetes components:
 * {"ts":<unix seconds>,"level":"info","msg":"…","key":"value",…}.
 *
 * Fields are passed as LF_STR/LF_INT values and the list ends with LF_END:
 *     log_info("workload admitted", LF_STR("workload", key), LF_INT("pods", n), LF_END);
 * Nothing here allocates; an over-long line is truncated and marked "truncated":true.
 * Safe from any thread (the manager's lease thread logs too): a line is built on the caller's
 * stack and written with one write(2); set the level before starting threads.
 */
#ifndef MUSTER_LOG_H
#define MUSTER_LOG_H

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };
enum log_field_type { LOG_FIELD_END, LOG_FIELD_STR, LOG_FIELD_INT };

struct log_field {
	const char *key;
	enum log_field_type type;
	const char *str; /* borrowed; NULL prints null */
	long long num;
};

#define LF_STR(k, v) ((struct log_field){ (k), LOG_FIELD_STR, (v), 0 })
#define LF_INT(k, v) ((struct log_field){ (k), LOG_FIELD_INT, NULL, (long long)(v) })
#define LF_END ((struct log_field){ NULL, LOG_FIELD_END, NULL, 0 })

/* Messages below this level are dropped. Default LOG_INFO. */
void log_set_level(enum log_level level);
/* Whether a message of this level is emitted: for a field that costs work to compute. */
int log_enabled(enum log_level level);

/* Emits one line. The variadic arguments are struct log_field values ending with LF_END. */
void log_emit(enum log_level level, const char *msg, ...);

#define log_debug(...) log_emit(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_emit(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_emit(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_emit(LOG_ERROR, __VA_ARGS__)

#endif
