/**
 * JMH benchmarks: wire codec, fixed-point conversion next to a memory copy, software-switch aggregation per packet.
 * Run them with {@code bin/inagg bench} (JMH options after it).
 */
package org.inagg.perf.jmh;
