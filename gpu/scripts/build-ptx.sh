#!/usr/bin/env bash
# Regenerates PTX from gpu/src/main/cuda/*.cu. Needs nvcc (CUDA 12 or later) on PATH, in $NVCC or in $CUDA_HOME/bin.
#   gpu/scripts/build-ptx.sh                 rewrite the committed PTX in gpu/src/main/resources/org/inagg/gpu
#   gpu/scripts/build-ptx.sh DIR             write to DIR instead (PtxStalenessTest compares DIR with the committed PTX)
#   gpu/scripts/build-ptx.sh --if-nvcc DIR   as above, but without nvcc say so and succeed (the Maven build uses this)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
optional=false
if [[ "${1:-}" == "--if-nvcc" ]]; then optional=true; shift; fi
out="${1:-$here/src/main/resources/org/inagg/gpu}"
nvcc="${NVCC:-$(command -v nvcc || true)}"
if [[ -z "$nvcc" && -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]]; then nvcc="${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"; fi
if [[ -z "$nvcc" ]]; then
  if $optional; then
    echo "[inagg-gpu] nvcc not found: PTX not rebuilt, the jar ships the committed PTX (src/main/resources/org/inagg/gpu)"
    exit 0
  fi
  echo "nvcc not found: install the CUDA toolkit or set NVCC=/path/to/nvcc" >&2
  exit 1
fi
# compute_75 is the oldest virtual architecture CUDA 13 accepts; the driver JIT-compiles the PTX for newer GPUs.
arch="${INAGG_PTX_ARCH:-compute_75}"
mkdir -p "$out"
for cu in "$here"/src/main/cuda/*.cu; do
  name="$(basename "$cu" .cu)"
  "$nvcc" -ptx -O3 -fmad=false -arch="$arch" -o "$out/$name.ptx" "$cu"
  echo "[inagg-gpu] built $out/$name.ptx with $("$nvcc" --version | tail -1)"
done
