#!/bin/sh
# One host of the PyTorch benchmark across the hosts of `inagg cluster` (docs/cluster.md): this host's agent bound to
# the source the cluster's switch registered for it, then torchrun with PER_HOST ranks (default 2), rendezvous at host 1
# over the emulated links, inagg against gloo on the same links. From the repository root:
#   sudo bin/inagg cluster --hosts 4 --link-rate 100mbit --run integrations/pytorch/benchmarks/cluster_host.sh
# LOG2 picks the size (2^LOG2 elements, default 20); OUT the folder of the table and figure.
set -u
H=$INAGG_CLUSTER_HOST
bin/inagg agent --name cluster-h"$H" --switch "$INAGG_CLUSTER_SWITCH" --bind "$INAGG_CLUSTER_IP":9101 \
  > "${TMPDIR:-/tmp}/inagg-cluster-agent-h$H.log" 2>&1 &
AGENT=$!
for _ in $(seq 1 200); do [ -S /dev/shm/inagg-agent-cluster-h"$H".sock ] && break; sleep 0.1; done
INAGG_AGENT=/dev/shm/inagg-agent-cluster-h"$H".sock INAGG_HOST_ID="$H" INAGG_SWITCH_JOB=1 GLOO_SOCKET_IFNAME=eth0 \
  OMP_NUM_THREADS=1 torchrun --nnodes "$INAGG_CLUSTER_HOSTS" --node-rank "$INAGG_CLUSTER_RANK" \
  --nproc-per-node "${PER_HOST:-2}" --master-addr "$INAGG_CLUSTER_MASTER" --master-port 29500 \
  integrations/pytorch/benchmarks/allreduce_bench.py --min-log2 "${LOG2:-20}" --max-log2 "${LOG2:-20}" \
  --warmup-s 4 --repeats 2 --iters 6 --out "${OUT:-${TMPDIR:-/tmp}/inagg-cluster-bench}"
rc=$?
kill "$AGENT"
exit $rc
