/**
 * The {@code inagg} command line root (picocli) and its harness commands: the in-process or bmv2 all-reduce
 * ({@code local}), benchmarks ({@code bench}, {@code bench-peers}) and the DPDK rate harness ({@code dpdk-rate}). The
 * daemons' commands ({@code switch}, {@code worker}, {@code ps}, {@code controller}, {@code agent}) and {@code stat}
 * are in {@code org.inagg.services.cli}, the planners' in {@code org.inagg.control.cli}, all in this module (cli).
 */
package org.inagg.perf.cli;
