/**
 * The all-reduces a user already has, measured beside inagg's own paths by {@code inagg bench-peers}: each
 * {@link org.inagg.perf.peers.Peer} runs the same tensor at the same world size in its own processes (gloo through
 * torch.distributed, Open MPI, inagg's switch and worker processes over UDP, inagg in one JVM, inagg over DPDK), says
 * why it cannot run when it cannot, and the {@link org.inagg.perf.peers.PeerTable} and
 * {@link org.inagg.perf.peers.PeerChart} put the results side by side with their ratio to gloo.
 */
package org.inagg.perf.peers;
