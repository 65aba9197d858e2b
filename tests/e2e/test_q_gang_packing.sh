#!/usr/bin/env bash
# (q) Gangs packed by the hints, through the real kube-scheduler, on the four idle nodes
# (8 GPUs each): a gang of 3 pods x 2 GPUs lands on one node; a gang of 5 pods x 2 GPUs fills
# one node (4 pods) and puts its remaining pod on a second one. Without hints LeastAllocated
# would spread both gangs over every node.
source "$(dirname "$0")/lib.sh"
wait_nodes_idle
make_namespace
make_queues e2e-q 32

# per_node JOB: JOB's pods per node, sorted counts ("3", "4 1", ...).
per_node() { pod_nodes "$1" | sort | uniq -c | awk '{print $1}' | sort -rn | tr '\n' ' ' | sed 's/ $//'; }

job_yaml trio lq 3 2 "" | k create -f - >/dev/null
wait_until 60 "3 running pods of the gang of 3" running_at_least trio 3
[ "$(per_node trio)" = 3 ] || fail "the gang of 3 x 2 GPUs is spread $(per_node trio), want one node"
echo "gang of 3: all on $(pod_nodes trio | sort -u)" >&2

k -n "$NS" delete job trio --wait=false >/dev/null
wait_nodes_idle
job_yaml five lq 5 2 "" | k create -f - >/dev/null
wait_until 60 "5 running pods of the gang of 5" running_at_least five 5
[ "$(per_node five)" = "4 1" ] || fail "the gang of 5 x 2 GPUs is spread $(per_node five), want 4 on one node and 1 on another"
echo "gang of 5: $(pod_nodes five | sort | uniq -c | tr -s ' ' | tr '\n' ';')" >&2
pass
