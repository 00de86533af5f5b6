#!/bin/sh
# One host of the PyTorch benchmark across the hosts of `inagg cluster` (docs/cluster.md), inagg against gloo on the
# same links, rendezvous at host 1 over the emulated links. From the repository root:
#   sudo bin/inagg cluster --hosts 4 --link-rate 100mbit --run integrations/pytorch/benchmarks/cluster_host.sh
# With one agent per host (the default: PASSING's in-host + in-network hybrid), this host's agent binds the source the
# cluster's switch registered for it and sums the host's PER_HOST ranks (default 2) before the network. Every rank
# straight to the switch instead (an agent per rank, each its own worker of the switch's job):
#   sudo bin/inagg cluster --hosts 4 --link-rate 100mbit --workers-per-host 2 \
#     --run integrations/pytorch/benchmarks/cluster_host.sh
# LOG2 picks the size (2^LOG2 elements, default 20); COLLECTIVE the collective (all_reduce, reduce_scatter, all_gather,
# broadcast: allreduce_bench.py --collective); OUT the folder of the table and figure; AGENT_ARGS more options of the
# agents (e.g. --chunk-bytes 0: whole rounds, no pipelining).
set -u
H=$INAGG_CLUSTER_HOST
P=${PER_HOST:-2}
AGENTS=${INAGG_CLUSTER_WORKERS_PER_HOST:-1}
PIDS=""
r=0
while [ "$r" -lt "$AGENTS" ]; do
  # shellcheck disable=SC2086 # AGENT_ARGS: several words
  bin/inagg agent --name "cluster-h$H-a$r" --switch "$INAGG_CLUSTER_SWITCH" --bind "$INAGG_CLUSTER_IP:$((9101 + r))" \
    ${AGENT_ARGS:-} > "${TMPDIR:-/tmp}/inagg-cluster-agent-h$H-a$r.log" 2>&1 &
  PIDS="$PIDS $!"
  for _ in $(seq 1 200); do [ -S "/dev/shm/inagg-$(id -u)/inagg-agent-cluster-h$H-a$r.sock" ] && break; sleep 0.1; done
  r=$((r + 1))
done
# Each rank picks its agent: the host's only one, or its own (LOCAL_RANK), as a host of its own.
RANK_ENV='if [ "$INAGG_CLUSTER_WORKERS_PER_HOST" -gt 1 ]; then A=$LOCAL_RANK; ID=$INAGG_CLUSTER_HOST-$LOCAL_RANK; else A=0; ID=$INAGG_CLUSTER_HOST; fi; INAGG_AGENT=/dev/shm/inagg-$(id -u)/inagg-agent-cluster-h$INAGG_CLUSTER_HOST-a$A.sock INAGG_HOST_ID=$ID exec python3 "$@"'
INAGG_SWITCH_JOB=1 GLOO_SOCKET_IFNAME=eth0 OMP_NUM_THREADS=1 INAGG_CLUSTER_WORKERS_PER_HOST=$AGENTS \
  torchrun --nnodes "$INAGG_CLUSTER_HOSTS" --node-rank "$INAGG_CLUSTER_RANK" --nproc-per-node "$P" \
  --master-addr "$INAGG_CLUSTER_MASTER" --master-port 29500 --no-python sh -c "$RANK_ENV" rank \
  integrations/pytorch/benchmarks/allreduce_bench.py --min-log2 "${LOG2:-20}" --max-log2 "${LOG2:-20}" \
  --collective "${COLLECTIVE:-all_reduce}" --warmup-s 4 --repeats 2 --iters 6 \
  --out "${OUT:-${TMPDIR:-/tmp}/inagg-cluster-bench}"
rc=$?
# shellcheck disable=SC2086
kill $PIDS
exit $rc
