/**
 * PASSING-style hybrid all-reduce across H hosts of G GPUs each: reduce-scatter among a host's devices, in-network
 * aggregation of each chunk across hosts through the datapath (the switch sees H contributors, not H*G), all-gather
 * among the host's devices ({@link org.inagg.gpu.passing.PassingAllReduce}); and the per-GPU in-network all-reduce it
 * is compared with ({@link org.inagg.gpu.passing.PerGpuAllReduce}). Both give bit-identical float results: see
 * docs/gpu.md for the exactness contract.
 */
package org.inagg.gpu.passing;
