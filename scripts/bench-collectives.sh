#!/usr/bin/env bash
# Reduce-scatter and all-gather against all-reduce of the same tensor over loopback UDP (docs/performance.md,
# "Collectives over loopback UDP"): one `inagg switch` and WORKERS `inagg worker` processes per collective, each
# worker timing ITERATIONS operations of ELEMENTS float32 elements after WARMUP untimed ones.
#
#   scripts/bench-collectives.sh            # WORKERS=4 ELEMENTS=1048576 ITERATIONS=20 WARMUP=5 PORT=47000
#
# Prints, per collective, worker 0's time per operation (p50) and the lane bytes it sent and received per operation.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
workers=${WORKERS:-4}
elements=${ELEMENTS:-1048576}
iterations=${ITERATIONS:-20}
warmup=${WARMUP:-5}
port=${PORT:-47000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

printf '%-16s %-5s %12s %12s %14s %14s\n' collective op "p50 ms" "total s" "sent MB/op" "received MB/op"
for run in "all-reduce sum" "reduce-scatter sum" "all-gather sum" "all-reduce max" "reduce-scatter max" "broadcast sum"; do
  read -r collective op <<<"$run"
  port=$((port + 1))
  bin/inagg switch --bind "127.0.0.1:$port" --open --job "1:$workers:32:256" --stats-interval 0 --duration 600 \
    --counters-dir "$out" >"$out/switch.log" 2>&1 &
  switch=$!
  for _ in $(seq 100); do grep -q "listening" "$out/switch.log" 2>/dev/null && break; sleep 0.1; done
  pids=()
  for w in $(seq 0 $((workers - 1))); do
    bin/inagg worker --switch "127.0.0.1:$port" --bind 127.0.0.1:0 --worker-id "$w" -w "$workers" -n "$elements" \
      -i "$iterations" --warmup "$warmup" --collective "$collective" --op "$op" --no-progress \
      --counters-dir "$out" >"$out/worker$w.log" 2>&1 &
    pids+=($!)
  done
  status=0
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  kill "$switch" 2>/dev/null || true
  wait "$switch" 2>/dev/null || true
  if [ "$status" != 0 ]; then
    echo "$collective $op: a worker failed" >&2
    cat "$out/worker0.log" >&2
    exit 1
  fi
  log=$out/worker0.log
  p50=$(sed -n 's/.*per all-reduce *min [0-9.]* ms, p50 \([0-9.]*\) ms.*/\1/p' "$log")
  total=$(sed -n 's/^ *time *\([0-9.]*\) s.*/\1/p' "$log")
  sent=$(sed -n 's/.*payload per op *sent \([0-9.]*\) MB.*/\1/p' "$log")
  received=$(sed -n 's/.*received \([0-9.]*\) MB (lanes.*/\1/p' "$log")
  grep -qE "collective check +yes|within bound +yes" "$log" || { echo "$collective $op: wrong result" >&2; cat "$log" >&2; exit 1; }
  printf '%-16s %-5s %12s %12s %14s %14s\n' "$collective" "$op" "$p50" "$total" "$sent" "$received"
done
