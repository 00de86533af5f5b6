#!/bin/bash
# All-reduce, reduce-scatter and all-gather of `inagg worker` processes on an emulated cluster (docs/performance.md,
# "On the emulated cluster"): one worker per host through the cluster's software switch. As root, from anywhere:
#   scripts/bench-collectives-cluster.sh                 # HOSTS=4 RATE=100mbit ELEMENTS=1048576 ITERATIONS=10
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
hosts=${HOSTS:-4}
rate=${RATE:-100mbit}
elements=${ELEMENTS:-1048576}
iterations=${ITERATIONS:-10}
for c in ${COLLECTIVES:-all-reduce reduce-scatter all-gather}; do
  echo "== $c $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)"
  bin/inagg cluster --hosts "$hosts" --link-rate "$rate" --run "bin/inagg worker --switch \$INAGG_CLUSTER_SWITCH \
    --bind \$INAGG_CLUSTER_IP:9101 --worker-id \$INAGG_CLUSTER_RANK -w \$INAGG_CLUSTER_HOSTS -n $elements \
    -i $iterations --warmup 3 --collective $c --no-progress" 2>&1 \
    | grep -E "^\[h1\] +(per all-reduce|payload per op|packets sent)|check|rror|xception" || true
done
