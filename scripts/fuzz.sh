#!/usr/bin/env bash
# Fuzzes every @FuzzTest of the project for a bounded time each, with Jazzer's libFuzzer driver (docs/fuzzing.md).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET [TARGET_FILTER]]
#
# SECONDS_PER_TARGET  fuzzing time of each target (default 8); 0 only replays the seeds.
# TARGET_FILTER       an extended regex; only targets whose Class#method matches run (default: all).
# Environment:
#   FUZZ_RUNS=N     stop a target after N executions instead of (or before) the time limit.
#   FUZZ_JOBS=N     targets fuzzed at once (default: the number of cores; each takes one).
#   FUZZ_OUT=DIR    where corpora, logs and findings go (default target/fuzz); the generated corpus of each target is
#                   kept between runs, so repeated runs start where the last one stopped.
#   FUZZ_SKIP_BUILD=1  fuzz the classes an earlier run built and copied to $FUZZ_OUT/classes.
#   MVN=...         the Maven command (default ./mvnw).
# Every finding (an exception or a failed assertion in a fuzz test) is written to $FUZZ_OUT/findings with a Java
# reproducer, its log is printed, and the script exits 1. Copy a finding into the target's seed directory
# (src/test/resources/<package>/<Class>Inputs/<method>/) to keep it as a regression input of `./mvnw verify`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)

seconds=${1:-8}
filter=${2:-.}
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
out=${FUZZ_OUT:-$root/target/fuzz}
mvn=${MVN:-./mvnw}

# module  class  method
targets=(
  "datapath org.inagg.wire.InaggHeaderFuzzTest shouldCheckAnyBytesAndDecodeWhatItAcceptsWithinBounds"
  "datapath org.inagg.agent.counters.CountersFileReaderFuzzTest shouldRefuseABadCountersFileWithAnIOExceptionAndReportWhatAGoodOneHolds"
  "datapath org.inagg.transport.capture.PcapReaderFuzzTest shouldRefuseABadCaptureWithAnIOExceptionAndReadAGoodOneWhole"
  "datapath org.inagg.transport.frame.UdpFrameCodecFuzzTest shouldCheckAnyFrameAndReadWhatItAcceptsWithinBounds"
  "p4 org.inagg.p4.softswitch.SoftwareSwitchFuzzTest shouldCountJunkAndStillAggregateTheRoundExactly"
  "p4 org.inagg.p4.esa.EsaSwitchFuzzTest shouldCountJunkAndKeepTheBlockExact"
  "p4 org.inagg.p4.esa.ParameterServerFuzzTest shouldCountJunkAndKeepTheBlockExact"
  "p4 org.inagg.p4.esa.EsaWireFuzzTest shouldDecodeWhatTheServerAcceptsWithinBoundsAndEncodeItBack"
  "p4 org.inagg.p4.softswitch.WorkerAgentFuzzTest shouldIgnoreJunkAndAllReduceExactly"
  "control org.inagg.control.plan.PlanFileFuzzTest shouldRejectABadPlanFileWithAMessageAndDeployAGoodOne"
  "control org.inagg.control.topology.TopologyFileFuzzTest shouldRejectABadTopologyFileWithAMessageAndRoundTripAGoodOne"
  "cli org.inagg.services.cli.JobOptionFuzzTest shouldRejectABadJobWithAMessageAndRoundTripAGoodOne"
  "services org.inagg.services.agent.RequestDecoderFuzzTest shouldRejectMalformedInputWithAMessageAndAcceptOnlyWhatFits"
  "services org.inagg.services.controller.RegisterRequestFuzzTest shouldRejectABadRegistrationWithA400AndRoundTripAGoodOne"
  "services org.inagg.services.switchcontrol.JobRequestFuzzTest shouldRejectABadJobBodyWithA400AndRoundTripAGoodOne"
  "services org.inagg.services.controller.JournalFuzzTest shouldRecoverFromAnyJournalOnlyJobsWithinBoundsAndTheSameAfterCompaction"
)

if [ -z "${JAVA_HOME:-}" ] && [ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/java ]; then
  export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
fi
java=${JAVA_HOME:+$JAVA_HOME/bin/}java

if [ "${FUZZ_SKIP_BUILD:-0}" != 1 ]; then
  # One reactor build: test classes, seed resources, and each module's test class path with the reactor's
  # target/classes (nothing needs to be installed). The DPDK shim is not needed.
  # shellcheck disable=SC2086
  $mvn -B -q -ntp -pl datapath,p4,control,perf,services,cli -am -Dinagg.native.skip=true test-compile \
    org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile=target/fuzz.classpath
fi

mkdir -p "$out/logs" "$out/findings" "$out/work"
if [ "${FUZZ_SKIP_BUILD:-0}" != 1 ]; then
  # A snapshot of the compiled classes: a build running beside a long fuzz run must not pull them away.
  rm -rf "$out/classes"
  for m in ffi-bindings datapath test-support p4 control perf gpu services cli; do
    mkdir -p "$out/classes/$m"
    cp -r "$m/target/classes" "$m/target/test-classes" "$out/classes/$m/" 2>/dev/null || true
    if [ -f "$m/target/fuzz.classpath" ]; then
      sed "s#$root/\([a-z0-9-]*\)/target/classes#$out/classes/\1/classes#g" "$m/target/fuzz.classpath" \
        >"$out/classes/$m/fuzz.classpath"
    fi
  done
fi

# Runs one target; prints "Class#method runs exec/s seconds status".
fuzz_one() {
  local module=$1 class=$2 method=$3
  local name=${class##*.}#$method
  local corpus=$out/corpus/${class##*.}/$method
  local log=$out/logs/${class##*.}.$method.log
  mkdir -p "$corpus"
  local limits=(--max_duration="${seconds}s" -max_total_time="$seconds")
  [ "$seconds" = 0 ] && limits=(-runs=0)
  [ -n "${FUZZ_RUNS:-}" ] && limits+=(-runs="$FUZZ_RUNS")
  local start status=ok cp
  cp="$out/classes/$module/test-classes:$out/classes/$module/classes:$(cat "$out/classes/$module/fuzz.classpath")"
  start=$(date +%s)
  # The seeds (src/test/resources/.../<Class>Inputs/<method>, copied with the test classes) are found on the class
  # path; new inputs go to $corpus. RegexRoadblocks (guidance through regular expressions, which no target parses
  # with) is off: it hooks every Pattern compiled, e.g. by the counters' name check, and halved the worker target.
  if ! (cd "$out/work" && "$java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
      --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -XX:+EnableDynamicAgentLoading -Xmx768m \
      -cp "$cp" \
      com.code_intelligence.jazzer.Jazzer --target_class="$class" --target_method="$method" \
      --disabled_hooks=com.code_intelligence.jazzer.sanitizers.RegexRoadblocks \
      --reproducer_path="$out/findings" -artifact_prefix="$out/findings/${class##*.}.$method-" \
      -rss_limit_mb=3072 -print_final_stats=1 "${limits[@]}" "$corpus" >"$log" 2>&1); then
    status=FINDING
  fi
  local runs secs
  runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
  secs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\2/p' "$log" | tail -1)
  runs=${runs:-0}
  secs=${secs:-0}
  printf '%-90s %12s runs %9s exec/s %5ss fuzzing %5ss wall  %s\n' "$name" "$runs" \
    "$(( secs > 0 ? runs / secs : runs ))" "$secs" "$(( $(date +%s) - start ))" "$status"
  if [ "$status" != ok ]; then
    echo "---- $log (last 60 lines)"
    tail -60 "$log"
    return 1
  fi
}
export -f fuzz_one
export out seconds root java

selected=()
for t in "${targets[@]}"; do
  read -r module class method <<<"$t"
  if [[ "${class##*.}#$method" =~ $filter ]]; then
    selected+=("$t")
  fi
done
[ ${#selected[@]} -gt 0 ] || { echo "fuzz.sh: no target matches '$filter'" >&2; exit 2; }

echo "fuzz.sh: ${#selected[@]} targets, ${seconds}s each, $jobs at a time; corpora, logs and findings in $out"
failed=0
printf '%s\n' "${selected[@]}" | xargs -P "$jobs" -I{} bash -c 'fuzz_one {}' || failed=1
if [ "$failed" != 0 ]; then
  echo "fuzz.sh: FINDINGS, see above and $out/findings" >&2
  exit 1
fi
echo "fuzz.sh: no findings"
