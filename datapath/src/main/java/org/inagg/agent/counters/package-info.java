/**
 * Counters seen from outside the process: {@link org.inagg.agent.counters.CountersFile} puts a process's
 * {@link org.inagg.agent.CounterRegistry} in a memory-mapped file (as Aeron's CnC file holds the driver's counters),
 * {@link org.inagg.agent.counters.CountersFileReader} maps one read-only (what {@code inagg stat} does), and
 * {@link org.inagg.agent.counters.MetricsServer} serves the counters in the Prometheus text format.
 */
package org.inagg.agent.counters;
