/**
 * A worker as a process ({@code inagg worker}): a context validated once
 * ({@link org.inagg.services.worker.WorkerContext}: its rank and job or the controller that assigns them, its switch,
 * the protocol's timeouts, the transport, the synthetic tensors) and
 * {@link org.inagg.services.worker.WorkerNode#launch}, which opens the transport, registers the rank's source with the
 * controller, opens the counters and joins the {@code api.AllReduceJob}, whose agent runs on a thread of its own
 * until closed. {@link org.inagg.services.worker.SyntheticWorkload} is what the process all-reduces and how it checks
 * the result ({@code CollectiveCheck} for anything but the all-reduce SUM). The command in module cli only maps
 * options onto the context (and opens DPDK through the context's transport opener), then times the collectives and
 * prints.
 */
package org.inagg.services.worker;
