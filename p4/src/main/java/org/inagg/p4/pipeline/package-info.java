/**
 * The one pipeline of every switch-side node: {@link org.inagg.p4.pipeline.AggregationNode} drains the transport,
 * parses, looks the job up, answers JOINs through {@link org.inagg.p4.pipeline.JoinStage} and admits a worker's packet
 * (worker id, source, session) before handing it to the node's
 * {@link org.inagg.p4.pipeline.AggregationStrategy}: slots (package {@code softswitch}), the ESA shared pool or the
 * parameter server's block table (package {@code esa}). The outcomes every node counts have one name
 * ({@link org.inagg.p4.pipeline.NodeCounter}), mapped onto each node's counter family. Depends on {@code membership}
 * only; {@code softswitch} and {@code esa} depend on it.
 */
package org.inagg.p4.pipeline;
