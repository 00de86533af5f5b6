/** The {@code inagg} command line (picocli): local all-reduce, switch and worker processes, benchmarks. */
package org.inagg.perf.cli;
