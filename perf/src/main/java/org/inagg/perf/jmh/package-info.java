/**
 * JMH benchmarks: wire codec, fixed-point conversion next to a memory copy, software-switch aggregation per packet,
 * the whole per-packet path (worker, switch, worker) with its allocation per packet.
 * Run them with {@code bin/inagg bench} (JMH options after it).
 */
package org.inagg.perf.jmh;
