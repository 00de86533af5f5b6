#!/usr/bin/env bash
# Flame graphs of the loopback all-reduce (docs/performance.md, "Where the CPU goes"): one `inagg switch` and WORKERS
# `inagg worker` processes over loopback UDP, each profiled by async-profiler over its steady state
# (`bench-peers --profile`), into target/profile/UTC-TIMESTAMP/: ROLE-PID.html (flame graphs), ROLE-PID.collapsed
# (stacks) and summary.md (each role's CPU by category: quantize, dequantize, send, receive, wait, ...).
#
#   scripts/profile.sh                       # WORKERS=4 ELEMENTS=4194304 ITERATIONS=30 WARMUP=10 PEER=inagg-udp
#   PEER=inagg-udp-64k scripts/profile.sh    # 64 KB datagrams
#   scripts/profile.sh --worker-option=--idle=spin   # further options go to bench-peers
#
# Needs perf events (root, or kernel.perf_event_paranoid <= 1 for kernel frames).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir="target/profile/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$(dirname "$dir")"
bin/inagg bench-peers --peers "${PEER:-inagg-udp}" -w "${WORKERS:-4}" -n "${ELEMENTS:-4194304}" \
  -i "${ITERATIONS:-30}" --warmup "${WARMUP:-10}" --chart none --profile "$dir" "$@"
echo "profiles: $dir"
