/**
 * Raw packet-rate harness: Java burst forwarding, transmit-only and receive-only rates on a virtual device, measured
 * beside dpdk-testpmd's io, txonly and rxonly modes on the same device and cores.
 */
package org.inagg.ffi.dpdk.bench;
