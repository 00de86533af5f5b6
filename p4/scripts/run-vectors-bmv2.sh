#!/usr/bin/env bash
# Checks the P4 programs with the open-source P4 tools and runs every conformance vector of p4/src/test/vectors on
# bmv2 simple_switch (see p4/src/test/vectors/README.md and docs/p4.md). The same vectors run against the software
# switch in `./mvnw -pl p4 verify` (ConformanceVectorTest).
#
# The tools come from one folder laid out like ../shared/p4tools (bin/, lib/, lib/python/, p4include/,
# p4include-tofino/): $INAGG_P4TOOLS, else ../shared/p4tools next to the project root when it exists, else whatever
# is on PATH. Steps:
#   1. p4test on inagg_v1model.p4 and on inagg_tna.p4 (-D__TARGET_TOFINO__=1 with the open TNA includes), warnings
#      printed; with INAGG_P4_WERROR=1 any warning fails the run;
#   2. p4c-bm2-ss on inagg_v1model.p4, into a cache keyed by the SHA-256 of the sources and the compiler version
#      ($INAGG_P4_CACHE, default ~/.cache/inagg/p4), so an unchanged program is not compiled twice;
#   3. every vector (or those named) on simple_switch, frames and counters (bmv2_vectors.py).
# Without the tools it says so and exits 0, unless INAGG_REQUIRE_BMV2=1 (CI), in which case it exits 2.
#
# Usage: p4/scripts/run-vectors-bmv2.sh [VECTOR.stf...]
set -euo pipefail

scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
module=$(dirname "$scripts")
root=$(dirname "$module")
p4src="$module/src/main/p4"

tools="${INAGG_P4TOOLS:-}"
if [[ -z "$tools" && -d "$root/../shared/p4tools" ]]; then
    tools=$(cd "$root/../shared/p4tools" && pwd)
fi
if [[ -n "$tools" ]]; then
    if [[ ! -x "$tools/bin/simple_switch" ]]; then
        echo "INAGG_P4TOOLS=$tools has no bin/simple_switch: point it at a folder laid out like ../shared/p4tools" >&2
        exit 2
    fi
    # shellcheck disable=SC1091
    source "$tools/env.sh"
fi

missing=()
for tool in p4test p4c-bm2-ss simple_switch simple_switch_CLI python3; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if (( ${#missing[@]} > 0 )); then
    echo "SKIPPED: the bmv2 conformance run needs ${missing[*]}: set INAGG_P4TOOLS to a p4tools folder"
    echo "         (bin/p4test, bin/p4c-bm2-ss, bin/simple_switch, ...; ../shared/p4tools by default)."
    echo "         The vectors still run against the software switch in: ./mvnw -pl p4 verify"
    [[ "${INAGG_REQUIRE_BMV2:-0}" == "1" ]] && exit 2
    exit 0
fi

warnings=0
check() { # check NAME p4test-args...: runs p4test, prints its output, counts warnings
    local name=$1; shift
    local out
    echo "p4test: $name"
    out=$(p4test --std p4-16 "$@" 2>&1) || { echo "$out"; echo "p4test failed on $name" >&2; exit 1; }
    [[ -n "$out" ]] && echo "$out"
    warnings=$(( warnings + $(grep -c 'warning:' <<<"$out" || true) ))
}
if [[ "${INAGG_P4_SKIP_P4TEST:-0}" != "1" ]]; then
    check inagg_v1model.p4 "$p4src/inagg_v1model.p4"
    tna_include="${P4TOOLS_TNA_INCLUDE:-${TNA_INCLUDE:-}}"
    if [[ -n "$tna_include" ]]; then
        check "inagg_tna.p4 (Tofino 1, tna.p4 from $tna_include)" -D__TARGET_TOFINO__=1 -I "$tna_include" \
            "$p4src/inagg_tna.p4"
    else
        echo "p4test: inagg_tna.p4 skipped: no TNA includes (P4TOOLS_TNA_INCLUDE, set by p4tools/env.sh)"
    fi
    echo "p4test: $warnings warning(s)"
    if (( warnings > 0 )) && [[ "${INAGG_P4_WERROR:-0}" == "1" ]]; then
        echo "INAGG_P4_WERROR=1: the P4 programs must compile without warnings" >&2
        exit 1
    fi
fi
if command -v bf-p4c >/dev/null 2>&1; then
    echo "bf-p4c: inagg_tna.p4"
    bf-p4c --target tofino --arch tna -o "$(mktemp -d)/inagg_tna" "$p4src/inagg_tna.p4"
fi

cache="${INAGG_P4_CACHE:-$HOME/.cache/inagg/p4}"
mkdir -p "$cache"
# The key: inagg_v1model.p4, then generated/inagg_v1model_*.p4 in byte order of their names, then the compiler's version. The Java
# side (org.inagg.p4.bmv2.Bmv2Program) computes the same key, so both reuse one compiled JSON.
key=$( { cat "$p4src/inagg_v1model.p4"; LC_ALL=C ls "$p4src"/generated/inagg_v1model_*.p4 | while read -r f; do cat "$f"; done;
         p4c-bm2-ss --version 2>&1; } | sha256sum | cut -c1-16)
json="$cache/inagg_v1model-$key.json"
if [[ -f "$json" ]]; then
    echo "p4c-bm2-ss: inagg_v1model.p4 unchanged, using $json"
else
    echo "p4c-bm2-ss: inagg_v1model.p4 -> $json"
    tmp=$(mktemp "$cache/.compile-XXXXXX")
    p4c-bm2-ss --std p4-16 -o "$tmp" "$p4src/inagg_v1model.p4"
    mv -f "$tmp" "$json"
fi

if (( $# > 0 )); then
    vectors=("$@")
else
    vectors=("$module"/src/test/vectors/*.stf)
fi
python3 "$scripts/bmv2_vectors.py" --json "$json" --p4 "$p4src/inagg_v1model.p4" "${vectors[@]}"
