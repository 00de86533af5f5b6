#!/usr/bin/env bash
# Packs what the GPU tests and kernel benchmarks need onto a CUDA machine that has neither Maven nor a JDK:
# a jlink'd Java runtime, the module's jars and its test dependencies, and two launch scripts.
#   gpu/scripts/gpu-bundle.sh [OUT]        (default gpu/target/gpu-bundle; run from a built checkout, JAVA_HOME = JDK 22+)
# Then on the GPU machine:
#   tar xzf inagg-gpu-bundle.tgz && cd gpu-bundle && ./run-gpu-tests.sh     (fails, not skips, without a usable GPU)
#                                                 ./run-gpu-bench.sh --gpu   (kernels vs device-to-device copy)
# The machine needs the NVIDIA driver (libcuda.so.1, driver >= 580 for the committed CUDA 13 PTX, ISA 9.0).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/gpu/target/gpu-bundle}"
jdk="${JAVA_HOME:?set JAVA_HOME to a JDK 22 or later}"
cd "$root"
./mvnw -o -q -f gpu/pom.xml test-compile dependency:build-classpath -Dmdep.includeScope=test \
  -Dmdep.outputFile=target/test-classpath.txt
rm -rf "$out" && mkdir -p "$out/lib"
# Only the modules the jars need (jdeps and their module-info): java.se would add java.desktop and its native
# libraries, ~30 MB, and push the bundle past 64 MiB. java.logging: JUnit, jqwik, JCuda; java.management and
# jdk.management: JUnit, JMH, ffi-bindings; jdk.unsupported: JMH; java.compiler: agrona. INAGG_BUNDLE_MODULES overrides.
modules="${INAGG_BUNDLE_MODULES:-java.base,java.logging,java.management,jdk.management,jdk.unsupported,java.compiler,jdk.incubator.vector}"
"$jdk/bin/jlink" --add-modules "$modules" \
  --strip-debug --compress=zip-6 --no-header-files --no-man-pages --output "$out/runtime"
"$jdk/bin/jar" cf "$out/lib/inagg-gpu.jar" -C gpu/target/classes .
"$jdk/bin/jar" cf "$out/lib/inagg-gpu-tests.jar" -C gpu/target/test-classes .
# The file has no trailing newline: without `|| [[ -n $jar ]]` read drops the last jar (it was jqwik-engine, so the
# bundle silently ran none of CpuReducerTest's jqwik properties).
tr ':' '\n' < gpu/target/test-classpath.txt | while read -r jar || [[ -n "$jar" ]]; do cp "$jar" "$out/lib/"; done
# jcuda-natives also carries NVRTC, the PTX compiler (24 MB) and the runtime API bindings; CudaReducer only loads
# the driver API's libJCudaDriver. Keep that one, so the bundle stays under 64 MiB unpacked.
for natives in "$out"/lib/jcuda-natives-*.jar; do
  [[ -e "$natives" ]] || continue
  unpack="$(mktemp -d)"
  (cd "$unpack" && "$jdk/bin/jar" xf "$natives" && find lib -type f ! -name 'libJCudaDriver-*' -delete)
  "$jdk/bin/jar" cfM "$natives" -C "$unpack" .
  rm -rf "$unpack"
done
# libjvm.so's symbol table (not needed to run, only for native stack traces in hs_err files): about 5 MB.
if command -v strip > /dev/null; then strip --strip-unneeded "$out/runtime/lib/server/libjvm.so"; fi
opts='--add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED --add-exports java.base/jdk.internal.misc=ALL-UNNAMED'
# junit-platform.properties keeps jqwik's database under target/, which the bundle lacks: without it the jqwik
# engine fails as a container after its properties pass.
cat > "$out/run-gpu-tests.sh" <<SH
#!/usr/bin/env bash
cd "\$(dirname "\$0")" && mkdir -p target && exec ./runtime/bin/java $opts -Dinagg.gpu.tests.require=true -cp 'lib/*' org.inagg.gpu.GpuTestMain "\$@"
SH
cat > "$out/run-gpu-bench.sh" <<SH
#!/usr/bin/env bash
cd "\$(dirname "\$0")" && exec ./runtime/bin/java $opts -cp 'lib/*' org.inagg.gpu.bench.GpuBenchmarks "\${@:---gpu}"
SH
chmod +x "$out"/*.sh
tar czf "$(dirname "$out")/inagg-gpu-bundle.tgz" -C "$(dirname "$out")" "$(basename "$out")"
echo "bundle: $out ($(( $(du -sb "$out" | cut -f1) / 1048576 )) MiB), archive: $(dirname "$out")/inagg-gpu-bundle.tgz" \
  "($(( $(stat -c %s "$(dirname "$out")/inagg-gpu-bundle.tgz") / 1048576 )) MiB)"
