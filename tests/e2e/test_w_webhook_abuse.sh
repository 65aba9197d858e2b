#!/usr/bin/env bash
# (w) Webhook memory under abuse. 40 clients each POST a 7.9 MB body to the manager's webhook
# port at once, slowly (1 MB/s, so the bodies are held for about 8 s). Before the server bounded
# the total of buffered bodies, that took the manager from ~40 MB to 375 MB (about 1,024
# connections x 8 MiB was the ceiling). Now bodies held at once are bounded (httpd.h:
# max_buffered, 64 MiB, large bodies half of it), so most of the 40 get 429 at once, and while
# they run, queued Jobs created through kubectl (the apiserver calling the same webhook) are
# still admitted. Checks the manager's RSS grew by less than ABUSE_MAX_GROWTH_MIB (150, with
# ASan's own overhead) and prints the figures.
source "$(dirname "$0")/lib.sh"
: "${MUSTER_LOCAL_DIR:?needs MUSTER_LOCAL_DIR}"
# shellcheck disable=SC1091
source "$MUSTER_LOCAL_DIR/cluster.env"
CLIENTS=40
MAX_GROWTH_MIB=${ABUSE_MAX_GROWTH_MIB:-150}
pid=$(cat "$MUSTER_LOCAL_DIR/pids/muster.pid")
kill -0 "$pid" || fail "no manager running"
rss_mib() { awk '/^VmRSS/ { printf "%d", $2 / 1024 }' "/proc/$pid/status"; }
work=$(mktemp -d)
on_exit "rm -rf $work"
head -c 7900000 /dev/zero | tr '\0' 'x' >"$work/body"

make_namespace
make_queues e2e-w 8
before=$(rss_mib)
peak=$before
for ((i = 0; i < CLIENTS; i++)); do
	curl -sk -o /dev/null -w '%{http_code}\n' -H 'Expect:' -H 'Content-Type: application/json' \
		--limit-rate 1M --max-time 60 --data-binary "@$work/body" \
		"https://127.0.0.1:$MUSTER_WEBHOOK_PORT/mutate-batch-v1-job" >"$work/code.$i" 2>/dev/null &
done
# The apiserver's own calls, meanwhile: each create goes through the mutating webhook.
sleep 1
for j in 1 2 3; do
	job_yaml "beside-$j" lq 1 1 1s | k create -f - >/dev/null || fail "creating a Job failed while the webhook was abused"
	r=$(rss_mib)
	[ "$r" -le "$peak" ] || peak=$r
done
while [ -n "$(jobs -rp)" ]; do
	r=$(rss_mib)
	[ "$r" -le "$peak" ] || peak=$r
	sleep 0.2
done
for j in 1 2 3; do
	wait_until 60 "Job beside-$j to be admitted and complete" \
		field_is job "beside-$j" '{.status.conditions[?(@.type=="Complete")].status}' True
done
codes=$(cat "$work"/code.* | sort | uniq -c | awk '{ printf "%s x %s, ", $1, $2 }')
refused=$(cat "$work"/code.* | grep -c '^429$' || true)
growth=$((peak - before))
echo "webhook abuse: $CLIENTS clients x 7.9 MB: answers ${codes%, }; manager RSS ${before} -> ${peak} MiB (+${growth})" >&2
[ "$refused" -ge $((CLIENTS - 8)) ] || fail "only $refused of $CLIENTS abusive clients got 429 ($codes)"
[ "$growth" -lt "$MAX_GROWTH_MIB" ] || fail "the manager grew by $growth MiB under the abuse"
kill -0 "$pid" || fail "the manager died"
pass
