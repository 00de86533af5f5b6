/**
 * The per-host agent ({@code inagg agent}): local ranks (PyTorch processes, {@code integrations/pytorch}) hand it their
 * tensors through a shared-memory file, ring a doorbell on a Unix-domain socket, and get the all-reduced tensor back in
 * the same file. The agent sums the local ranks' tensors in the host (PASSING's in-host step, {@link
 * org.inagg.services.agent.InHostReducer}) and, when the job spans several hosts, all-reduces the host's sum through
 * the switch as one worker of a switch job ({@link org.inagg.services.agent.NetworkStage}).
 * <ul>
 *   <li>{@link org.inagg.services.agent.HostAgentContext}: settings, validated once; {@link
 *   org.inagg.services.agent.HostAgent#launch} starts the agent.</li>
 *   <li>{@link org.inagg.services.agent.AgentProtocol}: the hello frame on the socket and its reply (drawn there).</li>
 *   <li>{@link org.inagg.services.agent.SharedRegion}: the shared-memory layout (drawn there).</li>
 *   <li>{@link org.inagg.services.agent.RequestDecoder}: checks what a rank wrote before the agent acts on it.</li>
 *   <li>{@link org.inagg.services.agent.JobSession}: one job's ranks, their requests, failures.</li>
 *   <li>{@link org.inagg.services.agent.RoundPipeline}: a round's in-host sum and switch stage in chunks that overlap
 *   the ranks' copies in and out.</li>
 *   <li>{@link org.inagg.services.agent.PrivateDirectory}, {@code AgentLock}, {@code PeerPolicy}, {@code AgentListener}:
 *   the agent on a host shared with other users (docs/security.md): its own directory, one live agent a name, only its
 *   user's ranks.</li>
 * </ul>
 */
package org.inagg.services.agent;
