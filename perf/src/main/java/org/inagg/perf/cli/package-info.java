/**
 * The {@code inagg} command line (picocli): local all-reduce, switch and worker processes (over UDP or DPDK),
 * benchmarks, and the DPDK rate harness ({@code dpdk-rate}).
 */
package org.inagg.perf.cli;
