#!/usr/bin/env bash
# Builds the libFuzzer harnesses of the DPDK shim with clang (AddressSanitizer, UndefinedBehaviorSanitizer) against
# the system DPDK, then fuzzes each for SECONDS (default 10). No EAL, hugepages or NIC needed.
#
#   ffi-bindings/src/test/fuzz/run.sh [SECONDS]
#
# Needs: clang (Debian: apt-get install clang), pkg-config and libdpdk-dev. Output in ffi-bindings/target/fuzz:
# the binaries, the corpus grown per harness, logs, and crash-* files on a finding (exit status 1).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
module=$(cd "$here/../../.." && pwd)
seconds=${1:-10}
out=$module/target/fuzz
CC=${CC:-clang}
command -v "$CC" >/dev/null || { echo "run.sh: no $CC (apt-get install clang)" >&2; exit 2; }
if ! pkg-config --exists libdpdk; then
  echo "run.sh: pkg-config cannot find libdpdk (apt-get install libdpdk-dev)" >&2
  exit 2
fi
mkdir -p "$out"
status=0
for harness in "$here"/*_fuzzer.c; do
  name=$(basename "$harness" .c)
  # shellcheck disable=SC2046
  "$CC" -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$module/src/main/c" $(pkg-config --cflags libdpdk) \
    -o "$out/$name" "$harness" "$module/src/main/c/inagg_dpdk_shim.c" $(pkg-config --libs libdpdk)
  mkdir -p "$out/corpus/$name"
  # -close_fd_mask=2: the shim echoes every captured log to stderr; libFuzzer and the sanitizers keep their own copy.
  if "$out/$name" -max_total_time="$seconds" -artifact_prefix="$out/$name-" -print_final_stats=1 -close_fd_mask=2 \
      "$out/corpus/$name" >"$out/$name.log" 2>&1; then
    echo "$name: $(grep -a -E '^Done' "$out/$name.log" | tail -1)"
  else
    echo "$name: FINDING, see $out/$name.log and $out/$name-crash-*" >&2
    grep -a -E 'ERROR|SUMMARY|Assertion|deadly' "$out/$name.log" | head -5 >&2
    status=1
  fi
done
exit $status
