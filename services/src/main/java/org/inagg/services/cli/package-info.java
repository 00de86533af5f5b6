/**
 * The commands of {@code bin/inagg} that run inagg's long-lived processes and read them from outside: the switch
 * ({@code switch}), a worker ({@code worker}), the parameter server ({@code ps}), the controller ({@code controller}),
 * the per-host agent ({@code agent}) and the counters reader ({@code stat}), with the option groups they share. The
 * picocli root that assembles them with the benchmarks is {@code org.inagg.perf.cli.InaggCli}.
 */
package org.inagg.services.cli;
