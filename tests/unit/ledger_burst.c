/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ledger_burst DB FIRST PROGRESS [COUNT]: appends numbered records to the ledger at DB as fast
 * as it can, the message of each being its sequence number, starting at FIRST; COUNT records
 * and a clean close, or forever (until kill -9) when COUNT is absent. For
 * test_ledger_crash.sh.
 *
 * After each batch it prints "committed C appended A ms T": C the highest sequence number
 * known committed (FIRST + written - 1: nothing is dropped, a full queue is waited out, so the
 * committed records are exactly the first `written` ones), A the highest appended, T the ms
 * since the start. PROGRESS is a file holding the highest appended number as 8 bytes, written
 * through a shared mapping after every append, so the script reads it even after kill -9 and
 * counts exactly what the kill lost.
 *
 * LEDGER_BURST_QUEUE_MAX sets the ledger's queue_max (default: the ledger's). A burst outruns
 * any writer, so the queue stays full and a kill loses about queue_max records plus the batch
 * in flight: the bound ledger.h states. The test uses a smaller queue so each run is short.
 * LEDGER_BURST_RATE paces the appends to that many records a second instead, as a busy manager
 * would, which shows the other side of the bound: a kill then loses about batch_ms of records.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <uv.h>

#include "ledger/ledger.h"

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-')
		return -EINVAL;
	*out = v;
	return 0;
}

/* The number in environment variable name, or fallback when it is unset; -EINVAL when bad. */
static int env_u64(const char *name, uint64_t fallback, uint64_t *out)
{
	const char *v = getenv(name);
	*out = fallback;
	if (v && (parse_u64(v, out) < 0 || *out == 0 || *out > SIZE_MAX)) {
		fprintf(stderr, "ledger_burst: bad %s %s\n", name, v);
		return -EINVAL;
	}
	return 0;
}

/* Sleeps until the time record number done (from 0) is due at rate records a second. */
static void pace(uint64_t start_ns, uint64_t done, uint64_t rate)
{
	uint64_t due_ns = start_ns + done * 1000000000u / rate, now = uv_hrtime();
	if (due_ns > now)
		usleep((useconds_t)((due_ns - now) / 1000));
}

static _Atomic uint64_t *map_progress(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, sizeof(uint64_t)) < 0) {
		perror(path);
		return NULL;
	}
	void *p = mmap(NULL, sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		perror("mmap");
		return NULL;
	}
	return p;
}

/* Prints the committed high-water mark when a batch has landed since the last print. */
static int report(struct ledger *l, uint64_t first, uint64_t appended, uint64_t start_ns,
		  uint64_t *last_written)
{
	struct ledger_stats st;
	ledger_stats(l, &st);
	if (st.failed) { /* then `written` no longer maps to sequence numbers */
		fprintf(stderr, "ledger_burst: %" PRIu64 " records failed\n", st.failed);
		return -EIO;
	}
	if (st.written == *last_written)
		return 0;
	*last_written = st.written;
	printf("committed %" PRIu64 " appended %" PRIu64 " ms %" PRIu64 "\n",
	       first + st.written - 1, appended, (uv_hrtime() - start_ns) / 1000000);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t first, count = 0;
	if ((argc != 4 && argc != 5) || parse_u64(argv[2], &first) < 0 || first == 0 ||
	    (argc == 5 && parse_u64(argv[4], &count) < 0)) {
		fprintf(stderr, "usage: ledger_burst DB FIRST PROGRESS [COUNT]\n");
		return 2;
	}
	_Atomic uint64_t *progress = map_progress(argv[3]);
	if (!progress)
		return 1;
	atomic_store(progress, first - 1);
	struct ledger_options opts = { .path = argv[1] };
	uint64_t queue_max, rate;
	if (env_u64("LEDGER_BURST_QUEUE_MAX", LEDGER_DEFAULT_QUEUE_MAX, &queue_max) < 0 ||
	    env_u64("LEDGER_BURST_RATE", UINT64_MAX, &rate) < 0)
		return 2;
	opts.queue_max = (size_t)queue_max;
	struct ledger *l;
	int rc = ledger_open(&opts, &l);
	if (rc < 0) {
		fprintf(stderr, "ledger_burst: cannot open %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	uint64_t start_ns = uv_hrtime(), last_written = 0, seq = first;
	while (rc == 0 && (count == 0 || seq < first + count)) {
		if (rate != UINT64_MAX)
			pace(start_ns, seq - first, rate);
		char message[32], uid[32];
		snprintf(message, sizeof(message), "%" PRIu64, seq);
		snprintf(uid, sizeof(uid), "u%" PRIu64, seq / 2);
		/* Pairs of admit and finish of one uid, so every commit also ends admissions. */
		struct ledger_record r = { .event = seq % 2 ? LEDGER_FINISH : LEDGER_ADMIT,
					   .ns = "burst",
					   .name = uid,
					   .uid = uid,
					   .cluster_queue = "cq",
					   .local_queue = "lq",
					   .resources = "{\"cpu\":\"1\"}",
					   .reason = "Burst",
					   .message = message };
		rc = ledger_append(l, &r);
		if (rc == -ENOBUFS) {
			rc = report(l, first, seq - 1, start_ns, &last_written);
			usleep(100);
			continue;
		}
		if (rc < 0) {
			fprintf(stderr, "ledger_burst: append: %s\n", strerror(-rc));
			break;
		}
		atomic_store(progress, seq);
		if (seq++ % 64 == 0)
			rc = report(l, first, seq - 1, start_ns, &last_written);
	}
	ledger_close(l);
	if (rc == 0 && count) {
		printf("committed %" PRIu64 " appended %" PRIu64 " ms %" PRIu64 " closed\n",
		       seq - 1, seq - 1, (uv_hrtime() - start_ns) / 1000000);
	}
	return rc < 0;
}
