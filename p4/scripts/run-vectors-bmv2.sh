#!/usr/bin/env bash
# Compiles inagg_v1model.p4 with p4c-bm2-ss and runs every conformance vector of p4/src/test/vectors on bmv2
# simple_switch (see p4/src/test/vectors/README.md and docs/p4.md). The same vectors run against the software switch
# in `./mvnw -pl p4 verify` (ConformanceVectorTest).
#
# Needs p4c-bm2-ss, simple_switch, simple_switch_CLI and python3 on PATH. Without them it says so and exits 0, unless
# INAGG_REQUIRE_BMV2=1, in which case it exits 2. If p4test is installed it also front-end checks the v1model program,
# and, with TNA_INCLUDE pointing at a folder holding tna.p4, the TNA program; if bf-p4c is installed it compiles the
# TNA program too.
#
# Usage: p4/scripts/run-vectors-bmv2.sh [VECTOR.stf...]
set -euo pipefail

scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
module=$(dirname "$scripts")
p4src="$module/src/main/p4"

missing=()
for tool in p4c-bm2-ss simple_switch simple_switch_CLI python3; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if (( ${#missing[@]} > 0 )); then
    echo "SKIPPED: bmv2 conformance run needs ${missing[*]} on PATH (p4lang/p4c and p4lang/behavioral-model)."
    echo "         The vectors still run against the software switch in: ./mvnw -pl p4 verify"
    [[ "${INAGG_REQUIRE_BMV2:-0}" == "1" ]] && exit 2
    exit 0
fi

work=$(mktemp -d -t inagg-p4-XXXXXX)
trap 'rm -rf "$work"' EXIT

if command -v p4test >/dev/null 2>&1; then
    echo "p4test: inagg_v1model.p4"
    p4test --std p4-16 "$p4src/inagg_v1model.p4"
    if [[ -n "${TNA_INCLUDE:-}" ]]; then
        echo "p4test: inagg_tna.p4 (tna.p4 from $TNA_INCLUDE)"
        p4test --std p4-16 -I "$TNA_INCLUDE" "$p4src/inagg_tna.p4"
    fi
fi
if command -v bf-p4c >/dev/null 2>&1; then
    echo "bf-p4c: inagg_tna.p4"
    bf-p4c --target tofino --arch tna -o "$work/inagg_tna" "$p4src/inagg_tna.p4"
fi

echo "p4c-bm2-ss: inagg_v1model.p4"
p4c-bm2-ss --std p4-16 -o "$work/inagg_v1model.json" "$p4src/inagg_v1model.p4"

if (( $# > 0 )); then
    vectors=("$@")
else
    vectors=("$module"/src/test/vectors/*.stf)
fi
python3 "$scripts/bmv2_vectors.py" --json "$work/inagg_v1model.json" "${vectors[@]}"
