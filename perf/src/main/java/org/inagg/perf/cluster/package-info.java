/**
 * A whole job (software switch and workers) in one process, for the CLI's local mode and end-to-end tests, joined by
 * in-process rings, loopback UDP or DPDK net_ring ports.
 */
package org.inagg.perf.cluster;
