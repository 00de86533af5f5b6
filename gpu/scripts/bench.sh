#!/usr/bin/env bash
# Runs the gpu module's JMH benchmarks (see org.inagg.gpu.bench.GpuBenchmarks for the options).
# Needs the module built: ./mvnw -o -q -f gpu/pom.xml test-compile (JAVA_HOME at a JDK 22+).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
if [[ ! -f gpu/target/test-classpath.txt || gpu/pom.xml -nt gpu/target/test-classpath.txt ]]; then
  ./mvnw -o -q -f gpu/pom.xml dependency:build-classpath -Dmdep.includeScope=test \
    -Dmdep.outputFile=target/test-classpath.txt >/dev/null
fi
exec "$java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
  --add-exports java.base/jdk.internal.misc=ALL-UNNAMED \
  -cp "gpu/target/test-classes:gpu/target/classes:$(cat gpu/target/test-classpath.txt)" \
  org.inagg.gpu.bench.GpuBenchmarks "$@"
