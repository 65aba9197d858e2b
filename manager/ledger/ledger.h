/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The decision ledger: a durable, bounded history of what the leader decided (admit, preempt,
 * evict, requeue, finish, deactivate), kept in one SQLite file, so `history`, `usage` and the
 * ETA estimator can answer questions about the past that the cluster's objects no longer hold.
 *
 * Who does what
 * -------------
 * ledger_append copies a record into an in-memory queue and returns at once: it never touches
 * the disk, so the manager calls it on its loop thread and admission never waits for a disk. A
 * writer thread owned by the ledger commits the queue every batch_ms (sooner when the queue
 * holds LEDGER_WAKE_RECORDS records or half its capacity, or a flush is asked for), in
 * transactions of at most LEDGER_BATCH_MAX records, applying retention after each. When the
 * queue is full a record is dropped and counted: losing history is acceptable, stalling
 * admission is not. Disk errors (full disk, corrupt file, a lock held too long) lose that batch,
 * are counted and logged (rate-limited), and are never reported to the caller of append.
 *
 * Queries run on the caller's thread, on a second (read-only) connection: WAL lets them read a
 * consistent snapshot beside the writer. They do disk I/O, each bounded by a limit or, for
 * usage, by the admissions overlapping the window; a caller that must never block (the loop)
 * can run them in uv_queue_work. They are thread-safe: the read connection is serialised by a
 * mutex. WAL readers need no lock but in rare moments (recovery after a crash, a checkpoint
 * truncating the WAL); a query waits at most 250 ms for those, then fails with -EBUSY.
 * ledger_open and ledger_close do disk I/O too; call them at startup and shutdown.
 *
 * Durability and the loss bound after kill -9
 * -------------------------------------------
 * journal_mode=WAL, synchronous=NORMAL. A transaction is committed once its pages are in the
 * WAL file through write(2); the kernel keeps them after the process dies, so every committed
 * batch survives kill -9 (or a crash or OOM kill), and the file is always consistent (SQLite
 * replays or ignores the WAL tail on the next open). NORMAL fsyncs only at checkpoints, so a
 * power loss or kernel crash may roll back the transactions since the last checkpoint (never
 * corrupt the file); FULL would fsync every batch, which a history of decisions does not need.
 *
 * So a kill -9 loses exactly the records appended but not yet committed, which is:
 *   - the queue: records appended in the last batch_ms (a record's commit starts at most
 *     batch_ms after its append, or when the previous commit ends if that is later), and never
 *     more than queue_max records or queue_max_bytes;
 *   - plus the batch being committed at that moment, at most LEDGER_BATCH_MAX records.
 * At a steady rate r the loss is about r * (batch_ms + one commit); a burst that outruns the
 * writer fills the queue, and then a kill loses up to queue_max + LEDGER_BATCH_MAX records
 * (both measured by tests/unit/test_ledger_crash.sh). Batches commit in append order and
 * whole: what survives is a prefix of what was appended, without gaps, and holds everything
 * stats.written counted.
 * ledger_close and ledger_flush commit everything queued before they return.
 *
 * Retention (the writer thread, after a batch; never on the caller's thread)
 * -------------------------------------------------------------------------
 * By age: rows older than retention_age_ms are deleted, oldest first, at most
 * LEDGER_RETENTION_CHUNK per batch; an admission's age counts from its end, so an interval that
 * reaches into the kept window stays whole for usage reports. By size: when the pages in use
 * exceed retention_bytes, the oldest rows are deleted until they fill at most 90 % of it; the
 * file may exceed the bound by one batch until the pass after that batch. An admission still
 * open (admitted, not yet ended) is never deleted, so a long-running workload's usage stays
 * whole. Freed pages go back to the file
 * system with PRAGMA incremental_vacuum (auto_vacuum=INCREMENTAL). The WAL file comes on top,
 * truncated to journal_size_limit (16 MiB) after checkpoints.
 *
 * Schema (PRAGMA user_version = LEDGER_SCHEMA_VERSION = 1)
 * ----------------------------------------------------------
 *	CREATE TABLE decisions (
 *	  id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused, even after retention
 *	  time_ms INTEGER NOT NULL,              -- ms since the Unix epoch
 *	  event TEXT NOT NULL CHECK (event IN
 *	    ('admit','preempt','evict','requeue','finish','deactivate')),
 *	  namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL,
 *	  cluster_queue TEXT, local_queue TEXT,
 *	  flavors TEXT,              -- JSON {podSet:{resource:flavor}}
 *	  resources TEXT,            -- JSON {resource:"quantity"}
 *	  reason TEXT, message TEXT,
 *	  preemptor TEXT,            -- "namespace/name"
 *	  cluster_queue_usage TEXT,  -- JSON {flavor:{resource:"quantity"}}
 *	  ended_ms INTEGER,          -- admit rows: when the admission ended; NULL while it lasts
 *	  end_event TEXT);           -- admit rows: the event that ended it
 *	CREATE INDEX decisions_by_workload ON decisions(namespace, name, time_ms);
 *	CREATE INDEX decisions_by_cluster_queue ON decisions(cluster_queue, time_ms);
 *	CREATE INDEX decisions_by_age ON decisions(   -- retention by age
 *	  (CASE WHEN event = 'admit' THEN ended_ms ELSE time_ms END));
 *	CREATE INDEX admissions_open ON decisions(uid) WHERE event = 'admit' AND ended_ms IS NULL;
 *	CREATE INDEX admissions_by_end ON decisions(ended_ms) WHERE event = 'admit';
 *	CREATE INDEX admissions_finished ON decisions(cluster_queue, ended_ms)
 *	  WHERE event = 'admit' AND end_event = 'finish';
 *
 * ended_ms and end_event are kept by the writer: when it commits an admit or an ending event
 * (finish, evict, preempt, requeue, deactivate) for a uid, it first closes that uid's open
 * admission at the new record's time. That is the contract's interval rule ("admit until the
 * next finish, evict, preempt, requeue or deactivate of the same uid, or until now"); an admit
 * that follows an admit without an end between them closes the earlier one (end_event 'admit'),
 * so a repeated admit never counts twice. The manager should therefore record an ending event
 * for a workload deleted while admitted, or its usage runs on until now.
 *
 * Migrations: a file with user_version 0 and no tables is initialised; a lower version is
 * migrated in one transaction when the schema changes; a higher version (written by a newer
 * muster) is refused with -EPROTO and a log line naming both versions, and so is a file with
 * tables that is not a ledger.
 *
 * Errors are negative errno: -EINVAL (bad argument), -ENOMEM, -E2BIG (a text field longer than
 * LEDGER_TEXT_MAX), -ENOBUFS (queue full: dropped), the OS error when the file can't be opened
 * (-ENOENT, -EACCES, -EISDIR, ...), -ENOSPC (disk full), -EBUSY (locked longer than
 * busy_timeout_ms), -EIO, -EBADMSG (not a database, or corrupt), -EPROTO (schema newer than
 * this build, or not a ledger).
 */
#ifndef MUSTER_LEDGER_H
#define MUSTER_LEDGER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define LEDGER_SCHEMA_VERSION 1
#define LEDGER_API_VERSION "visibility.muster.io/v1alpha1" /* apiVersion of the JSON answers */

#define LEDGER_DEFAULT_RETENTION_AGE_MS (30LL * 24 * 3600 * 1000) /* 30 days */
#define LEDGER_DEFAULT_RETENTION_BYTES (256LL << 20) /* 256 MiB */
#define LEDGER_DEFAULT_BATCH_MS 200u
#define LEDGER_DEFAULT_QUEUE_MAX 65536u /* records */
#define LEDGER_DEFAULT_QUEUE_MAX_BYTES (64u << 20) /* copied records, 64 MiB */
#define LEDGER_DEFAULT_BUSY_TIMEOUT_MS 5000u

#define LEDGER_TEXT_MAX 65536u /* bytes per text field of a record, NUL excluded */
#define LEDGER_WAKE_RECORDS 4096u /* a queue this long is committed without waiting batch_ms */
/* Records per transaction, at most: bigger ones outgrow the cache. */
#define LEDGER_BATCH_MAX 8192u
#define LEDGER_RETENTION_CHUNK 10000 /* rows deleted by age per batch, at most */
#define LEDGER_HISTORY_MAX 10000u /* largest limit of a history query */
#define LEDGER_USAGE_MAX_INTERVALS 1000000u /* admissions a usage report may add up */

enum ledger_event {
	LEDGER_ADMIT,
	LEDGER_PREEMPT, /* the record names the victim; preemptor names who took its place */
	LEDGER_EVICT, /* reason says why */
	LEDGER_REQUEUE,
	LEDGER_FINISH,
	LEDGER_DEACTIVATE,
};

/* The contract's token for an event ("admit", ...), or NULL for a value out of range. */
const char *ledger_event_name(enum ledger_event event);

/*
 * One decision. Every string is borrowed for the duration of ledger_append, which copies them;
 * each is at most LEDGER_TEXT_MAX bytes. NULL fields are stored as NULL and read back as JSON
 * null. The JSON fields are stored as given: the manager writes them with jansson; text that
 * does not parse as JSON reads back as null (and counts for nothing in usage).
 */
struct ledger_record {
	int64_t time_ms; /* ms since the Unix epoch; 0: now, by the ledger's clock */
	enum ledger_event event;
	const char *ns; /* the workload's namespace; required */
	const char *name; /* the Workload's name; required */
	const char *uid; /* required: an admission is matched to its end by uid */
	const char *cluster_queue;
	const char *local_queue;
	const char *flavors; /* JSON object text {podSet:{resource:flavor}} */
	const char *resources; /* JSON object text {resource:"quantity"}: what was admitted */
	const char *reason;
	const char *message;
	const char *preemptor; /* "namespace/name" of the preempting workload */
	const char *cluster_queue_usage; /* JSON object text {flavor:{resource:"quantity"}} */
};

/* ms since the Unix epoch. Called on the writer thread and in ledger_append. */
typedef int64_t (*ledger_clock_fn)(void *arg);

/* Zero fields take the defaults above. */
struct ledger_options {
	const char *path; /* the database file (copied); created if missing; required */
	int64_t retention_age_ms; /* rows older than this are deleted; < 0: no age bound */
	int64_t retention_bytes; /* pages in use above this are trimmed; < 0: no size bound */
	unsigned batch_ms; /* longest a record waits in the queue before its commit starts */
	size_t queue_max; /* records queued at most; more are dropped (-ENOBUFS) */
	size_t queue_max_bytes; /* bytes of copied records queued at most; the same */
	unsigned busy_timeout_ms; /* how long the writer waits for a lock held by another process */
	ledger_clock_fn clock; /* wall clock, for tests; NULL: CLOCK_REALTIME */
	void *clock_arg;
};

/* Counters since ledger_open; a consistent snapshot taken under the queue's lock. */
struct ledger_stats {
	uint64_t appended; /* records accepted by ledger_append */
	uint64_t dropped; /* records refused because the queue was full */
	uint64_t written; /* records committed; the first `written` accepted records, in order */
	uint64_t failed; /* records lost with a batch that failed to commit */
	uint64_t batches; /* transactions committed */
	uint64_t errors; /* disk errors: failed batches and failed retention passes */
	uint64_t deleted; /* rows removed by retention */
	uint64_t queued; /* records waiting now (appended - written - failed - in the batch) */
	int64_t db_bytes; /* pages in use in the file after the last batch */
};

struct ledger;

/*
 * Opens (or creates) the ledger at opts->path, checks or creates the schema and starts the
 * writer thread. On success *out owns the ledger until ledger_close. Does disk I/O. Returns 0
 * or a negative errno listed above (the reason is logged); *out is untouched on failure.
 */
int ledger_open(const struct ledger_options *opts, struct ledger **out);

/*
 * Commits everything queued, stops the writer thread, closes the file and frees the ledger.
 * Blocks for the last batch. NULL is a no-op. No other call on l may run concurrently or after.
 */
void ledger_close(struct ledger *l);

/*
 * Queues a copy of *rec for the writer. Never does disk I/O and never waits for the writer
 * (it takes the queue's mutex for a few instructions). Thread-safe. Returns 0; -ENOBUFS when
 * the queue is full (the record is dropped and counted); -EINVAL for a missing required field
 * or an unknown event; -E2BIG for a field longer than LEDGER_TEXT_MAX; -ENOMEM.
 */
int ledger_append(struct ledger *l, const struct ledger_record *rec);

/*
 * Waits until every record appended before the call is committed (or lost to a disk error).
 * Blocks; for tests, tools and shutdown, not for the loop. Returns 0, or -EIO when some of
 * those records were lost.
 */
int ledger_flush(struct ledger *l);

void ledger_stats(struct ledger *l, struct ledger_stats *out);

/*
 * The contract's "DecisionList" object, {"kind":"DecisionList","apiVersion":...,"items":[...]},
 * newest first (by time, then by id), at most limit items (1..LEDGER_HISTORY_MAX). *out is a
 * new reference for the caller. Returns 0, -EINVAL, -ENOMEM, or a disk error.
 *
 * ledger_workload_history: the decisions about one workload (namespace, name), every uid.
 * ledger_cluster_queue_history: the decisions of one ClusterQueue at or after since_ms.
 */
int ledger_workload_history(struct ledger *l, const char *ns, const char *name, unsigned limit,
			    json_t **out);
int ledger_cluster_queue_history(struct ledger *l, const char *cluster_queue, int64_t since_ms,
				 unsigned limit, json_t **out);

enum ledger_usage_by { LEDGER_BY_QUEUE, LEDGER_BY_NAMESPACE };

/*
 * The contract's "UsageReport" for [since_ms, until_ms]: for each admission interval (see the
 * schema notes), the admitted resources times the part of the interval inside the window, in
 * hours, summed per ClusterQueue or per namespace; "workloads" counts the distinct uids that
 * contributed. Items are sorted by key; resourceHours are JSON reals (serialise with
 * JSON_REAL_PRECISION for short numbers). Pass the current time as until_ms for a report up to
 * now: open admissions count until then. *out is a new reference. Returns 0, -EINVAL
 * (until_ms < since_ms), -E2BIG (more than LEDGER_USAGE_MAX_INTERVALS admissions: narrow the
 * window), -ENOMEM, or a disk error.
 */
int ledger_usage(struct ledger *l, int64_t since_ms, int64_t until_ms, enum ledger_usage_by by,
		 json_t **out);

/* One finished admission: admitted at finished_ms - runtime_ms, finished at finished_ms. */
struct ledger_runtime {
	int64_t finished_ms;
	int64_t runtime_ms;
};

/*
 * The admit -> finish durations of the last max workloads that finished in a ClusterQueue
 * (only admissions that ended with finish; an evicted admission is no runtime), newest first,
 * into out[0..*n). For the ETA estimator. Returns 0, -EINVAL, or a disk error.
 */
int ledger_recent_runtimes(struct ledger *l, const char *cluster_queue, struct ledger_runtime *out,
			   size_t max, size_t *n);

/* An admission the ledger holds open: admitted, no end recorded yet. Strings are valid during
 * the callback only (cluster_queue may be NULL). */
struct ledger_admission {
	const char *uid, *ns, *name, *cluster_queue;
	int64_t time_ms;
};
/* Return non-zero to stop. */
typedef int (*ledger_admission_fn)(void *arg, const struct ledger_admission *a);
/*
 * Calls fn for every open admission that is committed, oldest first: for the manager to
 * reconcile the ledger with the cluster after a restart (a kill -9 loses the records of the
 * last batch, among them maybe an admission's end). Call ledger_flush first to see this
 * process's own. fn must not call back into the ledger's queries. 0 or a disk error.
 */
int ledger_open_admissions(struct ledger *l, ledger_admission_fn fn, void *arg);

#endif
