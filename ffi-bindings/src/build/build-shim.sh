#!/usr/bin/env bash
# Builds libinagg_dpdk_shim.so with the system C compiler against the system DPDK (pkg-config libdpdk).
# Called by Maven (exec-maven-plugin) as: build-shim.sh <c source dir> <output dir>
# Without a C compiler or the DPDK development files it prints why and exits 0: the module still
# builds, and the DPDK tests skip with that reason (or fail when -Dinagg.dpdk.tests.require=true).
set -euo pipefail
SRC=$1
OUT=$2
CC=${CC:-cc}
why_not() {
  echo "[inagg-ffi-bindings] NOT building the DPDK shim: $1" >&2
  echo "[inagg-ffi-bindings] install it with: apt-get install dpdk libdpdk-dev pkg-config gcc" >&2
  exit 0
}
command -v "$CC" >/dev/null || why_not "no C compiler ($CC) on PATH"
command -v pkg-config >/dev/null || why_not "pkg-config not on PATH"
pkg-config --exists libdpdk || why_not "pkg-config cannot find libdpdk"
mkdir -p "$OUT"
# -fvisibility=hidden: only the INAGG_EXPORT functions are exported.
# shellcheck disable=SC2046
"$CC" -O3 -g -fPIC -shared -fvisibility=hidden -Wall -Wextra -Werror \
  -o "$OUT/libinagg_dpdk_shim.so.tmp" "$SRC/inagg_dpdk_shim.c" \
  $(pkg-config --cflags libdpdk) $(pkg-config --libs libdpdk)
mv "$OUT/libinagg_dpdk_shim.so.tmp" "$OUT/libinagg_dpdk_shim.so"
echo "[inagg-ffi-bindings] built $OUT/libinagg_dpdk_shim.so against DPDK $(pkg-config --modversion libdpdk)"
