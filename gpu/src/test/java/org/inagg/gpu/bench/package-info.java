/**
 * JMH benchmarks of the reduction devices and of PASSING against the per-GPU in-network all-reduce; run them with
 * {@code gpu/scripts/bench.sh} (main class {@link org.inagg.gpu.bench.GpuBenchmarks}), which prints GB/s beside ops/s.
 * {@code PassingSoak} and {@code Int32Soak} are soak mains (repeat all-reduces, check every sum, print counters on
 * failure); {@code Int32Soak} reproduces a datapath int32 bug with no gpu code involved (see docs/gpu.md).
 */
package org.inagg.gpu.bench;
